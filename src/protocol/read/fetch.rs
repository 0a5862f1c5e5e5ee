//! Discovery's requests and the reading of their answers: `_resolve/index`
//! (alias or data stream to concrete indices), `_mapping` and `_settings`
//! (with defaults, for the refresh interval) of each of the three names,
//! and a sample of documents for the time formats (`times`). The primary
//! shard count read there is handed to the cluster handle, which skips the
//! routing check of a miss on a single-shard index (`cluster::shards`).

use super::discovery::{resolve_fields, Discovery};
use super::index_info::{IndexBlock, IndexInfo, Refresh, Target, DEFAULT_REFRESH};
use super::source_mode::SourceLoss;
use super::string_array::string_array;
use super::times::TimeFields;
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::protocol::schema::{Field, Schema};
use crate::protocol::Indices;
use elasticsearch::http::Method;
use serde_json::Value;
use std::time::Duration;

/// Reads the three indices' resolution, mappings and settings (three
/// requests per index; discovery runs on connect and until it settles),
/// resolving the fields the names of `schema` (the map in force). A locks
/// index that does not exist is [`Target::Absent`] (no locks) unless the
/// operator named it ([`Indices::locks_named`]): then it is missing.
pub async fn discover(cluster: &Cluster, ix: &Indices, schema: &Schema) -> Result<Discovery> {
    let mut transactions = discover_index(cluster, &ix.transactions, schema).await?;
    let mut accounts = discover_index(cluster, &ix.accounts, schema).await?;
    let mut locks = discover_index(cluster, &ix.locks, schema).await?;
    let unset = |i: &(IndexInfo, bool)| i.0.exists() && !i.1;
    if [&transactions, &accounts, &locks].into_iter().any(unset) && is_serverless(cluster).await {
        for i in [&mut transactions, &mut accounts, &mut locks] {
            if unset(i) {
                i.0.refresh = Refresh::ServerlessDefault;
            }
        }
    }
    let (transactions, accounts, mut locks) = (transactions.0, accounts.0, locks.0);
    if locks.target == Target::Missing && !ix.locks_named {
        locks.target = Target::Absent;
    }
    let fields = resolve_fields(schema, &transactions, &accounts, &locks);
    let times = TimeFields::discover(cluster, schema, &transactions, &locks).await;
    Ok(Discovery {
        transactions,
        accounts,
        locks,
        fields,
        times,
    })
}

/// Whether the `GET /` banner says Elasticsearch Serverless
/// (`version.build_flavor: serverless`, the root API's "build flavor":
/// https://www.elastic.co/guide/en/elasticsearch/reference/current/rest-api-root.html,
/// https://www.elastic.co/docs/solutions/search/serverless-elasticsearch-get-started).
/// Asked only when an index's settings show no `refresh_interval` (every
/// other product lists it, at least among the defaults), so discovery
/// makes no extra request elsewhere. A banner that cannot be read is not
/// serverless: the 1 s default stands.
async fn is_serverless(cluster: &Cluster) -> bool {
    match cluster.raw(Method::Get, "/", None).await {
        Ok((200, root)) => {
            root.pointer("/version/build_flavor") == Some(&Value::from("serverless"))
        }
        _ => false,
    }
}

