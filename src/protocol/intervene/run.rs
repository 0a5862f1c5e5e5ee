//! Performing an act and recording it, the recipe written once: check the
//! reason, open the trail, plan, write the unfinished record ([`start`]),
//! run, fold the steps and the outcome into the record and finish it
//! ([`Started::run`]). A refusal here means nothing was written at all,
//! but for a plan's apply by its own planner under a second operator's
//! approval, which is recorded as refused ([`record_own_plan`]).

use super::act::{Act, Choices, FromPlan, Intervention, Resumed, Runs, Started};
use super::done::Done;
use super::{ActRefusal, BulkAct, Guard, Planned, Runner, Selection};
use crate::error::Error;
use crate::protocol::jobs::job_life;
use crate::protocol::trail::{
    ActOutcome, ActionKind, Approval, Ending, Operator, Record, RecordDraft, RecordId, Trail,
};
use crate::protocol::{ApprovalRule, Procedure, Protocol};
use std::fmt;
use std::sync::Arc;

/// Why an act did not start; nothing was written.
#[derive(Debug)]
pub enum NotStarted {
    /// Refused before anything was written (reason missing, no audit index).
    Refused(ActRefusal),
    /// Planning failed (a bulk act's selection could not be read).
    Plan(Error),
    /// The trail could not be opened.
    Trail(Error),
    /// The unfinished record could not be written.
    Record(Error),
}

impl fmt::Display for NotStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotStarted::Refused(r) => write!(f, "{r}"),
            NotStarted::Plan(e) => write!(f, "{e}"),
            NotStarted::Trail(e) => write!(f, "cannot open the audit trail: {e}"),
            NotStarted::Record(e) => write!(f, "cannot write the audit record: {e}"),
        }
    }
}

/// The reason job `run` was started with, as its record says (`None` when
/// it has none): what a continuation of a stopped job runs with when the
/// operator gives none, as its resume would.
pub async fn job_reason(p: &Protocol, run: &str) -> Result<Option<String>, NotStarted> {
    let trail = open_trail(p).await?;
    trail.reason_of(run).await.map_err(NotStarted::Trail)
}

/// Opens the trail, refusing when the audit index is missing.
pub(super) async fn open_trail(p: &Protocol) -> Result<Trail, NotStarted> {
    match Trail::open(p).await {
        Ok(t) => Ok(t),
        Err(Error::IndexMissing(index)) => {
            Err(NotStarted::Refused(ActRefusal::AuditIndexMissing(index)))
        }
        // The trail's pre-flight: the product would refuse to complete the
        // record (`Trail::open`), so it is not written at all.
        Err(e @ (Error::UpdateRefused { .. } | Error::Blocked { .. } | Error::Auth { .. })) => {
            Err(NotStarted::Record(e))
        }
        Err(e) => Err(NotStarted::Trail(e)),
    }
}

/// Checks the reason, opens the trail (refusing when the audit index is
/// missing), plans `i` and writes its unfinished record.
pub async fn start<A: Act>(p: &Protocol, i: Intervention<A>) -> Result<Started<A>, NotStarted> {
    let mut i = i;
    i.act.forced(i.choices.force);
    if let Some(r) = i.missing_reason() {
        return Err(NotStarted::Refused(r));
    }
    let trail = open_trail(p).await?;
    approved_or_recorded(p, &trail, &i).await?;
    let plan = i.plan(p).await.map_err(NotStarted::Plan)?;
    guarded(p, &i, &plan)?;
    let overrode = not_held(p, &i, &plan).await?;
    let mut draft = draft(&plan, &i);
    draft.overrode = overrode;
    draft.profile = p.config().profile.clone();
    draft.production = p.config().production;
    draft.approval = i
        .choices
        .plan
        .as_ref()
        .map(|f| approval(f, trail.operator()));
    let (record, parts) = trail.begin_run(&draft).await.map_err(NotStarted::Record)?;
    tracing::info!(record = %record, action = %i.action(), operator = %trail.operator(), "audit record written");
    Ok(Started {
        trail,
        record,
        intervention: i,
        plan,
        parts,
        resumed: None,
        own: None,
    })
}

/// What a record run from plan `f` by `approver` says of its approval.
fn approval(f: &FromPlan, approver: &Operator) -> Approval {
    Approval {
        plan_hash: f.hash.clone(),
        planner: f.planner.clone(),
        approver: approver.clone(),
        planned_at: f.planned_at,
        drifted: f.drifted.clone(),
    }
}

/// [`approved`], a plan's apply by its own planner recorded as refused
/// ([`record_own_plan`]): what [`start`] and `apply`'s preparation ask.
pub(super) async fn approved_or_recorded<A: Act>(
    p: &Protocol,
    trail: &Trail,
    i: &Intervention<A>,
) -> Result<(), NotStarted> {
    match approved(p, i, trail.operator()) {
        Ok(()) => Ok(()),
        Err(refused) => Err(record_own_plan(p, trail, i, refused).await),
    }
}

