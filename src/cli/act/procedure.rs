//! `rollback` and `recover`, whichever the target: one transaction (its
//! act started, run and printed), a selection ([`super::bulk`]), or the
//! `--dry-run` of either ([`super::dry_run`]), which prints the act's plan
//! and writes nothing, or its `--rehearse` ([`super::rehearse`]) on a
//! local copy.

use super::request::Request;
use super::start::{recorded, start};
use super::verdict::{finish_as, not_started, observed};
use super::{bulk, dry_run};
use crate::cli::output::{fail, out};
use crate::cli::selection::OutcomeFormat;
use crate::protocol::intervene::Selection;
use crate::protocol::intervene::{BulkAct, Choices, Intervention, Recover, Rollback, Runs};
use crate::protocol::trail::Interface;
use crate::protocol::ProcedureReport;
use crate::protocol::{Procedure, Protocol};

/// Runs what `req` asks: the act on one id, on a selection, or its dry run.
pub async fn run(p: Protocol, req: Request<'_>) -> i32 {
    if let Some(run) = &req.job.resume {
        return bulk::resume(p, req, run).await;
    }
    let Some(id) = req.id.filter(|_| !req.select.is_bulk()) else {
        return bulk::run(p, req).await;
    };
    if req.select.plans_only() || req.select.rehearse {
        return dry_run_one(p, req, id).await;
    }
    match req.procedure {
        Procedure::Rollback => one(p, Rollback::new(id), "rollback", id, req).await,
        Procedure::Recover => one(p, Recover::new(id), "recover", id, req).await,
    }
}

/// `rollback ID` / `recover ID`: starts the act (its record written), says
/// so (`verb id`), runs it printing each step, prints the verdict.
async fn one<A>(p: Protocol, act: A, verb: &str, id: &str, req: Request<'_>) -> i32
where
    A: Runs<Result = ProcedureReport>,
{
    let format = req.format();
    let json = format != OutcomeFormat::Text;
    let started = match start(&p, act, req.force, req.why).await {
        Ok(s) => s,
        Err(code) => return not_started(code, json),
    };
    if !json {
        out(format_args!("{verb} {id}"));
    }
    let index = started.index().to_string();
    let done = started.run(&observed(p, json, false)).await;
    let code = finish_as(&done.value, format);
    recorded(&done, &index, code)
}

/// `rollback ID --dry-run` / `recover ID --dry-run` (or `--rehearse`): the
/// plan of the act on a selection of that one id, printed (or rehearsed)
/// as a selection's is.
async fn dry_run_one(p: Protocol, req: Request<'_>, id: &str) -> i32 {
    let act = BulkAct::on(
        req.procedure,
        Selection::ids(vec![id.to_string()]),
        req.runner,
    );
    if req.select.rehearse {
        let i = Intervention::new(act, req.why.choices());
        let plan_out = req.select.plan_out.as_deref();
        return super::rehearse::run(&p, i, req.format(), id, None, plan_out).await;
    }
    let i = Intervention::new(act, Choices::new(Interface::Cli, None));
    let summary = req.job.summary.then(|| req.job.left_to.clone());
    let plan_out = req.select.plan_out.as_deref();
    match dry_run::plan_and_print(&p, &i, req.format(), id, summary, plan_out).await {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}
