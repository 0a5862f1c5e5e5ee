//! What the current credentials may do, for `doctor`: Elasticsearch's
//! `_has_privileges` on the tool's indices, or OpenSearch security's account
//! (who the user is, its roles and backend roles, and the cluster-level
//! composite actions it is refused), and the checks judged from it.

use super::check::{Check, Severity};
use crate::cluster::Cluster;
use crate::error::Result;
use crate::protocol::read::discovery::Discovery;
use crate::protocol::read::index_info::Target;
use crate::protocol::read::string_array::string_array;
use elasticsearch::http::Method;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// What the current credentials may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Security {
    /// No security layer answered: anyone may do anything.
    Off,
    /// Privileges per index (Elasticsearch `_has_privileges`).
    Privileges {
        /// The user the cluster sees.
        user: Option<String>,
        /// index -> privilege -> granted.
        indices: BTreeMap<String, BTreeMap<String, bool>>,
        /// Cluster privilege -> granted ([`CLUSTER_PRIVILEGES`]).
        cluster: BTreeMap<String, bool>,
        /// Each alias the tool is given -> the concrete indices behind it,
        /// whose `read` is asked too: a point-in-time is authorised on them,
        /// not on the alias (elastic/elasticsearch#61547).
        behind_aliases: BTreeMap<String, Vec<String>>,
    },
    /// Security is on, but per-index privileges cannot be asked (OpenSearch).
    Roles {
        /// The user the cluster sees.
        user: Option<String>,
        /// Its OpenSearch security roles (what it may do).
        roles: Vec<String>,
        /// Its backend roles (on Amazon OpenSearch Service, IAM ARNs): what
        /// a role mapping can name besides the user.
        backend_roles: Vec<String>,
        /// OpenSearch's cluster-level composite actions ([`COMPOSITE_ACTIONS`]
        /// probed by reading) the user was refused.
        refused: Vec<String>,
    },
}

/// Privileges the tool needs on the transactions, accounts and locks indices.
pub const NEEDED_PRIVILEGES: [&str; 4] = ["read", "write", "delete", "view_index_metadata"];
/// Privileges the tool needs on the audit index (records are created and
/// completed, never deleted).
pub const AUDIT_PRIVILEGES: [&str; 3] = ["read", "write", "view_index_metadata"];
/// Privileges on the acks index: `read` for every operator (each poll,
/// `check`, the exporter and bulk selections leave acked transactions
/// out), `write` for one who acknowledges (`ack`, `unack`, the dashboard's
/// `K`).
pub const ACKS_PRIVILEGES: [&str; 2] = ["read", "write"];
/// Cluster privileges the tool uses: `monitor` reads the cluster's health
/// (the dashboard header, `doctor`) and its root banner (the product).
pub const CLUSTER_PRIVILEGES: [&str; 1] = ["monitor"];

/// OpenSearch authorises `_mget` and `_msearch` (and `_bulk`, scroll pages)
/// as cluster-level actions: a role with only index permissions is refused
/// them. `doctor` probes the two reads (harmless: one id that does not exist,
/// a search for nothing).
pub const COMPOSITE_ACTIONS: [&str; 2] = ["indices:data/read/mget", "indices:data/read/msearch"];

/// What the current credentials may do: Elasticsearch's `_has_privileges`
/// on the three indices and the audit index (asked by name, so indices
/// `init` has not created yet are asked too: Elasticsearch refuses an entry
/// without names with a 400, which must not read as "security off"), else
/// OpenSearch's account. An absent locks index (no locks) is not asked, nor
/// the audit index (`audit`: `None`) when a file trail records instead;
/// the acks index (`acks`) always is.
pub(crate) async fn security(
    cluster: &Cluster,
    d: &Discovery,
    audit: Option<&str>,
    acks: &str,
) -> Result<Security> {
    let names: Vec<&str> = d
        .indices()
        .iter()
        .filter(|i| !i.is_absent())
        .map(|i| i.name.as_str())
        .collect();
    let behind_aliases: BTreeMap<String, Vec<String>> = d
        .indices()
        .iter()
        .filter_map(|i| match &i.target {
            Target::Alias { indices } => Some((i.name.clone(), indices.clone())),
            _ => None,
        })
        .collect();
    let mut index = vec![json!({"names": names, "privileges": NEEDED_PRIVILEGES})];
    index.extend(audit.map(|a| json!({"names": [a], "privileges": AUDIT_PRIVILEGES})));
    index.push(json!({"names": [acks], "privileges": ACKS_PRIVILEGES}));
    let concrete: Vec<&String> = behind_aliases.values().flatten().collect();
    if !concrete.is_empty() {
        index.push(json!({"names": concrete, "privileges": ["read"]}));
    }
    let asked = json!({"cluster": CLUSTER_PRIVILEGES, "index": index});
    let (status, body) = cluster
        .raw(Method::Post, "/_security/user/_has_privileges", Some(asked))
        .await?;
    if status == 200 {
        let granted = |v: &Value| -> BTreeMap<String, bool> {
            v.as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_bool() == Some(true)))
                        .collect()
                })
                .unwrap_or_default()
        };
        let indices = body
            .get("index")
            .and_then(Value::as_object)
            .map(|o| o.iter().map(|(i, p)| (i.clone(), granted(p))).collect())
            .unwrap_or_default();
        return Ok(Security::Privileges {
            user: body
                .get("username")
                .and_then(Value::as_str)
                .map(str::to_string),
            indices,
            cluster: body.get("cluster").map(granted).unwrap_or_default(),
            behind_aliases,
        });
    }
    // OpenSearch's security plugin: who we are, not what we may do.
    let (status, account) = cluster
        .raw(Method::Get, "/_plugins/_security/api/account", None)
        .await?;
    if status == 200 {
        let refused = composite_refusals(cluster, d).await?;
        return Ok(Security::Roles {
            refused,
            user: account
                .get("user_name")
                .and_then(Value::as_str)
                .map(str::to_string),
            roles: string_array(account.get("roles")),
            backend_roles: string_array(account.get("backend_roles")),
        });
    }
    Ok(Security::Off)
}

