//! Reversal of a finished transfer: the compensating transfer (destination
//! -> source, same amount) under an id derived from the original's, linked
//! both ways (`reverses` on the new one, `reversed_by` on the original).
//!
//! Every part is idempotent, so a lost response or a rerun after a crash
//! never makes two reversals: the reversal is created with `op_type=create`
//! under its one possible id (an existing document that is this reversal is
//! taken as ours), the link is a conditional write through the executor that
//! keeps every other field, and the reversal itself runs through the
//! ordinary recovery procedure, which is safe to run twice. Order: create,
//! link, run, so the original names its reversal from the moment it exists.

use super::decide::{Effect, NoopReason};
use super::executor::{Created, DocDecision};
use super::preflight::Preflight;
use super::problem::{Problem, Problems};
use super::report::{StepReport, StepResult, Verdict};
use super::steps::{Procedure, ProcedureRefusal};
use super::transaction::{Transaction, Transfer, TxnState};
use super::{Protocol, RunLimits};
use crate::cluster::Changes;
use crate::error::{Error, Result};
use serde_json::{Map, Value};
mod admit;
pub mod link;
mod plan;
mod verdict;

use crate::protocol::create::check_accounts;
pub use admit::{admit, is_reversal, Admitted};
pub use link::{link_of, reversal_id, REVERSED_BY, REVERSES};
pub use plan::{decide, writes, ReverseSteps, CREATE_STEP, LINK_STEP};
pub use verdict::{ReverseOptions, ReverseRefusal, ReverseReport, ReverseVerdict};

/// What the link decision found on the original.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LinkFound {
    /// Not finished any more (or not readable as such).
    State(Option<TxnState>),
    /// Linked to another reversal.
    Other(String),
}

/// The link as a pure decision on the original's document: write only
/// `reversed_by = rev` (every other field stays as stored), a no-op when it is already
/// there, and `Err` with what was found when the original is not a finished
/// transaction free to link.
fn link_decision(
    src: &Map<String, Value>,
    rev: &str,
) -> std::result::Result<DocDecision, LinkFound> {
    let state = src
        .get("transaction_state")
        .and_then(Value::as_str)
        .map(TxnState::parse);
    match link_of(src, REVERSED_BY) {
        Some(by) if by == rev => {
            return Ok(DocDecision::Noop(NoopReason::AlreadyLinked(by)));
        }
        Some(by) => return Err(LinkFound::Other(by)),
        None => {}
    }
    if state != Some(TxnState::Finished) {
        return Err(LinkFound::State(state));
    }
    Ok(DocDecision::Write(
        Changes::new().set(REVERSED_BY, Value::String(rev.to_string())),
        Effect::Linked {
            field: REVERSED_BY,
            to: rev.to_string(),
        },
    ))
}

/// Whether `doc` is the reversal of `t`: it says so and moves the same
/// amount the other way.
fn is_reversal_of(doc: &Map<String, Value>, rev: &str, t: &Transfer) -> bool {
    is_reversal(&Transaction::from_source(rev, doc), t)
}

/// Maps a sub-procedure's verdict that did not end `finished`.
fn not_finished(what: &str, v: Verdict) -> ReverseVerdict {
    match v {
        Verdict::Refused(r) => ReverseVerdict::Refused(ReverseRefusal::Protocol(r)),
        Verdict::Failed(e) => ReverseVerdict::Failed(e),
        Verdict::Stopped(why) => ReverseVerdict::Stopped(format!("{what}: {why}")),
        Verdict::Completed(s) | Verdict::NothingToDo(s) => {
            ReverseVerdict::Stopped(format!("{what} left it {s}"))
        }
        Verdict::EndedElsewhere(s) => {
            ReverseVerdict::Stopped(format!("{what}: another process left it {s}"))
        }
    }
}

fn ends_finished(v: &Verdict) -> bool {
    matches!(
        v,
        Verdict::Completed(TxnState::Finished)
            | Verdict::NothingToDo(TxnState::Finished)
            | Verdict::EndedElsewhere(TxnState::Finished)
    )
}

/// What creating the reversal found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CreateResult {
    /// Written now.
    Created,
    /// Already there, and it is this reversal.
    Existed,
    /// The id is taken by something else.
    Taken,
}

