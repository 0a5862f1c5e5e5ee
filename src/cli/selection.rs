//! The bulk options `rollback` and `recover` share: which transactions
//! (`--all-stuck`, `--state`, `--older-than`, `--ids-from`, the selectors
//! `ack` and `unack` share too), `--dry-run`,
//! `--rehearse`, `--format`, and reading the id list (one per line, `-` for stdin,
//! blank lines and `#` comments ignored) into a
//! [`crate::protocol::intervene::Selection`].

use super::values;
use crate::protocol::intervene::Selection;
use crate::protocol::time::parse_duration;
use clap::{Args, ValueEnum};
use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

/// The selectors ([`Selectors`]' arguments), as an argument group's
/// members (exactly one of a transaction id or any of these is required).
pub const SELECTORS: [&str; 4] = ["all_stuck", "states", "older_than", "ids_from"];

/// How a command prints its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutcomeFormat {
    /// Lines for people: each step as it ends, then the verdicts.
    #[default]
    Text,
    /// One JSON document at the end (the same as --json).
    Json,
    /// One JSON object per transaction as it ends, then a summary line.
    Ndjson,
}

/// Which transactions, by filter or by a file of ids: the selectors the
/// bulk acts ([`SelectionArgs`]) and `ack`/`unack` share, flattened into
/// each. What differs stays beside it in each command's own arguments:
/// the bulk acts take `--include-acked` and leave out what another job
/// holds, `ack` takes ids as arguments too and acts on acked and held
/// transactions alike; `--allow-partial` is worded (and conflicts) per
/// command.
#[derive(Debug, Clone, Default, Args)]
pub struct Selectors {
    /// Every stuck transaction (in flight and untouched for the recovery
    /// window; with the other selectors, only the stuck ones they match).
    #[arg(long)]
    pub all_stuck: bool,
    /// Only transactions in this state (repeatable or a comma list):
    /// created, pending, committed, terminating, finished, rolled-back.
    #[arg(long = "state", value_name = "STATE", value_parser = values::state, value_delimiter = ',')]
    pub states: Vec<String>,
    /// Only transactions last modified longer ago than this (e.g. 1h30m).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub older_than: Option<Duration>,
    /// The transactions listed in FILE, one id per line (`-`: standard
    /// input; blank lines and lines starting with # are ignored); unknown
    /// ids are reported (as refused by rollback and recover, as left out
    /// by ack; unack without filters still takes back their acks).
    #[arg(long, value_name = "FILE")]
    pub ids_from: Option<PathBuf>,
}

impl Selectors {
    /// Whether any selector is given.
    pub fn any(&self) -> bool {
        self.all_stuck
            || !self.states.is_empty()
            || self.older_than.is_some()
            || self.ids_from.is_some()
    }

    /// Where the ids come from, as said in records and messages.
    pub fn ids_source(&self) -> Option<String> {
        self.ids_from.as_ref().map(|p| {
            if p.as_os_str() == "-" {
                "stdin".to_string()
            } else {
                p.display().to_string()
            }
        })
    }

    /// The ids `--ids-from` lists (none without it); `Err` says why the
    /// file cannot be read (a usage error: nothing was done).
    pub fn read_ids(&self) -> Result<Option<Vec<String>>, String> {
        let Some(path) = &self.ids_from else {
            return Ok(None);
        };
        let text = if path.as_os_str() == "-" {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| format!("cannot read the ids from standard input: {e}"))?;
            s
        } else {
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read --ids-from {}: {e}", path.display()))?
        };
        Ok(Some(parse_ids(&text)))
    }

    /// The selection of these filters and `ids` (as read, maybe with
    /// others given), acked and held transactions left out: a command
    /// that includes them says so.
    pub fn selection(&self, ids: Option<Vec<String>>) -> Selection {
        Selection {
            all_stuck: self.all_stuck,
            states: self.states.clone(),
            older_than: self.older_than,
            ids,
            include_acked: false,
            include_held: false,
        }
    }
}

