//! The reverse dialog's body: the original as re-read, the protocol's plan
//! of the reversal step by step (finishing a committed original first,
//! creating the compensating transfer, linking the original, the
//! reversal's own steps: what a run, fresh or resumed, does) and the
//! balance effect from the re-read balances, or the protocol's refusal in
//! its own words.

use crate::dashboard::layers::DrawCx;
use crate::dashboard::ui::theme::{amount_text, bold, datetime, route, signed, state_text, Theme};
use crate::protocol::intervene::{JudgedReversal, PlanStep};
use crate::protocol::transaction::{Transaction, Transfer};
use crate::protocol::views::TransactionDetail;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

fn step_line(n: usize, label: &str, outcome: Span<'static>) -> Line<'static> {
    Line::from(vec![Span::raw(format!(" {n}. {label} — ")), outcome])
}

/// The reverse dialog's body below its title line: the protocol's plan
/// of the reversal ([`JudgedReversal::on_reversal`]) on the re-read
/// original and whatever sits under the reversal's id.
pub fn dialog_lines(cx: &DrawCx, plan: &JudgedReversal) -> Vec<Line<'static>> {
    let (original, existing) = (&plan.original, plan.existing.as_ref());
    let th = &cx.theme;
    let t = &original.txn;
    let mut out = original_lines(cx, t);
    let (Ok(tr), false) = (t.transfer(), plan.steps.is_empty()) else {
        let why = plan
            .refusal
            .as_ref()
            .map_or("nothing to do".to_string(), ToString::to_string);
        out.push(Line::styled(
            format!("reverse refused: {why}"),
            Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
        ));
        out.push(Line::from("nothing will be changed."));
        return out;
    };
    let reversal = plan.reversal();
    out.extend(compensating_lines(th, &reversal, existing, &tr));
    out.push(Line::styled("would write, in order:", bold()));
    if plan
        .steps
        .iter()
        .any(|s| matches!(s, PlanStep::FinishFirst { .. }))
    {
        out.push(Line::styled(
            format!(
                "committed, not finished: recovery finishes {} first (this confirmation covers it)",
                t.id
            ),
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        ));
    }
    for (n, (step, effect)) in plan.steps_in_full().enumerate() {
        let effect = effect.effect.clone();
        let procedure_step = matches!(
            step,
            PlanStep::Protocol { .. } | PlanStep::FinishFirst { .. }
        );
        let outcome = if step.writes() && procedure_step {
            Span::styled(format!("updates: {effect}"), Style::new().fg(th.good))
        } else if step.writes() {
            Span::styled(effect, Style::new().fg(th.good))
        } else {
            Span::styled(format!("no-op: {effect}"), Style::new().fg(th.muted))
        };
        out.push(step_line(n + 1, &step.reported(), outcome));
    }
    out.push(Line::from("ends in: both finished, linked both ways"));
    out.extend(balance_lines(plan, original, &tr.src, &tr.dest));
    out
}

/// The original as re-read: state, amount, route, when it was modified,
/// its reversal links.
fn original_lines(cx: &DrawCx, t: &Transaction) -> Vec<Line<'static>> {
    let th = &cx.theme;
    let mut out = vec![Line::from(vec![
        Span::styled(state_text(t), bold()),
        Span::raw(format!(" · {} · {}", amount_text(t), route(t))),
    ])];
    if let Some(m) = t.modification_time {
        let ago = crate::protocol::time::human_age((cx.now - m).num_seconds().max(0));
        out.push(Line::styled(
            format!("modified {} ({ago} ago)", datetime(m)),
            th.dim_text(),
        ));
    }
    out.extend(crate::dashboard::ui::reverse::link_lines(th, t));
    out.push(Line::from(""));
    out
}

/// The balance effect of the finish (if any) and the reversal on the
/// original's source and destination, from the re-read balances.
fn balance_lines(
    plan: &JudgedReversal,
    original: &TransactionDetail,
    src: &str,
    dest: &str,
) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled("balance effect:", bold())];
    let change = |id: &str| {
        plan.balance_change
            .iter()
            .find(|(a, _)| a == id)
            .map_or(0, |(_, d)| *d)
    };
    for (id, delta) in [(src, change(src)), (dest, change(dest))] {
        let before = original
            .accounts
            .iter()
            .find(|v| v.id == id)
            .and_then(|v| v.state.as_ref())
            .map(|s| s.balance);
        let text = match before {
            Some(b) => format!(" {id}: {b} → {} ({})", b + delta, signed(delta)),
            None => format!(" {id}: ? ({})", signed(delta)),
        };
        out.push(Line::styled(
            text,
            Style::new().add_modifier(Modifier::BOLD),
        ));
    }
    out
}

/// The compensating transfer, and whether an earlier attempt left it.
fn compensating_lines(
    th: &Theme,
    reversal: &str,
    existing: Option<&Transaction>,
    tr: &Transfer,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    out.push(Line::from(vec![
        Span::styled("compensating transfer ", bold()),
        Span::styled(reversal.to_string(), bold()),
        Span::raw(format!(": {} → {}, amount {}", tr.dest, tr.src, tr.amount)),
    ]));
    if let Some(e) = existing {
        let state = e
            .state
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| "?".into());
        out.push(Line::styled(
            format!("an earlier attempt left it {state}: carried on, not created again"),
            Style::new().fg(th.warn),
        ));
    }
    out
}
