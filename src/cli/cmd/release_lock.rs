//! `release-lock`: releases one lock by resource, or every lock a
//! transaction owns, recorded in the audit trail. Without `--force` only
//! stale locks are released; each resource is reported as released, not
//! held, or refused (with why); with `--json`, as a [`ReleaseLockOutcome`].

use crate::cli::act::{self, ReasonArgs};
use crate::cli::exit;
use crate::cli::output::outcome::{
    self, ErrorOutcome, LockOutcome, ReleaseLockOutcome, VerdictOutcome,
};
use crate::cli::output::{err, fail, out};
use crate::error::Result;
use crate::protocol::intervene::{ReleaseLock, ReleaseLocksOf, Released, Runs};
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::locks::TxnLocksRelease;
use crate::protocol::Protocol;

/// `release-lock RESOURCE` or `release-lock --txn ID`.
#[derive(Debug, Clone, clap::Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["resource", "txn"])))]
pub struct Args {
    /// The locked resource (the lock document's id).
    pub resource: Option<String>,
    /// Release every lock owned by this transaction instead.
    #[arg(long, value_name = "ID")]
    pub txn: Option<String>,
    /// Release even a lock whose holder may still be running.
    #[arg(long)]
    pub force: bool,
    /// With --txn: act even when some shards failed to answer the search
    /// for its locks (locks on them are left; its accounts' are read by id).
    #[arg(long, requires = "txn")]
    pub allow_partial: bool,
    /// Print the outcome as JSON (state reached, by whom, each step, verdict).
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail; required with --force).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// Prints one resource's outcome.
fn report(resource: &str, outcome: &ReleaseOutcome) {
    match outcome {
        ReleaseOutcome::Released | ReleaseOutcome::Decremented { .. } | ReleaseOutcome::NotHeld => {
            out(format_args!("{resource}: {outcome}"))
        }
        ReleaseOutcome::Refused(why) if why.names_resource() => err(format_args!("refused: {why}")),
        ReleaseOutcome::Refused(why) => err(format_args!("refused: `{resource}`: {why}")),
    }
}

/// `release-lock RESOURCE` or `release-lock --txn ID`, recorded in the
/// audit trail; exit 1 if any refused.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    match (&a.resource, &a.txn) {
        (Some(resource), _) => release(p, a, ReleaseLock::new(resource)).await,
        (None, Some(txn)) => {
            let act = ReleaseLocksOf {
                txn: txn.clone(),
                allow_partial: a.allow_partial,
            };
            release(p, a, act).await
        }
        // clap requires exactly one of the two.
        (None, None) => {
            err("release-lock needs a RESOURCE or --txn ID");
            exit::USAGE
        }
    }
}

/// Starts and runs the release `act` (by resource or by owner), prints
/// what it did; returns the exit code.
async fn release<A: Runs<Result = Released>>(p: Protocol, a: &Args, act: A) -> i32 {
    let started = match act::start(&p, act, a.force, &a.why).await {
        Ok(s) => s,
        Err(code) => {
            if a.json {
                outcome::print(&ErrorOutcome {
                    error:
                        "the release did not start (the reason is on stderr); nothing was written"
                            .into(),
                    exit_code: code,
                });
            }
            return code;
        }
    };
    let index = started.index().to_string();
    let done = started.run(&p).await;
    let absent = p.discovery().await.is_ok_and(|d| d.locks.is_absent());
    let locks_index = (p.config().indices.locks.as_str(), absent);
    let result = &done.value;
    let unknown = match (&a.txn, result) {
        (Some(txn), Ok(r)) if r.released.is_empty() => unknown_txn(&p, txn, a.json).await,
        _ => None,
    };
    let code = match unknown {
        Some(code) => code,
        None => print(a, locks_index, result),
    };
    act::recorded(&done, &index, code)
}

