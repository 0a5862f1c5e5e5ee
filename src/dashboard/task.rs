//! Action tasks: re-read a transaction (or lock) for a confirmation dialog,
//! read a transaction by id for the detail pane, and run a confirmed action
//! through [`crate::protocol::intervene`] (which records it, as for the
//! command line), reporting each step to the event channel as it ends. The
//! UI never awaits any of this.
//!
//! Safety: the recovery window and lock staleness are the protocol's; an
//! action runs forced only when the operator pressed the dialog's force key,
//! and a confirmed run first re-reads its target and stops if it is no
//! longer what the dialog showed.

use super::event::{Action, ActionOutcome, Checked, Event, Expected, Reread, Run};
use crate::error::Error;
use crate::protocol::intervene::{self, Choices, Refusal};
use crate::protocol::report::StepReport;
use crate::protocol::trail::{Interface, Trail};
use crate::protocol::Protocol;
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
        return Ok(Checked {
            refusal: Refusal::of_lock(view.as_ref()),
            reread: Reread::Lock(view.map(Box::new)),
        });
    }
    let detail = match proto.transaction_detail(id).await {
        Ok(Some(d)) => d,
        Ok(None) => return Err(Refusal::NoSuchTransaction(id.to_string()).to_string()),
        Err(e) => return Err(e.to_string()),
    };
    let refusal = match action.procedure() {
        // The protocol's checks before any write (the recovery window...);
        // what the procedure itself would refuse, the preview shows.
        Some(_) => proto
            .check_actionable(&detail.txn, false)
            .err()
            .map(Refusal::Protocol),
        None => {
            let live: Vec<String> = detail
                .locks
                .iter()
                .filter(|l| !l.staleness.is_stale())
                .map(|l| l.info.resource.clone())
                .collect();
            (!live.is_empty()).then_some(Refusal::LocksNotStale(live))
        }
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
            None => execute(&proto, &run).await,
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

/// Checks that the audit trail every act is recorded in can be opened;
/// says why not (nothing will run) when its index is missing or cannot be
/// checked.
pub(super) async fn open_trail(proto: &Protocol) -> Result<(), String> {
    match Trail::open(proto).await {
        Ok(_) => Ok(()),
        Err(Error::IndexMissing(index)) => Err(format!(
            "{}; nothing will run",
            Refusal::AuditIndexMissing(index)
        )),
        Err(e) => Err(format!(
            "cannot open the audit trail: {e}; nothing will run"
        )),
    }
}

/// Runs a confirmed act through [`intervene::run`] (which records it):
/// its sentence for the log (with the audit record), and whether it did
/// what was asked and was recorded.
pub(super) async fn execute(proto: &Protocol, run: &Run) -> (String, bool) {
    let choices = Choices::new(Interface::Dashboard, run.reason.clone()).forced(run.force);
    match intervene::run(proto, run.action.intervention(&run.target, choices)).await {
        Ok(done) => (done.to_string(), done.ok() && done.record_error.is_none()),
        Err(n) => (format!("not run: {n}"), false),
    }
}
