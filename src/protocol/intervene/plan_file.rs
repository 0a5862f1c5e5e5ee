//! A plan file: a previewed rollback or recovery written down so that
//! another operator can review it and `estx-tui apply` can run exactly it
//! later (`--plan-out FILE` on every act that can `--dry-run`).
//!
//! It holds each item (transaction) the plan judged, with its steps, what it
//! would do, its balance change and the `(_seq_no, _primary_term)` of the
//! transaction and account documents it was judged on; the balance effect
//! per account; the cluster's uuid and the indices; the profile; the
//! planner (the identity the audit record would name); the time (the
//! cluster's); a format version; and the sha256 of the canonical body (its
//! serde serialisation: fields in declared order, maps sorted), so any edit
//! is seen.
//!
//! The checks are pure functions here: a plan is refused whole when it was
//! altered, is of another format, cluster or indices, or is older than the
//! allowed age ([`PlanFile::check`]); an item whose documents are no longer
//! at the planned versions has drifted ([`PlanItem::drift`]) and is never
//! re-decided. Reading the cluster for them is `plan_apply.rs`.

use super::bulk::SelectionPlan;
use super::bulk_preview::{ItemPlan, Would};
use crate::protocol::indices::Indices;
use crate::protocol::time::human_age;
use crate::protocol::trail::Operator;
use crate::protocol::views::{DocKind, DocVersion};
use crate::protocol::Procedure;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Duration;

/// The plan file format this build writes and reads.
pub const PLAN_FORMAT: u32 = 1;

/// A plan file as written: its body and the hash over it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// What was planned.
    pub body: PlanBody,
    /// `sha256:` and the hex sha256 of the body's canonical serialisation.
    pub hash: String,
}

/// Which procedure a plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlannedProcedure {
    /// A rollback.
    Rollback,
    /// A recovery.
    Recover,
}

impl From<Procedure> for PlannedProcedure {
    fn from(p: Procedure) -> Self {
        match p {
            Procedure::Rollback => PlannedProcedure::Rollback,
            Procedure::Recover => PlannedProcedure::Recover,
        }
    }
}

impl From<PlannedProcedure> for Procedure {
    fn from(p: PlannedProcedure) -> Self {
        match p {
            PlannedProcedure::Rollback => Procedure::Rollback,
            PlannedProcedure::Recover => Procedure::Recover,
        }
    }
}

/// The indices a plan was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanIndices {
    /// The transactions index.
    pub transactions: String,
    /// The accounts index.
    pub accounts: String,
    /// The locks index.
    pub locks: String,
}

impl From<&Indices> for PlanIndices {
    fn from(i: &Indices) -> Self {
        PlanIndices {
            transactions: i.transactions.clone(),
            accounts: i.accounts.clone(),
            locks: i.locks.clone(),
        }
    }
}

/// Where and by whom a plan is made: what [`PlanBody::of`] adds to the
/// previewed plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanOrigin {
    /// The cluster's uuid (`GET /`'s `cluster_uuid`).
    pub cluster_uuid: String,
    /// The indices.
    pub indices: PlanIndices,
    /// The profile, if any.
    pub profile: Option<String>,
    /// Who planned it.
    pub planner: Operator,
    /// When (the cluster's time).
    pub planned_at: DateTime<Utc>,
}

/// What a plan says one item would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PlannedAs {
    /// Run its steps: the only items `apply` runs.
    Run,
    /// Nothing to do (already terminal).
    NothingToDo,
    /// Refused unforced, and why (in words: `apply` does not run it).
    Refused {
        /// The refusal's kind and wording.
        why: String,
    },
}

/// One transaction of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanItem {
    /// The transaction.
    pub txn: String,
    /// Its state as judged.
    pub state: Option<String>,
    /// What it would do.
    pub would: PlannedAs,
    /// Its steps, as the record words them.
    pub steps: Vec<String>,
    /// Its predicted balance change per account (non-zero only).
    pub balance_change: BTreeMap<String, i64>,
    /// The documents it was judged on, at the versions read.
    pub documents: Vec<DocVersion>,
}

/// A transaction the selection named and the plan leaves out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanLeftOut {
    /// The id as given.
    pub txn: String,
    /// Why.
    pub why: String,
}

