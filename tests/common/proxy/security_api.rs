//! The security APIs the test proxy answers itself: who the caller is
//! (Elasticsearch's `_security/_authenticate`, OpenSearch's `authinfo` and
//! `api/account`) and Elasticsearch's `_has_privileges`.

use super::rewrite::Canned;
use super::security::User;
use serde_json::{json, Map, Value};

/// Elasticsearch's `_security/_authenticate`.
pub(super) fn es_whoami(user: &User) -> Value {
    json!({"username": user.name, "roles": [user.role()], "full_name": null, "email": null,
        "metadata": {}, "enabled": true,
        "authentication_realm": {"name": "native1", "type": "native"},
        "lookup_realm": {"name": "native1", "type": "native"},
        "authentication_type": "realm"})
}

/// OpenSearch's `authinfo` (`full`) or `api/account`.
pub(super) fn os_whoami(user: &User, full: bool) -> Value {
    let mut v = json!({"user_name": user.name, "user_requested_tenant": null,
        "backend_roles": user.backend_roles, "custom_attribute_names": [], "roles": [user.role()],
        "tenants": {user.name.clone(): true}});
    if full {
        v["user"] = json!(user.as_opensearch());
        v["remote_address"] = json!("127.0.0.1:0");
        v["principal"] = Value::Null;
        v["peer_certificates"] = json!("0");
        v["sso_logout_url"] = Value::Null;
    } else {
        v["is_reserved"] = json!(false);
        v["is_hidden"] = json!(false);
        v["is_internal_user"] = json!(true);
    }
    v
}

/// Elasticsearch refuses an index entry without names (400): x-pack
/// `RoleDescriptor.IndicesPrivileges.Builder#build`, "indices privileges must
/// refer to at least one index name or index name pattern".
pub(super) fn empty_names(request: &Value) -> Option<Canned> {
    let empty = request
        .get("index")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|e| {
            e.get("names")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
        });
    let reason = "indices privileges must refer to at least one index name or index name pattern";
    let e = json!({"type": "illegal_argument_exception", "reason": reason});
    empty.then(|| {
        Canned::json(
            400,
            json!({"error": {"root_cause": [e], "type": "illegal_argument_exception",
                "reason": reason}, "status": 400}),
        )
    })
}

/// Elasticsearch's `_has_privileges` answer to `request`.
pub(super) fn has_privileges(user: &User, request: &Value) -> Value {
    let mut indices = Map::new();
    let mut all = true;
    for entry in request
        .get("index")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let strings = |key: &str| -> Vec<String> {
            entry
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        for name in strings("names") {
            let mut privileges = Map::new();
            for p in strings("privileges") {
                let granted = user.has(&p, &name);
                all &= granted;
                privileges.insert(p, json!(granted));
            }
            indices.insert(name, Value::Object(privileges));
        }
    }
    let mut cluster = Map::new();
    for p in request
        .get("cluster")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let granted = match p {
            "monitor" => user.monitor,
            _ => user.writes.is_none(),
        };
        all &= granted;
        cluster.insert(p.to_string(), json!(granted));
    }
    json!({"username": user.name, "has_all_requested": all, "cluster": cluster,
        "index": indices, "application": {}})
}
