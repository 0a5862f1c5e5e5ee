//! Making the [`FaultProxy`] answer as a cluster where the caller's role has
//! field-level security, where an ingest pipeline stamps every write, or
//! where indices keep a derived `_source` — product behaviour osmem-server
//! lacks (it has no security, no ingest pipelines, no derived source).
//!
//! Field-level security ([`FaultProxy::field_security`]), on every index:
//! - the hidden fields are missing from every `_source` answered — GET,
//!   `_mget`, search, `_msearch` and point-in-time pages. Elasticsearch:
//!   "Field level security restricts the fields that users have read access
//!   to" (security guide, field-and-document-access-control); OpenSearch:
//!   "FLS … applies only to read operations, such as search and get"
//!   (documentation-website `_security/access-control/field-level-security.md`);
//! - whole-document writes (`index`, `create`) pass: "does not prevent users
//!   with write or delete permissions from indexing, updating, or deleting
//!   data in those fields" (the same OpenSearch page); Elasticsearch only
//!   warns that such users "should not perform write operations";
//! - partial updates are refused, as each product refuses them:
//!   Elasticsearch 400 `security_exception` "Can't execute an update request
//!   if field or document level security is enabled" (x-pack
//!   `UpdateRequestInterceptor`), and per `_bulk` item "Can't execute a bulk
//!   item request with update requests embedded if field or document level
//!   security is enabled" (`BulkShardRequestInterceptor`); OpenSearch 500
//!   `security_exception` "Update is not supported when FLS or DLS or
//!   Fieldmasking is activated" (security plugin `DlsFlsValveImpl.invoke`,
//!   which fails the request, a `_bulk` one carrying an update as a whole).
//!   [`FlsProduct::PassUpdates`] lets them through instead: no product does
//!   that, it shows what a partial write keeps where one would.
//!
//! Ingest pipeline ([`FaultProxy::stamp_writes`]): a default pipeline with
//! a `set` processor of `{{_ingest.timestamp}}` on `modification_time` runs
//! on every write — `index`, `create`, and `update` (an update becomes an
//! index request of the merged document, `TransportUpdateAction` →
//! `UpdateHelper.prepareUpdateIndexRequest`, which the index's
//! `default_pipeline` runs on as on any index request). Emulated by setting the field
//! in the body the proxy forwards (an update's `doc`), so a dropped answer
//! (the proxy's drop rules) still leaves the stamped document stored. An
//! update that changes nothing is a `noop` on the products before any
//! pipeline runs, so an empty, noop-detecting `doc` is left alone.
//!
//! Derived source ([`FaultProxy::derived_source`]): OpenSearch 3.2+ indices
//! created with `index.derived_source.enabled: true` report it in their
//! settings (documentation-website `_mappings/metadata-fields/source.md`);
//! the proxy adds it to every settings answer.

use super::{lock, FaultProxy, Request, Shared};
use serde_json::{json, Value};

/// Which product's refusal of partial updates the proxy answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlsProduct {
    /// 400 per request, 400 per `_bulk` item.
    Elasticsearch,
    /// 500 per request, a `_bulk` carrying an update refused whole.
    OpenSearch,
    /// Partial updates pass (no product; see the module docs).
    PassUpdates,
}

/// A role's field-level security: which fields it cannot read, and on
/// which indices (all when empty).
#[derive(Debug, Clone)]
pub(super) struct FieldSecurity {
    product: FlsProduct,
    hidden: Vec<String>,
    indices: Vec<String>,
}

impl FieldSecurity {
    /// Whether the role's field security applies on `index`: the products
    /// grant it per index (a role's `indices` entry), and refuse an update
    /// only on an index where it applies (Elasticsearch's
    /// `FieldAndDocumentLevelSecurityRequestInterceptor` asks the request's
    /// indices' access control).
    fn covers(&self, index: &str) -> bool {
        self.indices.is_empty() || self.indices.iter().any(|i| i == index)
    }
}

/// What the proxy emulates of this module, shared by its threads.
#[derive(Debug, Default)]
pub(super) struct Rules {
    fls: Option<FieldSecurity>,
    stamp: Option<String>,
    derived_source: bool,
}

impl FaultProxy {
    /// Hides `fields` from every `_source` answered and refuses partial
    /// updates as `product` does (see the module docs); `None` turns it off.
    pub fn field_security(&self, fls: Option<(FlsProduct, &[&str])>) {
        self.field_security_on(fls, &[]);
    }

