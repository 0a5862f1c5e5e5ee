//! The key hint bar on the last line, for the mode the screen is in:
//! dialog, help, typing, or the main screen — from the one key table
//! ([`crate::dashboard::keymap`], as the state holds it) the handler uses (the action keys say "read-only" in
//! read-only mode; the force key shows only when `y` would be refused).
//! Hints that do not fit are dropped, least useful first.

use super::theme::{fit_segments, Segment};
use crate::dashboard::app::App;
use crate::dashboard::keymap::{DialogOp, Group, Op};
use crate::dashboard::overlay::Overlay;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// Draws the key bar.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let th = &app.theme;
    let keys = &app.keys;
    let write_keys = keys.write_keys();
    let label = |op| keys.label(op);
    let (up_down, back) = (
        format!("{} {}", label(Op::Down), label(Op::Up)),
        label(Op::Back),
    );
    let typed = format!("{}█", app.overlays.typed_lookup().unwrap_or_default());
    let hints: Vec<(u8, &str, &str)> = match app.overlays.top() {
        Some(Overlay::Dialog(d)) => keys
            .dialog
            .iter()
            .filter(|b| b.op != DialogOp::Force || d.needs_force())
            .filter_map(|b| b.bar.map(|(p, w)| (p, b.label.as_ref(), w)))
            .collect(),
        Some(Overlay::Audit) => vec![
            (0, up_down.as_str(), "select"),
            (0, label(Op::Open), "act on it"),
            (0, label(Op::Refresh), "audit now"),
            (0, back, "close"),
        ],
        Some(Overlay::Groups) => vec![
            (0, "j/k", "select"),
            (0, "Enter", "open the group"),
            (0, "r", "count again"),
            (0, "Esc", "close"),
        ],
        Some(Overlay::Jobs) => vec![
            (0, "j/k", "select"),
            (0, "Enter", "resume"),
            (0, "r", "read again"),
            (0, "Esc", "close"),
        ],
        Some(Overlay::StopRun(_)) => keys
            .dialog
            .iter()
            .filter(|b| matches!(b.op, DialogOp::Confirm | DialogOp::Cancel))
            .map(|b| {
                let what = if b.op == DialogOp::Confirm {
                    "stop"
                } else {
                    "keep running"
                };
                (0, b.label.as_ref(), what)
            })
            .collect(),
        Some(Overlay::Help { .. }) => vec![
            (0, up_down.as_str(), "scroll"),
            (0, "any other key", "closes help"),
        ],
        Some(Overlay::LookUp(_)) => vec![
            (0, "look up #", typed.as_str()),
            (0, "Enter", "look it up"),
            (0, "Esc", "cancel"),
        ],
        Some(Overlay::Filter) => vec![
            (0, "type", "to filter"),
            (0, "Enter", "keep"),
            (0, "Esc", "clear"),
            (1, "Backspace", "delete"),
        ],
        None => main_hints(app, &write_keys),
    };
    let key_style = Style::new().add_modifier(Modifier::BOLD);
    let segs = hints
        .into_iter()
        .map(|(prio, key, what)| {
            let what_style = if what == "read-only" {
                Style::new().fg(th.warn)
            } else {
                th.dim_text()
            };
            Segment::new(
                prio,
                vec![
                    Span::styled(key, key_style),
                    Span::raw(" "),
                    Span::styled(what, what_style),
                ],
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(fit_segments(segs, "  ", area.width)), area);
}

/// The main screen's hints: the key table's bar entries (the action keys
/// say "read-only" in read-only mode; `V` only when it applies).
fn main_hints<'a>(app: &'a App, write_keys: &'a str) -> Vec<(u8, &'a str, &'a str)> {
    let ro = app.settings.read_only;
    // V is advertised, among the first, only when it applies.
    let reverse = app.view.reverse_applies;
    let mut hints: Vec<(u8, &str, &str)> = app
        .keys
        .main
        .iter()
        .filter(|b| !(ro && b.group == Group::Act))
        .filter(|b| b.op != Op::ReverseTransfer || reverse)
        .filter_map(|b| {
            let prio = |p| if b.op == Op::ReverseTransfer { 0 } else { p };
            b.bar.map(|(p, w)| (prio(p), b.label.as_ref(), w))
        })
        .collect();
    if ro {
        let at = hints.len().saturating_sub(1);
        hints.insert(at, (0, write_keys, "read-only"));
    }
    hints
}
