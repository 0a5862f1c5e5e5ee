//! The cluster handle's side of the schema map: every `_source` of the
//! transactions, accounts and locks indices passes through here on its way
//! in (get, mget, search, msearch, scan pages) and out (every write), renamed
//! by the [`Translate`] the protocol installed (none for the article's
//! names). The cluster layer only knows the trait: what the names are is the
//! protocol's (`protocol::schema::Boundary` implements it), so the arrow
//! runs from the protocol down to the cluster, never back up.

use super::translate::Translate;
use super::{Cluster, Hit, VersionedDoc};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

impl Cluster {
    /// The same handle, translating documents through `boundary` on every
    /// read and write.
    pub fn with_boundary(mut self, boundary: Option<Arc<dyn Translate>>) -> Cluster {
        self.boundary = boundary;
        self
    }

    /// A document of `index` as read (canonical names).
    pub(crate) fn read_source(&self, index: &str, src: Map<String, Value>) -> Map<String, Value> {
        match &self.boundary {
            Some(b) => b.read(index, src),
            None => src,
        }
    }

    /// A document of `index` as it is to be written (the application's names).
    pub(crate) fn write_source<'a>(
        &self,
        index: &str,
        src: &'a Map<String, Value>,
    ) -> Cow<'a, Map<String, Value>> {
        match &self.boundary {
            Some(b) => Cow::Owned(b.write(index, src)),
            None => Cow::Borrowed(src),
        }
    }

    /// Hits of `index` as read (canonical names), for answers read raw.
    pub fn read_hits(&self, index: &str, hits: Vec<Hit>) -> Vec<Hit> {
        hits.into_iter()
            .map(|mut h| {
                h.source = self.read_source(index, std::mem::take(&mut h.source));
                h
            })
            .collect()
    }

    /// A search answer of `index` as read (every hit's `_source` canonical).
    pub(crate) fn read_answer(&self, index: &str, mut answer: Value) -> Value {
        if let Some(b) = &self.boundary {
            b.read_answer(index, &mut answer);
        }
        answer
    }

    /// A versioned document of `index` as read (canonical names).
    pub(crate) fn read_doc(&self, index: &str, mut d: VersionedDoc) -> VersionedDoc {
        d.source = self.read_source(index, std::mem::take(&mut d.source));
        d
    }
}
