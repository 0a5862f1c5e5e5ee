//! The stuck transactions by cause (`c`), drawn over the panes like the
//! audit: each grouping under its heading, each group with its count and a
//! bar scaled to the largest of its kind; the groupings the mapping cannot
//! aggregate are named at the bottom, so none is silently missing.

use crate::dashboard::keymap::Op;
use crate::dashboard::layers::groups::GroupsView;
use crate::dashboard::layers::DrawCx;
use crate::dashboard::ui::theme::{
    bold, fit_segments, grouped, more_hint, short_id, Segment, Theme,
};
use crate::protocol::read::verdict::SafeAct;
use crate::protocol::read::{Group, Groups};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Width of the widest bar.
const BAR: usize = 24;

/// Draws the view over `area`.
pub fn render(frame: &mut Frame, cx: &DrawCx, view: &GroupsView, area: Rect) {
    let th = &cx.theme;
    let width = area.width.saturating_sub(4).min(100);
    let height = area.height.saturating_sub(4).max(3);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    // The frame's borders and padding take four columns, two its lines.
    let rows = usize::from(height.saturating_sub(3)).max(1);
    let body_w = usize::from(width.saturating_sub(4));
    let (lines, cursor_line) = match view.counts.last() {
        None => (
            vec![Item::Other(Line::styled("counting…", th.dim_text()))],
            0,
        ),
        Some(Err(e)) => (
            vec![Item::Other(Line::styled(
                format!("counting failed: {e}"),
                Style::new().fg(th.danger),
            ))],
            0,
        ),
        Some(Ok(g)) => group_lines(cx, g, view.cursor, body_w),
    };
    let first = (cursor_line + 1).saturating_sub(rows);
    let counted = |items: &[Item]| items.iter().filter(|i| i.counts()).count();
    let above = counted(&lines[..first.min(lines.len())]);
    let below = counted(lines.get(first + rows..).unwrap_or_default());
    let mut title = match view.counts.value() {
        Some(g) => format!(" stuck by cause: {} stuck ", grouped(g.stuck)),
        None => " stuck by cause ".to_string(),
    };
    if view.counts.is_loading() {
        title.push_str("· counting… ");
    }
    title.push_str(&more_hint(above, 0, above + below));
    let inner = crate::dashboard::ui::theme::draw_overlay(frame, rect, th, title);
    let [body, keys] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
    ]));
    let shown: Vec<Line> = lines
        .into_iter()
        .skip(first)
        .take(rows)
        .map(Item::line)
        .collect();
    frame.render_widget(Paragraph::new(shown), body);
    frame.render_widget(Paragraph::new(keys_hint(cx, keys.width)), keys);
}

/// A line of the view: a group or a note the "more" hint counts, or a
/// heading (or a note's continuation) it does not.
enum Item {
    Counted(Line<'static>),
    Other(Line<'static>),
}

impl Item {
    fn counts(&self) -> bool {
        matches!(self, Item::Counted(_))
    }

    fn line(self) -> Line<'static> {
        match self {
            Item::Counted(l) | Item::Other(l) => l,
        }
    }
}

/// The view's keys, as the key table binds them (a rebound key shows),
/// the most useful kept when the width is short (the footer names them
/// all).
fn keys_hint(cx: &DrawCx, width: u16) -> Line<'static> {
    let k = |op| cx.keys.key(op);
    let seg = |priority, text: String| {
        Segment::new(priority, vec![Span::styled(text, cx.theme.dim_text())])
    };
    let segs = vec![
        seg(3, format!("{}/{} select", k(Op::Down), k(Op::Up))),
        seg(0, format!("{} open its rows", k(Op::Open))),
        seg(
            1,
            format!(
                "then {} marks them for {}/{}/{}",
                k(Op::MarkAll),
                k(Op::Rollback),
                k(Op::Recover),
                k(Op::Release)
            ),
        ),
        seg(2, format!("{} count again", k(Op::Refresh))),
        seg(0, format!("{} close", k(Op::Back))),
    ];
    fit_segments(segs, " · ", width)
}

