//! Making the [`FaultProxy`] a cluster with security on, as Elasticsearch's
//! security and OpenSearch's security plugin answer (osmem-server has none):
//! Basic authentication required on every request (401 without it or with a
//! wrong password: Elasticsearch's JSON `security_exception` with its
//! `WWW-Authenticate` headers, OpenSearch's plain-text `Unauthorized`), who
//! the caller is (`_security/_authenticate`, `_plugins/_security/authinfo`,
//! `_plugins/_security/api/account`), its privileges per index
//! (`_security/user/_has_privileges`), and a 403 for a write to an index the
//! user may not write (each product's wording). The other product's endpoints
//! answer "no handler found" (400), as the real ones do. Reads are allowed to
//! every authenticated user; accepted requests are forwarded to the cluster.
//!
//! Privileges are coarse: `read` everywhere; `write` (with `delete`,
//! `manage`) on every index or a list of them; `view_index_metadata`
//! (mappings, settings, existence) and the cluster's `monitor` (`GET /`,
//! `_cluster/health`) on or off per user; on OpenSearch, the cluster-level
//! composite actions (`_mget`, `_msearch`, `_bulk`, scroll pages) on or off
//! per user, as its security plugin authorises them. What is not emulated: API keys
//! and tokens (always 401), other cluster privileges, and a `_bulk` mixing
//! items the user may and may not write (answered 500, naming the gap).

use super::security_actions::{
    cluster_action, composite_action, index_action, Action, DELETE, INDEX,
};
use super::security_api::{empty_names, es_whoami, has_privileges, os_whoami};
use super::{lock, rewrite::Canned, FaultProxy, Request, Shared};
use serde_json::{json, Map, Value};
use std::sync::atomic::Ordering;

/// Whose security the proxy plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    /// Elasticsearch security (x-pack).
    Elasticsearch,
    /// OpenSearch's security plugin.
    OpenSearch,
}

/// One user of the realm.
#[derive(Debug, Clone)]
pub struct User {
    pub(super) name: String,
    pub(super) password: String,
    /// Indices the user may write (`None`: every index).
    pub(super) writes: Option<Vec<String>>,
    /// The cluster privilege `monitor` (`GET /`, `_cluster/health`).
    pub(super) monitor: bool,
    /// The index privilege `view_index_metadata` (mappings, settings,
    /// existence), on every index.
    pub(super) metadata: bool,
    /// OpenSearch: the cluster-level composite actions `_mget`, `_msearch`,
    /// `_bulk` and scroll pages are authorised as (the old README's role
    /// lacked them).
    pub(super) composites: bool,
    /// A bearer token that also authenticates this user (a service-account
    /// or OAuth2 token of Elasticsearch's token service).
    pub(super) token: Option<String>,
    /// OpenSearch: the user's backend roles (on Amazon OpenSearch Service,
    /// the IAM role ARNs fine-grained access control maps to roles).
    pub(super) backend_roles: Vec<String>,
    /// Names the role grants `read` on (`None`: every index), as
    /// `_has_privileges` answers; requests themselves are not refused for
    /// it (a name the tool is given is always among them).
    pub(super) reads: Option<Vec<String>>,
}

impl User {
    /// A user with every privilege on every index.
    pub fn admin(name: &str, password: &str) -> User {
        User {
            name: name.into(),
            password: password.into(),
            writes: None,
            monitor: true,
            metadata: true,
            composites: true,
            token: None,
            backend_roles: Vec::new(),
            reads: None,
        }
    }

    /// A user who may read every index and write only `writable` ones.
    pub fn read_only(name: &str, password: &str, writable: &[&str]) -> User {
        User {
            name: name.into(),
            password: password.into(),
            writes: Some(writable.iter().map(ToString::to_string).collect()),
            monitor: true,
            metadata: true,
            composites: true,
            token: None,
            backend_roles: Vec::new(),
            reads: None,
        }
    }

    /// The same user without the cluster privilege `monitor`.
    pub fn without_monitor(mut self) -> User {
        self.monitor = false;
        self
    }

    /// The same user without OpenSearch's cluster-level composite actions
    /// (`indices:data/read/mget`, `.../msearch`, `.../scroll`,
    /// `indices:data/write/bulk`): index permissions only.
    pub fn without_composite_actions(mut self) -> User {
        self.composites = false;
        self
    }

    /// The same user, also authenticated by `Authorization: Bearer <token>`.
    pub fn with_bearer_token(mut self, token: &str) -> User {
        self.token = Some(token.into());
        self
    }

    /// The same user with these OpenSearch backend roles.
    pub fn with_backend_roles(mut self, roles: &[&str]) -> User {
        self.backend_roles = roles.iter().map(ToString::to_string).collect();
        self
    }

    /// The user as the OpenSearch security plugin prints it (its
    /// `User.toString()`).
    pub(super) fn as_opensearch(&self) -> String {
        format!(
            "User [name={}, backend_roles=[{}], requestedTenant=null]",
            self.name,
            self.backend_roles.join(", ")
        )
    }