pub(crate) async fn reverse_steps(
    p: &Protocol,
    id: &str,
    rev: &str,
    opts: ReverseOptions,
    report: &mut ReverseReport,
) -> Result<ReverseVerdict> {
    let index = p.config.indices.transactions.clone();
    let txn = match finished_original(p, id, &opts, report).await? {
        Ok(txn) => txn,
        Err(verdict) => return Ok(verdict),
    };
    let refuse = |r| Ok(ReverseVerdict::Refused(r));
    let existing = p.read_transaction(rev).await?;
    // The rule the plan follows too (`plan::decide`).
    let (create, link) = writes(&txn, existing.as_ref().map(|(r, _)| r));
    let admitted = match admit(&txn, existing.as_ref().map(|(r, _)| r), false) {
        Ok(a) => a,
        Err(r) => return refuse(r),
    };
    let t = admitted.transfer;
    report.transfer = Some(t.clone());
    report.resumed = admitted.resumed;
    // Before the first write: the mappings must accept every field
    // (`reverses` and `reversed_by` included), or nothing is written.
    p.check_writable().await?;
    p.check_writable_with(&[REVERSES, REVERSED_BY]).await?;
    // Asked once for the whole reversal (its run does not ask again), on
    // documents that exist: the original, which the link writes, and
    // the accounts.
    p.check_partial_updates(&Transfer {
        id: id.to_string(),
        ..t.clone()
    })
    .await?;
    let mut budget = opts.limits.max_steps;
    let mut spend = || match budget {
        Some(0) => false,
        Some(n) => {
            budget = Some(n - 1);
            true
        }
        None => true,
    };
    let crashed = |before: &str| {
        Ok(ReverseVerdict::Stopped(format!(
            "simulated crash before {before}"
        )))
    };
    if create {
        if !spend() {
            return crashed("creating the reversal");
        }
        check_accounts(p, &t.dest, &t.src).await?;
        let result = create_reversal(p, rev, &t).await?;
        let is_ours = !matches!(result, CreateResult::Taken);
        reverse_step(p, report, rev, CREATE_STEP, &index, rev, result);
        if !is_ours {
            return refuse(ReverseRefusal::IdTaken(rev.to_string()));
        }
    }
    if link {
        if !spend() {
            return crashed("linking the original");
        }
        if let Some(refusal) = link_original(p, id, rev, report).await? {
            return refuse(refusal);
        }
    }
    run_reversal(p, rev, RunLimits { max_steps: budget }, report).await
}

/// The original as read, finished: a committed one is refused, or with
/// `finish_committed` recovered first and read again. `Err` holds the
/// verdict when it cannot be reversed now.
async fn finished_original(
    p: &Protocol,
    id: &str,
    opts: &ReverseOptions,
    report: &mut ReverseReport,
) -> Result<std::result::Result<Transaction, ReverseVerdict>> {
    let not_found = || Error::NotFound {
        kind: "transaction",
        index: p.config.indices.transactions.clone(),
        id: id.to_string(),
    };
    let (mut txn, _) = p.read_transaction(id).await?.ok_or_else(not_found)?;
    report.original_state = txn.state.clone();
    if txn.state == Some(TxnState::Committed) && txn.reversed_by.is_none() {
        if !opts.finish_committed {
            return Ok(Err(ReverseVerdict::Refused(ReverseRefusal::Committed)));
        }
        let finish = p
            .run_procedure(id, Procedure::Recover, opts.force, RunLimits::default())
            .await;
        report.steps.extend(finish.steps);
        if !ends_finished(&finish.verdict) {
            return Ok(Err(not_finished(
                "finishing the committed transaction",
                finish.verdict,
            )));
        }
        txn = p.read_transaction(id).await?.ok_or_else(not_found)?.0;
    }
    Ok(Ok(txn))
}

/// Links the original to its reversal (`reversed_by`), conditional on
/// the original as read. When the original changed meanwhile, the
/// reversal (still only created, it moved nothing) is rolled back and
/// the refusal is returned.
async fn link_original(
    p: &Protocol,
    id: &str,
    rev: &str,
    report: &mut ReverseReport,
) -> Result<Option<ReverseRefusal>> {
    let index = p.config.indices.transactions.clone();
    let mut found = None;
    let linking = p
        .exec
        .run("transaction", &index, id, |src| {
            Ok(link_decision(src, rev).unwrap_or_else(|f| {
                found = Some(f);
                DocDecision::Noop(NoopReason::StateIs(TxnState::Finished))
            }))
        })
        .await;
    let outcome = match linking {
        Ok(ex) => ex.outcome,
        Err(e) => {
            push_step(
                p,
                report,
                id,
                LINK_STEP,
                &index,
                id,
                StepResult::Error(e.to_string()),
            );
            return Err(e);
        }
    };
    if let Some(found) = found {
        // The original changed since it was read: undo our reversal
        // while it is still only `created` (it moved nothing yet).
        let cancel = p
            .run_procedure(rev, Procedure::Rollback, true, RunLimits::default())
            .await;
        report.steps.extend(cancel.steps);
        return Ok(Some(match found {
            LinkFound::Other(by) => ReverseRefusal::AlreadyReversed { by },
            LinkFound::State(Some(s)) => ReverseRefusal::InFlight(s),
            LinkFound::State(None) => ReverseRefusal::Protocol(ProcedureRefusal::Malformed(
                Problems::one(Problem::Missing(vec!["transaction_state".into()])),
            )),
        }));
    }
    push_step(
        p,
        report,
        id,
        LINK_STEP,
        &index,
        id,
        StepResult::from(&outcome),
    );
    Ok(None)
}

