//! Discovery: what the three indices really are on this cluster, read on
//! connect instead of assumed. Aliases and data streams are resolved to their
//! concrete indices; each field the tool queries is resolved against the live
//! mapping to the name that can be queried exactly (a `keyword` field, or the
//! `keyword` sub-field of a `text` field an auto-created index has); where no
//! exact field exists the resolution says so and the queries degrade.

use crate::cluster::Cluster;
use crate::error::Result;
use crate::protocol::Indices;
use elasticsearch::http::Method;
use serde::Serialize;
use serde_json::{Map, Value};
use std::time::Duration;

/// What the configured index name designates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// Nothing: the index does not exist.
    Missing,
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
    /// `refresh_interval: -1`: only explicit refreshes.
    Never,
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
}

impl ResolvedField {
    /// An unmapped field (no document has it yet): queried under its own
    /// name, which matches nothing until a mapping exists.
    fn unmapped(name: &str) -> ResolvedField {
        ResolvedField {
            name: name.into(),
            mapped_type: None,
            exact: Some(name.into()),
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

    /// How it resolved, in words (for `doctor` and the dashboard header).
    pub fn how(&self) -> String {
        match (&self.mapped_type, &self.exact) {
            (None, _) => "not mapped yet (no document has it)".into(),
            (Some(t), Some(e)) if *e == self.name => format!("{t}: exact"),
            (Some(t), Some(e)) => format!("{t}: exact through `{e}`"),
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
}

impl IndexInfo {
    /// Whether the index exists.
    pub fn exists(&self) -> bool {
        self.target != Target::Missing
    }

    /// Why documents of this index cannot be read or written by id, if so.
    pub fn id_problem(&self) -> Option<String> {
        match &self.target {
            Target::Alias { indices } if indices.len() > 1 => Some(format!(
                "`{}` is an alias over {} indices ({}): reads and writes by id need exactly one; \
                 point the tool at the concrete index",
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
            Some(name.to_string())
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
                .map(|(sub, _)| format!("{name}.{sub}"))
        };
        ResolvedField {
            name: name.into(),
            mapped_type: Some(ty),
            exact,
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

/// The fields every query is built from, resolved on this cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fields {
    /// `transaction_state`.
    pub state: ResolvedField,
    /// Source account: `src_acct` and/or the article mapping's `src_account`
    /// (every mapped name; the first when neither is mapped).
    pub src: Vec<ResolvedField>,
    /// Destination account, likewise.
    pub dest: Vec<ResolvedField>,
    /// `modification_time` (a `date` where ages can be queried).
    pub modification_time: ResolvedField,
    /// Lock `owner`.
    pub owner: ResolvedField,
    /// Lock `created_at` (sort order of the locks pane).
    pub lock_created_at: ResolvedField,
    /// Account `pending_transactions`.
    pub pending: ResolvedField,
}

impl Fields {
    /// Whether `modification_time` can be compared with `now-…` on the server.
    pub fn ages_queryable(&self) -> bool {
        matches!(
            self.modification_time.mapped_type.as_deref(),
            None | Some("date") | Some("date_nanos")
        )
    }

    /// Every resolved field with the index it belongs to, for reports.
    pub fn all(&self) -> Vec<(&'static str, &ResolvedField)> {
        let mut v = vec![("transactions", &self.state)];
        v.extend(self.src.iter().map(|f| ("transactions", f)));
        v.extend(self.dest.iter().map(|f| ("transactions", f)));
        v.push(("transactions", &self.modification_time));
        v.push(("accounts", &self.pending));
        v.push(("locks", &self.owner));
        v.push(("locks", &self.lock_created_at));
        v
    }
}

/// Everything discovery learnt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Discovery {
    /// The transactions index.
    pub transactions: IndexInfo,
    /// The accounts index.
    pub accounts: IndexInfo,
    /// The locks index.
    pub locks: IndexInfo,
    /// The resolved fields.
    pub fields: Fields,
}

impl Discovery {
    /// What discovery assumes before it has read anything (and what an
    /// `init`-created cluster resolves to): every field exact under its name.
    pub fn assumed(ix: &Indices) -> Discovery {
        let info = |name: &str| IndexInfo {
            name: name.into(),
            target: Target::Index,
            concrete: vec![name.into()],
            dynamic: "true".into(),
            refresh: Refresh::Every(DEFAULT_REFRESH),
            properties: Map::new(),
            mixed: Vec::new(),
        };
        let transactions = info(&ix.transactions);
        let accounts = info(&ix.accounts);
        let locks = info(&ix.locks);
        let fields = resolve_fields(&transactions, &accounts, &locks);
        Discovery {
            transactions,
            accounts,
            locks,
            fields,
        }
    }

    /// The three indices in a fixed order.
    pub fn indices(&self) -> [&IndexInfo; 3] {
        [&self.transactions, &self.accounts, &self.locks]
    }

    /// Whether this is final: every index exists and every queried field is
    /// mapped. Until then discovery is repeated (an index auto-created by the
    /// application's first write changes what the fields resolve to).
    pub fn is_settled(&self) -> bool {
        self.indices().iter().all(|i| i.exists())
            && self.fields.state.is_mapped()
            && self.fields.modification_time.is_mapped()
            && self.fields.owner.is_mapped()
            && self.fields.pending.is_mapped()
    }

    /// Short warnings for the dashboard header and `doctor`: aliases id
    /// operations cannot use, fields without an exact form, refresh off.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for i in self.indices() {
            if let Some(p) = i.id_problem() {
                out.push(p);
            }
            if !i.mixed.is_empty() {
                out.push(format!(
                    "`{}` spans indices mapping {} differently: searches fail on some shards",
                    i.name,
                    i.mixed.join(", ")
                ));
            }
            if i.exists() && i.refresh == Refresh::Never {
                out.push(format!(
                    "`{}` has refresh_interval -1: searches never see new writes by themselves",
                    i.name
                ));
            }
        }
        for (_, f) in self.fields.all() {
            if f.is_mapped() && f.exact.is_none() {
                out.push(format!(
                    "`{}` is `{}` with no keyword sub-field: counted by search, slower",
                    f.name,
                    f.mapped_type.as_deref().unwrap_or("?")
                ));
            }
        }
        if !self.fields.ages_queryable() {
            out.push(format!(
                "`modification_time` is `{}`, not a date: ages are computed here, not by the cluster",
                self.fields.modification_time.mapped_type.as_deref().unwrap_or("?")
            ));
        }
        out
    }
}

/// Refresh interval when the settings do not say.
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(1);

/// Resolves the queried fields against the three indices' mappings.
pub fn resolve_fields(t: &IndexInfo, a: &IndexInfo, l: &IndexInfo) -> Fields {
    let either = |names: [&str; 2]| -> Vec<ResolvedField> {
        let mapped: Vec<ResolvedField> = names
            .iter()
            .map(|n| t.resolve(n))
            .filter(ResolvedField::is_mapped)
            .collect();
        if mapped.is_empty() {
            vec![ResolvedField::unmapped(names[0])]
        } else {
            mapped
        }
    };
    Fields {
        state: t.resolve("transaction_state"),
        src: either(["src_acct", "src_account"]),
        dest: either(["dest_acct", "dest_account"]),
        modification_time: t.resolve("modification_time"),
        owner: l.resolve("owner"),
        lock_created_at: l.resolve("created_at"),
        pending: a.resolve("pending_transactions"),
    }
}

/// Reads the three indices' resolution, mappings and settings (three
/// requests per index; discovery runs on connect and until it settles).
pub async fn discover(cluster: &Cluster, ix: &Indices) -> Result<Discovery> {
    let transactions = discover_index(cluster, &ix.transactions).await?;
    let accounts = discover_index(cluster, &ix.accounts).await?;
    let locks = discover_index(cluster, &ix.locks).await?;
    let fields = resolve_fields(&transactions, &accounts, &locks);
    Ok(Discovery {
        transactions,
        accounts,
        locks,
        fields,
    })
}

async fn discover_index(cluster: &Cluster, name: &str) -> Result<IndexInfo> {
    let (status, resolved) = cluster
        .raw(Method::Get, &format!("/_resolve/index/{name}"), None)
        .await?;
    let resolved = match status {
        200 => Some(resolved),
        404 => Some(Value::Null),
        _ => None,
    };
    let answer = |(status, v): (u16, Value)| -> Result<Value> {
        match status {
            200 => Ok(v),
            404 => Ok(Value::Null),
            _ => Err(cluster.error_for(status, &v, name)),
        }
    };
    let mappings = answer(
        cluster
            .raw(Method::Get, &format!("/{name}/_mapping"), None)
            .await?,
    )?;
    let settings = answer(
        cluster
            .raw(
                Method::Get,
                &format!("/{name}/_settings?include_defaults=true"),
                None,
            )
            .await?,
    )?;
    Ok(index_info(name, resolved.as_ref(), &mappings, &settings))
}

/// One index's information from the three answers.
pub fn index_info(
    name: &str,
    resolved: Option<&Value>,
    mappings: &Value,
    settings: &Value,
) -> IndexInfo {
    let target = match resolved {
        Some(r) => target_of(name, r),
        // No `_resolve` (older clusters): whatever `_mapping` answered under.
        None => match mappings.get(name) {
            Some(_) => Target::Index,
            None => {
                let keys: Vec<String> = mappings
                    .as_object()
                    .map(|o| o.keys().cloned().collect())
                    .unwrap_or_default();
                if keys.is_empty() {
                    Target::Missing
                } else {
                    Target::Alias { indices: keys }
                }
            }
        },
    };
    let concrete = match &target {
        Target::Missing => vec![],
        Target::Index => vec![name.to_string()],
        Target::Alias { indices } | Target::DataStream { indices } => indices.clone(),
    };
    let first = concrete.first().map(String::as_str).unwrap_or(name);
    let mapping = mappings.pointer(&format!("/{}/mappings", escape(first)));
    let properties = mapping
        .and_then(|m| m.get("properties"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let dynamic = match mapping.and_then(|m| m.get("dynamic")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => "true".into(),
    };
    let refresh_text = ["settings", "defaults"].iter().find_map(|k| {
        settings
            .pointer(&format!("/{}/{k}/index/refresh_interval", escape(first)))
            .or_else(|| settings.pointer(&format!("/{}/{k}/index.refresh_interval", escape(first))))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let mut info = IndexInfo {
        name: name.into(),
        target,
        concrete,
        dynamic,
        refresh: refresh_text
            .as_deref()
            .map(parse_refresh)
            .unwrap_or(Refresh::Every(DEFAULT_REFRESH)),
        properties,
        mixed: Vec::new(),
    };
    for other in info.concrete.iter().skip(1) {
        let props = mappings
            .pointer(&format!("/{}/mappings/properties", escape(other)))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let peer = IndexInfo {
            properties: props,
            ..info.clone()
        };
        for f in QUERIED {
            let (a, b) = (info.resolve(f), peer.resolve(f));
            if a.is_mapped() && b.is_mapped() && a != b && !info.mixed.iter().any(|m| m == f) {
                info.mixed.push(f.to_string());
            }
        }
    }
    info
}

/// Every field name the tool queries, in any index.
const QUERIED: [&str; 9] = [
    "transaction_state",
    "modification_time",
    "src_acct",
    "src_account",
    "dest_acct",
    "dest_account",
    "owner",
    "created_at",
    "pending_transactions",
];

fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn target_of(name: &str, r: &Value) -> Target {
    let find = |kind: &str| {
        r.get(kind)
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
            })
            .cloned()
    };
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    if find("indices").is_some() {
        Target::Index
    } else if let Some(a) = find("aliases") {
        Target::Alias {
            indices: strings(a.get("indices")),
        }
    } else if let Some(d) = find("data_streams") {
        Target::DataStream {
            indices: strings(d.get("backing_indices")),
        }
    } else {
        Target::Missing
    }
}

/// Parses a `refresh_interval` setting (`1s`, `500ms`, `1m`, `-1`).
pub fn parse_refresh(s: &str) -> Refresh {
    let s = s.trim();
    if s == "-1" || s.starts_with('-') {
        return Refresh::Never;
    }
    let (num, unit) = s.split_at(s.find(|c: char| c.is_alphabetic()).unwrap_or(s.len()));
    let n: f64 = num.parse().unwrap_or(1.0);
    let secs = match unit {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => 1.0,
    };
    Refresh::Every(Duration::from_secs_f64(secs.max(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(props: Value) -> IndexInfo {
        IndexInfo {
            name: "t".into(),
            target: Target::Index,
            concrete: vec!["t".into()],
            dynamic: "true".into(),
            refresh: Refresh::Every(DEFAULT_REFRESH),
            properties: props.as_object().cloned().unwrap_or_default(),
            mixed: Vec::new(),
        }
    }

    #[test]
    fn text_with_keyword_resolves_to_the_sub_field() {
        let i = info(json!({"transaction_state": {"type": "text",
            "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}}));
        let f = i.resolve("transaction_state");
        assert_eq!(f.exact.as_deref(), Some("transaction_state.keyword"));
        let bare = info(json!({"transaction_state": {"type": "text"}}));
        assert_eq!(bare.resolve("transaction_state").exact, None);
        assert!(!bare.resolve("missing").is_mapped());
    }

    #[test]
    fn article_mapping_prefers_the_names_documents_write() {
        let t = info(json!({"src_account": {"type": "keyword"},
            "src_acct": {"type": "text", "fields": {"keyword": {"type": "keyword"}}}}));
        let f = resolve_fields(&t, &info(json!({})), &info(json!({})));
        let names: Vec<&str> = f.src.iter().map(ResolvedField::query_name).collect();
        assert_eq!(names, ["src_acct.keyword", "src_account"]);
        assert_eq!(f.dest[0].name, "dest_acct");
    }

    #[test]
    fn aliases_and_refresh() {
        let r = json!({"aliases": [{"name": "two", "indices": ["a", "b"]}], "indices": [], "data_streams": []});
        let i = index_info("two", Some(&r), &json!({}), &json!({}));
        assert!(i.id_problem().is_some_and(|p| p.contains("a, b")));
        assert_eq!(parse_refresh("-1"), Refresh::Never);
        assert_eq!(
            parse_refresh("500ms"),
            Refresh::Every(Duration::from_millis(500))
        );
        assert_eq!(parse_refresh("1m"), Refresh::Every(Duration::from_secs(60)));
    }
}