/// Which of [`COMPOSITE_ACTIONS`] the cluster refuses (403) on the
/// transactions index, probed by reading nothing.
async fn composite_refusals(cluster: &Cluster, d: &Discovery) -> Result<Vec<String>> {
    let index = &d.transactions.name;
    if !d.transactions.exists() {
        return Ok(Vec::new());
    }
    let probe = vec!["estx-doctor-probe".to_string()];
    let mget = cluster.mget(index, &probe).await.map(|_| ());
    let search = vec![(
        index.clone(),
        json!({"size": 0, "query": {"match_none": {}}}),
    )];
    let msearch = cluster.msearch(&search).await.map(|_| ());
    let mut refused = Vec::new();
    for (action, outcome) in COMPOSITE_ACTIONS.iter().zip([mget, msearch]) {
        match outcome {
            Err(crate::Error::Auth { status: 403, .. }) => refused.push(action.to_string()),
            Err(e @ crate::Error::Auth { .. }) => return Err(e),
            _ => {}
        }
    }
    Ok(refused)
}

/// The checks judged from what the credentials may do (`acks`: the acks
/// index, judged by what reading and writing it serve).
pub(crate) fn security_checks(security: &Security, acks: &str, checks: &mut Vec<Check>) {
    let mut add = |severity, text: String| checks.push(Check { severity, text });
    match security {
        Security::Off => add(
            Severity::Ok,
            "security off: no authentication, anyone reaching the URL may change balances".into(),
        ),
        Security::Privileges {
            user,
            indices,
            cluster,
            behind_aliases,
        } => {
            let who = user
                .as_deref()
                .map_or("the current user".into(), |u| format!("user `{u}`"));
            for (privilege, _) in cluster.iter().filter(|(_, granted)| !**granted) {
                add(
                    Severity::Warning,
                    format!(
                        "{who} lacks the cluster privilege {privilege}: the cluster's health \
                         and product cannot be read (the dashboard shows no health); grant \
                         the cluster privilege [{privilege}]"
                    ),
                );
            }
            let alias_of = |index: &str| {
                behind_aliases
                    .iter()
                    .find(|(_, behind)| behind.iter().any(|b| b == index))
                    .map(|(alias, _)| alias.as_str())
            };
            for (index, privs) in indices {
                if index == acks {
                    if let Some(c) = acks_check(&who, acks, privs) {
                        add(c.severity, c.text);
                    }
                    continue;
                }
                if let Some(alias) = alias_of(index) {
                    if privs.get("read") == Some(&false) {
                        add(Severity::Warning, alias_gap(&who, alias, index));
                    }
                    continue;
                }
                let missing: Vec<&str> = privs
                    .iter()
                    .filter(|(_, granted)| !**granted)
                    .map(|(p, _)| p.as_str())
                    .collect();
                if !missing.is_empty() {
                    let asked: Vec<&str> = privs.keys().map(String::as_str).collect();
                    add(
                        Severity::Error,
                        format!(
                            "{who} lacks {} on `{index}`: what needs it is refused (HTTP 403); \
                             grant a role with the index privileges [{}] on `{index}`",
                            missing.join(", "),
                            asked.join(", ")
                        ),
                    );
                }
            }
        }
        Security::Roles {
            user,
            roles,
            backend_roles,
            refused,
        } => {
            let (severity, text) = roles_check(user.as_deref(), roles, backend_roles, refused);
            add(severity, text)
        }
    }
}

