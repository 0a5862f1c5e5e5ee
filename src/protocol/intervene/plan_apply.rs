//! A plan file made and applied, the cluster's side: `--plan-out` seals a
//! previewed bulk plan with where, when and by whom it was made
//! ([`plan_file`]); `apply` checks it whole against this cluster and its
//! clock ([`PlanFile::check`]), reads every planned document once (one
//! `_mget` per index), refuses as drifted each item whose documents are no
//! longer at the planned versions ([`PlanItem::drift`]), and fences the
//! others: a write that sets nothing on each transaction, conditional on
//! its planned version, in one conditional `_bulk` (a transaction changed
//! between the read and the fence conflicts, and is refused as drifted
//! too). What is left runs as one bulk act of exactly those ids through
//! the usual executor, its record naming the plan ([`prepare_apply`]); a
//! plan of `recover --all-stuck` closes with its sweep of stale locks, as
//! that act does.

use super::act::{Choices, FromPlan, Intervention};
use super::bulk::{BulkAct, Runner};
use super::plan_file::{
    Current, Drift, Found, PlanBody, PlanFile, PlanHere, PlanItem, PlanOrigin, PlanRefusal,
    PlannedAs,
};
use super::run::{approved_or_recorded, open_trail, NotStarted};
use super::selection::Selection;
use super::SelectionPlan;
use crate::cluster::{Changes, CondWrite, ItemOutcome, VersionedDoc};
use crate::error::{Error, Result};
use crate::protocol::trail::operator_of;
use crate::protocol::views::DocKind;
use crate::protocol::Protocol;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;

/// The cluster's uuid, as `GET /` answers it.
pub async fn cluster_uuid(p: &Protocol) -> Result<String> {
    let root = p.cluster().get_json("/", "the cluster's identity").await?;
    root.get("cluster_uuid")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| Error::Invalid("`GET /` answered no cluster_uuid".into()))
}

/// The plan file of a previewed bulk `plan`: sealed with this cluster's
/// uuid and indices, the profile, the planner (the operator the audit
/// record would name) and the cluster's time.
pub async fn plan_file(p: &Protocol, plan: &SelectionPlan) -> Result<PlanFile> {
    let origin = PlanOrigin {
        cluster_uuid: cluster_uuid(p).await?,
        indices: (&p.config().indices).into(),
        profile: p.config().profile.clone(),
        planner: operator_of(p.cluster()).await?,
        planned_at: p.now().await,
    };
    Ok(PlanFile::seal(PlanBody::of(plan, origin)))
}

