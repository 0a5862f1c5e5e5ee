//! What will work on this cluster, gathered for `doctor`: the product and
//! version, each index as discovered (with its document count and shard
//! health), how every field the tool queries resolved, whether the mappings
//! accept every write, how scans page, the privileges of the current
//! credentials ([`security`]), and
//! where the tool's clock comes from. Each
//! point is judged ([`Severity`]); the CLI prints it.

use super::discovery::Discovery;
pub(crate) mod check;
pub(crate) mod security;

use super::index_info::{IndexInfo, ResolvedField};
use super::scan::{probe_paging, PagingReport};
use super::schema_report::SchemaReport;
use super::times::TimeFields;
use super::writes;
use crate::cluster::{ClockSource, ClockStatus, Cluster};
use crate::error::Result;
use crate::protocol::locks::liveness::LivenessReport;
use crate::protocol::Protocol;
pub use check::{Check, Severity};
use elasticsearch::http::Method;
use security::security_checks;
pub use security::Security;
use serde::Serialize;
use serde_json::Value;

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
    /// The cluster refuses indices named in multi-request bodies
    /// (`rest.action.multi.allow_explicit_index: false`), in its words;
    /// `None`: allowed, or not asked (the transactions index is missing).
    pub explicit_index_refused: Option<String>,
    /// The format each time field the tool writes is written in.
    pub times: TimeFields,
    /// Everything judged, worst first.
    pub checks: Vec<Check>,
    /// What the configured liveness source concludes (`None`: none is
    /// configured, and locks held by processes are judged unknown).
    pub liveness: Option<LivenessReport>,
    /// The schema map in force, what it resolved to, and the proposal.
    pub schema: SchemaReport,
    /// The local file interventions are recorded in (`--audit-trail
    /// file:PATH`); `None`: the audit index.
    pub audit_file: Option<std::path::PathBuf>,
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
    pub(crate) fn of(status: &ClockStatus) -> ClockReport {
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
    pub(crate) fn check(&self) -> Option<Check> {
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

/// Each index as `doctor` shows it: discovery's view, its health, the
/// fields it resolved, and the mapping change it lacks.
pub(crate) async fn index_reports(
    cluster: &Cluster,
    ix: &crate::protocol::Indices,
    d: &Discovery,
) -> Result<Vec<IndexReport>> {
    let gaps = writes::gaps(ix, d)?;
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
            fields: fields_of(d, role),
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
    Ok(indices)
}

/// How scans page through the transactions index (`None`: it is missing,
/// or the probe failed, which the log says).
pub(crate) async fn paging_of(cluster: &Cluster, indices: &[IndexReport]) -> Option<PagingReport> {
    let r = indices.first().filter(|r| r.info.exists())?;
    probe_paging(cluster, &r.info.name)
        .await
        .inspect_err(|e| tracing::warn!("doctor: the paging probe failed: {e}"))
        .ok()
}

/// Whether the cluster refuses indices named in multi-request bodies,
/// probed on the transactions index (`None` when it is missing).
pub(crate) async fn explicit_index_of(
    cluster: &Cluster,
    indices: &[IndexReport],
) -> Result<Option<String>> {
    match indices.first().filter(|r| r.info.exists()) {
        Some(r) => cluster.probe_explicit_index(&r.info.name).await,
        None => Ok(None),
    }
}

/// What `rest.action.multi.allow_explicit_index: false` means for the tool.
pub(crate) fn explicit_index_check(reason: &str) -> Check {
    Check {
        severity: Severity::Warning,
        text: format!(
            "the cluster refuses indices named in multi-request bodies ({reason}): it runs with \
             rest.action.multi.allow_explicit_index: false (Amazon OpenSearch Service's advice \
             for index-level access policies); the tool names the index in the path of every \
             _bulk, _msearch and _mget, one request per index, so the dashboard's poll and \
             batched acts take a few more requests; an index-level policy must also allow the \
             paths that name no index (docs/src/products.md lists them)"
        ),
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

/// The product and cluster name the root endpoint (`GET /`) answered.
pub(crate) fn product_of(root: &Value) -> Option<Product> {
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

pub(crate) fn judge(
    d: &Discovery,
    indices: &[IndexReport],
    security: &Security,
    acks: &str,
    checks: &mut Vec<Check>,
) {
    let mut add = |severity, text: String| checks.push(Check { severity, text });
    for r in indices {
        let name = &r.info.name;
        if r.info.is_absent() {
            add(
                Severity::Ok,
                format!(
                    "no locks index: `{name}` does not exist and no --locks-index was named, so \
                     this deployment takes no locks; the lock sweep and lock releases have \
                     nothing to do, and only `transfer --locks` is refused (`estx-tui init` \
                     creates the index; name it with --locks-index if it exists elsewhere)"
                ),
            );
            continue;
        }
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
    security_checks(security, acks, checks);
}

/// The audit index named when it is missing: every intervention is
/// refused without it (nothing runs unrecorded), so doctor never says
/// everything works then. A warning, not an error: every read works.
/// With a file trail (`--audit-trail file:PATH`) the index is not used
/// ([`DoctorReport::audit_file`] names the file instead).
pub(crate) async fn audit_index_check(p: &Protocol) -> Result<Option<Check>> {
    if p.config.audit_file.is_some() {
        return Ok(None);
    }
    let audit = &p.config.indices.audit;
    if p.cluster().index_exists(audit).await? {
        return Ok(None);
    }
    Ok(Some(Check {
        severity: Severity::Warning,
        text: format!(
            "audit index `{audit}` does not exist: every intervention (rollback, recover, \
             release-lock, audit --repair, reverse, transfer) is refused until it does, so \
             that none runs unrecorded; run `estx-tui init` (it needs the create_index \
             privilege on `{audit}`), or record in a local file with \
             --audit-trail file:PATH"
        ),
    }))
}
