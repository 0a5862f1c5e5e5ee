//! The timeline view (`T`): every intervention of the last hour, newest
//! first — single acts and bulk runs, from this dashboard, another one or
//! the command line — each with who, what and how it ended (a bulk run by
//! its counts), as `history --since 1h` lists them (`trail::timeline`,
//! which honours `--audit-trail file:PATH`). Read from the audit trail when
//! the view opens (`r` reads again); the window is counted back from the
//! cluster's clock by the read itself.

pub mod draw;

use super::{hint, Context, Effect, Hint, Outcome};
use crate::dashboard::event::IoRequest;
use crate::dashboard::keymap::Op;
use crate::dashboard::load::Load;
use crate::protocol::trail::Entry;
use chrono::{DateTime, Utc};
use crossterm::event::KeyEvent;
use std::time::Duration;

/// How far back the view looks.
pub const WINDOW: Duration = Duration::from_secs(3600);

/// The interventions as read: since when (the cluster's clock less
/// [`WINDOW`]), newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    /// The window's start.
    pub since: DateTime<Utc>,
    /// The interventions started since, newest first.
    pub entries: Vec<Entry>,
}

/// The timeline view's state (kept while it is closed: the list shows
/// again, as read, while it is read again).
#[derive(Debug, Clone, Default)]
pub struct TimelineView {
    /// The interventions, or why they could not be read.
    pub list: Load<Read>,
    /// The selected intervention.
    pub cursor: usize,
}

impl TimelineView {
    /// The interventions listed (none before the first read).
    pub fn entries(&self) -> &[Entry] {
        self.list.value().map_or(&[][..], |r| r.entries.as_slice())
    }

    /// The selected intervention.
    pub fn selected(&self) -> Option<&Entry> {
        self.entries().get(self.cursor)
    }

    /// Opened (`T`, or `r` in it): reads the last [`WINDOW`] again.
    pub fn open(&mut self) -> Vec<IoRequest> {
        self.list.reload();
        vec![IoRequest::LoadTimeline(WINDOW)]
    }

    /// The interventions were read; the cursor stays on the same one when
    /// it is still listed (a new one arrives at the top), else in range.
    pub fn loaded(&mut self, read: Result<Read, String>) {
        let kept = self.selected().map(|e| e.record_id.clone());
        self.list = Load::of(read);
        let entries = self.entries();
        self.cursor = kept
            .and_then(|id| entries.iter().position(|e| e.record_id == id))
            .unwrap_or(self.cursor)
            .min(entries.len().saturating_sub(1));
    }

    /// A key while the view is on top: up and down select, `r` reads
    /// again, `q` quits, any other key closes it.
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        let n = self.entries().len();
        match cx.keys.main_op(key.code) {
            Some(Op::Down | Op::PageDown) => {
                self.cursor = (self.cursor + 1).min(n.saturating_sub(1))
            }
            Some(Op::Up | Op::PageUp) => self.cursor = self.cursor.saturating_sub(1),
            Some(Op::Top) => self.cursor = 0,
            Some(Op::Bottom) => self.cursor = n.saturating_sub(1),
            Some(Op::Refresh) => {
                return Outcome {
                    close: false,
                    effects: self.open().into_iter().map(Effect::Io).collect(),
                }
            }
            Some(Op::Quit) => return Outcome::with(Effect::Quit),
            _ => return Outcome::close(),
        }
        Outcome::stay()
    }

    /// The key bar while the view is on top.
    pub fn hints() -> Vec<Hint> {
        vec![
            hint(0, "j/k", "select"),
            hint(0, "r", "read again"),
            hint(0, "Esc", "close"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::{key, Shared};
    use super::*;
    use crate::protocol::trail::{Interface, Operator, RecordStatus};
    use crossterm::event::KeyCode;

    pub(super) fn entry(id: &str, minute: u32) -> Entry {
        Entry {
            record_id: id.into(),
            started_at: format!("2026-01-01T12:{minute:02}:00Z").parse().unwrap(),
            finished_at: None,
            operator: Operator::os("alice", "ops-1"),
            interface: Interface::Dashboard,
            action: crate::protocol::trail::ActionKind::Rollback,
            forced: false,
            bulk: false,
            transactions: 1,
            at_least: false,
            targets: vec![],
            status: RecordStatus::Running,
            outcome: None,
            counts: None,
            summary: None,
            reason: Some("INC-1".into()),
        }
    }

    fn read(ids: &[&str]) -> Result<Read, String> {
        Ok(Read {
            since: chrono::DateTime::UNIX_EPOCH,
            entries: ids.iter().map(|id| entry(id, 0)).collect(),
        })
    }

    #[test]
    fn opening_reads_the_last_hour_and_keeps_the_last_list_shown_meanwhile() {
        let mut v = TimelineView::default();
        assert_eq!(v.open(), vec![IoRequest::LoadTimeline(WINDOW)]);
        assert!(v.list.is_loading());
        v.loaded(read(&["b", "a"]));
        assert_eq!(v.entries().len(), 2);
        v.open();
        assert!(v.list.is_loading());
        assert_eq!(v.entries().len(), 2, "the last list stays while read again");
    }

    #[test]
    fn the_cursor_follows_its_intervention_when_a_newer_one_arrives() {
        let mut v = TimelineView::default();
        v.loaded(read(&["b", "a"]));
        v.cursor = 1;
        v.loaded(read(&["c", "b", "a"]));
        assert_eq!(v.selected().map(|e| e.record_id.as_str()), Some("a"));
        v.loaded(read(&["c"]));
        assert_eq!(v.cursor, 0, "in range when it is gone");
        v.loaded(Err("audit index missing".into()));
        assert_eq!(v.cursor, 0);
        assert_eq!(v.list.last(), Some(Err("audit index missing")));
    }

    #[test]
    fn keys_select_read_again_quit_or_close() {
        let shared = Shared::new();
        let cx = shared.cx();
        let mut v = TimelineView::default();
        v.loaded(read(&["c", "b", "a"]));
        assert!(!v.key(&cx, key(KeyCode::Char('j'))).close);
        assert!(!v.key(&cx, key(KeyCode::Down)).close);
        assert!(!v.key(&cx, key(KeyCode::Down)).close);
        assert_eq!(v.cursor, 2, "stops at the last");
        v.key(&cx, key(KeyCode::Char('k')));
        assert_eq!(v.cursor, 1);
        let r = v.key(&cx, key(KeyCode::Char('r')));
        assert!(!r.close);
        assert!(matches!(
            r.effects.as_slice(),
            [Effect::Io(IoRequest::LoadTimeline(w))] if *w == WINDOW
        ));
        let q = v.key(&cx, key(KeyCode::Char('q')));
        assert!(matches!(q.effects.as_slice(), [Effect::Quit]));
        assert!(v.key(&cx, key(KeyCode::Esc)).close);
    }
}
