//! `check`: a monitoring check for Nagios/Icinga, cron or a Prometheus
//! textfile collector, by the Monitoring Plugins development guidelines
//! (<https://www.monitoring-plugins.org/doc/guidelines.html>). Counts stuck
//! transactions, ones needing investigation, odd documents, stale locks
//! and audit findings; `-w`/`-c` give each count a range in the guidelines'
//! syntax ([`threshold`]): a value outside it (inside with `@`)
//! alerts. Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the cluster
//! could not be read). What is counted and the status are [`levels`]; the
//! output itself is [`output`].
//!
//! The old `--warn-X N`/`--crit-X N` flags (alert at N or more, 0 off) still
//! work, hidden, with a deprecation line on stderr naming the range they
//! stand for.

pub mod levels;
pub mod output;
pub mod threshold;

use crate::cli::output::{err, out};
use crate::protocol::Protocol;
use clap::ValueEnum;
use levels::{
    legacy_range, parse_threshold, status, Count, LegacyThresholds, Levels, Status, Threshold,
    COUNTS, METRICS,
};
use output::{json, nagios, prometheus};
use std::path::{Path, PathBuf};

/// How `check` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CheckFormat {
    /// The Nagios plugin output: a status line with performance data, then
    /// the stuck transactions (long output).
    #[default]
    Nagios,
    /// JSON: counts, thresholds in force, status and the stuck transactions.
    Json,
    /// The Prometheus text exposition format (for a textfile collector).
    Prometheus,
}

/// `check`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Nagios)]
    pub format: CheckFormat,
    /// Same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Also write the output to this file, atomically (a temporary file
    /// renamed into place, so a collector never reads half of it).
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// WARNING range of a count, `[COUNT=]RANGE`, repeatable. COUNT is
    /// stuck (the default), needs_investigation, odd_documents,
    /// stale_locks, audit_findings or recovery_stalled; RANGE is the Monitoring Plugins
    /// syntax (10, 10:, ~:10, 10:20, @10:20; 0 alerts above 0); an empty
    /// RANGE (`stuck=`) turns the count's default off.
    #[arg(short = 'w', long = "warning", value_name = "[COUNT=]RANGE", value_parser = parse_threshold)]
    pub warning: Vec<Threshold>,
    /// CRITICAL range of a count, `[COUNT=]RANGE`, as for --warning.
    #[arg(short = 'c', long = "critical", value_name = "[COUNT=]RANGE", value_parser = parse_threshold)]
    pub critical: Vec<Threshold>,
    /// How many stuck transactions the output lists, oldest first.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Deprecated old flags: `--warn-X N`/`--crit-X N`.
    #[command(flatten)]
    pub legacy: LegacyThresholds,
}

/// The ranges in force, one per metric in [`METRICS`] order: the defaults,
/// then the old flags, then `-w`/`-c` in order (the last one for a count
/// wins); and a deprecation line for each old flag used.
pub fn in_force(a: &Args) -> ([Levels; COUNTS], Vec<String>) {
    let mut levels = METRICS.map(|m| m.default);
    let mut notes = Vec::new();
    for (i, m) in METRICS.iter().enumerate() {
        let [(wflag, warn), (cflag, crit)] = (m.legacy)(&a.legacy);
        for (flag, n, slot, short) in [
            (wflag, warn, &mut levels[i].warn, 'w'),
            (cflag, crit, &mut levels[i].crit, 'c'),
        ] {
            if let Some(n) = n {
                *slot = legacy_range(n);
                let range = slot.map(|r| r.to_string()).unwrap_or_default();
                notes.push(format!(
                    "warning: --{flag} is deprecated; --{flag} {n} is -{short} {}={range} \
                     (Monitoring Plugins ranges: {})",
                    m.key(),
                    if n == 0 {
                        "an empty range is off"
                    } else {
                        "N alerts above N"
                    }
                ));
            }
        }
    }
    let index = |c: Count| METRICS.iter().position(|m| m.count == c).unwrap_or(0);
    for t in &a.warning {
        levels[index(t.count)].warn = t.range;
    }
    for t in &a.critical {
        levels[index(t.count)].crit = t.range;
    }
    (levels, notes)
}

/// Writes `text` to `path` through a temporary file renamed into place.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Runs `check`; returns the Nagios exit code.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let (levels, notes) = in_force(a);
    for n in &notes {
        err(n);
    }
    let reading = match p.check_reading().await {
        Ok(r) => Ok(r),
        Err(e) => {
            tracing::warn!(error = %e, "check could not read the cluster");
            Err(e.to_string())
        }
    };
    let st = reading
        .as_ref()
        .map_or(Status::Unknown, |r| status(&r.counts, &levels));
    let format = if a.json { CheckFormat::Json } else { a.format };
    let text = match (format, &reading) {
        (CheckFormat::Json, r) => json(r.as_ref(), &levels, st, a.top),
        (CheckFormat::Prometheus, r) => prometheus(r.as_ref().ok(), st),
        (CheckFormat::Nagios, Ok(r)) => nagios(r, &levels, a.top),
        (CheckFormat::Nagios, Err(e)) => format!("ESTX UNKNOWN - cannot read the cluster: {e}\n"),
    };
    out(text.trim_end());
    if let Some(path) = &a.output {
        if let Err(e) = write_atomically(path, &text) {
            err(format_args!("cannot write {}: {e}", path.display()));
            return Status::Unknown.exit_code();
        }
    }
    st.exit_code()
}

#[cfg(test)]
mod tests;
