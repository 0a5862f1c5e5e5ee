//! Index-scoped multi requests. A cluster run with
//! `rest.action.multi.allow_explicit_index: false` (Amazon OpenSearch
//! Service advises it for index-level access policies: "Fine-grained access
//! control" / "Identity-based policies" in its developer guide) refuses,
//! with a 400 [`Error::ExplicitIndexRefused`](crate::Error::ExplicitIndexRefused)
//! and nothing processed, every `_bulk`, `_msearch` and `_mget` whose body
//! names an index, even the one in the path.
//!
//! So a request for one index always names it in the path and nothing in
//! the body (the common case: the accounts of a page, one phase's
//! `_bulk`). A request spanning several indices is sent whole until the
//! cluster refuses it once; the refusal is remembered here, on the handle
//! and its clones, and from then on such requests go as one per index
//! (the refused one is sent again that way, which is safe since nothing
//! of it ran). `doctor` asks ahead with
//! [`Cluster::probe_explicit_index`](super::Cluster::probe_explicit_index)
//! (in `introspect`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether the cluster refuses indices named in multi-request bodies
/// (shared by clones of one handle).
#[derive(Debug, Clone, Default)]
pub(super) struct Scope(Arc<AtomicBool>);

impl Scope {
    /// Whether a refusal was seen: send one request per index.
    pub(super) fn per_index(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Remembers a refusal.
    pub(super) fn refused(&self) {
        if !self.0.swap(true, Ordering::Relaxed) {
            tracing::info!(
                "the cluster refuses indices named in multi-request bodies \
                 (rest.action.multi.allow_explicit_index: false): one request per index from now on"
            );
        }
    }
}

/// The distinct indices of `items` in first-seen order, each with the
/// positions of its items.
pub(super) fn by_index<'a, T>(
    items: &'a [T],
    index: impl Fn(&'a T) -> &'a str,
) -> Vec<(&'a str, Vec<usize>)> {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = index(item);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, at)) => at.push(i),
            None => groups.push((name, vec![i])),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::by_index;

    #[test]
    fn groups_keep_first_seen_order_and_every_position() {
        let items = ["a", "b", "a", "c", "b"];
        let groups = by_index(&items, |s| *s);
        assert_eq!(
            groups,
            vec![("a", vec![0, 2]), ("b", vec![1, 4]), ("c", vec![3])]
        );
        assert!(by_index(&[] as &[&str], |s| *s).is_empty());
    }
}
