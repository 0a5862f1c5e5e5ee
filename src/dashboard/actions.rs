//! Action tasks: re-read a transaction for a confirmation dialog, and run a
//! confirmed action through the protocol module, reporting each step to the
//! event channel as it ends. The UI never awaits any of this.

use super::event::{Action, ActionOutcome, Event};
use crate::protocol::locks::ReleaseOutcome;
use crate::protocol::report::StepReport;
use crate::protocol::Protocol;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Re-reads the transaction, its accounts and locks for the dialog.
pub fn spawn_preview(proto: Protocol, action: Action, id: String, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let detail = match proto.transaction_detail(&id).await {
            Ok(Some(d)) => Ok(Box::new(d)),
            Ok(None) => Err(format!("transaction `{id}` no longer exists")),
            Err(e) => Err(e.to_string()),
        };
        let _ = events.send(Event::Preview { action, detail });
    });
}

/// Runs a confirmed action. The operator has seen the warnings, so rollback
/// and recovery run forced (the recovery window was shown, not enforced).
pub fn spawn_action(proto: Protocol, action: Action, id: String, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let step_events = events.clone();
        let proto = proto.with_observer(Arc::new(move |r: &StepReport| {
            let _ = step_events.send(Event::Step(r.clone()));
        }));
        let outcome = run(&proto, action, &id).await;
        let _ = events.send(Event::ActionDone(outcome));
    });
}

async fn run(proto: &Protocol, action: Action, id: &str) -> ActionOutcome {
    let (summary, ok) = match action {
        Action::Rollback | Action::ForceRecover => {
            let report = if action == Action::Rollback {
                proto.rollback(id, true).await
            } else {
                proto.recover(id, true).await
            };
            let ok = report.verdict.is_done();
            (report.verdict.to_string(), ok)
        }
        Action::ReleaseLocks => match proto.release_transaction_locks(id, true).await {
            Ok(released) if released.is_empty() => ("no locks held".to_string(), true),
            Ok(released) => {
                let ok = released
                    .iter()
                    .all(|(_, o)| !matches!(o, ReleaseOutcome::Refused(_)));
                let text = released
                    .iter()
                    .map(|(r, o)| match o {
                        ReleaseOutcome::Released => format!("{r} released"),
                        ReleaseOutcome::NotHeld => format!("{r} not held"),
                        ReleaseOutcome::Refused(why) => format!("{r} refused: {why}"),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                (text, ok)
            }
            Err(e) => (format!("failed: {e}"), false),
        },
    };
    ActionOutcome {
        action,
        txn: id.to_string(),
        summary,
        ok,
    }
}
