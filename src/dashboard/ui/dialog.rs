//! The confirmation dialog, centred over everything. It shows what the
//! action would do from the documents as re-read just now: the exact steps
//! with their predicted outcome, or the refusal (with only a Close button),
//! the balance effect per account, the locks a release would delete, and a
//! warning when a worker may still be running the transaction. Rollback and
//! lock release are destructive: red border and red Confirm button.

use super::theme::{
    amount_text, bold, datetime, dim, route, signed, state_text, txn_age, wrapped_rows, DANGER,
    GOOD, ODD, WARN,
};
use crate::dashboard::app::{App, Dialog};
use crate::dashboard::event::Action;
use crate::dashboard::update::dialog_can_confirm;
use crate::protocol::executor::Outcome;
use crate::protocol::lock::Staleness;
use crate::protocol::views::{Preview, TransactionDetail};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph, Wrap};
use ratatui::Frame;

/// The label of the Cancel button.
pub const CANCEL: &str = "[ Cancel ]";
/// The label of the Confirm button.
pub const CONFIRM: &str = "[ Confirm (y) ]";
/// The label of the only button when there is nothing to confirm.
pub const CLOSE: &str = "[ Close ]";

/// Whether the action destroys or undoes work (red dialog).
pub fn is_destructive(action: Action) -> bool {
    matches!(action, Action::Rollback | Action::ReleaseLocks)
}

/// Draws the dialog over `area`.
pub fn render(frame: &mut Frame, app: &App, d: &Dialog, area: Rect) {
    let colour = if is_destructive(d.action) {
        DANGER
    } else {
        WARN
    };
    let body = body(app, d);
    let width = area.width.saturating_sub(4).min(84);
    let inner_w = width.saturating_sub(4).max(1) as usize;
    let body_h = wrapped_rows(&body, inner_w);
    let height = (body_h as u16 + 4).min(area.height.saturating_sub(2));
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::new().fg(colour).add_modifier(Modifier::BOLD))
        .title(Line::from(format!(" {} {}? ", d.action.title(), d.txn)).centered())
        .title_style(Style::new().fg(colour).add_modifier(Modifier::BOLD))
        .padding(Padding::horizontal(1));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let [text, _, buttons] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ]));
    frame.render_widget(Paragraph::new(body).wrap(Wrap { trim: false }), text);
    frame.render_widget(Paragraph::new(buttons_line(d, colour)).centered(), buttons);
}

fn buttons_line(d: &Dialog, colour: Color) -> Line<'static> {
    let focused = Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD);
    if d.detail.is_some() && !dialog_can_confirm(d) {
        return Line::from(Span::styled(CLOSE, focused));
    }
    let cancel = if d.confirm_focused {
        Style::new()
    } else {
        focused
    };
    let confirm = match (d.detail.is_some(), d.confirm_focused) {
        (false, false) => dim(),
        (false, true) => dim().add_modifier(Modifier::REVERSED),
        (true, false) => Style::new().fg(colour).add_modifier(Modifier::BOLD),
        (true, true) => Style::new()
            .fg(Color::White)
            .bg(colour)
            .add_modifier(Modifier::BOLD),
    };
    Line::from(vec![
        Span::styled(CANCEL, cancel),
        Span::raw("    "),
        Span::styled(CONFIRM, confirm),
    ])
}

fn body(app: &App, d: &Dialog) -> Vec<Line<'static>> {
    match &d.detail {
        None => vec![Line::from(""), Line::styled("re-reading documents…", dim())],
        Some(Err(e)) => vec![
            Line::styled(
                "could not re-read the documents:",
                Style::new().fg(DANGER).add_modifier(Modifier::BOLD),
            ),
            Line::styled(e.clone(), Style::new().fg(DANGER)),
            Line::from("nothing was changed."),
        ],
        Some(Ok(det)) => loaded(app, d.action, det),
    }
}

