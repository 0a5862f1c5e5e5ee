//! The jobs view (`J`), drawn over the panes like the audit pane: the bulk
//! runs whose audit record is still `running`, newest first, each with its
//! life (live, presumed dead, unknown: its heartbeat), action, size, where
//! it was started from, by whom and when (Enter asks to resume the selected
//! one in the confirmation dialog). With a file audit trail its first line
//! says that other operators' jobs are not seen.

use crate::dashboard::keymap::Op;
use crate::dashboard::layers::jobs::{JobRow, JobsView};
use crate::dashboard::layers::DrawCx;
use crate::dashboard::layout::{first_shown, fitting};
use crate::dashboard::ui::theme::Theme;
use crate::dashboard::ui::theme::{clock, more_hint};
use crate::protocol::jobs::JobLife;
use crate::protocol::trail::Record;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Draws the view over `area`.
pub fn render(frame: &mut Frame, cx: &DrawCx, j: &JobsView, area: Rect) {
    let width = area.width.saturating_sub(4).min(120);
    let height = area.height.saturating_sub(4).max(6);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let jobs = j.list.value().map_or(&[][..], Vec::as_slice);
    // The question may take two lines.
    let prompt_h = 1;
    let rows = usize::from(height.saturating_sub(2 + prompt_h)).max(2);
    // The frame's borders and padding take four columns.
    let line_w = usize::from(width.saturating_sub(4));
    let per_job: Vec<Vec<Line<'static>>> = jobs
        .iter()
        .zip(&j.rows)
        .enumerate()
        .map(|(i, (r, row))| job_lines(cx, r, row, i == j.cursor, line_w))
        .collect();
    let heights: Vec<usize> = per_job.iter().map(Vec::len).collect();
    let offset = first_shown(&heights, j.cursor, rows);
    let shown = fitting(&heights[offset.min(heights.len())..], rows);
    let inner = crate::dashboard::ui::theme::draw_overlay(
        frame,
        rect,
        cx.theme,
        title(j, offset, shown, width.saturating_sub(2)),
    );
    let [body, keys] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(prompt_h),
    ]));
    let mut lines = match j.list.last() {
        None => vec![Line::styled(
            "reading the audit trail…",
            cx.theme.dim_text(),
        )],
        Some(Err(e)) => vec![Line::styled(
            format!("cannot read the jobs: {e}"),
            Style::new().fg(cx.theme.danger),
        )],
        Some(Ok(l)) if l.is_empty() => vec![Line::styled(
            "no unfinished bulk run: every job's record is finished",
            cx.theme.dim_text(),
        )],
        Some(Ok(_)) => per_job.into_iter().skip(offset).flatten().collect(),
    };
    // With a file trail the list is that file's jobs only: said first, so
    // an empty list never reads as "no other operator is acting".
    if let Some(why) = cx.settings.others_unavailable {
        lines.insert(
            0,
            Line::styled(why.to_string(), Style::new().fg(cx.theme.warn)),
        );
    }
    frame.render_widget(Paragraph::new(lines), body);
    frame.render_widget(Paragraph::new(prompt(cx)).wrap(Wrap { trim: false }), keys);
}

/// The view's title in `width` columns: how many jobs, how many of each
/// life, what is off screen ("bulk run(s)" gives way first).
fn title(j: &JobsView, offset: usize, shown: usize, width: u16) -> String {
    let n = j.list.value().map_or(0, Vec::len);
    let mut rest = String::new();
    for kind in ["live", "presumed dead", "unknown"] {
        let n = j.rows.iter().filter(|r| r.life.kind() == kind).count();
        if n > 0 {
            rest.push_str(&format!("· {n} {kind} "));
        }
    }
    if j.list.is_loading() {
        rest.push_str("· reading… ");
    }
    rest.push_str(&more_hint(offset, shown, n));
    let long = format!(" jobs: {n} unfinished bulk run(s) {rest}");
    if long.chars().count() <= usize::from(width) {
        long
    } else {
        format!(" jobs: {n} unfinished {rest}")
    }
}

/// The colour of a job's life: live is healthy, left alone; presumed dead
/// wants the operator; unknown is unknown.
fn life_style(theme: &Theme, life: JobLife) -> Style {
    let colour = match life {
        JobLife::Live { .. } => theme.good,
        JobLife::PresumedDead { .. } => theme.warn,
        JobLife::Unknown => theme.odd,
    };
    Style::new().fg(colour)
}

/// One job, its parts joined by ` · ` and wrapped between them to `width`
/// columns: its life and run id; what, how big and how far, from where;
/// then who, when and why (dim).
fn job_lines(
    cx: &DrawCx,
    r: &Record,
    row: &JobRow,
    selected: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let mut style = Style::new().fg(cx.theme.warn);
    if selected {
        style = style.add_modifier(Modifier::REVERSED);
    }
    let mut what = vec![
        (row.life.short(), life_style(cx.theme, row.life)),
        (r.record_id.clone(), style),
        (
            format!("{} of {} transaction(s)", r.action, r.transactions.len()),
            style,
        ),
    ];
    if row.ended > 0 {
        what.push((format!("≥{} ended", row.ended), style));
    }
    what.push((format!("from the {}", r.interface), style));
    if let Some(p) = &r.profile {
        what.push((format!("profile {p}"), style));
    }
    let dim = cx.theme.dim_text();
    let mut who = vec![
        (format!("by {}", r.operator), dim),
        (
            format!("started {} ({} ago)", clock(r.started_at), row.started_ago),
            dim,
        ),
    ];
    if let Some(t) = &r.reason {
        who.push((format!("reason: {t}"), dim));
    }
    let mark = if selected { "▶ " } else { "  " };
    let mut lines = pack(mark, what, width);
    lines.extend(pack("  ", who, width));
    lines
}

/// `parts` joined by ` · ` in lines of at most `width` columns, the first
/// after `lead`, the others indented as deep; a part wider than a line is
/// broken between its words (the timeline's entries are packed the same).
pub(crate) fn pack(
    lead: &'static str,
    parts: Vec<(String, Style)>,
    width: usize,
) -> Vec<Line<'static>> {
    let room = width.saturating_sub(2).max(8);
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut line = Line::from(lead);
    let mut used = 0;
    for (text, style) in parts {
        let pieces = crate::dashboard::layers::groups::draw::wrap_words(&text, room);
        for (i, piece) in pieces.into_iter().enumerate() {
            let w = piece.chars().count();
            if used > 0 && (i > 0 || used + 3 + w > room) {
                lines.push(std::mem::replace(&mut line, Line::from("  ")));
                used = 0;
            }
            if used > 0 {
                line.push_span(Span::styled(" · ", style));
                used += 3;
            }
            line.push_span(Span::styled(piece, style));
            used += w;
        }
    }
    lines.push(line);
    lines
}

/// The view's keys.
fn prompt(cx: &DrawCx) -> Vec<Line<'static>> {
    let k = |op| cx.keys.key(op);
    vec![Line::styled(
        format!(
            "{}/{} select · {} resume · {} read again · {} close",
            k(Op::Down),
            k(Op::Up),
            k(Op::Open),
            k(Op::Refresh),
            k(Op::Back)
        ),
        cx.theme.dim_text(),
    )]
}
