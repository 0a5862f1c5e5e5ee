//! `ack` and `unack`: acknowledge transactions for a while ("finance is
//! investigating these"), so `check` does not alert on them and the bulk
//! acts leave them out (`--include-acked` takes them), or take that back.
//! Each is one act ([`Acknowledge`], [`Unacknowledge`]) recorded in the
//! audit trail; the selection is the bulk acts' (ids, `--all-stuck`,
//! `--state`, `--older-than`, `--ids-from`). Prints each transaction's
//! outcome (or, with `--json`, one document), then the ids left out.

use crate::cli::act::{self, ReasonArgs};
use crate::cli::exit;
use crate::cli::output::{err, fail, out};
use crate::cli::selection::parse_ids;
use crate::cli::values;
use crate::error::Error;
use crate::protocol::intervene::{
    AckOutcome, AckPlan, Acked, Acknowledge, Done, Runs, Selection, Unacknowledge,
};
use crate::protocol::time::parse_duration;
use crate::protocol::Protocol;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// Which transactions an ack or unack is about.
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true)
    .args(["ids", "all_stuck", "states", "older_than", "ids_from"])))]
pub struct Target {
    /// Transaction ids (or select them with --all-stuck, --state,
    /// --older-than, --ids-from).
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Every stuck transaction (with the other selectors, only the stuck
    /// ones they match).
    #[arg(long)]
    pub all_stuck: bool,
    /// Only transactions in this state (repeatable or a comma list).
    #[arg(long = "state", value_name = "STATE", value_parser = values::state, value_delimiter = ',')]
    pub states: Vec<String>,
    /// Only transactions last modified longer ago than this (e.g. 1h30m).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub older_than: Option<Duration>,
    /// The transactions listed in FILE, one id per line (`-`: standard
    /// input; blank lines and lines starting with # are ignored).
    #[arg(long, value_name = "FILE")]
    pub ids_from: Option<PathBuf>,
    /// Select even when some shards failed to answer the selection's
    /// query (transactions on them are left alone).
    #[arg(long)]
    pub allow_partial: bool,
    /// Print the outcome as one JSON document.
    #[arg(long)]
    pub json: bool,
}

impl Target {
    /// The selection (ids given and `--ids-from` together), and where the
    /// ids came from; `Err` says why the file cannot be read.
    fn selection(&self) -> Result<(Selection, Option<String>), String> {
        let mut ids = self.ids.clone();
        let mut source = None;
        if let Some(path) = &self.ids_from {
            let text = if path.as_os_str() == "-" {
                source = Some("stdin".to_string());
                std::io::read_to_string(std::io::stdin())
                    .map_err(|e| format!("cannot read the ids from standard input: {e}"))?
            } else {
                source = Some(path.display().to_string());
                std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read --ids-from {}: {e}", path.display()))?
            };
            ids.extend(parse_ids(&text));
        }
        let given = !ids.is_empty() || self.ids_from.is_some();
        let selection = Selection {
            all_stuck: self.all_stuck,
            states: self.states.clone(),
            older_than: self.older_than,
            ids: given.then_some(ids),
            include_acked: true,
            include_held: true,
        };
        Ok((selection, source))
    }
}

/// `ack SELECTION --reason TEXT --for DURATION [--ticket URL]`.
#[derive(Debug, Clone, clap::Args)]
pub struct AckArgs {
    /// Which transactions.
    #[command(flatten)]
    pub target: Target,
    /// How long the acknowledgement holds (e.g. 4h, 2d); it lapses on its
    /// own after that.
    #[arg(long = "for", value_parser = values::positive_duration, value_name = "DURATION")]
    pub lasts: Duration,
    /// Where the work on them is tracked (a ticket's URL), shown with
    /// the ack.
    #[arg(long, value_name = "URL")]
    pub ticket: Option<String>,
    /// Why they are set aside (required; recorded with the ack and in the
    /// audit trail).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// `unack SELECTION [--reason TEXT]`.
#[derive(Debug, Clone, clap::Args)]
pub struct UnackArgs {
    /// Which transactions.
    #[command(flatten)]
    pub target: Target,
    /// Why (recorded in the audit trail).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// Acknowledges the selection; returns the exit code.
pub async fn run_ack(p: Protocol, a: &AckArgs) -> i32 {
    let (selection, ids_source) = match a.target.selection() {
        Ok(s) => s,
        Err(e) => return usage(&e),
    };
    let act = Acknowledge {
        selection,
        ids_source,
        allow_partial: a.target.allow_partial,
        lasts: a.lasts,
        ticket: a.ticket.clone(),
    };
    perform(p, act, &a.target, &a.why).await
}

/// Takes back the selection's acknowledgements; returns the exit code.
pub async fn run_unack(p: Protocol, a: &UnackArgs) -> i32 {
    let (selection, ids_source) = match a.target.selection() {
        Ok(s) => s,
        Err(e) => return usage(&e),
    };
    let act = Unacknowledge {
        selection,
        ids_source,
        allow_partial: a.target.allow_partial,
    };
    perform(p, act, &a.target, &a.why).await
}

fn usage(message: &str) -> i32 {
    err(message);
    exit::USAGE
}

/// Starts and runs `act` (recorded), prints what it did and the ids its
/// selection left out; returns the exit code.
async fn perform<A>(p: Protocol, act: A, target: &Target, why: &ReasonArgs) -> i32
where
    A: Runs<Result = Acked, Plan = AckPlan>,
{
    let started = match act::start(&p, act, false, why).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    let index = started.index().to_string();
    let left_out = started.plan().left_out.clone();
    let action = started.intervention().action();
    let done: Done<Acked> = started.run(&p).await;
    let code = match &done.value.0 {
        Err(e @ Error::IndexMissing(_)) => {
            err(format_args!(
                "{e}: run `estx-tui init` to create the acknowledgements index"
            ));
            exit::REFUSED
        }
        Err(e) => fail(e),
        Ok(each) => {
            let failed = each.iter().any(|(_, o)| matches!(o, AckOutcome::Failed(_)));
            let code = if failed { exit::REFUSED } else { exit::DONE };
            if target.json {
                let rows: Vec<_> = each
                    .iter()
                    .map(
                        |(txn, o)| json!({"txn": txn, "outcome": kind(o), "detail": o.to_string()}),
                    )
                    .collect();
                let left: Vec<_> = left_out
                    .iter()
                    .map(|l| json!({"txn": l.txn, "why": l.why}))
                    .collect();
                out(json!({
                    "action": action.to_string(),
                    "transactions": rows,
                    "left_out": left,
                    "summary": done.summary,
                    "record": done.record.to_string(),
                    "exit_code": code,
                }));
            } else {
                for (txn, o) in each {
                    out(format_args!("{txn}: {o}"));
                }
                for l in &left_out {
                    err(format_args!("left out: {}: {}", l.txn, l.why));
                }
                out(format_args!("{} (record {})", done.summary, done.record));
            }
            code
        }
    };
    act::recorded(&done, &index, code)
}

/// An outcome's kind, for `--json`.
fn kind(o: &AckOutcome) -> &'static str {
    match o {
        AckOutcome::Acked { .. } => "acked",
        AckOutcome::Renewed { .. } => "renewed",
        AckOutcome::Removed(_) => "removed",
        AckOutcome::NotAcked => "not_acked",
        AckOutcome::Failed(_) => "failed",
    }
}
