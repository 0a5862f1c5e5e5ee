//! Rendering: a pure function of [`App`] — the screen's clock is `app.now`,
//! nothing here reads the wall clock or does I/O, so every screen is tested
//! with `TestBackend` snapshots.
//!
//! Screen from top to bottom ([`layout`]): header line, alert/summary line,
//! state overview, then the transaction table (left, ~55%) beside the
//! detail (right), accounts and locks side by side (under the detail from
//! [`WIDE_LAYOUT`] columns, else in a full-width strip under both, where
//! they have room to be read), then the event log and the key hint bar. Help and the confirmation dialog are
//! drawn over everything. Below [`MIN_SIZE`] only a message is drawn.

mod accounts;
mod detail;
mod dialog;
mod header;
mod help;
mod keys;
mod locks;
mod log;
mod overview;
mod theme;
mod transactions;

use super::app::{App, Pane};
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Smallest terminal the dashboard draws itself in (columns, rows).
pub const MIN_SIZE: (u16, u16) = (80, 24);

/// Where everything goes; also what mouse hit-testing uses ([`Areas::pane_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// Title, cluster, freshness, polling.
    pub header: Rect,
    /// Stale data / missing indices, or the summary of what needs attention.
    pub alert: Rect,
    /// One box per state.
    pub overview: Rect,
    /// The transaction table.
    pub transactions: Rect,
    /// Detail of the selected transaction.
    pub detail: Rect,
    /// Accounts.
    pub accounts: Rect,
    /// Locks.
    pub locks: Rect,
    /// Event log.
    pub log: Rect,
    /// Key hint bar.
    pub keys: Rect,
}

impl Areas {
    /// The pane under a terminal cell, if any.
    pub fn pane_at(&self, column: u16, row: u16) -> Option<Pane> {
        let p = Position::new(column, row);
        [
            (self.transactions, Pane::Transactions),
            (self.detail, Pane::Detail),
            (self.accounts, Pane::Accounts),
            (self.locks, Pane::Locks),
            (self.log, Pane::Log),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(p))
        .map(|(_, pane)| pane)
    }

    /// Everything between the overview and the log (where "no data yet" goes).
    pub fn body(&self) -> Rect {
        self.overview
            .union(self.transactions)
            .union(self.detail)
            .union(self.accounts)
            .union(self.locks)
    }
}

/// Whether `area` is big enough to draw the dashboard.
pub fn fits(area: Rect) -> bool {
    area.width >= MIN_SIZE.0 && area.height >= MIN_SIZE.1
}

/// From this width the accounts and locks sit under the detail, in the
/// right column; below it they share a full-width strip under the table.
pub const WIDE_LAYOUT: u16 = 200;

/// Splits the screen; depends on the size only.
pub fn layout(area: Rect) -> Areas {
    let wide = area.width >= WIDE_LAYOUT;
    let log_h = (area.height / 6).clamp(4, 10);
    let strip_h = if wide {
        0
    } else {
        (area.height / 5).clamp(5, 12)
    };
    let [header, alert, overview, main, strip, log, keys] = area.layout(&Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(3),
        Constraint::Min(0),
        Constraint::Length(strip_h),
        Constraint::Length(log_h),
        Constraint::Length(1),
    ]));
    let [transactions, right] = main.layout(&Layout::horizontal([
        Constraint::Percentage(58),
        Constraint::Percentage(42),
    ]));
    let (detail, strip) = if wide {
        let side_h = (main.height / 3 + 1).clamp(6, 16);
        let [detail, side] = right.layout(&Layout::vertical([
            Constraint::Min(0),
            Constraint::Length(side_h),
        ]));
        (detail, side)
    } else {
        (right, strip)
    };
    let [accounts, locks] = strip.layout(&Layout::horizontal([
        Constraint::Percentage(45),
        Constraint::Percentage(55),
    ]));
    Areas {
        header,
        alert,
        overview,
        transactions,
        detail,
        accounts,
        locks,
        log,
        keys,
    }
}

/// Draws the whole screen from the state.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if !fits(area) {
        too_small(frame, area);
        return;
    }
    let a = layout(area);
    header::render(frame, app, a.header, a.alert);
    match &app.snapshot {
        None => header::render_no_data(frame, app, a.body()),
        Some(snap) => {
            overview::render(frame, app, snap, a.overview);
            transactions::render(frame, app, snap, a.transactions);
            detail::render(frame, app, a.detail);
            accounts::render(frame, app, snap, a.accounts);
            locks::render(frame, app, snap, a.locks);
        }
    }
    log::render(frame, app, a.log);
    keys::render(frame, app, a.keys);
    if app.help {
        help::render(frame, app, area);
    }
    if let Some(d) = &app.dialog {
        dialog::render(frame, app, d, area);
    }
}

fn too_small(frame: &mut Frame, area: Rect) {
    let text = format!(
        "estx-tui needs at least {}×{} (now {}×{})",
        MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
    );
    let rows = (text.chars().count() as u16)
        .div_ceil(area.width.max(1))
        .max(1);
    let target = area.centered_vertically(Constraint::Length(rows));
    frame.render_widget(
        Paragraph::new(Line::from(text))
            .centered()
            .wrap(Wrap { trim: true }),
        target,
    );
}
