//! A bulk `rollback`/`recover` as a job, from the command line: the
//! options that steer it (`--resume RUN_ID`, `--max-rate N`, `--progress`,
//! `--left-to FILE`), the progress line on stderr while it runs (N/total,
//! rate, ETA: when stderr is a terminal or with `--progress`; stdout stays
//! the outcome's, `--json` and `--format ndjson` untouched), and the file
//! of the transactions a stopped job left, one id a line, which feeds
//! `--ids-from` as it is.

use crate::cli::output::err;
use crate::protocol::jobs::{PaceStats, Progress};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How often the progress line is redrawn.
const TICK: Duration = Duration::from_secs(1);

/// The options of a bulk run as a job.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct JobArgs {
    /// Continue the unfinished bulk run RUN_ID (the id of its audit record,
    /// printed when it started): the transactions its checkpoints say ended are
    /// skipped, every other one is read and decided again; the run's own
    /// record is completed and says it was resumed.
    #[arg(long, value_name = "RUN_ID",
          conflicts_with_all = ["id", "all_stuck", "states", "older_than", "ids_from", "dry_run", "rehearse"])]
    pub resume: Option<String>,
    /// With a selection: at most N document writes the cluster accepts a
    /// second (both the batched and the one-at-a-time runs; a write it
    /// sheds is retried and charged when it lands). Whatever the limit, a
    /// rising share of writes refused as throttled (429) slows the run
    /// down; they are retried, never counted failed.
    #[arg(long, value_name = "N", value_parser = positive_rate)]
    pub max_rate: Option<f64>,
    /// With a selection: print the progress (N/total, rate, ETA) on stderr
    /// every second even when stderr is not a terminal (it is printed
    /// when it is).
    #[arg(long)]
    pub progress: bool,
    /// With a selection: where to write the transactions a stopped run
    /// left (not started, or stopped before their end), one id a line, to
    /// feed `--ids-from`. Default: a file in the state directory, named on
    /// stderr.
    #[arg(long, value_name = "FILE")]
    pub left_to: Option<PathBuf>,
    /// With --dry-run (text): roll-ups instead of one plan per transaction
    /// (counts per state and verdict, the balance effect per account), and
    /// the ids that would run written one a line to a file (--left-to FILE,
    /// else one in the state directory), named in the output, to feed
    /// `--ids-from`.
    #[arg(long, requires = "dry_run")]
    pub summary: bool,
}

fn positive_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!("`{s}` is not a positive number of writes a second")),
    }
}

impl JobArgs {
    /// Whether the progress line is printed.
    pub fn shows_progress(&self) -> bool {
        self.progress || std::io::stderr().is_terminal()
    }
}

/// Prints `progress` on stderr every second until aborted: redrawn in place
/// on a terminal, one line each time otherwise.
pub fn show_progress(
    job: String,
    progress: Arc<Progress>,
    cluster: crate::cluster::Cluster,
) -> tokio::task::JoinHandle<()> {
    let terminal = std::io::stderr().is_terminal();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(TICK);
        tick.tick().await;
        loop {
            tick.tick().await;
            let mut line = format!("job {job}: {}", progress.view());
            if let Some(note) = waiting_note(cluster.waiting_on_cluster()) {
                line.push_str(" · ");
                line.push_str(&note);
            }
            let mut e = std::io::stderr().lock();
            let _ = if terminal {
                write!(e, "\r\x1b[2K{line}")
            } else {
                writeln!(e, "{line}")
            };
            let _ = e.flush();
        }
    })
}

/// `waiting on the cluster (429, 4.2 s)` while a request waits on a busy
/// (or silent) cluster, so a run that seems stuck says why.
pub fn waiting_note(waiting: Option<(crate::cluster::WaitCause, Duration)>) -> Option<String> {
    waiting.map(|(cause, for_)| {
        format!(
            "waiting on the cluster ({cause}, {:.1} s)",
            for_.as_secs_f64()
        )
    })
}

/// Ends the progress line (a terminal's is redrawn in place).
pub fn end_progress() {
    if std::io::stderr().is_terminal() {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

/// Says what the job's writes did: how many, how many were throttled, the
/// rate achieved against the one admitted.
pub fn report_pace(job: &str, s: &PaceStats) {
    if s.written == 0 && s.throttled == 0 {
        return;
    }
    let admitted = s
        .admitted
        .map_or("no limit".to_string(), |a| format!("{a:.0}/s admitted"));
    err(format_args!(
        "job {job}: {} writes, {} throttled and retried; {:.0} writes/s achieved ({admitted})",
        s.written,
        s.throttled,
        s.achieved()
    ));
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_run_waiting_on_the_cluster_says_so() {
        use crate::cluster::WaitCause;
        use std::time::Duration;
        assert_eq!(super::waiting_note(None), None);
        assert_eq!(
            super::waiting_note(Some((WaitCause::Status(429), Duration::from_millis(4200)))),
            Some("waiting on the cluster (429, 4.2 s)".to_string())
        );
        assert_eq!(
            super::waiting_note(Some((WaitCause::NoAnswer, Duration::from_secs(1)))),
            Some("waiting on the cluster (no answer, 1.0 s)".to_string())
        );
    }
}