/// Passes `refused` on, first recording it when it is a plan's apply by
/// its own planner under `approval = "second-operator"` (issue 31: the
/// planner's refused apply and another operator's accepted one are both
/// in the trail). The record ends `refused` with the refusal as its
/// summary and no step, naming the plan (hash, planner) and the
/// transactions it would have run; no document is written. The other
/// refusals stay unrecorded: they ask the operator for something (a
/// reason, a plan), where this one is the four-eyes rule kept. A record
/// that cannot be written is logged; the refusal stands either way.
async fn record_own_plan<A: Act>(
    p: &Protocol,
    trail: &Trail,
    i: &Intervention<A>,
    refused: NotStarted,
) -> NotStarted {
    let (NotStarted::Refused(ActRefusal::OwnPlan { .. }), Some(from)) = (&refused, &i.choices.plan)
    else {
        return refused;
    };
    let mut d = match i.plan(p).await {
        Ok(plan) => draft(&plan, i),
        Err(e) => {
            tracing::warn!(error = %e, "the refused apply's transactions could not be read");
            let mut d = RecordDraft::new(i.action(), Vec::new(), i.choices.interface);
            d.reason = i.choices.reason_text().map(str::to_string);
            d.bulk = i.is_bulk();
            d
        }
    };
    // Nothing was planned to run.
    d.plan = Vec::new();
    d.profile = p.config().profile.clone();
    d.production = p.config().production;
    d.approval = Some(approval(from, trail.operator()));
    let ending = Ending::of(ActOutcome::Refused, refused.to_string(), Vec::new());
    let written = match trail.begin(&d).await {
        Ok(id) => trail.finish(&id, ending).await.map(|()| id),
        Err(e) => Err(e),
    };
    match written {
        Ok(id) => tracing::info!(record = %id, "the planner's own apply refused and recorded"),
        Err(e) => {
            tracing::warn!(error = %e, "the planner's own apply refused; its record could not be written")
        }
    }
    refused
}

/// Continues the unfinished bulk run `run_id` (a job that crashed or was
/// killed): reads its record back, skips the transactions its checkpoints
/// say ended, and plans the rest afresh, each re-read and re-decided by
/// its procedure as any run does (the fence keeps a step from being
/// applied twice, and a transaction another process moved on is left to
/// it). No new record: the run completes the one it continues, whose
/// summary says it was resumed. The reason is the run's unless `choices`
/// gives one.
///
/// Refused unless the job is presumed dead ([`job_life`]: its heartbeat
/// silent for a few periods), so a job still running elsewhere is not run
/// twice; `choices.force`, with a reason of the operator's, overrides it.
/// Before its first step the record notes the resume (`Trail::resume`):
/// who, when, from where, the job's life then, the operator's reason, and
/// when forced, the record's `forced` set, whichever front end resumed it.
pub async fn resume(
    p: &Protocol,
    run_id: &str,
    runner: Runner,
    choices: Choices,
) -> Result<Started<BulkAct>, NotStarted> {
    let trail = open_trail(p).await?;
    let mut found = trail.unfinished(run_id).await.map_err(NotStarted::Plan)?;
    let own = std::mem::take(&mut found.own);
    let life = job_life(&found.record, p.now().await);
    if !life.resumable(choices.force) {
        return Err(NotStarted::Refused(ActRefusal::JobNotDead {
            run: run_id.to_string(),
            life,
        }));
    }
    if choices.force && choices.reason_text().is_none() {
        return Err(NotStarted::Refused(ActRefusal::ReasonMissing {
            action: found.record.action,
            because_forced_or_bulk: true,
        }));
    }
    let procedure = match (found.record.action, found.record.bulk) {
        (ActionKind::Recover, true) => Procedure::Recover,
        (ActionKind::Rollback, true) => Procedure::Rollback,
        (action, _) => {
            return Err(NotStarted::Plan(Error::Invalid(format!(
                "run `{run_id}` is a {action} of {} transaction(s), not a bulk rollback or \
                 recovery: only those resume",
                found.record.transactions.len()
            ))))
        }
    };
    resume_approved(p, run_id, &found.record, trail.operator())?;
    let act = BulkAct {
        ids_source: Some(format!("the unfinished run {run_id}")),
        ..BulkAct::on(procedure, Selection::ids(found.left()), runner)
    };
    let given = choices.reason_text().map(str::to_string);
    let reason = given.clone().or(found.record.reason.clone());
    let forced = choices.force.then(|| format!("{life}"));
    let interface = choices.interface;
    let i = Intervention::new(act, Choices { reason, ..choices });
    let plan = i.plan(p).await.map_err(NotStarted::Plan)?;
    guarded(p, &i, &plan)?;
    trail
        .resume(run_id, interface, forced.is_some(), life.to_string(), given)
        .await
        .map_err(NotStarted::Record)?;
    tracing::info!(record = %run_id, left = plan.selected.transactions.len(), ended = found.ended.len(),
        own = own.len(), "resuming run");
    Ok(Started {
        trail,
        record: RecordId(run_id.to_string()),
        intervention: i,
        plan,
        parts: found.record.parts + found.checkpoints,
        resumed: Some(Resumed {
            ended: found.ended.len(),
            checkpoints: found.checkpoints,
            earlier: found.earlier,
            forced,
        }),
        own: Some(Arc::new(own)),
    })
}