    /// [`Self::field_security`] on `indices` only (all when empty): the
    /// role reads and updates the other indices freely.
    pub fn field_security_on(&self, fls: Option<(FlsProduct, &[&str])>, indices: &[&str]) {
        lock(&self.shared.fls).fls = fls.map(|(product, hidden)| FieldSecurity {
            product,
            hidden: hidden.iter().map(|f| f.to_string()).collect(),
            indices: indices.iter().map(|i| i.to_string()).collect(),
        });
    }

    /// Stamps `field` with the time of every write, as an ingest pipeline
    /// does (see the module docs); `None` turns it off.
    pub fn stamp_writes(&self, field: Option<&str>) {
        lock(&self.shared.fls).stamp = field.map(str::to_string);
    }

    /// Reports `index.derived_source.enabled: true` in every settings answer.
    pub fn derived_source(&self, on: bool) {
        lock(&self.shared.fls).derived_source = on;
    }
}

/// What to change in the answer once forwarded.
pub(super) struct After {
    hidden: Vec<String>,
    /// The indices the hidden fields are hidden on (all when empty).
    on: Vec<String>,
    derived_source: bool,
}

/// The refusal to answer instead of forwarding (a partial update under
/// field-level security), or what to change in the answer; stamps the
/// request's documents when a pipeline is emulated.
pub(super) fn before(shared: &Shared, request: &mut Request) -> Result<Option<After>, Vec<u8>> {
    let rules = lock(&shared.fls);
    let path = request
        .target
        .split('?')
        .next()
        .unwrap_or_default()
        .to_string();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let is_update = matches!(segments.as_slice(), [_, "_update", _]);
    let is_bulk = segments.last() == Some(&"_bulk");
    if let Some(fls) = &rules.fls {
        let covered = segments.first().is_some_and(|i| fls.covers(i));
        if is_update && covered && fls.product != FlsProduct::PassUpdates {
            return Err(refusal(fls.product));
        }
        if is_bulk && fls.product != FlsProduct::PassUpdates {
            // `/{index}/_bulk` names the index its items leave out.
            let in_path = (segments.len() == 2).then(|| segments[0]);
            if let Some(answer) = bulk_refusal(fls, in_path, &request.body) {
                return Err(answer);
            }
        }
    }
    if let Some(field) = &rules.stamp {
        let writes = matches!(
            segments.as_slice(),
            [_, "_doc" | "_create" | "_update", _] | [_, "_doc"]
        );
        if (writes || is_bulk) && matches!(request.method.as_str(), "PUT" | "POST") {
            if let Some(body) = stamped(&request.body, field, is_bulk, is_update) {
                super::personality::set_body(request, body);
            }
        }
    }
    let (hidden, on) = rules
        .fls
        .as_ref()
        .map(|f| (f.hidden.clone(), f.indices.clone()))
        .unwrap_or_default();
    let settings = request.method == "GET" && path.contains("_settings");
    let derived_source = rules.derived_source && settings;
    Ok((!hidden.is_empty() || derived_source).then_some(After {
        hidden,
        on,
        derived_source,
    }))
}

/// The answer as the role reads it: hidden fields gone from every
/// `_source`, derived source in the settings.
pub(super) fn after(after: &After, response: Vec<u8>) -> Vec<u8> {
    super::personality::rebody(response, |mut v| {
        strip(&mut v, &after.hidden, &after.on);
        if after.derived_source {
            for settings in v.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                if let Some(s) = settings.get_mut("settings").and_then(Value::as_object_mut) {
                    match s.get_mut("index").and_then(Value::as_object_mut) {
                        Some(index) => {
                            index.insert("derived_source".into(), json!({"enabled": "true"}));
                        }
                        None => {
                            s.insert("index.derived_source.enabled".into(), json!("true"));
                        }
                    }
                }
            }
        }
        v
    })
}

/// Removes `hidden` from every `_source` object anywhere in `v` (only from
/// documents of the indices `on`, named by their `_index`, when not empty).
fn strip(v: &mut Value, hidden: &[String], on: &[String]) {
    match v {
        Value::Object(o) => {
            let index = o.get("_index").and_then(Value::as_str).unwrap_or_default();
            let covered = on.is_empty() || on.iter().any(|i| i == index);
            if let (true, Some(Value::Object(src))) = (covered, o.get_mut("_source")) {
                for f in hidden {
                    src.remove(f);
                }
            }
            o.values_mut().for_each(|c| strip(c, hidden, on));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| strip(c, hidden, on)),
        _ => {}
    }
}

