//! The view of the stuck transactions by cause (`c`), drawn over the panes
//! like the audit: the cluster's counts by state × age, lock holder,
//! account and band of modification times (see
//! [`crate::protocol::read::groups`]). Enter opens the selected group: it
//! becomes the table's filter, run by the cluster, so its rows are listed,
//! paged and marked (`*`) for a bulk act like any filter's, with the bulk
//! dialog's dry-run preview, count and reason. `Esc` on the table (with no
//! text filter) closes the group.

pub mod draw;

use super::{hint, Context, Effect, Hint, Outcome};
use crate::dashboard::event::IoRequest;
use crate::dashboard::keymap::Op;
use crate::dashboard::load::Load;
use crate::dashboard::log::LogLevel;
use crate::protocol::read::Groups;
use crossterm::event::KeyEvent;

/// The view's state (kept while it is closed: a count still running is
/// not asked twice, and the last counts show while it runs).
#[derive(Debug, Clone, Default)]
pub struct GroupsView {
    /// The stuck transactions by cause, as last counted.
    pub counts: Load<Groups>,
    /// The selected group.
    pub cursor: usize,
}

impl GroupsView {
    /// Opened (`c`): counts the groups again (one count at a time).
    pub fn open(&mut self) -> Vec<IoRequest> {
        if self.counts.is_loading() {
            return vec![];
        }
        self.counts.reload();
        vec![IoRequest::LoadGroups]
    }

    /// The count arrived.
    pub fn counted(&mut self, groups: Result<Groups, String>) {
        self.counts = Load::of(groups);
        let n = self.counts.value().map_or(0, |g| g.groups.len());
        self.cursor = self.cursor.min(n.saturating_sub(1));
    }

    /// A key while the view is on top: move, open a group, recount, or close.
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        let Some(op) = cx.keys.main_op(key.code) else {
            return Outcome::stay();
        };
        let n = self.counts.value().map_or(0, |g| g.groups.len());
        let last = n.saturating_sub(1);
        match op {
            Op::Down => self.cursor = (self.cursor + 1).min(last),
            Op::Up => self.cursor = self.cursor.saturating_sub(1),
            Op::PageDown => self.cursor = (self.cursor + 10).min(last),
            Op::PageUp => self.cursor = self.cursor.saturating_sub(10),
            Op::Top => self.cursor = 0,
            Op::Bottom => self.cursor = last,
            Op::Refresh => {
                return Outcome {
                    close: false,
                    effects: self.open().into_iter().map(Effect::Io).collect(),
                }
            }
            Op::Open => return self.open_group(),
            Op::Quit => return Outcome::with(Effect::Quit),
            _ => return Outcome::close(),
        }
        Outcome::stay()
    }

    /// Enter: the selected group becomes the table's filter (the text,
    /// state and age toggles give way to it).
    fn open_group(&self) -> Outcome {
        let Some(g) = self
            .counts
            .value()
            .and_then(|g| g.groups.get(self.cursor))
            .cloned()
        else {
            return Outcome::stay();
        };
        let text = format!(
            "group {}: {} ({} stuck)",
            g.kind.heading(),
            g.label,
            g.count
        );
        Outcome::with(Effect::Log(LogLevel::Info, text))
            .then(Effect::OpenGroup(g))
            .closing()
    }

    /// The key bar while the view is on top.
    pub fn hints() -> Vec<Hint> {
        vec![
            hint(0, "j/k", "select"),
            hint(0, "Enter", "open the group"),
            hint(0, "r", "count again"),
            hint(0, "Esc", "close"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::layers::fixture::{key, Shared};
    use crate::protocol::read::{Group, GroupKind};
    use crossterm::event::KeyCode;

    #[test]
    fn one_count_at_a_time_and_enter_opens_the_selected_group() {
        let shared = Shared::new();
        let mut view = GroupsView::default();
        assert_eq!(view.open(), vec![IoRequest::LoadGroups]);
        assert!(view.open().is_empty(), "a count is running");
        let g = |label: &str| Group {
            kind: GroupKind::Account,
            label: label.into(),
            count: 1,
            filter: Default::default(),
            cause: None,
        };
        view.counted(Ok(Groups {
            stuck: 2,
            groups: vec![g("A"), g("B")],
            unavailable: vec![],
        }));
        view.key(&shared.cx(), key(KeyCode::Char('j')));
        let out = view.key(&shared.cx(), key(KeyCode::Enter));
        assert!(out.close, "{out:?}");
        assert!(
            matches!(&out.effects[..], [Effect::Log(..), Effect::OpenGroup(g)] if g.label == "B"),
            "{out:?}"
        );
    }
}