/// The unfinished record of `i` with its `plan`.
pub fn draft<A: Act>(plan: &impl Planned, i: &Intervention<A>) -> RecordDraft {
    let mut d = RecordDraft::new(i.action(), plan.transactions(), i.choices.interface);
    d.targets = plan.targets();
    d.reason = i.choices.reason_text().map(str::to_string);
    d.forced = i.choices.force;
    d.bulk = i.is_bulk();
    d.plan = plan.labels();
    d
}

/// Refuses, on a profile with `approval = "second-operator"`, an act that
/// runs without a plan file, and one whose plan `operator` made himself.
/// Acts that update no transaction or account (lock releases,
/// acknowledgements) move no money and need no second operator.
fn approved<A: Act>(
    p: &Protocol,
    i: &Intervention<A>,
    operator: &Operator,
) -> Result<(), NotStarted> {
    let c = p.config();
    if c.approval != ApprovalRule::SecondOperator || !i.act.updates_documents() {
        return Ok(());
    }
    let profile = c.profile.clone().unwrap_or_default();
    match &i.choices.plan {
        None => Err(NotStarted::Refused(ActRefusal::NeedsPlan(profile))),
        Some(f) if f.planner.same_identity(operator) => {
            Err(NotStarted::Refused(ActRefusal::OwnPlan {
                profile,
                planner: f.planner.clone(),
            }))
        }
        Some(_) => Ok(()),
    }
}

/// Refuses an act that updates transactions on one another live job holds
/// (another operator's, or another process's: `jobs::LiveJobs`, its
/// running records read by search), saying whose job it is, unless forced
/// with a reason (checked before: [`Intervention::missing_reason`]); says
/// which jobs a forced act overrode (`JOB (USER)`), for its record. A bulk
/// act's selection left those out already unless forced.
async fn not_held<A: Act>(
    p: &Protocol,
    i: &Intervention<A>,
    plan: &A::Plan,
) -> Result<Vec<String>, NotStarted> {
    if !i.act.updates_documents() {
        return Ok(Vec::new());
    }
    let txns = plan.transactions();
    if txns.is_empty() {
        return Ok(Vec::new());
    }
    let live = crate::protocol::jobs::live_jobs_for_act(p).await;
    let mut overrode: Vec<String> = Vec::new();
    for txn in &txns {
        let Some(by) = live.holding(txn) else {
            continue;
        };
        if !i.choices.force {
            return Err(NotStarted::Refused(ActRefusal::HeldByJob {
                txn: txn.clone(),
                by: by.clone(),
            }));
        }
        let named = format!("{} ({})", by.job, by.operator.user);
        if !overrode.contains(&named) {
            overrode.push(named);
        }
    }
    Ok(overrode)
}

/// Refuses, on a profile with `approval = "second-operator"`, the resume
/// of job `run` (a bulk rollback or recovery: it moves money) unless its
/// `record` was begun from an applied plan that `operator` did not make
/// (the record's `approval`): the resume goes on with that plan's items,
/// re-decided as any run is, under the approval the plan got. A job begun
/// without one needs a plan of what it has left, as a new run would.
fn resume_approved(
    p: &Protocol,
    run: &str,
    record: &Record,
    operator: &Operator,
) -> Result<(), NotStarted> {
    let c = p.config();
    if c.approval != ApprovalRule::SecondOperator {
        return Ok(());
    }
    let profile = c.profile.clone().unwrap_or_default();
    match &record.approval {
        None => Err(NotStarted::Refused(ActRefusal::ResumeNeedsPlan {
            profile,
            run: run.to_string(),
        })),
        Some(a) if a.planner.same_identity(operator) => {
            Err(NotStarted::Refused(ActRefusal::OwnPlan {
                profile,
                planner: a.planner.clone(),
            }))
        }
        Some(_) => Ok(()),
    }
}

/// Refuses a bulk or forced act on a production profile that was not
/// confirmed by typing what its [`Guard`] asks (the count from `plan`).
fn guarded<A: Act>(p: &Protocol, i: &Intervention<A>, plan: &A::Plan) -> Result<(), NotStarted> {
    let c = p.config();
    let bulk = i.is_bulk().then_some(plan.transactions().len());
    match Guard::of(c.profile.as_deref(), c.production, i.choices.force, bulk) {
        Some(g) if !g.accepts(i.choices.confirmed.as_deref()) => {
            Err(NotStarted::Refused(ActRefusal::Unconfirmed(g)))
        }
        _ => Ok(()),
    }
}

/// [`start`], then [`Started::run`] on `p`: for callers that print
/// nothing in between. The result is the act's own.
pub async fn run<A: Runs>(p: &Protocol, i: Intervention<A>) -> Result<Done<A::Result>, NotStarted> {
    Ok(start(p, i).await?.run(p).await)
}
