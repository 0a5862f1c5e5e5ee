//! `release-lock`: releases one lock by resource, or every lock a
//! transaction owns. Without `--force` only stale locks are released; each
//! resource is reported as released, not held, or refused (with why).

use super::args::ReleaseLockArgs;
use super::intervention;
use super::output::{err, fail, out};
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::Protocol;

/// Prints one resource's outcome; returns whether it was refused.
fn report(resource: &str, outcome: &ReleaseOutcome) -> bool {
    match outcome {
        ReleaseOutcome::Released => out(format_args!("{resource}: released")),
        ReleaseOutcome::NotHeld => out(format_args!("{resource}: not held")),
        ReleaseOutcome::Refused(why) => {
            if why.contains(&format!("`{resource}`")) {
                err(format_args!("refused: {why}"));
            } else {
                err(format_args!("refused: `{resource}`: {why}"));
            }
            return true;
        }
    }
    false
}

/// `release-lock RESOURCE` or `release-lock --txn ID`, recorded in the
/// audit trail; exit 1 if any refused.
pub async fn run(p: &Protocol, a: &ReleaseLockArgs) -> i32 {
    let rec = match intervention::begin_release(p, a).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let (code, outcomes) = release(p, a).await;
    rec.finish_release(p, a, &outcomes, code).await
}

/// Releases and prints; returns the exit code and each resource's outcome.
async fn release(p: &Protocol, a: &ReleaseLockArgs) -> (i32, Vec<(String, ReleaseOutcome)>) {
    let outcomes = match (&a.resource, &a.txn) {
        (Some(resource), _) => match p.release_lock(resource, a.force).await {
            Ok(o) => vec![(resource.clone(), o)],
            Err(e) => return (fail(&e), vec![]),
        },
        (None, Some(txn)) => match p.release_transaction_locks(txn, a.force).await {
            Ok(v) if v.is_empty() => {
                out(format_args!("no locks held by transaction `{txn}`"));
                return (0, v);
            }
            Ok(v) => v,
            Err(e) => return (fail(&e), vec![]),
        },
        // clap requires exactly one of the two.
        (None, None) => {
            err("release-lock needs a RESOURCE or --txn ID");
            return (2, vec![]);
        }
    };
    let mut refused = false;
    for (resource, outcome) in &outcomes {
        tracing::info!(resource = %resource, outcome = ?outcome, force = a.force, "release-lock");
        refused |= report(resource, outcome);
    }
    (i32::from(refused), outcomes)
}
