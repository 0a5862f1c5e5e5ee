//! The help overlay (`?`): every key of the main screen and of the
//! confirmation dialog, and the colour and mark legend, in two columns.

use super::theme::{bold, dim, DANGER, FOCUS, GOOD, ODD, WARN};
use crate::dashboard::app::App;
use crate::protocol::time::human_age;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};
use ratatui::Frame;

const NAVIGATION: [(&str, &str); 15] = [
    ("?", "this help"),
    ("Tab S-Tab", "next / previous pane"),
    ("↑ ↓ j k", "move selection / scroll"),
    ("PgUp PgDn", "move by 10"),
    ("g G", "first / last (Home End)"),
    ("Enter", "focus the detail"),
    ("Esc", "back / clear the filter"),
    ("/", "filter (Enter / Esc)"),
    ("s", "cycle the state filter"),
    ("o O", "sort key / reverse order"),
    ("r", "refresh now"),
    ("p", "pause / resume polling"),
    ("+ -", "poll interval ±1s"),
    ("mouse", "click pane/row, wheel"),
    ("q Ctrl-C", "quit"),
];

const ACTIONS: [(&str, &str); 3] = [
    ("R", "roll back"),
    ("F", "force recovery"),
    ("L", "release its locks"),
];

const DIALOG: [(&str, &str); 4] = [
    ("y", "confirm"),
    ("n Esc", "cancel (has focus first)"),
    ("Tab ←→ h l", "move focus"),
    ("Enter", "press the focused button"),
];

fn key_line(key: &str, what: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{key:<10} "), bold().fg(FOCUS)),
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

/// Draws the overlay.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let (left, right) = columns(app);
    let rows = left.len().max(right.len()) as u16;
    let width = area.width.saturating_sub(4).min(96);
    let height = (rows + 2).min(area.height.saturating_sub(2));
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::new().fg(FOCUS))
        .title(Line::from(" estx-tui keys ").centered())
        .title_style(bold().fg(FOCUS))
        .padding(Padding::horizontal(1));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let [l_area, r_area] =
        inner.layout(&Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).spacing(2));
    frame.render_widget(Paragraph::new(left), l_area);
    frame.render_widget(Paragraph::new(right), r_area);
}

/// The two columns: main-screen keys; actions, dialog keys and the legend.
fn columns(app: &App) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    let mut l = vec![Line::styled(
        "Main screen",
        bold().add_modifier(Modifier::UNDERLINED),
    )];
    l.extend(NAVIGATION.iter().map(|(k, w)| key_line(k, w)));

    let window = human_age(app.settings.recovery_window.as_secs() as i64);
    let investigate = human_age(app.settings.investigate_after.as_secs() as i64);
    let mut r = vec![Line::styled(
        "On the selected transaction",
        bold().add_modifier(Modifier::UNDERLINED),
    )];
    if app.settings.read_only {
        r.push(Line::styled(
            "read-only: R, F and L are disabled",
            Style::new().fg(WARN),
        ));
    } else {
        r.extend(ACTIONS.iter().map(|(k, w)| key_line(k, w)));
    }
    r.push(Line::styled(
        "Dialog",
        bold().add_modifier(Modifier::UNDERLINED),
    ));
    r.extend(DIALOG.iter().map(|(k, w)| key_line(k, w)));
    r.push(Line::styled(
        "Colours and marks",
        bold().add_modifier(Modifier::UNDERLINED),
    ));
    r.push(legend("!", WARN, format!("stuck: untouched > {window}")));
    r.push(legend(
        "!!",
        DANGER,
        format!("investigate: untouched > {investigate}"),
    ));
    r.push(legend("?", ODD, "malformed or unknown state".into()));
    r.push(Line::from(vec![
        Span::raw("locks: "),
        Span::styled("stale", Style::new().fg(WARN)),
        Span::raw(" "),
        Span::styled("live", Style::new().fg(GOOD)),
        Span::raw(" "),
        Span::styled("unknown", Style::new().fg(ODD)),
    ]));
    r.push(Line::from(vec![
        Span::raw("log: "),
        Span::styled("updated", Style::new().fg(GOOD)),
        Span::raw(" "),
        Span::styled("no-op", Style::new().fg(Color::Gray)),
        Span::raw(" "),
        Span::styled("error", Style::new().fg(DANGER)),
        Span::raw(" info"),
    ]));
    r.push(Line::from(vec![
        Span::raw("dialog: "),
        Span::styled("red", Style::new().fg(DANGER)),
        Span::raw(" = destructive"),
    ]));
    r.push(Line::styled("focused pane: thick cyan border", dim()));
    (l, r)
}
