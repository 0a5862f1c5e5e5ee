//! What the confirmation dialog shows of the documents re-read for the act:
//! a transaction's plan (every write in order, where it ends, the balance
//! effect per account from the re-read balances, or the protocol's own
//! refusal), the locks a release would delete with their holders and
//! whether they are stale, and the audit's dangling entries a repair undoes
//! with the money it moves.

use crate::dashboard::layers::DrawCx;
use crate::dashboard::ui::theme::{amount_text, bold, datetime, route, signed, state_text, Theme};
use crate::protocol::audit::AuditReport;
use crate::protocol::executor::StepOutcome;
use crate::protocol::intervene::{EffectKind, PlanStep, TxnPlan};
use crate::protocol::locks::LockView;
use crate::protocol::locks::Staleness;
use crate::protocol::views::{Preview, TransactionDetail};
use crate::protocol::Procedure;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Releasing one lock: who holds it, its owner, its age, and the one
/// write (with whether the lock is stale, live or unknown).
pub fn lock_dialog(cx: &DrawCx, l: Option<&LockView>) -> Vec<Line<'static>> {
    let th = &cx.theme;
    let Some(l) = l else {
        return vec![Line::styled(
            "this lock is no longer held; nothing to release",
            th.dim_text(),
        )];
    };
    let age = l
        .info
        .age_seconds(cx.now)
        .map(crate::protocol::time::human_age)
        .unwrap_or_else(|| "?".into());
    let owner = match &l.owner_state {
        Some(s) => format!("owner transaction: {s}"),
        None => format!("{} lock, no owner transaction", l.info.shape.label()),
    };
    let mut out = vec![
        Line::from(format!("held by {}", l.info.holder_label())),
        Line::from(format!("{owner} · taken {age} ago")),
        Line::from(""),
        Line::styled("would write:", bold()),
    ];
    let (status, style) = staleness_text(th, l);
    out.push(Line::from(vec![
        Span::raw(format!(
            " 1. {} — ",
            l.info.shape.release_action().describe(&l.info.resource)
        )),
        Span::styled(status, style),
    ]));
    out
}

/// The audit's repair: the dangling pending entries found just now and
/// what the repair does with them.
pub fn audit_dialog(th: &Theme, r: &AuditReport) -> Vec<Line<'static>> {
    let dangling: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == crate::protocol::audit::FindingKind::DanglingPending)
        .collect();
    if dangling.is_empty() {
        return vec![Line::styled(
            "the audit no longer finds dangling pending entries; nothing to repair",
            th.dim_text(),
        )];
    }
    let mut out = vec![Line::styled(
        "dangling pending entries found by the audit just now:",
        bold(),
    )];
    out.extend(
        dangling
            .iter()
            .map(|f| Line::from(format!(" {}: {}", f.id, f.detail))),
    );
    out.push(Line::from(""));
    if r.repair_effect.is_empty() {
        out.push(Line::styled(
            "balance effect: none (no entry's repair is unambiguous)",
            th.dim_text(),
        ));
    } else {
        let net: i64 = r.repair_effect.iter().map(|e| e.delta).sum();
        out.push(Line::styled(
            format!("balance effect of the repair (net {}):", signed(net)),
            bold(),
        ));
        out.extend(r.repair_effect.iter().map(|e| Line::from(format!(" {e}"))));
    }
    out.push(Line::styled(
        "the repair undoes each one whose repair is unambiguous (its transaction rolled back, \
         or finished and already settled by the account), re-reading every account; the rest \
         are left for you. The log lists each repair.",
        Style::new().fg(th.warn),
    ));
    out
}

/// A lock's staleness in words, coloured by how safe its release is.
fn staleness_text(th: &Theme, l: &LockView) -> (String, Style) {
    match &l.staleness {
        Staleness::Stale(why) => (format!("stale ({why})"), Style::new().fg(th.warn)),
        Staleness::Live => (
            "LIVE: its holder looks alive".to_string(),
            Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
        ),
        Staleness::Unknown(why) => (format!("unknown ({why})"), Style::new().fg(th.odd)),
    }
}

