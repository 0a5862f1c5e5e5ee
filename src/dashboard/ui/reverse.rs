//! What the screen says of reversals: the reversal links in the detail pane
//! (both ways), and the reverse dialog's body — the original as re-read,
//! every write in order (finishing a committed original first, creating
//! the compensating transfer, linking the original, the reversal's own
//! steps) and the balance effect from the re-read balances, or the
//! protocol's refusal in its own words.

use super::theme::{amount_text, bold, datetime, route, signed, state_text, Theme};
use crate::dashboard::app::App;
use crate::dashboard::preview::{ReverseCheck, CREATE_STEP, LINK_STEP};
use crate::protocol::executor::StepOutcome;
use crate::protocol::intervene::PlanStep;
use crate::protocol::transaction::{Transaction, Transfer};
use crate::protocol::views::PreviewStep;
use crate::protocol::Procedure;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// The detail pane's lines naming the reversal links of `t`.
pub fn link_lines(th: &Theme, t: &Transaction) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if let Some(by) = &t.reversed_by {
        out.push(Line::from(vec![
            Span::styled("↩ reversed by ", Style::new().fg(th.warn)),
            Span::styled(by.clone(), bold()),
            Span::styled(" (its compensating transfer)", th.dim_text()),
        ]));
    }
    if let Some(of) = &t.reverses {
        out.push(Line::from(vec![
            Span::styled("↩ reverses ", Style::new().fg(th.warn)),
            Span::styled(of.clone(), bold()),
            Span::styled(" (this is its compensating transfer)", th.dim_text()),
        ]));
    }
    out
}

fn step_line(n: usize, label: &str, outcome: Span<'static>) -> Line<'static> {
    Line::from(vec![Span::raw(format!(" {n}. {label} — ")), outcome])
}

fn outcome_span(th: &Theme, s: &PreviewStep) -> Span<'static> {
    match &s.outcome {
        StepOutcome::Updated(e) => Span::styled(format!("updates: {e}"), Style::new().fg(th.good)),
        StepOutcome::Noop(r) => Span::styled(format!("no-op: {r}"), Style::new().fg(th.muted)),
    }
}

/// The reverse dialog's body below its title line.
pub fn dialog_lines(app: &App, c: &ReverseCheck) -> Vec<Line<'static>> {
    let th = &app.theme;
    let t = &c.original.txn;
    let mut out = original_lines(app, t);
    let a = match &c.admitted {
        Ok(a) => a,
        Err(why) => {
            out.push(Line::styled(
                format!("reverse refused: {why}"),
                Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
            ));
            out.push(Line::from("nothing will be changed."));
            return out;
        }
    };
    let tr = &a.transfer;
    out.extend(compensating_lines(th, c, tr));
    out.push(Line::styled("would write, in order:", bold()));
    let mut n = 0;
    let mut next = || {
        n += 1;
        n
    };
    if a.finish_first {
        out.push(Line::styled(
            format!(
                "committed, not finished: recovery finishes {} first (this confirmation covers it)",
                t.id
            ),
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        ));
        for s in &c.original.recover.steps {
            out.push(step_line(next(), s.step.label(), outcome_span(th, s)));
        }
        // The locks the finish releases, as the plan words each release.
        for resource in c.original.lock_releases(Procedure::Recover) {
            let release = PlanStep::ReleaseLock {
                resource: resource.to_string(),
                held_by: None,
            };
            let done = Span::styled("deletes the lock", Style::new().fg(th.good));
            out.push(step_line(next(), &release.to_string(), done));
        }
    }
    if c.existing.is_none() {
        let what = format!(
            "creates {} ({} → {}, {}, reverses {})",
            c.reversal, tr.dest, tr.src, tr.amount, tr.id
        );
        out.push(step_line(
            next(),
            CREATE_STEP,
            Span::styled(what, Style::new().fg(th.good)),
        ));
    }
    if t.reversed_by.is_none() {
        let what = format!("sets {}.reversed_by = {}", t.id, c.reversal);
        out.push(step_line(
            next(),
            LINK_STEP,
            Span::styled(what, Style::new().fg(th.good)),
        ));
    }
    for s in c.run.iter().flat_map(|p| &p.steps) {
        out.push(step_line(next(), s.step.label(), outcome_span(th, s)));
    }
    out.push(Line::from("ends in: both finished, linked both ways"));
    out.extend(balance_lines(c, &tr.src, &tr.dest));
    out
}

/// The original as re-read: state, amount, route, when it was modified,
/// its reversal links.
fn original_lines(app: &App, t: &Transaction) -> Vec<Line<'static>> {
    let th = &app.theme;
    let mut out = vec![Line::from(vec![
        Span::styled(state_text(t), bold()),
        Span::raw(format!(" · {} · {}", amount_text(t), route(t))),
    ])];
    if let Some(m) = t.modification_time {
        let ago = crate::protocol::time::human_age((app.now - m).num_seconds().max(0));
        out.push(Line::styled(
            format!("modified {} ({ago} ago)", datetime(m)),
            th.dim_text(),
        ));
    }
    out.extend(link_lines(th, t));
    out.push(Line::from(""));
    out
}

/// The balance effect of the finish (if any) and the reversal on the
/// original's source and destination, from the re-read balances.
fn balance_lines(c: &ReverseCheck, src: &str, dest: &str) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled("balance effect:", bold())];
    let (d_src, d_dest) = c.balance_change();
    for (id, delta) in [(src, d_src), (dest, d_dest)] {
        let before = c
            .original
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
fn compensating_lines(th: &Theme, c: &ReverseCheck, tr: &Transfer) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    out.push(Line::from(vec![
        Span::styled("compensating transfer ", bold()),
        Span::styled(c.reversal.clone(), bold()),
        Span::raw(format!(": {} → {}, amount {}", tr.dest, tr.src, tr.amount)),
    ]));
    if let Some(e) = &c.existing {
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
