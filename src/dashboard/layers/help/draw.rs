//! The help overlay (`?`): every key of the main screen and of the
//! confirmation dialog, listed from the key table in force ([`crate::dashboard::keymap`]), and
//! the colour and mark legend, in two columns (one, scrolled, where two
//! would cut the descriptions).

use crate::dashboard::keymap::{Binding, Group, Op};
use crate::dashboard::layers::help::Help;
use crate::dashboard::layers::DrawCx;
use crate::dashboard::ui::theme::{bold, more_hint, Theme};
use crate::protocol::time::human_duration;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

fn key_line(th: &Theme, key: &str, what: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{key:<10} "), bold().fg(th.focus)),
        Span::raw(what.to_string()),
    ])
}

fn legend(mark: &str, colour: Color, what: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!("{mark:<4}"),
            Style::new().fg(colour).add_modifier(Modifier::BOLD),
        ),
        Span::raw(what),
    ])
}

/// Rows of the overlay's text (so `update` bounds its scroll).
pub fn rows(cx: &DrawCx) -> usize {
    let (l, r) = columns(cx);
    l.len().max(r.len())
}

/// Rows of text the overlay shows on a screen `height` rows high.
pub fn visible_rows(height: u16) -> usize {
    usize::from(height.saturating_sub(4)).max(1)
}

/// Draws the overlay, scrolled as far as the stack says when it does not fit.
pub fn render(frame: &mut Frame, cx: &DrawCx, help: &Help, area: Rect) {
    let th = &cx.theme;
    let (left, right) = columns(cx);
    let total = left.len().max(right.len());
    let shown = visible_rows(area.height).min(total);
    let skip = help.scroll.min(total - shown);
    let width = area.width.saturating_sub(4).min(96);
    let height = shown as u16 + 2;
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let title = format!(" estx-tui keys {}", more_hint(skip, shown, total));
    let (left, right): (Vec<_>, Vec<_>) = (
        left.into_iter().skip(skip).collect(),
        right.into_iter().skip(skip).collect(),
    );
    let inner = crate::dashboard::ui::theme::draw_overlay(frame, rect, th, title);
    if right.is_empty() {
        frame.render_widget(Paragraph::new(left), inner);
        return;
    }
    let [l_area, r_area] =
        inner.layout(&Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).spacing(2));
    frame.render_widget(Paragraph::new(left), l_area);
    frame.render_widget(Paragraph::new(right), r_area);
}

fn section<O: Copy + 'static>(
    th: &Theme,
    table: &[Binding<O>],
    group: Group,
) -> Vec<Line<'static>> {
    table
        .iter()
        .filter(|b| b.group == group)
        .map(|b| key_line(th, &b.label, b.help))
        .collect()
}

fn heading(text: &'static str) -> Line<'static> {
    Line::styled(text, bold().add_modifier(Modifier::UNDERLINED))
}

/// The two columns: moving and looking; actions, dialog keys and the legend.
fn columns(cx: &DrawCx) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    let th = &cx.theme;
    let mut l = vec![heading("Moving")];
    l.extend(section(th, &cx.keys.main, Group::Navigate));
    l.push(key_line(th, "mouse", "click pane/row, wheel"));
    l.push(heading("Looking"));
    l.extend(section(th, &cx.keys.main, Group::Look));

    let window = human_duration(cx.settings.recovery_window);
    let investigate = human_duration(cx.settings.investigate_after);
    let mut r = vec![heading("Repairs (on what is selected)")];
    if cx.settings.read_only {
        r.push(Line::styled(
            format!("read-only: {} are disabled", cx.keys.write_keys()),
            Style::new().fg(th.warn),
        ));
    } else {
        r.extend(section(th, &cx.keys.main, Group::Act));
    }
    r.push(heading("During a bulk run"));
    r.extend(section(th, &cx.keys.main, Group::Run));
    let quit = format!("{} Ctrl-C", cx.keys.label(Op::Quit));
    r.push(key_line(th, &quit, "stop it and quit, or keep running?"));
    r.push(key_line(th, cx.keys.label(Op::Back), "never stops a run"));
    r.push(heading("Dialog"));
    r.extend(section(th, &cx.keys.dialog, Group::Act));
    r.push(heading("Colours and marks"));
    r.push(legend("!", th.warn, format!("stuck: untouched > {window}")));
    r.push(legend(
        "!!",
        th.danger,
        format!("investigate: untouched > {investigate}"),
    ));
    r.push(legend("?", th.odd, "malformed or unknown state".into()));
    r.push(legend("~", th.good, "acknowledged (ack)".into()));
    r.push(legend(
        "@",
        th.warn,
        "held by another operator's live job".into(),
    ));
    // The table's cause column (`panes::transactions::view::RowNote`).
    r.push(Line::from(vec![
        Span::raw("cause: "),
        Span::styled("dead holder", Style::new().fg(th.good)),
        Span::raw(" contention"),
    ]));
    r.push(Line::raw("  hot acct refused app recovering unkn."));
    // The header's healing verdict, coloured as the header shows it (two
    // short lines: the column stays narrow enough for two at 100×30).
    r.push(Line::from(vec![
        Span::raw("recovery: "),
        Span::styled("healing", Style::new().fg(th.good)),
        Span::raw(" "),
        Span::styled("stalled", Style::new().fg(th.danger)),
    ]));
    r.push(Line::from(vec![
        Span::raw("  "),
        Span::styled("not running", Style::new().fg(th.danger)),
        Span::raw(" "),
        Span::styled("idle unknown", th.dim_text()),
    ]));
    r.push(Line::from(vec![
        Span::raw("locks: "),
        Span::styled("stale", Style::new().fg(th.warn)),
        Span::raw(" "),
        Span::styled("live", Style::new().fg(th.good)),
        Span::raw(" "),
        Span::styled("unknown", Style::new().fg(th.odd)),
    ]));
    r.push(Line::from(vec![
        Span::raw("log: "),
        Span::styled("updated", Style::new().fg(th.good)),
        Span::raw(" "),
        Span::styled("no-op", Style::new().fg(th.muted)),
        Span::raw(" "),
        Span::styled("error", Style::new().fg(th.danger)),
        Span::raw(" info"),
    ]));
    r.push(Line::from(vec![
        Span::raw("dialog: "),
        Span::styled("DESTRUCTIVE:", Style::new().fg(th.danger)),
        Span::raw(" undoes work"),
    ]));
    r.push(Line::styled("focused pane: thick border", th.dim_text()));
    let widest = l.iter().chain(&r).map(Line::width).max().unwrap_or(0);
    if !two_columns(cx.size.0, widest) {
        // Too narrow for two columns whole (80×24, or long rebound
        // keys): one, scrolled.
        l.extend(r);
        return (l, Vec::new());
    }
    (l, r)
}

/// Whether the overlay on a screen `width` wide shows two columns whose
/// widest line is `widest` columns, whole.
fn two_columns(width: u16, widest: usize) -> bool {
    // Overlay: 4 columns narrower than the screen, at most 96; inside it
    // the borders, the padding and the 2 columns between the two, split
    // evenly.
    let inner = usize::from(width.saturating_sub(4).min(96).saturating_sub(4));
    inner.saturating_sub(2) / 2 >= widest
}
