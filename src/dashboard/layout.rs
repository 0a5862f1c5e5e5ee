//! The screen's geometry, a leaf that both `update` (scroll bounds, mouse
//! hits, what fits) and `ui` (where to draw) use: the panes and where each
//! goes at a given size ([`layout_for`]), how many rows each shows, the
//! locks pane's line shape, and how many rows word-wrapped text takes. It
//! imports nothing of the dashboard, so neither side reaches into the other
//! for a rectangle.

use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};

/// The panes focus moves between with Tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pane {
    /// Transaction table.
    Transactions,
    /// Detail of the selected transaction.
    Detail,
    /// Accounts.
    Accounts,
    /// Locks.
    Locks,
    /// Event log.
    Log,
}

impl Pane {
    /// Tab order.
    pub const ORDER: [Pane; 5] = [
        Pane::Transactions,
        Pane::Detail,
        Pane::Accounts,
        Pane::Locks,
        Pane::Log,
    ];
}

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

/// The rectangle the panes are laid out in on a screen of `size`: all of
/// it, or inside the profile's frame (`framed`: one cell on each side).
pub fn screen(size: (u16, u16), framed: bool) -> Rect {
    let all = Rect::new(0, 0, size.0, size.1);
    if framed {
        all.inner(ratatui::layout::Margin::new(1, 1))
    } else {
        all
    }
}

/// The rows each pane shows at `size` (borders and header lines excluded).
pub fn pane_rows(size: (u16, u16)) -> PaneRows {
    pane_rows_in(Rect::new(0, 0, size.0, size.1))
}

/// [`pane_rows`] of the panes laid out in `area` ([`screen`]).
pub fn pane_rows_in(area: Rect) -> PaneRows {
    let a = layout(area);
    let inner = |r: Rect, header: u16| usize::from(r.height.saturating_sub(2 + header)).max(1);
    PaneRows {
        table: inner(a.transactions, 1),
        accounts: inner(a.accounts, 1),
        locks: lock_rows_that_fit(a.locks),
        log: inner(a.log, 0),
    }
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

/// The screen of `size` split into panes with `focus` (what is drawn and
/// what a click hits).
pub fn areas(size: (u16, u16), focus: Pane) -> Areas {
    layout_for(Rect::new(0, 0, size.0, size.1), focus)
}

/// Inner width from which a lock fits on one line.
pub const LOCK_WIDE: u16 = 40;

/// Whether a lock fits on one line in the locks pane at `area`.
pub fn locks_one_line(area: Rect) -> bool {
    area.width.saturating_sub(2) >= LOCK_WIDE
}

/// Lock rows that fit in `area` (one line each when wide, else two).
pub fn lock_rows_that_fit(area: Rect) -> usize {
    let inner_h = area.height.saturating_sub(2);
    let n = if locks_one_line(area) {
        inner_h.saturating_sub(1)
    } else {
        inner_h / 2
    };
    usize::from(n).max(1)
}

/// Rows a log entry with `text` takes word-wrapped to `width` columns: its
/// `HH:MM:SS` clock, a space, then the text (the log pane draws it so).
pub fn log_entry_rows(text: &str, width: usize) -> usize {
    wrapped_rows(&[Line::from(format!("00:00:00 {text}"))], width)
}

/// Rows `lines` take when word-wrapped to `width` columns (as `Wrap` does,
/// near enough to size a box around them).
pub fn wrapped_rows(lines: &[Line], width: usize) -> usize {
    let width = width.max(1);
    lines
        .iter()
        .map(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            let (mut rows, mut used) = (1, 0usize);
            for word in text.split(' ') {
                let w = Span::raw(word).width();
                let need = if used == 0 { w } else { used + 1 + w };
                if need <= width {
                    used = need;
                } else {
                    rows += 1 + w.saturating_sub(1) / width;
                    used = w % width;
                }
            }
            rows
        })
        .sum()
}

/// The offset that keeps `cursor` on screen, moving as little as possible
/// from `offset`, and never scrolled past the end (a pane `height` rows
/// tall over `len` rows).
pub fn keep_visible(offset: usize, cursor: Option<usize>, len: usize, height: usize) -> usize {
    let height = height.max(1);
    let mut off = offset.min(len.saturating_sub(height));
    if let Some(c) = cursor {
        if c < off {
            off = c;
        } else if c >= off + height {
            off = c + 1 - height;
        }
    }
    off
}

/// The first of the rows (of `heights` lines each) to show so that the
/// row `cursor` fits in `room` lines, scrolled as little as possible.
pub fn first_shown(heights: &[usize], cursor: usize, room: usize) -> usize {
    let cursor = cursor.min(heights.len().saturating_sub(1));
    let mut first = 0;
    while first < cursor && heights[first..=cursor].iter().sum::<usize>() > room {
        first += 1;
    }
    first
}

/// How many of the rows (of `heights` lines each, from the first) fit
/// whole in `room` lines (at least one, cut, when the first alone is taller).
pub fn fitting(heights: &[usize], room: usize) -> usize {
    let mut used = 0;
    let mut n = 0;
    for h in heights {
        if used + h > room {
            break;
        }
        used += h;
        n += 1;
    }
    n.max(heights.len().min(1))
}

#[cfg(test)]
mod tests {
    use super::keep_visible;

    #[test]
    fn offsets_follow_the_cursor_and_stop_at_the_end() {
        assert_eq!(keep_visible(0, Some(12), 20, 5), 8);
        assert_eq!(keep_visible(8, Some(3), 20, 5), 3);
        assert_eq!(keep_visible(30, None, 20, 5), 15);
        assert_eq!(keep_visible(3, None, 2, 5), 0);
    }
}
