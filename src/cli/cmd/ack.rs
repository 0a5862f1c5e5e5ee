//! `ack` and `unack`: acknowledge transactions for a while ("finance is
//! investigating these"), so `check` does not alert on them and the bulk
//! acts leave them out (`--include-acked` takes them), or take that back.
//! Each is the one act [`Acknowledge`] going one way or the other
//! ([`AckDirection`]), recorded in the audit trail; the selection is ids
//! and the bulk acts' selectors (`--all-stuck`, `--state`,
//! `--older-than`, `--ids-from`: [`Selectors`]). Prints each transaction's
//! outcome (or, with `--json`, one document), then the ids left out.

use crate::cli::act::{self, ReasonArgs};
use crate::cli::exit;
use crate::cli::output::{err, fail, out};
use crate::cli::selection::{Selectors, SELECTORS};
use crate::cli::values;
use crate::error::Error;
use crate::protocol::intervene::{AckDirection, AckOutcome, Acked, Acknowledge, Done, Selection};
use crate::protocol::Protocol;
use serde_json::json;
use std::time::Duration;

/// Which transactions an ack or unack is about: ids, or the bulk acts'
/// selectors ([`Selectors`]), or both; acked and held transactions
/// alike (an ack renews, an unack takes back).
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(true)
    .arg("ids").args(SELECTORS)))]
pub struct Target {
    /// Transaction ids (or select them with --all-stuck, --state,
    /// --older-than, --ids-from).
    #[arg(value_name = "ID")]
    pub ids: Vec<String>,
    /// Which transactions, as the bulk acts select them.
    #[command(flatten)]
    pub selectors: Selectors,
    /// Select even when some shards failed to answer the selection's
    /// query (transactions on them are left alone).
    #[arg(long)]
    pub allow_partial: bool,
    /// Print the outcome as one JSON document.
    #[arg(long)]
    pub json: bool,
}

impl Target {
    /// The selection (ids given and `--ids-from` together, acked and
    /// held ones included), and where the ids came from; `Err` says why
    /// the file cannot be read.
    fn selection(&self) -> Result<(Selection, Option<String>), String> {
        let listed = self.selectors.read_ids()?;
        let given = !self.ids.is_empty() || listed.is_some();
        let ids = self.ids.iter().cloned().chain(listed.into_iter().flatten());
        let selection = Selection {
            include_acked: true,
            include_held: true,
            ..self.selectors.selection(given.then(|| ids.collect()))
        };
        Ok((selection, self.selectors.ids_source()))
    }

    /// The act on this selection going `direction`.
    fn act(&self, direction: AckDirection) -> Result<Acknowledge, String> {
        let (selection, ids_source) = self.selection()?;
        Ok(Acknowledge {
            selection,
            ids_source,
            allow_partial: self.allow_partial,
            direction,
        })
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
    let direction = AckDirection::Give {
        lasts: a.lasts,
        ticket: a.ticket.clone(),
    };
    match a.target.act(direction) {
        Ok(act) => perform(p, act, &a.target, &a.why).await,
        Err(e) => usage(&e),
    }
}

/// Takes back the selection's acknowledgements; returns the exit code.
pub async fn run_unack(p: Protocol, a: &UnackArgs) -> i32 {
    match a.target.act(AckDirection::TakeBack) {
        Ok(act) => perform(p, act, &a.target, &a.why).await,
        Err(e) => usage(&e),
    }
}

fn usage(message: &str) -> i32 {
    err(message);
    exit::USAGE
}

/// Starts and runs `act` (recorded), prints what it did and the ids its
/// selection left out; returns the exit code.
async fn perform(p: Protocol, act: Acknowledge, target: &Target, why: &ReasonArgs) -> i32 {
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