/// Everything a plan file says, hashed whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanBody {
    /// [`PLAN_FORMAT`] when written.
    pub format: u32,
    /// Rollback or recovery.
    pub procedure: PlannedProcedure,
    /// The selection as the options that made it.
    pub targets: Vec<String>,
    /// The cluster's uuid.
    pub cluster_uuid: String,
    /// The indices.
    pub indices: PlanIndices,
    /// The profile it was made under.
    pub profile: Option<String>,
    /// Who planned it (as the audit record names operators).
    pub planner: Operator,
    /// When (the cluster's time).
    pub planned_at: DateTime<Utc>,
    /// Each transaction, in selection order.
    pub items: Vec<PlanItem>,
    /// What the selection named and left out.
    pub left_out: Vec<PlanLeftOut>,
    /// The balance change of the items that run, per account (non-zero only).
    pub balance_effect: BTreeMap<String, i64>,
    /// Whether the act planned is `recover --all-stuck`, which closes with
    /// a sweep of the locks stale on evidence: `apply` runs it too, judging
    /// the locks when applied as the act does when run (no lock is in the
    /// plan). Left out when false, so plans of other acts, and those
    /// written before it, keep their bytes and hash.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sweep: bool,
}

impl PlanBody {
    /// The plan file body of a previewed bulk `plan` made at `origin`.
    /// The closing sweep of `recover --all-stuck` is named (`sweep`), not
    /// planned: its locks are judged when the plan is applied.
    pub fn of(plan: &SelectionPlan, origin: PlanOrigin) -> PlanBody {
        let verdicts = plan.verdicts();
        let items = plan
            .items
            .iter()
            .map(|item| PlanItem {
                txn: item.txn().to_string(),
                state: item
                    .detail
                    .txn
                    .state
                    .as_ref()
                    .map(|s| s.as_str().to_string()),
                would: match item.would() {
                    Would::Run => PlannedAs::Run,
                    Would::NothingToDo => PlannedAs::NothingToDo,
                    Would::Refused(r) => PlannedAs::Refused { why: r.to_string() },
                },
                steps: item.steps.iter().map(ToString::to_string).collect(),
                balance_change: item.balance_change.iter().cloned().collect(),
                documents: plan.versions.get(item.txn()).cloned().unwrap_or_default(),
            })
            .collect();
        PlanBody {
            format: PLAN_FORMAT,
            procedure: plan.procedure.into(),
            targets: plan.targets.clone(),
            cluster_uuid: origin.cluster_uuid,
            indices: origin.indices,
            profile: origin.profile,
            planner: origin.planner,
            planned_at: origin.planned_at,
            items,
            left_out: verdicts
                .left_out
                .iter()
                .map(|l| PlanLeftOut {
                    txn: l.txn.clone(),
                    why: l.why.clone(),
                })
                .collect(),
            balance_effect: verdicts.balance_effect,
            sweep: plan.sweeps,
        }
    }

    /// `sha256:` and the hex sha256 of its canonical serialisation.
    pub fn hash(&self) -> String {
        // Serialising plain structs, strings, integers and sorted maps
        // cannot fail.
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        format!("sha256:{}", hex::encode(Sha256::digest(&bytes)))
    }

    /// The items `apply` runs (those planned to run), in order.
    pub fn runs(&self) -> impl Iterator<Item = &PlanItem> {
        self.items.iter().filter(|i| i.would == PlannedAs::Run)
    }
}

impl PlanFile {
    /// `body` with its hash.
    pub fn seal(body: PlanBody) -> PlanFile {
        let hash = body.hash();
        PlanFile { body, hash }
    }

    /// The file's text (pretty JSON, for people to review).
    pub fn to_text(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// A plan file read back; `Err` when it is not one (malformed JSON,
    /// fields missing or unknown).
    pub fn parse(text: &str) -> Result<PlanFile, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Whether the plan may run here and now, whole: not altered since it
    /// was sealed, of this format, made on this cluster and these indices,
    /// and not older than `max_age` at `now` (the cluster's time).
    pub fn check(
        &self,
        here: &PlanHere,
        now: DateTime<Utc>,
        max_age: Duration,
    ) -> Result<(), PlanRefusal> {
        let b = &self.body;
        let actual = b.hash();
        if actual != self.hash {
            return Err(PlanRefusal::Altered {
                recorded: self.hash.clone(),
                actual,
            });
        }
        if b.format != PLAN_FORMAT {
            return Err(PlanRefusal::Format(b.format));
        }
        if b.cluster_uuid != here.cluster_uuid {
            return Err(PlanRefusal::OtherCluster {
                planned: b.cluster_uuid.clone(),
                here: here.cluster_uuid.clone(),
            });
        }
        if b.indices != here.indices {
            return Err(PlanRefusal::OtherIndices {
                planned: Box::new(b.indices.clone()),
                here: Box::new(here.indices.clone()),
            });
        }
        let age = now - b.planned_at;
        let max = chrono::Duration::from_std(max_age).unwrap_or(chrono::Duration::MAX);
        if age > max {
            return Err(PlanRefusal::Expired { age, max: max_age });
        }
        Ok(())
    }
}

/// The cluster an `apply` runs on: what a plan is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanHere {
    /// Its uuid.
    pub cluster_uuid: String,
    /// The indices configured.
    pub indices: PlanIndices,
}

