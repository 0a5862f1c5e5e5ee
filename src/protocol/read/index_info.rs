//! One index as discovery finds it ([`IndexInfo`]): what its configured
//! name designates (an index, an alias, a data stream), how often it makes
//! writes visible ([`Refresh`]), and each queried field resolved against its
//! live mapping to the name that can be queried exactly ([`ResolvedField`]).

use super::source_mode::SourceLoss;
use serde::Serialize;
use serde_json::{Map, Value};
use std::time::Duration;

/// What the configured index name designates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// Nothing: the index does not exist.
    Missing,
    /// Nothing, and nothing is wanted: the locks index under its default
    /// name, which the operator did not name, does not exist. The
    /// deployment takes no locks (the article's own has only transactions
    /// and accounts): lock reads find none, the sweep and lock releases
    /// have nothing to do, and only `transfer --locks` is refused.
    Absent,
    /// A concrete index.
    Index,
    /// An alias over these indices (id-based reads and writes need exactly one).
    Alias {
        /// Concrete indices behind the alias.
        indices: Vec<String>,
    },
    /// A data stream (append-only: documents cannot be updated by id).
    DataStream {
        /// Its backing indices.
        indices: Vec<String>,
    },
}

/// How often the index makes writes visible to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refresh {
    /// Every this long (the default is 1 s).
    Every(#[serde(with = "secs_f64")] Duration),
    /// Not an index setting: Elasticsearch Serverless manages it, with a
    /// default of [`SERVERLESS_REFRESH`] (known from `build_flavor:
    /// serverless` in the `GET /` banner).
    ServerlessDefault,
    /// `refresh_interval: -1`: only explicit refreshes.
    Never,
}

impl Refresh {
    /// How long a write may stay unseen by searches (`None`: until an
    /// explicit refresh).
    pub fn interval(&self) -> Option<Duration> {
        match self {
            Refresh::Every(d) => Some(*d),
            Refresh::ServerlessDefault => Some(SERVERLESS_REFRESH),
            Refresh::Never => None,
        }
    }
}

mod secs_f64 {
    use serde::Serializer;
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

/// How a field the tool queries resolved against the live mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResolvedField {
    /// The field as documents write it, e.g. `transaction_state`.
    pub name: String,
    /// The mapped type (`keyword`, `text`, `date`, ...), `None` when unmapped.
    pub mapped_type: Option<String>,
    /// The name to query exactly (`transaction_state.keyword` on an
    /// auto-created index); `None` when no exact field exists.
    pub exact: Option<String>,
    /// The exact field's `ignore_above` (256 on an auto-created index):
    /// longer values are not indexed there, so term queries miss them.
    pub ignore_above: Option<u64>,
    /// The mapping's own `format` (dates), when it sets one.
    pub format: Option<String>,
}

impl ResolvedField {
    /// An unmapped field (no document has it yet): queried under its own
    /// name, which matches nothing until a mapping exists.
    pub(super) fn unmapped(name: &str) -> ResolvedField {
        ResolvedField {
            name: name.into(),
            mapped_type: None,
            exact: Some(name.into()),
            ignore_above: None,
            format: None,
        }
    }

    /// Whether some document has the field (it is in the mapping).
    pub fn is_mapped(&self) -> bool {
        self.mapped_type.is_some()
    }

    /// The name to use in term queries and aggregations: the exact field, or
    /// the field itself when there is none (callers check [`Self::exact`]
    /// first where that matters).
    pub fn query_name(&self) -> &str {
        self.exact.as_deref().unwrap_or(&self.name)
    }

    /// Whether the exact field indexes `value`: not when it is longer than
    /// `ignore_above` (counted in UTF-16 units, as Java strings are), which
    /// term queries then miss.
    pub fn indexes_whole(&self, value: &str) -> bool {
        self.ignore_above
            .is_none_or(|n| value.encode_utf16().count() as u64 <= n)
    }

    /// What `ignore_above` hides, in words (empty without one).
    fn limit(&self) -> String {
        self.ignore_above
            .map(|n| {
                format!(
                    " (ignore_above {n}: values longer than {n} characters are missed \
                     by its term queries; the tool looks for them by phrase on the \
                     analysed field, or scans)"
                )
            })
            .unwrap_or_default()
    }

    /// How it resolved, in words (for `doctor` and the dashboard header).
    pub fn how(&self) -> String {
        match (&self.mapped_type, &self.exact) {
            (None, _) => "not mapped yet (no document has it)".into(),
            (Some(t), Some(e)) if *e == self.name => format!("{t}: exact{}", self.limit()),
            (Some(t), Some(e)) => format!("{t}: exact through `{e}`{}", self.limit()),
            (Some(t), None) => format!("{t}: no exact field, queries degrade"),
        }
    }
}

