//! The timeline view (`T`), drawn over the panes like the jobs view: the
//! last hour's interventions, newest first, each in two parts wrapped to
//! the view's width: when, the act, on what and how it ended (coloured by
//! its outcome); then who, from where and why (dim).

use crate::dashboard::keymap::Op;
use crate::dashboard::layers::jobs::draw::pack;
use crate::dashboard::layers::timeline::TimelineView;
use crate::dashboard::layers::DrawCx;
use crate::dashboard::layout::{first_shown, fitting};
use crate::dashboard::ui::theme::{clock, more_hint, Theme};
use crate::protocol::trail::{ActOutcome, Entry, RecordStatus};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Draws the view over `area`.
pub fn render(frame: &mut Frame, cx: &DrawCx, t: &TimelineView, area: Rect) {
    let width = area.width.saturating_sub(4).min(120);
    let height = area.height.saturating_sub(4).max(6);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let rows = usize::from(height.saturating_sub(3)).max(2);
    // The frame's borders and padding take four columns.
    let line_w = usize::from(width.saturating_sub(4));
    let per_entry: Vec<Vec<Line<'static>>> = t
        .entries()
        .iter()
        .enumerate()
        .map(|(i, e)| entry_lines(cx.theme, e, i == t.cursor, line_w))
        .collect();
    let heights: Vec<usize> = per_entry.iter().map(Vec::len).collect();
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
        Some(Ok(_)) => per_entry.into_iter().skip(offset).flatten().collect(),
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

/// One intervention, its parts joined by ` · ` and wrapped between them to
/// `width` columns: when and the act, on what, how it ended (in its
/// outcome's colour); then who, from where and why (dim).
fn entry_lines(theme: &Theme, e: &Entry, selected: bool, width: usize) -> Vec<Line<'static>> {
    let mut style = Style::new();
    if selected {
        style = style.add_modifier(Modifier::REVERSED);
    }
    let forced = if e.forced { " (forced)" } else { "" };
    let bulk = if e.bulk { " (bulk)" } else { "" };
    let what = vec![
        (
            format!("{}  {}{forced}{bulk}", clock(e.started_at), e.action),
            style,
        ),
        (e.what(), style),
        (e.outcome_text(), outcome_style(theme, e).patch(style)),
    ];
    let dim = theme.dim_text();
    let who = vec![
        (format!("by {}", e.operator), dim),
        (format!("via {}", e.interface), dim),
        (
            format!("reason: {}", e.reason.as_deref().unwrap_or("(none given)")),
            dim,
        ),
    ];
    let mark = if selected { "▶ " } else { "  " };
    let mut lines = pack(mark, what, width);
    lines.extend(pack("  ", who, width));
    lines
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
