//! Verdicts over evidence (issue 30): pure functions the dashboard, `check`,
//! the exporter and `list --json` share, each over typed evidence read
//! within the poll's budget. [`healing`] says whether the application's
//! own recovery is working; [`evidence`] reads what it judges on.

pub mod evidence;
pub mod healing;

pub use evidence::{HealingSearch, OperatorMark};
pub use healing::{
    judge, rejudge, AppHeartbeat, Healing, HealingEvidence, HealingSign, Previous, Recoveries,
    Unknown,
};

use crate::error::Result;
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};

/// The healing evidence `check` judges on at `now`, given what it
/// counted (`stuck`, the oldest dated one's `oldest_stuck`): the
/// evidence's searches in one `_msearch` (none of them fails the check:
/// what cannot be read is unknown). A one-shot reading has no previous.
pub(crate) async fn healing_evidence(
    p: &Protocol,
    now: DateTime<Utc>,
    stuck: u64,
    oldest_stuck: Option<DateTime<Utc>>,
) -> Result<HealingEvidence> {
    let d = p.discovery().await?;
    let config = p.config();
    let named = evidence::searches(&d.fields, config, now);
    let bodies: Vec<(String, serde_json::Value)> = named
        .iter()
        .map(|(_, index, body)| (index.clone(), body.clone()))
        .collect();
    let answers = match bodies.is_empty() {
        true => Vec::new(),
        false => p.cluster().msearch(&bodies).await?,
    };
    let answers = named.iter().map(|(s, _, _)| *s).zip(answers).collect();
    let file = config
        .audit_file
        .as_deref()
        .map(|path| OperatorMark::from_file(path, now, config.recovery_window));
    let a = evidence::read(answers, file, config);
    Ok(HealingEvidence {
        stuck: Some(stuck),
        oldest_stuck,
        recoveries: a.recoveries,
        heartbeat: a.heartbeat,
        previous: None,
    })
}
