//! The audit pane's logic: when the invariant audit runs (in the background
//! at the pace its own cost allows, see `protocol::audit_pace`; after each
//! action and on demand at once), and what the keys do while its pane is
//! open — each repair it offers goes through the same confirmation dialog
//! as every other action.

use super::app::{App, LogLevel, Pane};
use super::event::{Action, IoRequest};
use super::keymap::Op;
use super::overlay::OverlayKind;
use crate::protocol::audit::{AuditReport, FindingKind};
use crate::protocol::audit_pace::{AuditCost, MIN_GAP};

/// Asks for an audit when the next background one is due (or `now`),
/// unless one is running or there is no data yet.
pub fn audit_if_due(app: &mut App, now: bool) -> Vec<IoRequest> {
    let due = app.audit.next_at.is_none_or(|t| app.now >= t);
    if app.audit.report.is_loading() || app.snapshot.is_none() || !(due || now) {
        return vec![];
    }
    app.audit.report.reload();
    app.audit.asked_at = Some(app.now);
    app.audit.next_at = Some(app.now + chrono_of(MIN_GAP));
    vec![IoRequest::Audit]
}

/// An audit ended: its report replaces the last (a changed count of
/// findings, or a failure, is logged); the cursor stays on a finding; the
/// next background audit is due when its cost allows (from now: a slow
/// audit's own time is no part of the gap).
pub fn audited(app: &mut App, report: Result<Box<AuditReport>, String>, cost: AuditCost) {
    let before = app.audit.findings().len();
    match &report {
        Ok(r) if r.findings.len() != before || app.audit.report.last().is_none() => {
            let text = format!("audit: {} finding(s)", r.findings.len());
            app.push_log(LogLevel::Info, text);
        }
        Ok(_) => {}
        Err(e) => app.push_log(LogLevel::Error, format!("audit failed: {e}")),
    }
    app.audit.report = super::load::Load::of(report);
    let n = app.audit.findings().len();
    app.audit.cursor = app.audit.cursor.min(n.saturating_sub(1));
    let gap = cost.next_gap(poll_period(app));
    if gap > MIN_GAP {
        tracing::info!(%cost, gap_s = gap.as_secs(), "background audit paced by its cost");
    }
    app.audit.cost = Some(cost);
    app.audit.next_at = Some(app.now + chrono_of(gap));
}

/// How often polls really end: the poller waits the interval after each
/// poll ends, so a slow cluster's polls come the poll's own time apart
/// more (the pace spreads an audit over real polls, not configured ones).
fn poll_period(app: &App) -> std::time::Duration {
    let took = app
        .snapshot
        .as_ref()
        .map(|s| s.duration)
        .unwrap_or_default();
    app.interval + took
}

fn chrono_of(d: std::time::Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
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
        Op::Quit => return super::stop::quit(app),
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
