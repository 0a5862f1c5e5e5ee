//! The boundary where documents change names: the application's names to the
//! canonical ones on every read of the three indices, back on every write.
//! One rule each way, applied by the cluster handle to every `_source` it
//! reads or writes for those indices (get, mget, search, msearch, scan, and
//! every kind of write).

use super::{DocKind, Field, Schema};
use crate::cluster::Translate;
use crate::protocol::indices::Indices;
use serde_json::{Map, Value};

/// A schema map bound to the index names it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    schema: Schema,
    indices: Vec<(String, DocKind)>,
}

/// A field of the application's that spells a canonical name the map gives
/// to another field is kept under this prefix while the tool holds the
/// document (so it is never read as that field), and written back as it was.
const SHADOWED: &str = "\u{1}app:";

impl Boundary {
    /// The boundary for `schema` over the three indices; `None` for the
    /// article's map (nothing to translate).
    pub fn new(schema: &Schema, ix: &Indices) -> Option<Boundary> {
        (!schema.is_default()).then(|| Boundary {
            schema: schema.clone(),
            indices: vec![
                (ix.transactions.clone(), DocKind::Transactions),
                (ix.accounts.clone(), DocKind::Accounts),
                (ix.locks.clone(), DocKind::Locks),
            ],
        })
    }

    fn kind(&self, index: &str) -> Option<DocKind> {
        self.indices
            .iter()
            .find(|(name, _)| name == index)
            .map(|(_, k)| *k)
    }

    fn fields(&self, kind: DocKind) -> impl Iterator<Item = Field> + '_ {
        Field::ALL.into_iter().filter(move |f| f.kind() == kind)
    }

    /// Application's names to canonical, in place and in order.
    pub fn to_canonical(&self, kind: DocKind, src: Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::with_capacity(src.len());
        for (key, value) in src {
            let field = self.fields(kind).find(|f| self.schema.name(*f) == key);
            match field {
                Some(f) => {
                    let value = match (f, value) {
                        (Field::State, Value::String(s)) => {
                            Value::String(self.schema.state_from_app(&s))
                        }
                        (_, v) => v,
                    };
                    out.insert(f.canonical().to_string(), value);
                }
                None if self.is_taken(kind, &key) || key.starts_with(SHADOWED) => {
                    out.insert(format!("{SHADOWED}{key}"), value);
                }
                None => {
                    out.insert(key, value);
                }
            }
        }
        out
    }

    /// Canonical names to the application's, in place and in order.
    pub fn to_app(&self, kind: DocKind, src: &Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::with_capacity(src.len());
        for (key, value) in src {
            if let Some(raw) = key.strip_prefix(SHADOWED) {
                out.insert(raw.to_string(), value.clone());
                continue;
            }
            match self.fields(kind).find(|f| f.canonical() == key) {
                Some(f) => {
                    let value = match (f, value) {
                        (Field::State, Value::String(s)) => {
                            Value::String(self.schema.state_to_app(s))
                        }
                        (_, v) => v.clone(),
                    };
                    out.insert(self.schema.name(f).to_string(), value);
                }
                None => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        out
    }

    /// Whether `key` (not one of the application's mapped names) is the
    /// canonical name of a field of `kind` the application calls otherwise.
    fn is_taken(&self, kind: DocKind, key: &str) -> bool {
        self.fields(kind)
            .any(|f| f.canonical() == key && self.schema.name(f) != key)
    }
}

/// The cluster layer's side of the map: every `_source` of the three
/// indices passes through here (see `crate::cluster::Translate`).
impl Translate for Boundary {
    /// A document of `index` as read: canonical names and states.
    fn read(&self, index: &str, src: Map<String, Value>) -> Map<String, Value> {
        match self.kind(index) {
            Some(kind) => self.to_canonical(kind, src),
            None => src,
        }
    }

    /// A document of `index` as written: the application's names and states.
    fn write(&self, index: &str, src: &Map<String, Value>) -> Map<String, Value> {
        match self.kind(index) {
            Some(kind) => self.to_app(kind, src),
            None => src.clone(),
        }
    }

    /// [`Translate::read`] on every hit's `_source` of a search answer.
    fn read_answer(&self, index: &str, answer: &mut Value) {
        let Some(kind) = self.kind(index) else { return };
        let hits = answer
            .pointer_mut("/hits/hits")
            .and_then(Value::as_array_mut);
        for hit in hits.into_iter().flatten() {
            if let Some(Value::Object(src)) = hit.get_mut("_source") {
                *src = self.to_canonical(kind, std::mem::take(src));
            }
        }
    }
}