/// A transaction's act: its state, amount and route, when it was modified,
/// then what the act would write (a rollback's or recovery's `plan`: its
/// steps; the release of its locks, no plan: the locks).
pub fn transaction_lines(
    cx: &DrawCx,
    det: &TransactionDetail,
    plan: Option<&TxnPlan>,
) -> Vec<Line<'static>> {
    let th = &cx.theme;
    let t = &det.txn;
    let mut out = vec![Line::from(vec![
        Span::styled(state_text(t), bold()),
        Span::raw(format!(" · {} · {}", amount_text(t), route(t))),
    ])];
    if let Some(m) = t.modification_time {
        out.push(Line::styled(
            format!(
                "modified {} ({} ago)",
                datetime(m),
                t.age_seconds(cx.now)
                    .map_or_else(|| "-".into(), crate::protocol::time::human_age)
            ),
            th.dim_text(),
        ));
    }
    out.push(Line::from(""));
    match plan.map(|p| (p, p.procedure)) {
        Some((plan, Procedure::Rollback)) => {
            out.extend(plan_lines(th, det, plan, &det.rollback, "rollback"))
        }
        Some((plan, Procedure::Recover)) => {
            out.extend(plan_lines(th, det, plan, &det.recover, "recovery"))
        }
        None => out.extend(lock_lines(th, det)),
    }
    out
}

/// A rollback's or recovery's plan: its steps in order (each with what
/// the documents' preview says it writes; the lock releases that follow),
/// where it ends, and its balance change from the re-read balances; or its
/// own refusal, or nothing to do.
fn plan_lines(
    th: &Theme,
    det: &TransactionDetail,
    plan: &TxnPlan,
    p: &Preview,
    what: &str,
) -> Vec<Line<'static>> {
    if let Some(r) = &p.refusal {
        return vec![
            Line::styled(
                format!("{what} refused: {r}"),
                Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
            ),
            Line::from("nothing will be changed."),
        ];
    }
    if p.steps.is_empty() {
        let state = p
            .ends_in
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| "?".into());
        return vec![Line::styled(
            format!("nothing to do: the transaction is {state}"),
            th.dim_text(),
        )];
    }
    let mut out = vec![Line::styled(
        format!("{what} would run these steps:"),
        bold(),
    )];
    for (i, step) in plan.steps.iter().enumerate() {
        let outcome = match (step, p.steps.get(i).map(|s| &s.outcome)) {
            (PlanStep::Protocol { .. }, Some(StepOutcome::Updated(e))) => {
                Span::styled(format!("updates: {e}"), Style::new().fg(th.good))
            }
            (PlanStep::Protocol { .. }, Some(StepOutcome::Noop(r))) => {
                Span::styled(format!("no-op: {r}"), Style::new().fg(th.muted))
            }
            _ => Span::styled("deletes the lock", Style::new().fg(th.good)),
        };
        out.push(Line::from(vec![
            Span::raw(format!(" {}. {step} — ", i + 1)),
            outcome,
        ]));
    }
    if let Some(s) = &p.ends_in {
        out.push(Line::from(format!("ends in: {s}")));
    }
    out.push(Line::styled("balance effect:", bold()));
    for id in [&det.txn.src, &det.txn.dest].into_iter().flatten() {
        let delta = plan
            .balance_change
            .iter()
            .find(|(a, _)| a == id)
            .map_or(0, |(_, d)| *d);
        let before = det
            .accounts
            .iter()
            .find(|a| &a.id == id)
            .and_then(|a| a.state.as_ref())
            .map(|s| s.balance);
        let text = match before {
            Some(b) => format!(" {id}: {b} → {} ({})", b + delta, signed(delta)),
            None => format!(" {id}: ? ({})", signed(delta)),
        };
        let style = if delta == 0 {
            th.dim_text()
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        out.push(Line::styled(text, style));
    }
    if let Some(w) = plan
        .in_words
        .as_ref()
        .filter(|w| w.kind != EffectKind::None)
    {
        out.push(Line::from(format!(" {w}")));
    }
    out
}

/// The locks a transaction's release would delete, each with its
/// staleness and holder, and a warning when some are not stale.
fn lock_lines(th: &Theme, det: &TransactionDetail) -> Vec<Line<'static>> {
    if det.locks.is_empty() {
        return vec![Line::styled(
            "this transaction holds no locks; nothing to release",
            th.dim_text(),
        )];
    }
    let mut out = vec![Line::styled("locks that would be released:", bold())];
    for l in &det.locks {
        let (status, style) = staleness_text(th, l);
        out.push(Line::from(vec![
            Span::raw(format!(" {} — ", l.info.resource)),
            Span::styled(status, style),
            Span::styled(format!(" · {}", l.info.holder_label()), th.dim_text()),
        ]));
    }
    let live = det.locks.iter().filter(|l| !l.staleness.is_stale()).count();
    if live > 0 {
        out.push(Line::from(vec![
            Span::styled(" WARNING ", th.alert(th.danger)),
            Span::styled(
                format!(" {live} lock(s) not stale: a worker may still be using them; another transfer could get in"),
                Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
            ),
        ]));
    }
    out
}