/// `--txn ID` found no lock: when no transaction `ID` exists either, the
/// id names nothing (a typo, another index), which is "not found" (exit 1,
/// issue 28 item 8), not "no locks held"; says so and returns the code.
/// None when the transaction exists (it simply holds no lock).
async fn unknown_txn(p: &Protocol, txn: &str, json: bool) -> Option<i32> {
    match p.read_transaction(txn).await {
        Ok(Some(_)) => None,
        Ok(None) => {
            if json {
                outcome::print(&ReleaseLockOutcome {
                    txn: Some(txn.to_string()),
                    locks: Vec::new(),
                    locks_listing_partial: None,
                    verdict: VerdictOutcome {
                        kind: "not_found",
                        message: format!("no transaction `{txn}` and no lock it owns"),
                    },
                    exit_code: exit::REFUSED,
                });
            }
            err(format_args!(
                "transaction `{txn}` not found in `{}`, and no lock in `{}` names it as owner \
                 (is the id, or --transactions-index, right?); nothing to release",
                p.config().indices.transactions,
                p.config().indices.locks
            ));
            Some(exit::REFUSED)
        }
        Err(e) => Some(fail(&e)),
    }
}

/// Prints what the release did (text or JSON); returns the exit code.
/// `locks_index`: its name, and whether it is absent (no locks).
fn print(a: &Args, locks_index: (&str, bool), result: &Result<TxnLocksRelease>) -> i32 {
    let (locks_index, absent) = locks_index;
    let r = match result {
        Ok(r) => r,
        Err(e) => {
            if a.json {
                outcome::print(&ErrorOutcome::from(e));
            }
            return fail(e);
        }
    };
    let outcomes = &r.released;
    let partial = a.txn.as_ref().and(r.coverage.describe());
    for (resource, outcome) in outcomes {
        tracing::info!(resource = %resource, outcome = ?outcome, force = a.force, "release-lock");
    }
    let locks: Vec<LockOutcome> = outcomes
        .iter()
        .map(|(r, o)| LockOutcome::new(r, a.txn.clone(), o))
        .collect();
    let code = exit::worst(locks.iter().map(LockOutcome::exit_code));
    // One resource named and no lock document under it: the id names
    // nothing (a typo, another index), not a lock released.
    let not_found = match (&a.resource, outcomes.as_slice()) {
        (Some(_), [(resource, ReleaseOutcome::NotHeld)]) => Some(resource.as_str()),
        _ => None,
    };
    let code = if not_found.is_some() {
        exit::REFUSED
    } else {
        code
    };
    if a.json {
        let (kind, message) = if let Some(resource) = not_found {
            (
                "not_found",
                format!("no lock `{resource}`: nothing to release"),
            )
        } else if code == exit::DONE {
            let released = locks.iter().filter(|l| l.result == "released").count();
            (
                "released",
                format!("{released} of {} released", locks.len()),
            )
        } else {
            ("refused", "at least one lock was not released".to_string())
        };
        outcome::print(&ReleaseLockOutcome {
            txn: a.txn.clone(),
            locks,
            locks_listing_partial: partial,
            verdict: VerdictOutcome { kind, message },
            exit_code: code,
        });
        return code;
    }
    if absent && locks.iter().all(|l| l.result != "released") {
        out(super::locks::no_locks_index(locks_index) + ": nothing to release");
        return code;
    }
    if outcomes.is_empty() {
        if let Some(txn) = &a.txn {
            out(format_args!("no locks held by transaction `{txn}`"));
        }
    }
    if let Some(resource) = not_found {
        err(format_args!(
            "lock `{resource}` not found: no lock document `{resource}` in `{}` \
             (is the resource id, or --locks-index, right?); nothing to release",
            locks_index
        ));
        return code;
    }
    for (resource, outcome) in outcomes {
        report(resource, outcome);
    }
    if let Some(d) = &partial {
        err(format_args!(
            "the search for the transaction's locks was {d}: some of its locks may remain"
        ));
    }
    code
}