/// Why a plan was not applied at all (nothing written).
#[derive(Debug, thiserror::Error)]
pub enum NotApplied {
    /// Refused whole by its checks.
    #[error("{0}")]
    Refused(#[from] PlanRefusal),
    /// The cluster could not be read.
    #[error("{0}")]
    Read(#[from] Error),
    /// What would refuse the act's start (no reason, no audit index, the
    /// planner's own plan under `approval = "second-operator"`).
    #[error("{0}")]
    NotStarted(NotStarted),
}

/// A plan checked and fenced, ready to start: the bulk act over the items
/// that run, the items refused as drifted, and those the plan does not run.
#[derive(Debug)]
pub struct Applying {
    /// The bulk act of exactly the fenced items, with the operator's
    /// choices and the plan's reference ([`FromPlan`]).
    pub intervention: Intervention<BulkAct>,
    /// The items refused as drifted, with how.
    pub drifted: Vec<(String, Drift)>,
    /// The items the plan does not run (nothing to do, refused), with why.
    pub not_run: Vec<(String, PlannedAs)>,
}

/// Checks `plan` whole (hash, format, cluster, indices, `max_age` by the
/// cluster's clock), reads its documents, refuses the drifted items and
/// fences the rest on their planned versions; the act that runs them is
/// returned, with `choices` carrying the plan's reference for its record.
pub async fn prepare_apply(
    p: &Protocol,
    plan: &PlanFile,
    max_age: Duration,
    runner: Runner,
    choices: Choices,
) -> std::result::Result<Applying, NotApplied> {
    let here = PlanHere {
        cluster_uuid: cluster_uuid(p).await?,
        indices: (&p.config().indices).into(),
    };
    plan.check(&here, p.now().await, max_age)?;
    let body = &plan.body;
    let runs: Vec<&PlanItem> = body.runs().collect();
    // What `start` refuses is refused before the fence writes anything
    // (a fence moves the versions: the plan could not be applied again).
    let mut i = Intervention::new(
        BulkAct {
            ids_source: Some(format!("plan {}", plan.hash)),
            ..BulkAct::on(
                body.procedure.into(),
                Selection::ids(runs.iter().map(|i| i.txn.clone()).collect()),
                runner,
            )
        },
        Choices {
            plan: Some(FromPlan {
                hash: plan.hash.clone(),
                planner: body.planner.clone(),
                planned_at: body.planned_at,
                drifted: Vec::new(),
                sweep: body.sweep,
            }),
            ..choices
        },
    );
    if let Some(r) = i.missing_reason() {
        return Err(NotApplied::NotStarted(NotStarted::Refused(r)));
    }
    let trail = open_trail(p).await.map_err(NotApplied::NotStarted)?;
    approved_or_recorded(p, &trail, &i)
        .await
        .map_err(NotApplied::NotStarted)?;
    let (current, txn_docs) = read_planned(p, &runs).await?;
    let mut drifted = Vec::new();
    let mut fence = Vec::new();
    for item in runs {
        match (item.drift(&current), item.transaction_doc()) {
            (Some(d), _) => drifted.push((item.txn.clone(), d)),
            (None, Some(doc)) => fence.push((item, doc)),
            // A plan item always has its transaction; one without is not
            // run (as drifted: it cannot be fenced).
            (None, None) => drifted.push((
                item.txn.clone(),
                Drift {
                    planned: crate::protocol::views::DocVersion {
                        kind: DocKind::Transaction,
                        id: item.txn.clone(),
                        version: None,
                    },
                    found: Found::At(None),
                },
            )),
        }
    }
    let changes = Changes::fence();
    let index = &p.config().indices.transactions;
    let writes: Vec<CondWrite<'_>> = fence
        .iter()
        .filter_map(|(item, doc)| {
            let (seq_no, primary_term) = doc.version?;
            Some(CondWrite {
                index,
                id: &item.txn,
                changes: &changes,
                seq_no,
                primary_term,
                routing: txn_docs.get(&item.txn).and_then(|d| d.routing.as_deref()),
            })
        })
        .collect();
    let outcomes = p.cluster().bulk_put_if(&writes).await?;
    let mut run = Vec::new();
    for ((item, doc), outcome) in fence.iter().zip(outcomes) {
        let found = match outcome {
            ItemOutcome::Written => {
                run.push(item.txn.clone());
                continue;
            }
            ItemOutcome::Conflict => Found::ChangedBeforeFence,
            ItemOutcome::Failed(e) => Found::FenceUnanswered(e.to_string()),
        };
        let planned = (*doc).clone();
        drifted.push((item.txn.clone(), Drift { planned, found }));
    }
    let not_run = body
        .items
        .iter()
        .filter(|i| i.would != PlannedAs::Run)
        .map(|i| (i.txn.clone(), i.would.clone()))
        .collect();
    i.act.selection.ids = Some(run);
    if let Some(from) = &mut i.choices.plan {
        from.drifted = drifted.iter().map(|(t, _)| t.clone()).collect();
    }
    Ok(Applying {
        intervention: i,
        drifted,
        not_run,
    })
}

/// Every document `items` were planned on, as read now (one realtime
/// `_mget` per index), and the transactions' documents (for their routing).
async fn read_planned(
    p: &Protocol,
    items: &[&PlanItem],
) -> Result<(Current, HashMap<String, VersionedDoc>)> {
    let ix = &p.config().indices;
    let mut current = Current::new();
    let mut txn_docs = HashMap::new();
    for (kind, index) in [
        (DocKind::Transaction, &ix.transactions),
        (DocKind::Account, &ix.accounts),
    ] {
        let mut ids: Vec<String> = items
            .iter()
            .flat_map(|i| &i.documents)
            .filter(|d| d.kind == kind)
            .map(|d| d.id.clone())
            .collect();
        ids.sort();
        ids.dedup();
        if ids.is_empty() {
            continue;
        }
        let docs = p.cluster().mget(index, &ids).await?;
        for (id, doc) in ids.into_iter().zip(docs) {
            current.insert(
                (kind, id.clone()),
                doc.as_ref().map(|d| (d.seq_no, d.primary_term)),
            );
            if let (DocKind::Transaction, Some(d)) = (kind, doc) {
                txn_docs.insert(id, d);
            }
        }
    }
    Ok((current, txn_docs))
}