/// One of the three indices as found on the cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexInfo {
    /// The name the tool was given (`--transactions-index` ...).
    pub name: String,
    /// What that name designates.
    pub target: Target,
    /// The concrete indices it reads (one for an index or a simple alias).
    pub concrete: Vec<String>,
    /// `dynamic` of the mapping's root (`true` when unset).
    pub dynamic: String,
    /// From the index settings (`1s` when unset).
    pub refresh: Refresh,
    /// The mapping's root `properties` (of the first concrete index).
    #[serde(skip)]
    pub properties: Map<String, Value>,
    /// Queried fields mapped differently in the indices behind an alias:
    /// searches on them fail on some shards (partial results).
    pub mixed: Vec<String>,
    /// `_routing.required` in the mapping: every GET, mget and write by id
    /// needs a routing value the tool does not know.
    pub routing_required: bool,
    /// Why the stored `_source` is not the document as written, if it is
    /// not: the tool refuses to rewrite documents there.
    pub source_loss: Option<SourceLoss>,
    /// Blocks on its concrete indices that refuse writes (settings
    /// `index.blocks.*`, a closed index): an act refuses before step 1.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<IndexBlock>,
}

/// A block that makes an index refuse every write the protocol sends
/// (Elasticsearch and OpenSearch answer 403 `cluster_block_exception`, or
/// `index_closed_exception`). Found in discovery so an act refuses before
/// its first write instead of stopping half-way at the first blocked one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum IndexBlock {
    /// `index.blocks.write: true` on this concrete index.
    Write(String),
    /// `index.blocks.read_only: true`.
    ReadOnly(String),
    /// `index.blocks.read_only_allow_delete: true` (set by the disk
    /// flood-stage watermark, too).
    ReadOnlyAllowDelete(String),
    /// The concrete index is closed.
    Closed(String),
}

impl IndexBlock {
    /// The blocks of concrete index `index` in a settings answer (nested or
    /// flat; `"true"` as the products write it, or `true`) and a
    /// `_resolve/index` answer (`attributes: ["closed"]`).
    pub fn of(index: &str, settings: &Value, resolved: Option<&Value>) -> Vec<IndexBlock> {
        let at = index.replace('~', "~0").replace('/', "~1");
        let set = |name: &str| {
            let v = settings
                .pointer(&format!("/{at}/settings/index/blocks/{name}"))
                .or_else(|| settings.pointer(&format!("/{at}/settings/index.blocks.{name}")));
            matches!(v, Some(Value::Bool(true))) || v.and_then(Value::as_str) == Some("true")
        };
        let mut blocks = Vec::new();
        if set("write") {
            blocks.push(IndexBlock::Write(index.into()));
        }
        if set("read_only") {
            blocks.push(IndexBlock::ReadOnly(index.into()));
        }
        if set("read_only_allow_delete") {
            blocks.push(IndexBlock::ReadOnlyAllowDelete(index.into()));
        }
        let closed = resolved
            .and_then(|r| r.get("indices"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|e| e.get("name").and_then(Value::as_str) == Some(index))
            .filter_map(|e| e.get("attributes").and_then(Value::as_array))
            .flatten()
            .any(|a| a.as_str() == Some("closed"));
        if closed {
            blocks.push(IndexBlock::Closed(index.into()));
        }
        blocks
    }

    /// The refusal, naming the block and how to lift it.
    pub fn problem(&self) -> String {
        let (index, setting) = match self {
            IndexBlock::Closed(index) => {
                return format!(
                    "index `{index}` is closed: every write would be refused; open it \
                     (`POST {index}/_open`) first"
                )
            }
            IndexBlock::Write(i) => (i, "index.blocks.write"),
            IndexBlock::ReadOnly(i) => (i, "index.blocks.read_only"),
            IndexBlock::ReadOnlyAllowDelete(i) => (i, "index.blocks.read_only_allow_delete"),
        };
        format!(
            "index `{index}` carries the block `{setting}: true`: every write would be \
             refused (403 cluster_block_exception); lift it with \
             `PUT {index}/_settings {{\"{setting}\": null}}` or ask its owner"
        )
    }
}

impl IndexInfo {
    /// What discovery assumes of the index `name` before it has read
    /// anything (and what `init` creates): a concrete index under that
    /// name, refreshed every [`DEFAULT_REFRESH`], nothing mapped yet.
    pub fn assumed(name: &str) -> IndexInfo {
        IndexInfo {
            name: name.into(),
            target: Target::Index,
            concrete: vec![name.into()],
            dynamic: "true".into(),
            refresh: Refresh::Every(DEFAULT_REFRESH),
            properties: Map::new(),
            mixed: Vec::new(),
            routing_required: false,
            source_loss: None,
            blocks: Vec::new(),
        }
    }

    /// Whether the index exists.
    pub fn exists(&self) -> bool {
        !matches!(self.target, Target::Missing | Target::Absent)
    }