/// Why a plan is refused whole (nothing of it runs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanRefusal {
    /// Its content does not hash to the hash it carries: edited.
    #[error("the plan was altered after it was made: it carries hash {recorded}, its content hashes to {actual}")]
    Altered {
        /// The hash it carries.
        recorded: String,
        /// Its content's.
        actual: String,
    },
    /// Another format than this build's.
    #[error("the plan file is of format {0}; this estx-tui reads format {PLAN_FORMAT}")]
    Format(u32),
    /// Made on another cluster.
    #[error("the plan was made on cluster `{planned}`, not on this one (`{here}`)")]
    OtherCluster {
        /// The plan's.
        planned: String,
        /// This cluster's.
        here: String,
    },
    /// Made on other indices.
    #[error("the plan was made on the indices {planned}, not on these ({here})")]
    OtherIndices {
        /// The plan's.
        planned: Box<PlanIndices>,
        /// These.
        here: Box<PlanIndices>,
    },
    /// Older than allowed.
    #[error("the plan was made {} ago, longer ago than --max-age {}: plan it again", human_age(age.num_seconds()), human_age(max.as_secs() as i64))]
    Expired {
        /// How old it is.
        age: chrono::Duration,
        /// The age allowed.
        max: Duration,
    },
}

impl fmt::Display for PlanIndices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}`, `{}`, `{}`",
            self.transactions, self.accounts, self.locks
        )
    }
}

/// The versions documents are at now, by kind and id (`None`: missing).
pub type Current = HashMap<(DocKind, String), Option<(i64, i64)>>;

/// How a planned document differs from what was planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The document as planned.
    pub planned: DocVersion,
    /// What was found instead.
    pub found: Found,
}

/// What an `apply` found of a document that drifted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// It is at this version now (`None`: gone).
    At(Option<(i64, i64)>),
    /// It changed between the check and the fence (the fence's write,
    /// conditional on the planned version, conflicted).
    ChangedBeforeFence,
    /// The fence's write got no answer: not run, as if drifted.
    FenceUnanswered(String),
}

impl PlanItem {
    /// The first of its documents not at its planned version in `now`
    /// (a document not read counts as drifted); `None` when none drifted.
    pub fn drift(&self, now: &Current) -> Option<Drift> {
        self.documents.iter().find_map(|d| {
            let found = now.get(&(d.kind, d.id.clone())).copied();
            (found != Some(d.version)).then(|| Drift {
                planned: d.clone(),
                found: Found::At(found.flatten()),
            })
        })
    }

    /// Its transaction document as planned, if the plan has it.
    pub fn transaction_doc(&self) -> Option<&DocVersion> {
        self.documents
            .iter()
            .find(|d| d.kind == DocKind::Transaction && d.id == self.txn)
    }
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.planned;
        let kind = match d.kind {
            DocKind::Transaction => "transaction",
            DocKind::Account => "account",
        };
        let v = |v: Option<(i64, i64)>| match v {
            Some((s, t)) => format!("seq_no {s}, primary_term {t}"),
            None => "missing".to_string(),
        };
        match &self.found {
            Found::At(now) => write!(
                f,
                "{kind} `{}` changed since the plan ({} planned, {} now)",
                d.id,
                v(d.version),
                v(*now)
            ),
            Found::ChangedBeforeFence => write!(
                f,
                "{kind} `{}` changed since the plan (the write conditional on {} conflicted)",
                d.id,
                v(d.version)
            ),
            Found::FenceUnanswered(e) => write!(
                f,
                "{kind} `{}`: the write conditional on its planned version got no answer ({e})",
                d.id
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(user: &str) -> Operator {
        Operator::os(user, "h")
    }

    fn indices() -> PlanIndices {
        PlanIndices {
            transactions: "transactions".into(),
            accounts: "accounts".into(),
            locks: "locks".into(),
        }
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap_or_default()
    }

    fn doc(kind: DocKind, id: &str, v: Option<(i64, i64)>) -> DocVersion {
        DocVersion {
            kind,
            id: id.into(),
            version: v,
        }
    }

    fn body() -> PlanBody {
        PlanBody {
            format: PLAN_FORMAT,
            procedure: PlannedProcedure::Recover,
            targets: vec!["--all-stuck".into()],
            cluster_uuid: "c-1".into(),
            indices: indices(),
            profile: None,
            planner: op("alice"),
            planned_at: at("2026-01-01T10:00:00Z"),
            items: vec![PlanItem {
                txn: "t1".into(),
                state: Some("pending".into()),
                would: PlannedAs::Run,
                steps: vec!["t1: apply to source".into()],
                balance_change: BTreeMap::from([("A".into(), -5), ("B".into(), 5)]),
                documents: vec![
                    doc(DocKind::Transaction, "t1", Some((3, 1))),
                    doc(DocKind::Account, "A", Some((7, 1))),
                ],
            }],
            left_out: vec![],
            balance_effect: BTreeMap::new(),
            sweep: false,
        }
    }

    fn here() -> PlanHere {
        PlanHere {
            cluster_uuid: "c-1".into(),
            indices: indices(),
        }
    }

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn a_sealed_plan_reads_back_and_passes_its_checks() {
        let plan = PlanFile::seal(body());
        assert!(plan.hash.starts_with("sha256:") && plan.hash.len() == 7 + 64);
        let back = PlanFile::parse(&plan.to_text()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, plan);
        assert_eq!(
            back.check(&here(), at("2026-01-01T10:30:00Z"), HOUR),
            Ok(())
        );
    }

    #[test]
    fn an_edited_plan_is_refused_by_its_hash() {
        let mut plan = PlanFile::seal(body());
        plan.body.items[0].balance_change.insert("A".into(), -500);
        let text = plan.to_text();
        let back = PlanFile::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        let refused = back.check(&here(), at("2026-01-01T10:30:00Z"), HOUR);
        assert!(
            matches!(refused, Err(PlanRefusal::Altered { .. })),
            "{refused:?}"
        );
        // A field added by hand is not a plan file at all.
        let added = text.replacen("\"hash\"", "\"extra\": 1, \"hash\"", 1);
        assert!(PlanFile::parse(&added).is_err());
    }

    #[test]
    fn another_cluster_or_an_old_plan_is_refused_whole() {
        let mut other = body();
        other.cluster_uuid = "c-2".into();
        let other = PlanFile::seal(other);
        let r = other.check(&here(), at("2026-01-01T10:30:00Z"), HOUR);
        assert!(matches!(r, Err(PlanRefusal::OtherCluster { .. })), "{r:?}");
        let plan = PlanFile::seal(body());
        let r = plan.check(&here(), at("2026-01-01T11:00:01Z"), HOUR);
        let Err(e @ PlanRefusal::Expired { .. }) = r else {
            panic!("{r:?}")
        };
        assert!(
            e.to_string().contains("longer ago than --max-age 1h"),
            "{e}"
        );
        let mut elsewhere = here();
        elsewhere.indices.accounts = "accts".into();
        let r = plan.check(&elsewhere, at("2026-01-01T10:30:00Z"), HOUR);
        assert!(matches!(r, Err(PlanRefusal::OtherIndices { .. })), "{r:?}");
    }

    #[test]
    fn an_item_drifts_when_any_of_its_documents_moved() {
        let item = &body().items[0];
        let mut now: Current = HashMap::from([
            ((DocKind::Transaction, "t1".into()), Some((3, 1))),
            ((DocKind::Account, "A".into()), Some((7, 1))),
        ]);
        assert_eq!(item.drift(&now), None);
        now.insert((DocKind::Account, "A".into()), Some((8, 1)));
        let d = item.drift(&now).unwrap_or_else(|| panic!("no drift"));
        assert_eq!(d.planned.id, "A");
        assert_eq!(
            d.to_string(),
            "account `A` changed since the plan (seq_no 7, primary_term 1 planned, seq_no 8, \
             primary_term 1 now)"
        );
        now.remove(&(DocKind::Transaction, "t1".into()));
        assert_eq!(item.drift(&now).map(|d| d.planned.id), Some("t1".into()));
    }
}
