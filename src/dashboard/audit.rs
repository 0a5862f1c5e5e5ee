//! The audit pane's logic: when the invariant audit runs (in the background
//! every [`AUDIT_EVERY`], after each action, and on demand), and what the
//! keys do while its pane is open — each repair it offers goes through the
//! same confirmation dialog as every other action.

use super::app::{App, LogLevel, Pane, AUDIT_EVERY};
use super::event::{Action, IoRequest};
use super::keymap::Op;
use super::overlay::OverlayKind;
use crate::protocol::audit::FindingKind;

/// Asks for an audit when the last one is [`AUDIT_EVERY`] old (or `now`),
/// unless one is running or there is no data yet.
pub fn audit_if_due(app: &mut App, now: bool) -> Vec<IoRequest> {
    let due = app
        .audit
        .asked_at
        .is_none_or(|t| app.now - t >= chrono::Duration::from_std(AUDIT_EVERY).unwrap_or_default());
    if app.audit.report.is_loading() || app.snapshot.is_none() || !(due || now) {
        return vec![];
    }
    app.audit.report.reload();
    app.audit.asked_at = Some(app.now);
    vec![IoRequest::Audit]
}

/// Keys while the audit pane is open: move among the findings, act on one
/// (through the same confirmation dialog), close.
pub fn on_audit_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    let n = app.audit.findings().len();
    match op {
        Op::Down | Op::PageDown => {
            app.audit.cursor = (app.audit.cursor + 1).min(n.saturating_sub(1))
        }
        Op::Up | Op::PageUp => app.audit.cursor = app.audit.cursor.saturating_sub(1),
        Op::Top => app.audit.cursor = 0,
        Op::Bottom => app.audit.cursor = n.saturating_sub(1),
        Op::Refresh => return audit_if_due(app, true),
        Op::Open => return act_on_finding(app),
        Op::Quit => {
            app.should_quit = true;
            return vec![];
        }
        _ => {
            app.overlays.close(OverlayKind::Audit);
        }
    }
    vec![]
}

fn act_on_finding(app: &mut App) -> Vec<IoRequest> {
    let Some(f) = app.audit.findings().get(app.audit.cursor).cloned() else {
        return vec![];
    };
    match f.kind {
        FindingKind::StaleLock => super::confirm::open_on(app, Action::ReleaseLock, f.id),
        FindingKind::DanglingPending => super::confirm::open_on(app, Action::AuditRepair, f.id),
        FindingKind::MalformedAccount => {
            app.overlays.close(OverlayKind::Audit);
            app.selected_account = Some(f.id);
            app.focus = Pane::Accounts;
            vec![]
        }
        FindingKind::MissingAccount
        | FindingKind::UnknownState
        | FindingKind::MalformedTransaction => {
            app.overlays.close(OverlayKind::Audit);
            app.focus = Pane::Detail;
            app.select(f.id);
            vec![]
        }
        FindingKind::PartialLocks
        | FindingKind::TotalMismatch
        | FindingKind::UndatedTransaction => {
            app.push_log(LogLevel::Info, format!("{}: {}", f.kind, f.detail));
            vec![]
        }
    }
}