    /// The same user granted `read` on these names only (alias names, say,
    /// and not the concrete indices behind them).
    pub fn reading_only(mut self, names: &[&str]) -> User {
        self.reads = Some(names.iter().map(ToString::to_string).collect());
        self
    }

    /// The same user with `read` but not `view_index_metadata`.
    pub fn without_view_index_metadata(mut self) -> User {
        self.metadata = false;
        self
    }

    pub(super) fn may_write(&self, index: &str) -> bool {
        self.writes
            .as_ref()
            .is_none_or(|w| w.iter().any(|i| i == index))
    }

    pub(super) fn role(&self) -> &'static str {
        if self.writes.is_none() {
            "estx_operator"
        } else {
            "estx_viewer"
        }
    }

    /// Whether `privilege` on `index` is granted.
    pub(super) fn has(&self, privilege: &str, index: &str) -> bool {
        match privilege {
            "read" => self
                .reads
                .as_ref()
                .is_none_or(|r| r.iter().any(|i| i == index)),
            "view_index_metadata" => self.metadata,
            _ => self.may_write(index),
        }
    }
}

/// The users of a secured cluster and whose answers it gives.
#[derive(Debug, Clone)]
pub struct Realm {
    product: Product,
    users: Vec<User>,
}

impl Realm {
    /// A realm of `product` with these users.
    pub fn new(product: Product, users: Vec<User>) -> Realm {
        Realm { product, users }
    }
}

impl FaultProxy {
    /// From now on, answers as a cluster with security on: `realm`'s users
    /// only, with their privileges.
    pub fn secure(&self, realm: Realm) {
        *lock(&self.shared.realm) = Some(realm);
    }
}

/// The answer the security layer gives instead of forwarding, if any.
pub(super) fn gate(shared: &Shared, request: &Request) -> Option<Vec<u8>> {
    let realm = lock(&shared.realm).clone()?;
    let path = request.target.clone();
    let canned = answer(&realm, request, &path)?;
    shared.canned.fetch_add(1, Ordering::SeqCst);
    lock(&shared.log).push(format!(
        "{} {path} -> {} (security)",
        request.method,
        canned.status()
    ));
    Some(canned.bytes(shared.date_shift.load(Ordering::SeqCst)))
}

fn answer(realm: &Realm, request: &Request, path: &str) -> Option<Canned> {
    let user = match authenticate(realm, request) {
        Ok(user) => user,
        Err(claimed) => return Some(unauthorized(realm.product, path, claimed.as_deref())),
    };
    let bare = path.split('?').next().unwrap_or(path);
    let es = realm.product == Product::Elasticsearch;
    match bare {
        "/_security/_authenticate" if es => return Some(Canned::json(200, es_whoami(user))),
        "/_security/user/_has_privileges" if es => {
            let asked = body_json(request);
            if let Some(refusal) = empty_names(&asked) {
                return Some(refusal);
            }
            return Some(Canned::json(200, has_privileges(user, &asked)));
        }
        "/_plugins/_security/authinfo" if !es => {
            return Some(Canned::json(200, os_whoami(user, true)))
        }
        "/_plugins/_security/api/account" if !es => {
            return Some(Canned::json(200, os_whoami(user, false)))
        }
        _ => {}
    }
    if bare.starts_with("/_security/") || bare.starts_with("/_plugins/_security/") {
        let uri = format!(
            "no handler found for uri [{bare}] and method [{}]",
            request.method
        );
        return Some(Canned::json(400, json!({ "error": uri })));
    }
    if let Some(action) = composite_action(realm.product, bare) {
        if !user.composites {
            return Some(forbidden(realm.product, user, action, ""));
        }
    }
    if bare == "/_bulk" || bare.ends_with("/_bulk") {
        return bulk(realm.product, user, request, bare);
    }
    let refused = match cluster_action(bare) {
        Some(action) => (!user.monitor).then(|| forbidden(realm.product, user, action, "")),
        None => {
            let (index, action) = index_action(&request.method, bare)?;
            let granted = if action.needs_write {
                user.may_write(&index)
            } else {
                user.metadata
            };
            (!granted).then(|| forbidden(realm.product, user, action, &index))
        }
    };
    refused.map(|c| {
        if request.method == "HEAD" {
            c.without_body()
        } else {
            c
        }
    })
}

/// The user whose Basic credentials the request carries, or the name it
/// claimed (if any) when there are none or they are wrong.
fn authenticate<'a>(realm: &'a Realm, request: &Request) -> Result<&'a User, Option<String>> {
    let header = request
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| v.trim());
    if let Some(token) = header.and_then(|h| h.strip_prefix("Bearer ")) {
        // Elasticsearch names no user for a token it does not know.
        return realm
            .users
            .iter()
            .find(|u| u.token.as_deref() == Some(token.trim()))
            .ok_or_else(|| Some(String::new()));
    }
    let Some(encoded) = header.and_then(|h| h.strip_prefix("Basic ")) else {
        return Err(None);
    };
    let decoded = decode_base64(encoded.trim()).unwrap_or_default();
    let (name, password) = decoded.split_once(':').unwrap_or((&decoded, ""));
    realm
        .users
        .iter()
        .find(|u| u.name == name && u.password == password)
        .ok_or_else(|| Some(name.to_string()))
}