/// The acks index's line, if a privilege on it is missing: without `read`
/// acked transactions page again and are selected by bulk acts (an
/// error); without `write` only acknowledging is refused (a warning: a
/// viewer needs only `read`).
fn acks_check(who: &str, acks: &str, privs: &BTreeMap<String, bool>) -> Option<Check> {
    let granted = |p: &str| privs.get(p) != Some(&false);
    if !granted("read") {
        return Some(Check {
            severity: Severity::Error,
            text: format!(
                "{who} lacks read on the acks index `{acks}`: acknowledged transactions \
                 cannot be told apart, so `check` alerts on them, bulk selections include \
                 them and the dashboard does not mark them; grant read on `{acks}` to every \
                 operator (and write to those who acknowledge)"
            ),
        });
    }
    (!granted("write")).then(|| Check {
        severity: Severity::Warning,
        text: format!(
            "{who} may read the acks index `{acks}` but not write it: `ack` and `unack` (and \
             the dashboard's K) are refused (HTTP 403); to acknowledge, grant [read, write] \
             on `{acks}` (read is enough to watch)"
        ),
    })
}

/// A role granted on an alias but not on a concrete index behind it.
fn alias_gap(who: &str, alias: &str, index: &str) -> String {
    format!(
        "{who} may read the alias `{alias}` but not `{index}` behind it: a point-in-time is \
         authorised on the concrete indices (elastic/elasticsearch#61547), so its pages are \
         refused (HTTP 403) and scans of `{alias}` scroll instead (consistent per scroll); \
         grant read on `{index}` (or on the pattern of the indices behind `{alias}`) to page \
         with a point-in-time"
    )
}

/// What an OpenSearch security user needs to know, since per-index
/// privileges cannot be asked there: the cluster-level actions it is
/// refused (an error), else who it is, its roles, and the backend roles a
/// role mapping can name (`_plugins/_security/api/account`).
fn roles_check(
    user: Option<&str>,
    roles: &[String],
    backend_roles: &[String],
    refused: &[String],
) -> (Severity, String) {
    let user = user.unwrap_or("?");
    if !refused.is_empty() {
        return (
            Severity::Error,
            format!(
                "OpenSearch refuses user `{user}` the cluster-level actions [{}]: OpenSearch \
                 authorises _mget, _msearch, _bulk and scroll pages as cluster permissions, so \
                 reads and every intervention fail; add them to the role's cluster_permissions \
                 (the OpenSearch role in docs/src/connecting.md lists all)",
                refused.join(", ")
            ),
        );
    }
    let list = |v: &[String]| match v {
        [] => "none".to_string(),
        v => v.join(", "),
    };
    (
        Severity::Warning,
        format!(
            "OpenSearch security: user `{user}` has roles [{}] and backend roles [{}]; \
             per-index privileges cannot be asked, so a refused request will name what is \
             missing: map a role with the OpenSearch permissions of docs/src/connecting.md to \
             the user or to one of its backend roles (`PUT _plugins/_security/api/rolesmapping/<role>`)",
            list(roles),
            list(backend_roles)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::{security_checks, Security, Severity};
    use std::collections::BTreeMap;

    #[test]
    fn a_concrete_index_unreadable_behind_a_granted_alias_is_named_as_the_alias_gap() {
        let all = |ok: bool| -> BTreeMap<String, bool> {
            ["read", "write"]
                .iter()
                .map(|p| (p.to_string(), ok))
                .collect()
        };
        let read = |ok: bool| -> BTreeMap<String, bool> { [("read".to_string(), ok)].into() };
        let security = Security::Privileges {
            user: Some("estx".into()),
            indices: [
                ("transactions".to_string(), all(true)),
                ("transactions-000001".to_string(), read(false)),
                ("accounts-000001".to_string(), read(true)),
            ]
            .into(),
            cluster: BTreeMap::new(),
            behind_aliases: [
                (
                    "transactions".to_string(),
                    vec!["transactions-000001".to_string()],
                ),
                ("accounts".to_string(), vec!["accounts-000001".to_string()]),
            ]
            .into(),
        };
        let mut checks = Vec::new();
        security_checks(&security, "acks", &mut checks);
        assert_eq!(checks.len(), 1, "{checks:?}");
        assert_eq!(checks[0].severity, Severity::Warning);
        let text = &checks[0].text;
        assert!(
            text.contains("alias `transactions` but not `transactions-000001`")
                && text.contains("scroll"),
            "{text}"
        );
    }
}
