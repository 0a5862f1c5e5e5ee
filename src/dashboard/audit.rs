//! When the invariant audit runs: in the background at the pace its own
//! cost allows (see `protocol::audit::pace`), after each action and on
//! demand at once. The pane that shows it is a layer
//! ([`super::layers::audit`]).

use super::app::{App, LogLevel};
use super::event::IoRequest;
use super::layers::audit::Audit;
use crate::protocol::audit::pace::{AuditCost, MIN_GAP};
use crate::protocol::audit::AuditReport;

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
    if let Some(pane) = app.overlays.state_mut::<Audit>() {
        pane.clamp(&app.audit);
    }
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
    app.poll.interval + took
}

fn chrono_of(d: std::time::Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}
