//! What will work on this cluster, gathered for `doctor`: the product and
//! version, each index as discovered (with its document count and shard
//! health), how every field the tool queries resolved, whether the mappings
//! accept every write, the privileges of the current credentials, and
//! where the tool's clock comes from. Each
//! point is judged ([`Severity`]); the CLI prints it.

use super::discovery::{Discovery, IndexInfo, ResolvedField};
use super::scan::{probe_paging, PagingReport};
use super::schema_report::SchemaReport;
use super::times::TimeFields;
use super::writes;
use crate::cluster::{ClockSource, ClockStatus, Cluster};
use crate::error::Result;
use crate::protocol::lock::liveness::LivenessReport;
use crate::protocol::Protocol;
use elasticsearch::http::Method;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Works.
    Ok,
    /// Works, worse (slower queries, lagging data, a cap).
    Warning,
    /// Something the tool needs will fail.
    Error,
}

/// One judged point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// How bad.
    pub severity: Severity,
    /// What, in words.
    pub text: String,
}

/// The product behind the URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Product {
    /// `elasticsearch` or `opensearch`.
    pub distribution: String,
    /// Version number.
    pub version: String,
    /// Cluster name.
    pub cluster_name: String,
}

/// One index, as `doctor` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexReport {
    /// `transactions`, `accounts` or `locks`.
    pub role: &'static str,
    /// Discovery's view.
    pub info: IndexInfo,
    /// Documents in it (`None` if it could not be counted).
    pub doc_count: Option<u64>,
    /// Shard health colour of the index.
    pub health: Option<String>,
    /// Unassigned shards of the index.
    pub unassigned_shards: Option<u64>,
    /// The fields the tool queries in it, resolved.
    pub fields: Vec<ResolvedField>,
    /// Shipped fields the live mapping lacks, as the request adding them.
    pub mapping_change: Option<String>,
    /// Whether the index rejects documents with those fields today
    /// (`dynamic: strict`); otherwise they are mapped dynamically on write.
    pub writes_rejected: bool,
}

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

/// Everything `doctor` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DoctorReport {
    /// The URL asked.
    pub url: String,
    /// The kind of credential presented (basic, API key, bearer, SigV4).
    pub credential: crate::cluster::CredentialKind,
    /// What answers there.
    pub product: Option<Product>,
    /// The three indices.
    pub indices: Vec<IndexReport>,
    /// Privileges of the current credentials.
    pub security: Security,
    /// Where the tool's clock comes from.
    pub clock: ClockReport,
    /// How scans page through the transactions index (`None`: it is
    /// missing, or the probe's search was refused).
    pub paging: Option<PagingReport>,
    /// The format each time field the tool writes is written in.
    pub times: TimeFields,
    /// Everything judged, worst first.
    pub checks: Vec<Check>,
    /// What the configured liveness source concludes (`None`: none is
    /// configured, and locks held by processes are judged unknown).
    pub liveness: Option<LivenessReport>,
    /// The schema map in force, what it resolved to, and the proposal.
    pub schema: SchemaReport,
}

impl DoctorReport {
    /// The worst severity found.
    pub fn severity(&self) -> Severity {
        self.checks
            .iter()
            .map(|c| c.severity)
            .max()
            .unwrap_or(Severity::Ok)
    }
}

/// Which clock the tool's times come from (see [`ClockSource`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// The cluster's own `now`.
    Cluster,
    /// The answers' `Date` header.
    DateHeader,
    /// This machine's clock.
    Local,
}

/// Where the tool's clock comes from, as `doctor` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClockReport {
    /// Which clock.
    pub source: ClockKind,
    /// Width of the bounds on the cluster's time, when it is known.
    pub uncertainty_ms: Option<i64>,
    /// Cluster minus local time (positive: the local clock is behind).
    pub local_offset_ms: i64,
    /// In words.
    pub text: String,
}

impl ClockReport {
    fn of(status: &ClockStatus) -> ClockReport {
        let (source, uncertainty) = match &status.source {
            ClockSource::Cluster { uncertainty } => (ClockKind::Cluster, Some(uncertainty)),
            ClockSource::DateHeader { uncertainty, .. } => {
                (ClockKind::DateHeader, Some(uncertainty))
            }
            ClockSource::Local { .. } => (ClockKind::Local, None),
        };
        ClockReport {
            source,
            uncertainty_ms: uncertainty.map(|u| u.num_milliseconds()),
            local_offset_ms: status.offset.num_milliseconds(),
            text: status.to_string(),
        }
    }

