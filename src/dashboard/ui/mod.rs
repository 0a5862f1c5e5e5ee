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

mod account_detail;
mod accounts;
mod audit;
mod bulk;
mod detail;
mod dialog;
mod header;
mod help;
mod keys;
mod locks;
mod log;
mod overview;
mod reverse;
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

/// How many rows of each scrollable pane fit on a screen of `size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneRows {
    /// Transaction table rows.
    pub table: usize,
    /// Account rows.
    pub accounts: usize,
    /// Lock rows.
    pub locks: usize,
    /// Log lines.
    pub log: usize,
}

/// The rows each pane shows at `size` (borders and header lines excluded).
pub fn pane_rows(size: (u16, u16)) -> PaneRows {
    let a = layout(Rect::new(0, 0, size.0, size.1));
    let inner = |r: Rect, header: u16| usize::from(r.height.saturating_sub(2 + header)).max(1);
    PaneRows {
        table: inner(a.transactions, 1),
        accounts: inner(a.accounts, 1),
        locks: locks::rows_that_fit(a.locks),
        log: inner(a.log, 0),
    }
}

/// The screen of `app` split into panes (what it draws and what a click hits).
pub fn areas(app: &App) -> Areas {
    layout_for(Rect::new(0, 0, app.size.0, app.size.1), app.focus)
}

/// Lines of the detail of `d` at `width` (so `update` bounds its scroll).
pub fn detail_line_count(app: &App, d: &crate::dashboard::view::DetailView, width: u16) -> usize {
    detail::line_count(app, d, width)
}

/// Lines of the account drill-down at `width` (so `update` bounds its scroll).
pub fn account_line_count(a: &crate::dashboard::view::AccountDetail, width: u16) -> usize {
    account_detail::line_count(a, width)
}

/// Rows a log entry takes wrapped to `width` (so the view bounds the log's scroll).
pub fn log_entry_rows(e: &crate::dashboard::app::LogEntry, width: usize) -> usize {
    log::entry_rows(e, width)
}

/// Whether the locks pane at `area` shows one line per lock.
pub fn locks_one_line(area: Rect) -> bool {
    locks::one_line(area)
}

/// How far the open dialog's text can scroll on the current screen.
pub fn dialog_scroll_max(app: &App) -> usize {
    app.dialog
        .as_ref()
        .map_or(0, |d| dialog::scroll_max(app, d, app.size))
}

/// How far the help overlay can scroll on the current screen.
pub fn help_scroll_max(app: &App) -> usize {
    help::rows(app).saturating_sub(help::visible_rows(app.size.1))
}

/// Whether `area` is big enough to draw the dashboard.
pub fn fits(area: Rect) -> bool {
    area.width >= MIN_SIZE.0 && area.height >= MIN_SIZE.1
}

/// From this width the accounts and locks sit under the detail, in the
/// right column; below it they share a full-width strip under the table.
pub const WIDE_LAYOUT: u16 = 200;

/// Below this width the transaction table takes the whole width (so its
/// route and amount columns stay readable) and the detail takes its place
/// while focused (Enter shows it, Esc goes back).
pub const SPLIT_LAYOUT: u16 = 120;

/// Splits the screen as it is with the transaction table focused.
pub fn layout(area: Rect) -> Areas {
    layout_for(area, Pane::Transactions)
}

/// Splits the screen; depends on the size, and below [`SPLIT_LAYOUT`]
/// columns on whether the detail has the focus.
pub fn layout_for(area: Rect, focus: Pane) -> Areas {
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
    let [transactions, right] = if area.width >= SPLIT_LAYOUT {
        main.layout(&Layout::horizontal([
            Constraint::Percentage(58),
            Constraint::Percentage(42),
        ]))
    } else if focus == Pane::Detail {
        [Rect::new(main.x, main.y, 0, 0), main]
    } else {
        [main, Rect::new(main.x + main.width, main.y, 0, 0)]
    };
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
    let a = layout_for(area, app.focus);
    header::render(frame, app, a.header, a.alert);
    match &app.snapshot {
        None => header::render_no_data(frame, app, a.body()),
        Some(snap) => {
            overview::render(frame, app, snap, a.overview);
            if !a.transactions.is_empty() {
                transactions::render(frame, app, snap, a.transactions);
            }
            if !a.detail.is_empty() {
                match &app.view.account {
                    Some(acct) => account_detail::render(frame, app, acct, a.detail),
                    None => detail::render(frame, app, a.detail),
                }
            }
            accounts::render(frame, app, snap, a.accounts);
            locks::render(frame, app, snap, a.locks);
        }
    }
    log::render(frame, app, a.log);
    match &app.bulk {
        Some(b) => bulk::progress(frame, b, a.keys),
        None => keys::render(frame, app, a.keys),
    }
    if app.audit.open {
        audit::render(frame, app, area);
    }
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
