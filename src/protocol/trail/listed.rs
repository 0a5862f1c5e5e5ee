//! Which transactions a run's plan lists ([`Listed`]): what the parts written
//! after it store without indexing (`super::compact`). Apart from `pages`
//! and `compact` so that neither imports the other for it.

use std::collections::HashSet;

/// The transactions a run's record and its plan's parts list, and so
/// index (`history ID` finds the run by them). The parts written after
/// them (a job's checkpoints, the pages of steps its completion writes)
/// keep their own list of these stored but not indexed (`planned`,
/// `super::compact`) and index only the others (a lock's owner a sweep
/// released): each transaction of a run is indexed once, not once per
/// document that names it. Empty ([`Listed::default`]): every part
/// indexes its whole list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed(std::sync::Arc<HashSet<String>>);

impl Listed {
    /// The transactions `ids` (a run's plan) as listed.
    pub fn of<'a>(ids: impl IntoIterator<Item = &'a String>) -> Listed {
        Listed(std::sync::Arc::new(ids.into_iter().cloned().collect()))
    }

    /// Whether the run's record or plan's parts list `txn`.
    pub fn contains(&self, txn: &str) -> bool {
        self.0.contains(txn)
    }

    /// Whether none is listed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