    /// A finding when the time does not come from the cluster itself.
    fn check(&self) -> Option<Check> {
        let text = match self.source {
            ClockKind::Cluster => return None,
            ClockKind::DateHeader => format!(
                "times come from the `Date` header, not the cluster's own clock: {}",
                self.text
            ),
            ClockKind::Local => format!(
                "the cluster told no time: ages, the recovery window and written times use {}",
                self.text
            ),
        };
        Some(Check {
            severity: Severity::Warning,
            text,
        })
    }
}

/// Privileges the tool needs on the transactions, accounts and locks indices.
pub const NEEDED_PRIVILEGES: [&str; 4] = ["read", "write", "delete", "view_index_metadata"];
/// Privileges the tool needs on the audit index (records are created and
/// completed, never deleted).
pub const AUDIT_PRIVILEGES: [&str; 3] = ["read", "write", "view_index_metadata"];
/// Cluster privileges the tool uses: `monitor` reads the cluster's health
/// (the dashboard header, `doctor`) and its root banner (the product).
pub const CLUSTER_PRIVILEGES: [&str; 1] = ["monitor"];

/// OpenSearch authorises `_mget` and `_msearch` (and `_bulk`, scroll pages)
/// as cluster-level actions: a role with only index permissions is refused
/// them. `doctor` probes the two reads (harmless: one id that does not exist,
/// a search for nothing).
pub const COMPOSITE_ACTIONS: [&str; 2] = ["indices:data/read/mget", "indices:data/read/msearch"];

impl Protocol {
    /// Gathers the doctor's report (read-only).
    pub async fn doctor(&self) -> Result<DoctorReport> {
        let cluster = self.cluster();
        let (_, root) = cluster.raw(Method::Get, "/", None).await?;
        let product = product_of(&root);
        let d = self.rediscover().await?;
        let mut checks = Vec::new();
        let gaps = writes::gaps(&self.config.indices, &d)?;
        let mut indices = Vec::new();
        for (role, info) in ["transactions", "accounts", "locks"]
            .into_iter()
            .zip(d.indices())
        {
            let mut r = IndexReport {
                role,
                info: info.clone(),
                doc_count: None,
                health: None,
                unassigned_shards: None,
                fields: fields_of(&d, role),
                mapping_change: None,
                writes_rejected: false,
            };
            if let Some(g) = gaps
                .iter()
                .find(|g| g.index == info.name && !g.add.is_empty())
            {
                r.mapping_change = Some(g.request());
                r.writes_rejected = g.rejects_writes;
            }
            if info.exists() {
                index_health(cluster, &mut r).await?;
            }
            indices.push(r);
        }
        let paging = match indices.first().filter(|r| r.info.exists()) {
            Some(r) => probe_paging(cluster, &r.info.name)
                .await
                .inspect_err(|e| tracing::warn!("doctor: the paging probe failed: {e}"))
                .ok(),
            None => None,
        };
        let security = security(cluster, &d, &self.config.indices.audit).await?;
        judge(&d, &indices, &security, &mut checks);
        checks.extend(self.audit_index_check().await?);
        self.sync_clock().await;
        let clock = ClockReport::of(&cluster.clock_status());
        checks.extend(clock.check());
        if let Err(e) = writes::check_locks(&self.config.indices, &d) {
            checks.push(Check {
                severity: Severity::Error,
                text: format!("`transfer --locks` {e}"),
            });
        }
        let liveness = self.liveness_report().await;
        if let Some(LivenessReport { error: Some(_), .. }) = &liveness {
            let text = format!(
                "liveness {}",
                liveness
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            );
            checks.push(Check {
                severity: Severity::Error,
                text,
            });
        }
        if let Err(e) = writes::check(&self.config.indices, &d, &[]) {
            checks.push(Check {
                severity: Severity::Error,
                text: e.to_string(),
            });
        }
        let schema =
            super::schema_report::report(cluster, &d, self.config.profile.as_deref()).await;
        checks.extend(
            super::schema_report::unmapped_states_warning(&d, &schema).map(|text| Check {
                severity: Severity::Warning,
                text,
            }),
        );
        checks.sort_by_key(|c| std::cmp::Reverse(c.severity));
        Ok(DoctorReport {
            schema,
            url: cluster.url().to_string(),
            credential: cluster.credential(),
            product,
            indices,
            security,
            clock,
            paging,
            times: d.times.clone(),
            checks,
            liveness,
        })
    }
}

impl Protocol {
    /// The audit index named when it is missing: every intervention is
    /// refused without it (nothing runs unrecorded), so doctor never says
    /// everything works then. A warning, not an error: every read works.
    async fn audit_index_check(&self) -> Result<Option<Check>> {
        let audit = &self.config.indices.audit;
        if self.cluster().index_exists(audit).await? {
            return Ok(None);
        }
        Ok(Some(Check {
            severity: Severity::Warning,
            text: format!(
                "audit index `{audit}` does not exist: every intervention (rollback, recover, \
                 release-lock, audit --repair, reverse, transfer) is refused until it does, so \
                 that none runs unrecorded; run `estx-tui init` (it needs the create_index \
                 privilege on `{audit}`)"
            ),
        }))
    }
}

