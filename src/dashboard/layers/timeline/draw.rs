//! The timeline view (`T`), drawn over the panes like the jobs view: the
//! last hour's interventions, newest first, each on two lines: when, the
//! act, on what and how it ended (coloured by its outcome); then who, from
//! where and why (dim).

use crate::dashboard::keymap::Op;
use crate::dashboard::layers::timeline::TimelineView;
use crate::dashboard::layers::DrawCx;
use crate::dashboard::layout::{first_shown, fitting};
use crate::dashboard::ui::theme::{clock, more_hint, Theme};
use crate::protocol::trail::{ActOutcome, Entry, RecordStatus};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Draws the view over `area`.
pub fn render(frame: &mut Frame, cx: &DrawCx, t: &TimelineView, area: Rect) {
    let width = area.width.saturating_sub(4).min(120);
    let height = area.height.saturating_sub(4).max(6);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let entries = t.entries();
    let rows = usize::from(height.saturating_sub(3)).max(2);
    let heights = vec![2; entries.len()];
    let offset = first_shown(&heights, t.cursor, rows);
    let shown = fitting(&heights[offset.min(heights.len())..], rows);
    let inner =
        crate::dashboard::ui::theme::draw_overlay(frame, rect, cx.theme, title(t, offset, shown));
    let [body, keys] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
    ]));
    let lines = match t.list.last() {
        None => vec![Line::styled(
            "reading the audit trail…",
            cx.theme.dim_text(),
        )],
        Some(Err(e)) => vec![Line::styled(
            format!("cannot read the interventions: {e}"),
            Style::new().fg(cx.theme.danger),
        )],
        Some(Ok(r)) if r.entries.is_empty() => vec![Line::styled(
            format!("no recorded interventions since {}", clock(r.since)),
            cx.theme.dim_text(),
        )],
        Some(Ok(r)) => r
            .entries
            .iter()
            .enumerate()
            .skip(offset)
            .flat_map(|(i, e)| entry_lines(cx.theme, e, i == t.cursor))
            .collect(),
    };
    frame.render_widget(Paragraph::new(lines), body);
    frame.render_widget(Paragraph::new(prompt(cx)), keys);
}

/// The view's title: how many, since when, what is off screen.
fn title(t: &TimelineView, offset: usize, shown: usize) -> String {
    let n = t.entries().len();
    let since = t.list.value().map_or_else(
        || "the last hour".into(),
        |r| format!("since {}", clock(r.since)),
    );
    let reading = if t.list.is_loading() {
        "· reading… "
    } else {
        ""
    };
    format!(
        " interventions {since}: {n} {reading}{}",
        more_hint(offset, shown, n)
    )
}

/// The colour of how it ended: completed is healthy; refused, stopped or
/// nothing to do want a look; failed is danger; unfinished is unknown.
fn outcome_style(theme: &Theme, e: &Entry) -> Style {
    let colour = match (e.status, e.outcome) {
        (RecordStatus::Finished, Some(ActOutcome::Completed)) => theme.good,
        (RecordStatus::Finished, Some(ActOutcome::Failed)) => theme.danger,
        (RecordStatus::Finished, Some(_)) => theme.warn,
        _ => theme.odd,
    };
    Style::new().fg(colour)
}

/// One intervention: when, the act, on what, how it ended; then who, from
/// where and why.
fn entry_lines(theme: &Theme, e: &Entry, selected: bool) -> Vec<Line<'static>> {
    let mut style = Style::new();
    if selected {
        style = style.add_modifier(Modifier::REVERSED);
    }
    let mark = if selected { "▶ " } else { "  " };
    let forced = if e.forced { " (forced)" } else { "" };
    let bulk = if e.bulk { " (bulk)" } else { "" };
    let head = Line::from(vec![
        Span::raw(mark),
        Span::styled(
            format!(
                "{}  {}{forced}{bulk} · {} · ",
                clock(e.started_at),
                e.action,
                e.what()
            ),
            style,
        ),
        Span::styled(e.outcome_text(), outcome_style(theme, e).patch(style)),
    ]);
    let reason = e.reason.as_deref().unwrap_or("(none given)");
    let who = Line::styled(
        format!(
            "  by {} · via {} · reason: {reason}",
            e.operator, e.interface
        ),
        theme.dim_text(),
    );
    vec![head, who]
}

/// The view's keys.
fn prompt(cx: &DrawCx) -> Vec<Line<'static>> {
    let k = |op| cx.keys.key(op);
    vec![Line::styled(
        format!(
            "{}/{} select · {} read again · {} close",
            k(Op::Down),
            k(Op::Up),
            k(Op::Refresh),
            k(Op::Back)
        ),
        cx.theme.dim_text(),
    )]
}