/// Which transactions a bulk `rollback`/`recover` acts on, and how.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Selection (bulk)")]
pub struct SelectionArgs {
    /// Which transactions.
    #[command(flatten)]
    pub selectors: Selectors,
    /// Act even when some shards failed to answer the selection's query
    /// (transactions on them are left alone).
    #[arg(long, conflicts_with = "id")]
    pub allow_partial: bool,
    /// Act on acknowledged transactions too (`ack`); without it they are
    /// left out, each named with who acknowledged it and until when.
    #[arg(long)]
    pub include_acked: bool,
    /// Read and decide, write nothing (no audit record either): print what
    /// each selected transaction would go through, or why it is refused.
    #[arg(long)]
    pub dry_run: bool,
    /// Rehearse instead: copy what the selection selects (its transactions,
    /// their accounts and locks, the indices' mappings) into a local
    /// in-memory osmem-server, run the act there, audit the copy, and print
    /// the counts per outcome, the net balance effect, the audit's result
    /// and the time it took (an estimate), and the hash of the plan it
    /// rehearsed (with --plan-out FILE, that plan is written for `estx-tui
    /// apply`). Nothing is written to the cluster.
    #[arg(long, conflicts_with = "dry_run")]
    pub rehearse: bool,
    /// As --dry-run (or with --rehearse, the plan rehearsed), and write the
    /// plan to FILE (JSON, with the versions of the documents it was judged
    /// on and its hash) for `estx-tui apply`.
    #[arg(long, value_name = "FILE")]
    pub plan_out: Option<PathBuf>,
    /// How to print the outcome (`ndjson`: a line per transaction as it
    /// ends, then a summary line, for scripts).
    #[arg(long, value_enum, conflicts_with = "json")]
    pub format: Option<OutcomeFormat>,
}

impl SelectionArgs {
    /// Whether it only plans (`--dry-run`, `--plan-out`): reads and
    /// decides, writes nothing to the cluster.
    pub fn plans_only(&self) -> bool {
        self.dry_run || self.plan_out.is_some()
    }

    /// Whether any selector is given (a bulk action, not one id).
    pub fn is_bulk(&self) -> bool {
        self.selectors.any()
    }

    /// The output format, `--json` meaning `json`.
    pub fn format(&self, json: bool) -> OutcomeFormat {
        match (json, self.format) {
            (true, _) => OutcomeFormat::Json,
            (false, Some(f)) => f,
            (false, None) => OutcomeFormat::Text,
        }
    }

    /// Where the ids come from, as said in records and messages.
    pub fn ids_source(&self) -> Option<String> {
        self.selectors.ids_source()
    }

    /// The job an `--ids-from` file names (a stopped run's file of the
    /// transactions it left: `local_files::job_of`); none for standard input.
    pub fn ids_job(&self) -> Option<String> {
        let path = self
            .selectors
            .ids_from
            .as_ref()
            .filter(|p| p.as_os_str() != "-")?;
        crate::local_files::job_of(&std::fs::read_to_string(path).ok()?)
    }

    /// The selection, reading `--ids-from`; `Err` says why the file
    /// cannot be read (a usage error: nothing was done).
    pub fn selection(&self) -> Result<Selection, String> {
        Ok(Selection {
            include_acked: self.include_acked,
            ..self.selectors.selection(self.selectors.read_ids()?)
        })
    }
}

/// The ids of an `--ids-from` file: one per line, trimmed; blank lines and
/// `#` comments ignored.
pub fn parse_ids(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::cli::selection::*;

    #[test]
    fn ids_skip_blanks_and_comments() {
        let ids = parse_ids("# incident 42\nt-1\n\n  t-2  \r\n#t-3\n");
        assert_eq!(ids, vec!["t-1", "t-2"]);
    }
}
