//! Which action a request is, as the security layers name it, and the
//! privileges that grant it (the test proxy's [`super::security`]).

use super::security::Product;

/// An action and the privileges that grant it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Action {
    pub(super) name: &'static str,
    pub(super) granted_by: &'static str,
    /// Granted with write (else with `view_index_metadata`, or `monitor`
    /// for a cluster action).
    pub(super) needs_write: bool,
}

const fn write(name: &'static str, granted_by: &'static str) -> Action {
    Action {
        name,
        granted_by,
        needs_write: true,
    }
}

const fn metadata(name: &'static str) -> Action {
    Action {
        name,
        granted_by: "manage,view_index_metadata,all",
        needs_write: false,
    }
}

pub(super) const INDEX: Action = write(
    "indices:data/write/index",
    "create_doc,create,index,write,all",
);
pub(super) const DELETE: Action = write("indices:data/write/delete", "delete,write,all");
const UPDATE: Action = write("indices:data/write/update", "index,write,all");
const CREATE_INDEX: Action = write("indices:admin/create", "create_index,manage,all");
const PUT_MAPPING: Action = write("indices:admin/mapping/put", "manage,all");

/// OpenSearch authorises these multi-index requests as cluster-level
/// actions (security plugin `PrivilegesEvaluator`: "composite" actions are
/// checked against `cluster_permissions`; documented in
/// https://docs.opensearch.org/latest/security/access-control/permissions/).
pub(super) fn composite_action(product: Product, path: &str) -> Option<Action> {
    if product != Product::OpenSearch {
        return None;
    }
    let name = if path.ends_with("/_mget") {
        "indices:data/read/mget"
    } else if path.ends_with("/_msearch") {
        "indices:data/read/msearch"
    } else if path.ends_with("/_bulk") {
        "indices:data/write/bulk"
    } else if path.starts_with("/_search/scroll") {
        "indices:data/read/scroll"
    } else {
        return None;
    };
    Some(Action {
        name,
        granted_by: name,
        needs_write: false,
    })
}

/// The cluster action of a request, if it is one.
pub(super) fn cluster_action(path: &str) -> Option<Action> {
    let name = match path {
        "/" => "cluster:monitor/main",
        p if p.starts_with("/_cluster/health") => "cluster:monitor/health",
        _ => return None,
    };
    Some(Action {
        name,
        granted_by: "monitor,manage,all",
        needs_write: false,
    })
}

/// The index and action of a request that writes or reads metadata (`None`
/// for reads of documents, which every user may do).
pub(super) fn index_action(method: &str, path: &str) -> Option<(String, Action)> {
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    let index = segments.next().filter(|s| !s.starts_with('_'))?;
    let reads = matches!(method, "GET" | "HEAD");
    let action = match (segments.next(), method) {
        (None, "PUT") => CREATE_INDEX,
        (None, _) if reads => metadata("indices:admin/get"),
        (Some("_mapping"), _) if reads => metadata("indices:admin/mappings/get"),
        (Some("_settings"), _) if reads => metadata("indices:monitor/settings/get"),
        (Some("_doc" | "_create"), "DELETE") => DELETE,
        (Some("_doc" | "_create"), _) if !reads => INDEX,
        (Some("_update"), _) if !reads => UPDATE,
        (Some("_delete_by_query"), _) => DELETE,
        (Some("_update_by_query"), _) => UPDATE,
        (Some("_mapping"), "PUT" | "POST") => PUT_MAPPING,
        _ => return None,
    };
    Some((index.to_string(), action))
}