    /// Whether it is the locks index of a deployment without locks
    /// ([`Target::Absent`]): not existing, and not a mistake.
    pub fn is_absent(&self) -> bool {
        self.target == Target::Absent
    }

    /// Why documents of this index cannot be read or written by id, if so.
    pub fn id_problem(&self) -> Option<String> {
        match &self.target {
            _ if self.routing_required => Some(format!(
                "`{}` requires custom routing (`_routing.required: true`): every read and \
                 write by id needs the routing value, which the tool does not know; \
                 the protocol needs documents reachable by id alone (an index without \
                 required routing)",
                self.name
            )),
            Target::Alias { indices } if indices.len() > 1 => Some(format!(
                "`{}` is an alias over {} indices ({}), as a rollover alias is: the cluster \
                 refuses a GET or write by id through it (\"has more than one index associated \
                 with it, can't execute a single index op\"), and writing through its write \
                 index would add a second copy of a document that lives in an older index (a \
                 lock created there would not see the one held in an older index); the tool \
                 reads it by search only, and refuses what reads or writes by id (show, audit, \
                 every intervention); to repair, point the tool at the concrete index that \
                 holds the documents (`--transactions-index`, `--accounts-index` or \
                 `--locks-index`, one concrete index at a time; `doctor` lists them)",
                self.name,
                indices.len(),
                indices.join(", ")
            )),
            Target::DataStream { .. } => Some(format!(
                "`{}` is a data stream: its documents cannot be updated by id; \
                 the protocol needs a regular index",
                self.name
            )),
            _ => None,
        }
    }

    /// The mapping of `path` (dots for sub-objects), if any.
    pub fn field_mapping(&self, path: &str) -> Option<&Map<String, Value>> {
        let mut props = &self.properties;
        let mut parts = path.split('.').peekable();
        while let Some(p) = parts.next() {
            let m = props.get(p)?.as_object()?;
            if parts.peek().is_none() {
                return Some(m);
            }
            props = m.get("properties")?.as_object()?;
        }
        None
    }

    /// Resolves `name` to its exact field (see [`ResolvedField`]).
    pub fn resolve(&self, name: &str) -> ResolvedField {
        let Some(m) = self.field_mapping(name) else {
            return ResolvedField::unmapped(name);
        };
        let ty = m
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("object")
            .to_string();
        let exact = if is_exact_type(&ty) {
            Some((name.to_string(), m))
        } else {
            m.get("fields")
                .and_then(Value::as_object)
                .and_then(|subs| {
                    subs.iter().find(|(_, v)| {
                        v.get("type")
                            .and_then(Value::as_str)
                            .is_some_and(is_exact_type)
                    })
                })
                .and_then(|(sub, def)| Some((format!("{name}.{sub}"), def.as_object()?)))
        };
        ResolvedField {
            name: name.into(),
            mapped_type: Some(ty),
            ignore_above: exact
                .as_ref()
                .and_then(|(_, def)| def.get("ignore_above"))
                .and_then(Value::as_u64),
            exact: exact.map(|(n, _)| n),
            format: m.get("format").and_then(Value::as_str).map(str::to_string),
        }
    }
}

/// Types a term query, a `terms` aggregation and a sort work on exactly.
fn is_exact_type(ty: &str) -> bool {
    matches!(
        ty,
        "keyword"
            | "constant_keyword"
            | "wildcard"
            | "date"
            | "date_nanos"
            | "long"
            | "integer"
            | "short"
            | "byte"
            | "double"
            | "float"
            | "half_float"
            | "scaled_float"
            | "unsigned_long"
            | "boolean"
    )
}

/// Refresh interval when the settings do not say.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(1);

/// Elasticsearch Serverless's refresh interval, which its index settings
/// do not show: "In Elastic Cloud Serverless, the default value for
/// index.refresh_interval is 5s"
/// (https://www.elastic.co/docs/reference/elasticsearch/rest-apis/refresh-parameter),
/// so searches may lag writes by 5 s there.
pub const SERVERLESS_REFRESH: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(props: Value) -> IndexInfo {
        let mut i = IndexInfo::assumed("t");
        i.properties = props.as_object().cloned().unwrap_or_default();
        i
    }

    #[test]
    fn text_with_keyword_resolves_to_the_sub_field() {
        let i = info(json!({"transaction_state": {"type": "text",
            "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}}));
        let f = i.resolve("transaction_state");
        assert_eq!(f.exact.as_deref(), Some("transaction_state.keyword"));
        assert_eq!(f.ignore_above, Some(256));
        let bare = info(json!({"transaction_state": {"type": "text"}}));
        assert_eq!(bare.resolve("transaction_state").exact, None);
        assert!(!bare.resolve("missing").is_mapped());
    }
}
