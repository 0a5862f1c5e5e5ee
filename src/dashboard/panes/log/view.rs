//! What the log pane shows, derived once (by `derive`, never while
//! drawing): its first entry on screen, and where following the newest
//! starts. Pure: it imports nothing of the dashboard but `layout` and the
//! log's entries.

use crate::dashboard::layout;
use crate::dashboard::log::LogEntry;
use std::collections::VecDeque;

/// The log pane's derived scroll.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogView {
    /// First log line on screen.
    pub top: usize,
}

/// The first entry shown when following the newest: as many of the newest
/// entries as fit the pane's `room` rows whole (at least the newest), each
/// wrapped to the pane's inner `width` (long lines wrap rather than being
/// cut at the edge). Only those are measured, not the whole log.
pub fn last_top(log: &VecDeque<LogEntry>, room: usize, width: usize) -> usize {
    let mut used = 0;
    let mut top = log.len();
    while let Some(e) = top.checked_sub(1).and_then(|i| log.get(i)) {
        let rows = layout::log_entry_rows(&e.text, width);
        if used + rows > room {
            break;
        }
        used += rows;
        top -= 1;
    }
    top.min(log.len().saturating_sub(1))
}

/// The pane's first line: the newest entries when following (`scrolled`
/// is `None`), else where the operator scrolled to, never past `last_top`.
pub fn derive(scrolled: Option<usize>, last_top: usize) -> LogView {
    LogView {
        top: scrolled.map_or(last_top, |top| top.min(last_top)),
    }
}

#[cfg(test)]
mod tests {
    use super::{derive, last_top};
    use crate::dashboard::log::{LogEntry, LogLevel};
    use std::collections::VecDeque;

    fn log(texts: &[&str]) -> VecDeque<LogEntry> {
        texts
            .iter()
            .map(|t| LogEntry {
                at: chrono::DateTime::UNIX_EPOCH,
                level: LogLevel::Info,
                text: t.to_string(),
            })
            .collect()
    }

    #[test]
    fn following_shows_the_newest_entries_that_fit_whole() {
        let l = log(&["a", "b", "c", "d"]);
        assert_eq!(last_top(&l, 2, 40), 2);
        // A long entry wraps: it takes the room of two.
        let l = log(&["a", "b", &"x ".repeat(30)]);
        assert_eq!(last_top(&l, 2, 40), 2);
        assert_eq!(last_top(&l, 3, 40), 1);
        assert_eq!(last_top(&VecDeque::new(), 3, 40), 0);
    }

    #[test]
    fn a_scroll_never_goes_past_following() {
        assert_eq!(derive(None, 7).top, 7);
        assert_eq!(derive(Some(3), 7).top, 3);
        assert_eq!(derive(Some(9), 7).top, 7);
    }
}