/// The product's `security_exception` for a refused update.
fn security_exception(product: FlsProduct, bulk_item: bool) -> Value {
    let reason = match (product, bulk_item) {
        (FlsProduct::Elasticsearch, false) => {
            "Can't execute an update request if field or document level security is enabled"
        }
        (FlsProduct::Elasticsearch, true) => {
            "Can't execute a bulk item request with update requests embedded if field or \
             document level security is enabled"
        }
        _ => "Update is not supported when FLS or DLS or Fieldmasking is activated",
    };
    json!({"type": "security_exception", "reason": reason})
}

fn status_of(product: FlsProduct) -> u16 {
    match product {
        FlsProduct::Elasticsearch => 400,
        _ => 500,
    }
}

/// The answer to a refused `_update`.
fn refusal(product: FlsProduct) -> Vec<u8> {
    let error = security_exception(product, false);
    let body = json!({"error": {"root_cause": [error.clone()], "type": error["type"],
        "reason": error["reason"]}, "status": status_of(product)});
    super::rewrite::Canned::json(status_of(product), body).bytes(0)
}

/// The answer to a `_bulk` carrying update actions on an index the role's
/// field security covers: Elasticsearch fails each update item (the tool
/// never mixes them with other actions, nor indices in one `_bulk`, so all
/// items here are such updates); OpenSearch fails the request. `None` when
/// the body has no such update action.
fn bulk_refusal(fls: &FieldSecurity, in_path: Option<&str>, body: &[u8]) -> Option<Vec<u8>> {
    let product = fls.product;
    let text = String::from_utf8_lossy(body);
    let mut actions = Vec::new();
    let mut source_next = false;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if std::mem::take(&mut source_next) {
            continue;
        }
        let action: Value = serde_json::from_str(line).ok()?;
        source_next = action.get("delete").is_none();
        actions.push(action);
    }
    let covered = |a: &Value| {
        a.get("update")
            .and_then(|u| u["_index"].as_str().or(in_path))
            .is_some_and(|i| fls.covers(i))
    };
    if !actions.iter().any(covered) {
        return None;
    }
    if product == FlsProduct::OpenSearch {
        return Some(refusal(product));
    }
    let items: Vec<Value> = actions
        .iter()
        .map(|a| {
            let meta = &a["update"];
            json!({"update": {"_index": meta["_index"], "_id": meta["_id"], "status": 400,
                "error": security_exception(product, true)}})
        })
        .collect();
    let body = json!({"took": 0, "errors": true, "items": items});
    Some(super::rewrite::Canned::json(200, body).bytes(0))
}

/// The request body with `field` stamped on every document it writes;
/// `None` when nothing is written.
fn stamped(body: &[u8], field: &str, bulk: bool, update: bool) -> Option<Vec<u8>> {
    let now = Value::String(
        chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string(),
    );
    if !bulk {
        let mut doc: Value = serde_json::from_slice(body).ok()?;
        stamp_one(&mut doc, field, &now, update);
        return Some(doc.to_string().into_bytes());
    }
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    let mut next: Option<bool> = None;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match next.take() {
            Some(is_update) => {
                let mut doc: Value = serde_json::from_str(line).ok()?;
                stamp_one(&mut doc, field, &now, is_update);
                out.push(doc.to_string());
            }
            None => {
                let action: Value = serde_json::from_str(line).ok()?;
                if action.get("delete").is_none() {
                    next = Some(action.get("update").is_some());
                }
                out.push(line.to_string());
            }
        }
    }
    Some(format!("{}\n", out.join("\n")).into_bytes())
}

/// Stamps one written document (an update's `doc` unless it is an empty,
/// noop-detecting one: the products answer `noop` before any pipeline).
fn stamp_one(doc: &mut Value, field: &str, now: &Value, update: bool) {
    if !update {
        if let Some(o) = doc.as_object_mut() {
            o.insert(field.to_string(), now.clone());
        }
        return;
    }
    let forced = doc.get("detect_noop") == Some(&Value::Bool(false));
    if let Some(d) = doc.get_mut("doc").and_then(Value::as_object_mut) {
        if forced || !d.is_empty() {
            d.insert(field.to_string(), now.clone());
        }
    }
}