fn loaded(app: &App, action: Action, det: &TransactionDetail) -> Vec<Line<'static>> {
    let t = &det.txn;
    let mut out = vec![Line::from(vec![
        Span::styled(state_text(t), bold()),
        Span::raw(format!(" · {} · {}", amount_text(t), route(t))),
    ])];
    if let Some(m) = t.modification_time {
        out.push(Line::styled(
            format!("modified {} ({} ago)", datetime(m), txn_age(app, t)),
            dim(),
        ));
    }
    if let Some(a) = t
        .age_seconds(app.now)
        .filter(|a| *a < app.settings.recovery_window.as_secs() as i64)
    {
        out.push(Line::from(vec![
            Span::styled(
                " WARNING ",
                Style::new()
                    .fg(Color::White)
                    .bg(DANGER)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!(" modified {a}s ago: a worker may still be running it"),
                Style::new().fg(DANGER).add_modifier(Modifier::BOLD),
            ),
        ]));
    }
    out.push(Line::from(""));
    match action {
        Action::Rollback => out.extend(preview_lines(det, &det.rollback, "rollback")),
        Action::ForceRecover => {
            out.push(Line::styled(
                "forced: the recovery window is not enforced",
                Style::new().fg(WARN),
            ));
            out.extend(preview_lines(det, &det.recover, "recovery"));
        }
        Action::ReleaseLocks => out.extend(lock_lines(det)),
    }
    out
}

fn preview_lines(det: &TransactionDetail, p: &Preview, what: &str) -> Vec<Line<'static>> {
    if let Some(r) = &p.refusal {
        return vec![
            Line::styled(
                format!("{what} refused: {r}"),
                Style::new().fg(DANGER).add_modifier(Modifier::BOLD),
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
            dim(),
        )];
    }
    let mut out = vec![Line::styled(
        format!("{what} would run these steps:"),
        bold(),
    )];
    for (i, s) in p.steps.iter().enumerate() {
        let outcome = match &s.outcome {
            Outcome::Updated(e) => Span::styled(format!("updates: {e}"), Style::new().fg(GOOD)),
            Outcome::Noop(r) => Span::styled(format!("no-op: {r}"), Style::new().fg(Color::Gray)),
        };
        out.push(Line::from(vec![
            Span::raw(format!(" {}. {} — ", i + 1, s.step.label())),
            outcome,
        ]));
    }
    if let Some(s) = &p.ends_in {
        out.push(Line::from(format!("ends in: {s}")));
    }
    out.push(Line::styled("balance effect:", bold()));
    for (id, delta) in [
        (&det.txn.src, p.balance_change.0),
        (&det.txn.dest, p.balance_change.1),
    ] {
        let Some(id) = id else { continue };
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
            dim()
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        };
        out.push(Line::styled(text, style));
    }
    out
}

fn lock_lines(det: &TransactionDetail) -> Vec<Line<'static>> {
    if det.locks.is_empty() {
        return vec![Line::styled(
            "this transaction holds no locks; nothing to release",
            dim(),
        )];
    }
    let mut out = vec![Line::styled("locks that would be released:", bold())];
    for l in &det.locks {
        let (status, style) = match &l.staleness {
            Staleness::Stale(why) => (format!("stale ({why})"), Style::new().fg(WARN)),
            Staleness::Live => (
                "LIVE: its holder looks alive".to_string(),
                Style::new().fg(DANGER).add_modifier(Modifier::BOLD),
            ),
            Staleness::Unknown(why) => (format!("unknown ({why})"), Style::new().fg(ODD)),
        };
        out.push(Line::from(vec![
            Span::raw(format!(" {} — ", l.info.resource)),
            Span::styled(status, style),
            Span::styled(format!(" · {}", l.info.holder_label()), dim()),
        ]));
    }
    let live = det.locks.iter().filter(|l| !l.staleness.is_stale()).count();
    if live > 0 {
        out.push(Line::from(vec![
            Span::styled(" WARNING ", Style::new().fg(Color::White).bg(DANGER).add_modifier(Modifier::BOLD)),
            Span::styled(
                format!(" {live} lock(s) not stale: a worker may still be using them; another transfer could get in"),
                Style::new().fg(DANGER).add_modifier(Modifier::BOLD),
            ),
        ]));
    }
    out
}
