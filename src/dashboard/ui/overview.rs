//! The state overview row: one box per state in protocol order (created,
//! pending, committed, terminating, finished, rolled-back), then unknown
//! states and "missing state", each with its count and, for non-terminal
//! states, the age of the oldest transaction in it — yellow past the
//! recovery window, red past `investigate_after`. The active state filter
//! is highlighted; a last box says "in flight: showing M of N" when the
//! listed transactions are capped.

use super::theme::grouped;
use crate::dashboard::app::App;
use crate::protocol::read::poll::{Snapshot, StateCount};
use crate::protocol::time::human_age;
use crate::protocol::transaction::TxnState;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::merge::MergeStrategy;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};
use ratatui::Frame;

struct StateBox {
    title: String,
    body: String,
    style: Style,
    active: bool,
}

impl StateBox {
    fn need(&self) -> u16 {
        let w = Span::raw(&self.title)
            .width()
            .max(Span::raw(&self.body).width());
        w as u16 + 2
    }
}

/// Width of boxes laid side by side with shared borders.
fn total(boxes: &[StateBox]) -> u16 {
    let sum: u16 = boxes.iter().map(StateBox::need).sum();
    sum.saturating_sub(boxes.len().saturating_sub(1) as u16)
}

/// Draws the overview row: boxes share their borders; when they do not
/// fit, the "in flight" box goes (the alert line says it too), then
/// "missing state" becomes "no state", then every box shrinks.
pub fn render(frame: &mut Frame, app: &App, snap: &Snapshot, area: Rect) {
    let th = &app.theme;
    let mut boxes = boxes(app, snap);
    if boxes.is_empty() {
        let block = Block::bordered().border_style(th.dim_text());
        frame.render_widget(
            Paragraph::new("no transactions counted")
                .style(th.dim_text())
                .centered()
                .block(block),
            area,
        );
        return;
    }
    if total(&boxes) > area.width && boxes.last().is_some_and(|b| b.title == IN_FLIGHT) {
        boxes.pop();
    }
    if total(&boxes) > area.width {
        for b in boxes.iter_mut().filter(|b| b.title == MISSING) {
            b.title = "no state".into();
        }
    }
    let needs: Vec<u16> = boxes.iter().map(StateBox::need).collect();
    let layout = if total(&boxes) <= area.width {
        Layout::horizontal(needs.iter().map(|n| Constraint::Length(*n))).flex(Flex::Start)
    } else {
        Layout::horizontal(needs.iter().map(|n| Constraint::Fill(*n)))
    };
    let rects = layout.spacing(-1).split(area);
    // The highlighted box last, so its border wins where borders are shared.
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by_key(|i| boxes[*i].active);
    for i in order {
        let (b, r) = (&boxes[i], rects[i]);
        let mut block = Block::bordered()
            .merge_borders(MergeStrategy::Fuzzy)
            .title(Line::from(b.title.as_str()).centered());
        block = if b.active {
            block
                .border_type(BorderType::Thick)
                .border_style(Style::new().fg(th.focus))
                .title_style(
                    Style::new()
                        .fg(th.focus)
                        .add_modifier(Modifier::BOLD | Modifier::REVERSED),
                )
        } else {
            block.border_style(th.dim_text()).title_style(b.style)
        };
        frame.render_widget(
            Paragraph::new(b.body.as_str())
                .style(b.style)
                .centered()
                .block(block),
            r,
        );
    }
}

const IN_FLIGHT: &str = "in flight";
const MISSING: &str = "missing state";

/// What the table's page shows of the transactions in flight: "showing
/// 500 of 5,912".
pub fn showing(total: u64, listed: u64) -> String {
    format!("showing {} of {}", grouped(listed), grouped(total))
}

/// Listed in-flight transactions, when the poll capped them (`(total, listed)`).
pub fn capped(snap: &Snapshot) -> Option<(u64, u64)> {
    let listed = snap
        .transactions
        .iter()
        .filter(|t| t.state.as_ref().is_some_and(TxnState::is_in_flight))
        .count() as u64;
    (snap.in_flight_total > listed).then_some((snap.in_flight_total, listed))
}

fn boxes(app: &App, snap: &Snapshot) -> Vec<StateBox> {
    let th = &app.theme;
    let mut counts: Vec<&StateCount> = snap.state_counts.iter().collect();
    counts.sort_by(|a, b| {
        TxnState::order_key(a.state.as_ref()).cmp(&TxnState::order_key(b.state.as_ref()))
    });
    let mut out: Vec<StateBox> = counts.into_iter().map(|c| state_box(app, c)).collect();
    if let Some((total, listed)) = capped(snap) {
        out.push(StateBox {
            title: IN_FLIGHT.into(),
            body: showing(total, listed),
            style: Style::new().fg(th.warn),
            active: false,
        });
    }
    out
}

fn state_box(app: &App, c: &StateCount) -> StateBox {
    let th = &app.theme;
    let active = c.state.is_some() && app.state_filter() == c.state.as_ref();
    let (title, odd) = match &c.state {
        Some(TxnState::Unknown(s)) => (format!("? {s}"), true),
        Some(s) => (s.as_str().to_string(), false),
        None => (MISSING.to_string(), true),
    };
    let in_flight = c.state.as_ref().is_some_and(TxnState::is_in_flight);
    let age = c
        .oldest
        .filter(|_| in_flight && c.count > 0)
        .map(|t| (app.now - t).num_seconds());
    let body = match age {
        Some(a) => format!("{}·{}", grouped(c.count), human_age(a)),
        None => grouped(c.count),
    };
    let style = if c.count == 0 {
        th.dim_text()
    } else if odd {
        Style::new().fg(th.odd)
    } else {
        match age {
            Some(a) if a >= app.settings.investigate_after.as_secs() as i64 => {
                Style::new().fg(th.danger)
            }
            Some(a) if a >= app.settings.recovery_window.as_secs() as i64 => {
                Style::new().fg(th.warn)
            }
            _ => Style::new(),
        }
    };
    StateBox {
        title,
        body,
        style,
        active,
    }
}