fn fields_of(d: &Discovery, role: &str) -> Vec<ResolvedField> {
    d.fields
        .all()
        .into_iter()
        .filter(|(r, _)| *r == role)
        .map(|(_, f)| f.clone())
        .collect()
}

async fn index_health(cluster: &Cluster, r: &mut IndexReport) -> Result<()> {
    let name = &r.info.name;
    let (status, count) = cluster
        .raw(Method::Get, &format!("/{name}/_count"), None)
        .await?;
    if status == 200 {
        r.doc_count = count.get("count").and_then(Value::as_u64);
    }
    let (status, health) = cluster
        .raw(
            Method::Get,
            &format!("/_cluster/health/{name}?level=indices&timeout=2s&master_timeout=2s"),
            None,
        )
        .await?;
    if status == 200 || status == 408 {
        let per: Vec<&Value> = health
            .get("indices")
            .and_then(Value::as_object)
            .map(|o| o.values().collect())
            .unwrap_or_default();
        r.health = health
            .get("status")
            .and_then(Value::as_str)
            .map(str::to_string);
        r.unassigned_shards = Some(
            per.iter()
                .filter_map(|i| i.get("unassigned_shards").and_then(Value::as_u64))
                .sum(),
        );
    }
    Ok(())
}

/// What the current credentials may do: Elasticsearch's `_has_privileges`
/// on the three indices and the audit index (asked by name, so indices
/// `init` has not created yet are asked too: Elasticsearch refuses an entry
/// without names with a 400, which must not read as "security off"), else
/// OpenSearch's account.
async fn security(cluster: &Cluster, d: &Discovery, audit: &str) -> Result<Security> {
    let names: Vec<&str> = d.indices().iter().map(|i| i.name.as_str()).collect();
    let asked = json!({"cluster": CLUSTER_PRIVILEGES, "index": [
        {"names": names, "privileges": NEEDED_PRIVILEGES},
        {"names": [audit], "privileges": AUDIT_PRIVILEGES},
    ]});
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
            roles: strings(&account, "roles"),
            backend_roles: strings(&account, "backend_roles"),
        });
    }
    Ok(Security::Off)
}

/// The strings of the array `key` of `v` (none when absent).
fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
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

/// The product and cluster name the root endpoint (`GET /`) answered.
fn product_of(root: &Value) -> Option<Product> {
    root.get("version").map(|v| Product {
        distribution: v
            .get("distribution")
            .and_then(Value::as_str)
            .unwrap_or("elasticsearch")
            .to_string(),
        version: v
            .get("number")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        cluster_name: root
            .get("cluster_name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
    })
}

fn judge(d: &Discovery, indices: &[IndexReport], security: &Security, checks: &mut Vec<Check>) {
    let mut add = |severity, text: String| checks.push(Check { severity, text });
    for r in indices {
        let name = &r.info.name;
        if !r.info.exists() {
            add(
                Severity::Error,
                format!(
                    "{} index `{name}` does not exist: run `estx-tui init`",
                    r.role
                ),
            );
            continue;
        }
        if r.health.as_deref() == Some("red") {
            add(
                Severity::Error,
                format!(
                    "`{name}` is red ({} unassigned shards): searches miss documents (partial results)",
                    r.unassigned_shards.unwrap_or(0)
                ),
            );
        }
        if r.info.dynamic == "strict" && r.mapping_change.is_none() {
            add(
                Severity::Ok,
                format!("`{name}` is dynamic: strict and maps every field the protocol writes"),
            );
        }
    }
    let id_problems: Vec<String> = d.indices().iter().filter_map(|i| i.id_problem()).collect();
    for w in d.warnings() {
        let severity = if id_problems.contains(&w) {
            Severity::Error
        } else {
            Severity::Warning
        };
        add(severity, w);
    }
    match security {
        Security::Off => add(
            Severity::Ok,
            "security off: no authentication, anyone reaching the URL may change balances".into(),
        ),
        Security::Privileges {
            user,
            indices,
            cluster,
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
            for (index, privs) in indices {
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
                 (the README's OpenSearch role lists all)",
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
             missing: map a role with the README's OpenSearch permissions to the user or to one \
             of its backend roles (`PUT _plugins/_security/api/rolesmapping/<role>`)",
            list(roles),
            list(backend_roles)
        ),
    )
}
