//! Action tasks: re-read a transaction (or lock) for a confirmation dialog,
//! read a transaction by id for the detail pane, and run a confirmed action
//! through the protocol module, reporting each step to the event channel as
//! it ends. The UI never awaits any of this.
//!
//! Safety: the recovery window and lock staleness are the protocol's; an
//! action runs forced only when the operator pressed the dialog's force key,
//! and a confirmed run first re-reads its target and stops if it is no
//! longer what the dialog showed.

use super::event::{Action, ActionOutcome, Checked, Event, Expected, Reread, Run};
use crate::error::Error;
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::report::StepReport;
use crate::protocol::trail::{
    release_outcome, ActionKind, Interface, Intervention, Outcome as TrailOutcome, RecordId, RunAs,
    Trail, TrailStep,
};
use crate::protocol::{Procedure, Protocol};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Re-reads the dialog's target and asks the protocol whether an unforced
/// run would be refused.
pub fn spawn_preview(proto: Protocol, action: Action, id: String, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let checked = check(&proto, action, &id).await;
        let _ = events.send(Event::Preview {
            action,
            target: id,
            checked,
        });
    });
}

async fn check(proto: &Protocol, action: Action, id: &str) -> Result<Checked, String> {
    open_trail(proto).await?;
    check_target(proto, action, id).await
}

/// Re-reads `id` for `action` and asks the protocol whether an unforced
/// run would be refused (the audit trail already checked).
pub(super) async fn check_target(
    proto: &Protocol,
    action: Action,
    id: &str,
) -> Result<Checked, String> {
    if action == Action::AuditRepair {
        let report = proto.audit(None, false).await.map_err(|e| e.to_string())?;
        return Ok(Checked {
            reread: Reread::Audit(Box::new(report)),
            refusal: None,
        });
    }
    if action == Action::Reverse {
        return super::reverse_run::check(proto, id).await;
    }
    if action.on_lock() {
        let view = proto.lock_view(id).await.map_err(|e| e.to_string())?;
        let refusal = match &view {
            Some(v) if !v.staleness.is_stale() => Some(format!(
                "lock on `{}` held by {} is not stale",
                v.info.resource,
                v.info.holder_label()
            )),
            _ => None,
        };
        return Ok(Checked {
            reread: Reread::Lock(view.map(Box::new)),
            refusal,
        });
    }
    let detail = match proto.transaction_detail(id).await {
        Ok(Some(d)) => d,
        Ok(None) => return Err(format!("transaction `{id}` no longer exists")),
        Err(e) => return Err(e.to_string()),
    };
    let refusal = match action {
        Action::ReleaseLocks => {
            let live: Vec<&str> = detail
                .locks
                .iter()
                .filter(|l| !l.staleness.is_stale())
                .map(|l| l.info.resource.as_str())
                .collect();
            (!live.is_empty()).then(|| format!("not stale: {}", live.join(", ")))
        }
        _ => proto
            .check_actionable(&detail.txn, false)
            .err()
            .map(|r| r.explain(&super::confirm::force_hint())),
    };
    Ok(Checked {
        reread: Reread::Transaction(Box::new(detail)),
        refusal,
    })
}

/// Runs the audit (read-only) for the audit pane.
pub fn spawn_audit(proto: Protocol, expect_total: Option<i64>, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let report = proto.audit(expect_total, false).await;
        let _ = events.send(Event::Audited(
            report.map(Box::new).map_err(|e| e.to_string()),
        ));
    });
}

/// Reads one transaction by id (any state) for the detail pane.
pub fn spawn_lookup(proto: Protocol, id: String, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let detail = match proto.transaction_detail(&id).await {
            Ok(d) => Ok(d.map(Box::new)),
            Err(e) => Err(e.to_string()),
        };
        let _ = events.send(Event::LookedUp { id, detail });
    });
}

/// Reads the audit trail's records of transaction `id` (detail pane).
pub fn spawn_history(proto: Protocol, id: String, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let records = crate::protocol::trail::history(&proto, &id)
            .await
            .map_err(|e| e.to_string());
        let _ = events.send(Event::History { id, records });
    });
}

/// Runs a confirmed action.
pub fn spawn_action(proto: Protocol, run: Run, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let step_events = events.clone();
        let proto = proto.with_observer(Arc::new(move |r: &StepReport| {
            let _ = step_events.send(Event::Step(r.clone()));
        }));
        let (summary, ok) = match changed_since_dialog(&proto, &run).await {
            Some(why) => (why, false),
            None => execute(&proto, &run, false).await,
        };
        let _ = events.send(Event::ActionDone(ActionOutcome {
            action: run.action,
            txn: run.target,
            summary,
            ok,
        }));
    });
}

/// Re-reads the target; says what changed if it is no longer what the
/// dialog showed (then nothing is done).
pub(super) async fn changed_since_dialog(proto: &Protocol, run: &Run) -> Option<String> {
    if run.action == Action::AuditRepair {
        // The repair re-reads and re-decides every entry itself.
        return None;
    }
    let now = if run.action.on_lock() {
        match proto.lock_view(&run.target).await {
            Ok(Some(v)) => Expected {
                state: v.owner_state,
                modified: v.info.created_at,
            },
            Ok(None) => return None, // released meanwhile: the release says "not held"
            Err(e) => return Some(format!("not run: could not re-read the lock: {e}")),
        }
    } else {
        match proto.read_transaction(&run.target).await {
            Ok(Some((t, _))) => Expected {
                state: t.state,
                modified: t.modification_time,
            },
            Ok(None) => return Some("not run: the transaction no longer exists".into()),
            Err(e) => return Some(format!("not run: could not re-read it: {e}")),
        }
    };
    (now != run.expected).then(|| {
        let state = |s: &Option<crate::protocol::TxnState>| {
            s.as_ref()
                .map(ToString::to_string)
                .unwrap_or_else(|| "?".into())
        };
        format!(
            "not run: changed since the dialog opened (was {}, now {}); look again",
            state(&run.expected.state),
            state(&now.state)
        )
    })
}

