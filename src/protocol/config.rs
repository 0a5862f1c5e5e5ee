//! Settings of the protocol module: index names, the recovery window, and
//! how hard to retry.

pub use super::indices::Indices;

use super::decide::Fencing;
use super::locks::LivenessSource;
use super::schema::Schema;
use std::time::Duration;

/// How the executor retries.
///
/// Conflicts mean someone else made progress, so many are allowed; unknown
/// outcomes (timeouts, dropped connections, 5xx) mean the cluster is unwell,
/// so after a few the step gives up and leaves the transaction where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts allowed after an unknown outcome or failed read.
    pub max_unknown: u32,
    /// 409s tolerated on one step before giving up.
    pub max_conflicts: u32,
    /// First backoff; doubles per unknown outcome (capped at 2 s).
    pub base_backoff: Duration,
    /// Throttled answers (429) tolerated on one step before giving up: a
    /// throttle is the cluster asking to slow down, not trouble, so they
    /// are counted apart from unknown outcomes and many are allowed.
    pub max_throttled: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_unknown: 5,
            max_conflicts: 100,
            base_backoff: Duration::from_millis(50),
            max_throttled: 200,
        }
    }
}

/// Everything the procedures need to know besides the cluster.
#[derive(Debug, Clone)]
pub struct ProtocolConfig {
    /// Index names.
    pub indices: Indices,
    /// A transaction modified more recently than this may still have a live
    /// worker: recovery and rollback refuse it unless forced (article: 2 min).
    pub recovery_window: Duration,
    /// Non-terminal transactions older than this need an operator (1 h).
    pub investigate_after: Duration,
    /// Executor retries.
    pub retry: RetryPolicy,
    /// Always `On` outside tests that demonstrate the reference's holes.
    pub fencing: Fencing,
    /// Lease written into locks taken by transfers.
    pub lock_lease: Duration,
    /// How long a transfer waits for a held lock before giving up.
    pub lock_wait: Duration,
    /// Where the heartbeats of lock holders that are processes are read
    /// (none: such locks are judged unknown).
    pub liveness: Option<LivenessSource>,
    /// The profile's runbook URL per cause (`[profiles.NAME.runbooks]`),
    /// shown beside a cause verdict.
    pub runbooks: crate::protocol::read::verdict::Runbooks,
    /// The application's names of fields and states (the article's by
    /// default; `[profiles.NAME.schema]`).
    pub schema: Schema,
    /// The profile these settings came from, if any: the map `doctor`
    /// proposes and its advice name its table (`[profiles.<name>.schema]`).
    pub profile: Option<String>,
    /// The profile is marked `production = true`: its bulk and forced acts
    /// want a typed confirmation ([`crate::protocol::intervene::Guard`]),
    /// and its audit records say so.
    pub production: bool,
    /// Who may approve an intervention (a profile's `approval`):
    /// with [`ApprovalRule::SecondOperator`], only a plan file applied by
    /// another operator than its planner runs.
    pub approval: ApprovalRule,
    /// Record interventions in this local file instead of the audit index
    /// (`--audit-trail file:PATH`, `trail::file`).
    pub audit_file: Option<std::path::PathBuf>,
    /// How often a running bulk job rewrites its record's heartbeat
    /// (`--job-heartbeat`; `protocol::jobs::life`).
    pub job_heartbeat: Duration,
}

/// How often a running job rewrites its heartbeat, unless configured
/// (`--job-heartbeat`; what the heartbeat says: `protocol::jobs::life`).
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig {
            indices: Indices::default(),
            recovery_window: Duration::from_secs(120),
            investigate_after: Duration::from_secs(3600),
            retry: RetryPolicy::default(),
            fencing: Fencing::On,
            lock_lease: Duration::from_secs(120),
            lock_wait: Duration::from_secs(10),
            liveness: None,
            runbooks: Default::default(),
            schema: Schema::default(),
            profile: None,
            production: false,
            approval: ApprovalRule::default(),
            audit_file: None,
            job_heartbeat: HEARTBEAT_EVERY,
        }
    }
}

/// Who approves an intervention (a profile's `approval` key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalRule {
    /// The operator who runs it (the default).
    #[default]
    Operator,
    /// Another operator: interventions run only from a plan file
    /// (`--plan-out`, then `estx-tui apply`), and `apply` by the planner's
    /// own identity is refused.
    SecondOperator,
}