/// One index's information, and whether its settings (or their defaults)
/// state a `refresh_interval`.
async fn discover_index(
    cluster: &Cluster,
    name: &str,
    schema: &Schema,
) -> Result<(IndexInfo, bool)> {
    let (status, resolved) = cluster
        .raw(Method::Get, &format!("/_resolve/index/{name}"), None)
        .await?;
    // A 404 means "missing" only when the cluster says so
    // (`index_not_found_exception`); a proxy's 404 is an error.
    let missing = |status: u16, v: &Value| {
        status == 404 && matches!(cluster.error_for(status, v, name), Error::IndexMissing(_))
    };
    let resolved = match status {
        200 => Some(resolved),
        _ if missing(status, &resolved) => Some(Value::Null),
        _ => None,
    };
    let answer = |(status, v): (u16, Value)| -> Result<Value> {
        match status {
            200 => Ok(v),
            _ if missing(status, &v) => Ok(Value::Null),
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
    let info = index_info(name, resolved.as_ref(), &mappings, &settings, schema);
    let refresh_stated = refresh_setting(
        &settings,
        info.concrete.first().map_or(name, String::as_str),
    )
    .is_some();
    // Only a concrete index: an alias may be swapped to a split index.
    let shards = match info.target {
        Target::Index => primary_shards(&settings, name),
        _ => None,
    };
    cluster.remember_primary_shards(name, shards);
    Ok((info, refresh_stated))
}

/// The `refresh_interval` the settings answer states for `index` (set, or
/// among the defaults), nested or flat.
fn refresh_setting(settings: &Value, index: &str) -> Option<String> {
    ["settings", "defaults"].iter().find_map(|k| {
        settings
            .pointer(&format!("/{}/{k}/index/refresh_interval", escape(index)))
            .or_else(|| settings.pointer(&format!("/{}/{k}/index.refresh_interval", escape(index))))
            .and_then(Value::as_str)
            .map(str::to_string)
    })
}

/// `index.number_of_shards` of `index` in a settings answer (nested or
/// flat, a string as the products write it, or a number); `None` when the
/// answer does not say (Serverless shows no such setting).
fn primary_shards(settings: &Value, index: &str) -> Option<u32> {
    let at = escape(index);
    let v = settings
        .pointer(&format!("/{at}/settings/index/number_of_shards"))
        .or_else(|| settings.pointer(&format!("/{at}/settings/index.number_of_shards")))?;
    match v {
        Value::String(s) => s.parse().ok(),
        other => other.as_u64().and_then(|n| u32::try_from(n).ok()),
    }
}

/// One index's information from the three answers.
pub fn index_info(
    name: &str,
    resolved: Option<&Value>,
    mappings: &Value,
    settings: &Value,
    schema: &Schema,
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
        Target::Missing | Target::Absent => vec![],
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
    let refresh_text = refresh_setting(settings, first);
    let source_loss = SourceLoss::of(mapping, settings.get(first));
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
        routing_required: mapping
            .and_then(|m| m.pointer("/_routing/required"))
            .and_then(Value::as_bool)
            == Some(true),
        source_loss,
        blocks: Vec::new(),
    };
    info.blocks = info
        .concrete
        .iter()
        .flat_map(|c| IndexBlock::of(c, settings, resolved))
        .collect();
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
        for f in queried(schema) {
            let (a, b) = (info.resolve(&f), peer.resolve(&f));
            if a.is_mapped() && b.is_mapped() && a != b && !info.mixed.contains(&f) {
                info.mixed.push(f);
            }
        }
    }
    info
}

/// Every field name the tool queries, in any index, as `schema` names them
/// (and the article mapping's `src_account`/`dest_account`).
fn queried(schema: &Schema) -> Vec<String> {
    let queried = [
        Field::State,
        Field::ModificationTime,
        Field::Source,
        Field::Destination,
        Field::LockOwner,
        Field::LockCreated,
        Field::Pending,
    ];
    let mut out: Vec<String> = queried
        .iter()
        .map(|f| schema.name(*f).to_string())
        .collect();
    out.extend(["src_account".to_string(), "dest_account".to_string()]);
    out
}

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
    if find("indices").is_some() {
        Target::Index
    } else if let Some(a) = find("aliases") {
        Target::Alias {
            indices: string_array(a.get("indices")),
        }
    } else if let Some(d) = find("data_streams") {
        Target::DataStream {
            indices: string_array(d.get("backing_indices")),
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

    #[test]
    fn aliases_and_refresh() {
        let r = json!({"aliases": [{"name": "two", "indices": ["a", "b"]}], "indices": [], "data_streams": []});
        let i = index_info("two", Some(&r), &json!({}), &json!({}), &Schema::default());
        assert!(i.id_problem().is_some_and(|p| p.contains("a, b")));
        assert_eq!(parse_refresh("-1"), Refresh::Never);
        assert_eq!(
            parse_refresh("500ms"),
            Refresh::Every(Duration::from_millis(500))
        );
        assert_eq!(parse_refresh("1m"), Refresh::Every(Duration::from_secs(60)));
    }

    #[test]
    fn primary_shards_nested_flat_or_unsaid() {
        let nested = json!({"t": {"settings": {"index": {"number_of_shards": "3"}}}});
        assert_eq!(primary_shards(&nested, "t"), Some(3));
        let flat = json!({"t": {"settings": {"index.number_of_shards": 1}}});
        assert_eq!(primary_shards(&flat, "t"), Some(1));
        let serverless = json!({"t": {"settings": {"index": {"uuid": "x"}}}});
        assert_eq!(primary_shards(&serverless, "t"), None);
        assert_eq!(primary_shards(&nested, "other"), None);
    }
}