/// The audit trail every intervention is recorded in; refuses (nothing
/// runs) when its index is missing or cannot be checked.
pub(super) async fn open_trail(proto: &Protocol) -> Result<Trail, String> {
    match Trail::open(proto).await {
        Ok(t) => Ok(t),
        Err(Error::IndexMissing(index)) => Err(format!(
            "the audit index `{index}` does not exist: run estx-tui init \
             (every intervention is recorded there); nothing will run"
        )),
        Err(e) => Err(format!(
            "cannot open the audit trail: {e}; nothing will run"
        )),
    }
}

pub(super) async fn execute(proto: &Protocol, run: &Run, bulk: bool) -> (String, bool) {
    let trail = match open_trail(proto).await {
        Ok(t) => t,
        Err(e) => return (format!("not run: {e}"), false),
    };
    let id = run.target.as_str();
    let reason = run.reason.clone();
    let ui = Interface::Dashboard;
    let how = RunAs {
        force: run.force,
        reason: reason.clone(),
        interface: ui,
        bulk,
    };
    let (summary, ok, recorded) = match run.action {
        Action::Rollback | Action::Recover => {
            let procedure = if run.action == Action::Rollback {
                Procedure::Rollback
            } else {
                Procedure::Recover
            };
            match trail.run_procedure(proto, procedure, id, how).await {
                Ok(r) => {
                    let ok = r.value.verdict.is_done();
                    (r.value.verdict.to_string(), ok, (r.record, r.record_error))
                }
                Err(e) => return (format!("not run: {e}"), false),
            }
        }
        Action::ReleaseLocks => match trail.run_release(proto, id, how).await {
            Ok(r) => {
                let (text, ok) = match &r.value {
                    Ok(released) if released.is_empty() => ("no locks held".to_string(), true),
                    Ok(released) => released_text(released),
                    Err(e) => (format!("failed: {e}"), false),
                };
                (text, ok, (r.record, r.record_error))
            }
            Err(e) => return (format!("not run: {e}"), false),
        },
        Action::Reverse => match super::reverse_run::execute(proto, &trail, run).await {
            Ok(done) => done,
            Err(e) => return (format!("not run: {e}"), false),
        },
        Action::AuditRepair => {
            let mut i = Intervention::new(ActionKind::AuditRepair, vec![], ui);
            i.targets = vec![id.to_string()];
            i.reason = reason;
            i.plan = vec!["audit".into(), "repair what is safe".into()];
            let record = match trail.begin(&i).await {
                Ok(r) => r,
                Err(e) => return (format!("not run: {e}"), false),
            };
            let result = proto.audit(None, true).await;
            let (text, ok, outcome, steps) = match &result {
                Ok(r) if r.repairs.is_empty() => (
                    "nothing was repairable".to_string(),
                    true,
                    TrailOutcome::NothingToDo,
                    vec![],
                ),
                Ok(r) => (
                    format!("repaired: {}", r.repairs.join("; ")),
                    true,
                    TrailOutcome::Completed,
                    r.repairs.iter().map(|x| TrailStep::repair(x)).collect(),
                ),
                Err(e) => (format!("failed: {e}"), false, TrailOutcome::Failed, vec![]),
            };
            let err = trail.finish(&record, outcome, &text, steps).await.err();
            (text, ok, (record, err))
        }
        Action::ReleaseLock => {
            let view = proto.lock_view(id).await.ok().flatten();
            let mut i = Intervention::lock_release(id, view.as_ref(), run.force, ui);
            i.reason = reason;
            if let Some(why) = i.missing_reason() {
                return (format!("not run: {why}"), false);
            }
            let record = match trail.begin(&i).await {
                Ok(r) => r,
                Err(e) => return (format!("not run: {e}"), false),
            };
            let txn = i.transactions.first().cloned().unwrap_or_default();
            let result = proto.release_lock(id, run.force).await;
            let outcomes: Vec<(String, ReleaseOutcome)> = match &result {
                Ok(o) => vec![(id.to_string(), o.clone())],
                Err(_) => vec![],
            };
            let locks = &proto.config().indices.locks;
            let steps = outcomes
                .iter()
                .map(|(r, o)| TrailStep::release(locks, &txn, r, o))
                .collect();
            let (outcome, mut summary) = release_outcome(&outcomes, result.is_err());
            let (text, ok) = match &result {
                Ok(o) => (
                    release_text(id, o),
                    !matches!(o, ReleaseOutcome::Refused(_)),
                ),
                Err(e) => {
                    summary = format!("failed: {e}");
                    (summary.clone(), false)
                }
            };
            let err = trail.finish(&record, outcome, &summary, steps).await.err();
            (text, ok, (record, err))
        }
    };
    let (record, record_error): (RecordId, Option<Error>) = recorded;
    match record_error {
        None => (format!("{summary} · audit record {record}"), ok),
        Some(e) => (
            format!("{summary} · audit record {record} left UNFINISHED: {e}"),
            false,
        ),
    }
}

fn released_text(released: &[(String, ReleaseOutcome)]) -> (String, bool) {
    let ok = released
        .iter()
        .all(|(_, o)| !matches!(o, ReleaseOutcome::Refused(_)));
    let text = released
        .iter()
        .map(|(r, o)| release_text(r, o))
        .collect::<Vec<_>>()
        .join(", ");
    (text, ok)
}

fn release_text(resource: &str, o: &ReleaseOutcome) -> String {
    format!("{resource} {o}")
}