/// The lines of the view and the line of the selected group.
fn group_lines(cx: &DrawCx, g: &Groups, cursor: usize, width: usize) -> (Vec<Item>, usize) {
    let th = cx.theme;
    let mut lines = Vec::new();
    let mut cursor_line = 0;
    let mut heading = None;
    if g.groups.is_empty() {
        lines.push(Item::Other(Line::styled("nothing is stuck", th.dim_text())));
    }
    for (i, group) in g.groups.iter().enumerate() {
        if heading != Some(group.kind) {
            heading = Some(group.kind);
            let text = group.kind.heading().to_string();
            lines.push(Item::Other(Line::styled(text, bold())));
        }
        if i == cursor {
            cursor_line = lines.len();
        }
        let widest = g
            .groups
            .iter()
            .filter(|o| o.kind == group.kind)
            .map(|o| o.count)
            .max()
            .unwrap_or(1);
        lines.push(Item::Counted(group_line(
            th,
            group,
            i == cursor,
            widest,
            width,
        )));
        if i == cursor {
            lines.extend(cause_lines(cx, group, width));
        }
    }
    for why in &g.unavailable {
        let text = format!("not grouped: {why}");
        let style = Style::new().fg(th.warn);
        for (i, l) in wrap_words(&text, width).into_iter().enumerate() {
            let line = Line::styled(l, style);
            lines.push(if i == 0 {
                Item::Counted(line)
            } else {
                Item::Other(line)
            });
        }
    }
    (lines, cursor_line)
}

/// `text` broken between words into lines of at most `width` columns (a
/// longer word stands alone), so no word is cut at the pane's edge.
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let fits = line.chars().count() + 1 + word.chars().count() <= width.max(1);
        if !line.is_empty() && !fits {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out
}

/// Under the selected group: its cause's evidence and the profile's
/// runbook for it.
fn cause_lines(cx: &DrawCx, g: &Group, width: usize) -> Vec<Item> {
    let Some(c) = &g.cause else {
        return Vec::new();
    };
    let mut text = vec![c.evidence(cx.now)];
    if let Some(url) = cx.settings.runbooks.get(c.kind()) {
        text.push(format!("runbook: {url}"));
    }
    text.iter()
        .flat_map(|t| wrap_words(t, width.saturating_sub(4)))
        .map(|l| Item::Other(Line::styled(format!("    {l}"), cx.theme.dim_text())))
        .collect()
}

/// Width of a group's cause and safe act (`application recovering · wait`).
const CAUSE_W: usize = 36;

/// The narrowest a group's label gets before its bar gives way.
const LABEL_MIN: usize = 20;

fn group_line(th: &Theme, g: &Group, selected: bool, widest: u64, width: usize) -> Line<'static> {
    let cause_w = if g.cause.is_some() { CAUSE_W + 1 } else { 0 };
    // On a narrow screen the bar gives way first, then the label.
    let bar_w = width.saturating_sub(12 + cause_w + LABEL_MIN).clamp(4, BAR);
    let bar = (g.count as usize * bar_w).div_ceil(widest.max(1) as usize);
    let label_w = width.saturating_sub(bar_w + 12 + cause_w).max(8);
    // A process or account id keeps its distinguishing tail.
    let label = short_id(&g.label, label_w);
    let mut style = Style::new();
    if selected {
        style = style.add_modifier(Modifier::REVERSED);
    }
    let mark = if selected { "▶ " } else { "  " };
    let mut spans = vec![
        Span::raw(mark),
        Span::styled(format!("{label:<label_w$} {:>7} ", grouped(g.count)), style),
        Span::styled("█".repeat(bar), Style::new().fg(th.warn)),
    ];
    if let Some(c) = &g.cause {
        spans.push(Span::raw(" ".repeat(bar_w.saturating_sub(bar))));
        let act = c.safe_act();
        let colour = match act {
            SafeAct::Recover | SafeAct::ReleaseLock => th.warn,
            SafeAct::Wait => th.good,
            SafeAct::Investigate => th.odd,
        };
        spans.push(Span::styled(
            format!(" {} · {}", c.word(), act.word()),
            Style::new().fg(colour),
        ));
    }
    Line::from(spans)
}