/// Runs the reversal's own recovery (within `limits`) and says how the
/// reversal ended: another process that moved it on may have finished it.
async fn run_reversal(
    p: &Protocol,
    rev: &str,
    limits: RunLimits,
    report: &mut ReverseReport,
) -> Result<ReverseVerdict> {
    let run = p
        .run_procedure_after(rev, Procedure::Recover, true, limits, Preflight::Asked)
        .await;
    report.steps.extend(run.steps);
    // Stopped because another process moved it on: it may have finished.
    if let Verdict::Stopped(_) = run.verdict {
        if let Some((r, _)) = p.read_transaction(rev).await? {
            if r.state == Some(TxnState::Finished) {
                return Ok(ReverseVerdict::Reversed);
            }
        }
    }
    Ok(if ends_finished(&run.verdict) {
        ReverseVerdict::Reversed
    } else if matches!(run.verdict, Verdict::NothingToDo(TxnState::RolledBack)) {
        ReverseVerdict::Refused(ReverseRefusal::ReversalRolledBack(rev.to_string()))
    } else {
        not_finished("running the reversal", run.verdict)
    })
}

/// Creates the reversal with `op_type=create`; an existing document that
/// is this reversal (an earlier attempt, or our own write whose answer
/// was lost) counts as ours.
async fn create_reversal(p: &Protocol, rev: &str, t: &Transfer) -> Result<CreateResult> {
    let index = &p.config.indices.transactions;
    let (times, now) = (p.time_fields().await?, p.now().await);
    if let Some(c) = times.creation_conflict() {
        return Err(crate::error::Error::Invalid(format!(
            "refused before the first write: {c}"
        )));
    }
    let doc = plan::source(t, times.creation.stamp(now), times.modification.stamp(now));
    Ok(match p.exec.create(index, rev, &doc).await? {
        Created::Created => CreateResult::Created,
        Created::Exists { doc: d, .. } if is_reversal_of(&d.source, rev, t) => {
            CreateResult::Existed
        }
        Created::Exists { .. } => CreateResult::Taken,
    })
}

fn reverse_step(
    p: &Protocol,
    report: &mut ReverseReport,
    txn: &str,
    label: &str,
    index: &str,
    id: &str,
    result: CreateResult,
) {
    let result = match result {
        CreateResult::Created => StepResult::Updated(Effect::Created),
        CreateResult::Existed => StepResult::Noop(NoopReason::AlreadyExists),
        CreateResult::Taken => StepResult::Error(format!("`{id}` exists and is not this reversal")),
    };
    push_step(p, report, txn, label, index, id, result);
}

fn push_step(
    p: &Protocol,
    report: &mut ReverseReport,
    txn: &str,
    label: &str,
    index: &str,
    id: &str,
    result: StepResult,
) {
    let r = StepReport {
        txn: txn.to_string(),
        step: None,
        label: label.to_string(),
        target: format!("{index}/{id}"),
        result,
        receipt: None,
    };
    p.notify(&r);
    report.steps.push(r);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn finished() -> Map<String, Value> {
        map(
            json!({"src_acct":"A","dest_acct":"B","amount":5,"transaction_state":"finished",
                   "modification_time":"2020-01-01T00:00:00Z","app_note":"kept"}),
        )
    }

    #[test]
    fn link_keeps_every_field_and_is_idempotent() {
        let DocDecision::Write(changes, _) = link_decision(&finished(), "t-reversal").unwrap()
        else {
            panic!("expected a write")
        };
        assert_eq!(changes.doc(), map(json!({"reversed_by": "t-reversal"})));
        let doc = changes.apply_to(&finished());
        assert_eq!(doc["app_note"], "kept");
        assert_eq!(doc.len(), finished().len() + 1);
        assert!(matches!(
            link_decision(&doc, "t-reversal"),
            Ok(DocDecision::Noop(NoopReason::AlreadyLinked(_)))
        ));
        assert_eq!(
            link_decision(&doc, "other").err(),
            Some(LinkFound::Other("t-reversal".into()))
        );
        let mut pending = finished();
        pending.insert("transaction_state".into(), json!("pending"));
        assert_eq!(
            link_decision(&pending, "t-reversal").err(),
            Some(LinkFound::State(Some(TxnState::Pending)))
        );
    }

    #[test]
    fn a_reversal_is_recognised_by_content() {
        let t = Transfer {
            id: "t".into(),
            src: "A".into(),
            dest: "B".into(),
            amount: 5,
        };
        let ours = map(
            json!({"src_acct":"B","dest_acct":"A","amount":5,"reverses":"t",
                              "transaction_state":"created","modification_time":"2020-01-01T00:00:00Z"}),
        );
        assert!(is_reversal_of(&ours, "t-reversal", &t));
        let mut other = ours.clone();
        other.insert("amount".into(), json!(6));
        assert!(!is_reversal_of(&other, "t-reversal", &t));
        assert_eq!(reversal_id("t"), "t-reversal");
    }
}