/// The 401 each product answers; the password is never in it.
fn unauthorized(product: Product, path: &str, claimed: Option<&str>) -> Canned {
    match product {
        Product::Elasticsearch => {
            let schemes = [
                "Basic realm=\"security\" charset=\"UTF-8\"",
                "Bearer realm=\"security\"",
                "ApiKey",
            ];
            let reason = match claimed {
                // What Elasticsearch answers for a bearer token it refuses.
                Some("") => "unable to authenticate with provided credentials and anonymous \
                    access is not allowed for this request"
                    .to_string(),
                Some(user) => {
                    format!("unable to authenticate user [{user}] for REST request [{path}]")
                }
                None => format!("missing authentication credentials for REST request [{path}]"),
            };
            let error = json!({"type": "security_exception", "reason": reason,
                "header": {"WWW-Authenticate": schemes}});
            let body = json!({"error": {"root_cause": [error.clone()], "type": "security_exception",
                "reason": reason, "header": {"WWW-Authenticate": schemes}}, "status": 401});
            schemes.iter().fold(Canned::json(401, body), |c, s| {
                c.with_header("WWW-Authenticate", s)
            })
        }
        Product::OpenSearch => Canned::text(401, "Unauthorized")
            .with_header("WWW-Authenticate", "Basic realm=\"OpenSearch Security\""),
    }
}

/// The 403 each product answers for an action the user's roles do not grant.
fn forbidden(product: Product, user: &User, action: Action, index: &str) -> Canned {
    let reason = refusal(product, user, action, index);
    let error = json!({"type": "security_exception", "reason": reason});
    Canned::json(
        403,
        json!({"error": {"root_cause": [error], "type": "security_exception", "reason": reason},
            "status": 403}),
    )
}

/// How each product words a refused action.
fn refusal(product: Product, user: &User, action: Action, index: &str) -> String {
    match product {
        Product::Elasticsearch if index.is_empty() => format!(
            "action [{}] is unauthorized for user [{}] with effective roles [{}], \
             this action is granted by the cluster privileges [{}]",
            action.name,
            user.name,
            user.role(),
            action.granted_by
        ),
        Product::Elasticsearch => format!(
            "action [{}] is unauthorized for user [{}] with effective roles [{}] on indices [{index}], \
             this action is granted by the index privileges [{}]",
            action.name,
            user.name,
            user.role(),
            action.granted_by
        ),
        Product::OpenSearch => format!(
            "no permissions for [{}] and {}",
            action.name,
            user.as_opensearch()
        ),
    }
}

/// `_bulk`: forwarded when the user may write every item's index; when it
/// may write none, each item fails with the 403 (the request itself is a
/// 200, as Elasticsearch answers).
fn bulk(product: Product, user: &User, request: &Request, path: &str) -> Option<Canned> {
    let default_index = path
        .trim_start_matches('/')
        .strip_suffix("_bulk")
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.is_empty())
        .map(str::to_string);
    let text = String::from_utf8_lossy(&body_bytes(request)).into_owned();
    let mut items = Vec::new();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    while let Some(line) = lines.next() {
        let Ok(Value::Object(head)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some((kind, meta)) = head.into_iter().next() else {
            continue;
        };
        if kind != "delete" {
            lines.next();
        }
        let index = meta
            .get("_index")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| default_index.clone())
            .unwrap_or_default();
        items.push((kind, index, meta.get("_id").cloned().unwrap_or(Value::Null)));
    }
    let denied = items.iter().filter(|(_, i, _)| !user.may_write(i)).count();
    if denied == 0 {
        return None;
    }
    if denied < items.len() {
        return Some(Canned::text(
            500,
            "security fixture: a _bulk mixing writable and refused indices is not emulated",
        ));
    }
    let answers: Vec<Value> = items
        .into_iter()
        .map(|(kind, index, id)| {
            let action = if kind == "delete" { DELETE } else { INDEX };
            let reason = refusal(product, user, action, &index);
            let mut item = Map::new();
            item.insert(
                kind,
                json!({"_index": index, "_id": id, "status": 403,
                    "error": {"type": "security_exception", "reason": reason}}),
            );
            Value::Object(item)
        })
        .collect();
    Some(Canned::json(
        200,
        json!({"took": 0, "errors": true, "items": answers}),
    ))
}

/// The request body, de-chunked.
pub(super) fn body_bytes(request: &Request) -> Vec<u8> {
    let chunked = request.headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.to_ascii_lowercase().contains("chunked")
    });
    if chunked {
        super::super::dechunk(&request.body).unwrap_or_default()
    } else {
        request.body.clone()
    }
}

fn body_json(request: &Request) -> Value {
    serde_json::from_slice(&body_bytes(request)).unwrap_or(Value::Null)
}

/// Standard base64 (with or without padding); `None` when malformed.
fn decode_base64(s: &str) -> Option<String> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        bits = (bits << 6) | v;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    String::from_utf8(out).ok()
}
