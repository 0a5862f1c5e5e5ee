//! `apply FILE --reason TEXT`: runs a plan file written by
//! `rollback`/`recover --plan-out`, exactly its items. The plan is refused
//! whole (exit 2, nothing written) when it was altered since it was made,
//! was made on another cluster or indices, or is older than `--max-age`;
//! on a profile with `approval = "second-operator"`, also when the
//! operator applying it is the one who planned it. Each item whose
//! documents are no longer at the planned versions is refused as drifted
//! (exit 1), never decided again; the others run as one bulk act
//! ([`crate::cli::act::bulk::execute`]) whose record names the plan's hash,
//! the planner and the approver.

use crate::cli::act::bulk::execute;
use crate::cli::act::job::JobArgs;
use crate::cli::act::request::Request;
use crate::cli::act::{not_started_code, ReasonArgs};
use crate::cli::exit;
use crate::cli::output::bulk::LeftOutRow;
use crate::cli::output::{err, fail, outcome, plural};
use crate::cli::selection::{OutcomeFormat, SelectionArgs};
use crate::protocol::batch::BatchOptions;
use crate::protocol::intervene::{self, NotApplied, PlanFile, PlannedAs, PlannedProcedure, Runner};
use crate::protocol::time::parse_duration;
use crate::protocol::{Procedure, Protocol};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// `apply FILE`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The plan file (`rollback`/`recover --plan-out FILE`).
    pub file: PathBuf,
    /// Refuse a plan made longer ago than this (the cluster's time).
    #[arg(long, value_parser = parse_duration, default_value = "1h", value_name = "DURATION")]
    pub max_age: Duration,
    /// Print the outcome as JSON (as a bulk `rollback`/`recover --json`,
    /// the drifted items among `left_out`).
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail; required).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// A plan refused whole, as `--json` prints it.
#[derive(Debug, Serialize)]
struct RefusedWhole {
    /// Always `refused`.
    verdict: &'static str,
    /// Why, in words.
    message: String,
    /// The exit code.
    exit_code: i32,
}

/// Runs the plan in `a.file`; returns the exit code.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let text = match std::fs::read_to_string(&a.file) {
        Ok(t) => t,
        Err(e) => return refused(a, format!("cannot read {}: {e}", a.file.display())),
    };
    let plan = match PlanFile::parse(&text) {
        Ok(plan) => plan,
        Err(e) => return refused(a, format!("{} is not a plan file: {e}", a.file.display())),
    };
    let procedure = Procedure::from(plan.body.procedure);
    let runner = match plan.body.procedure {
        PlannedProcedure::Recover => Runner::Batched(BatchOptions::default()),
        PlannedProcedure::Rollback => Runner::OneByOne(4),
    };
    let applying =
        match intervene::prepare_apply(&p, &plan, a.max_age, runner, a.why.choices()).await {
            Ok(applying) => applying,
            Err(NotApplied::Refused(r)) => return refused(a, r.to_string()),
            Err(NotApplied::Read(e)) => return fail(&e),
            Err(NotApplied::NotStarted(n)) => return not_started_code(&n),
        };
    let b = &plan.body;
    let format = if a.json {
        OutcomeFormat::Json
    } else {
        OutcomeFormat::Text
    };
    let drifted: Vec<LeftOutRow> = applying
        .drifted
        .iter()
        .map(|(txn, d)| LeftOutRow::new(txn, &format!("drifted: {d}")))
        .collect();
    err(format_args!(
        "plan {} by {} ({}): {} to run, {} drifted, {} not run by the plan",
        plan.hash,
        b.planner,
        b.planned_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        plural(b.runs().count() - drifted.len(), "transaction"),
        drifted.len(),
        applying.not_run.len()
    ));
    if !a.json {
        for (txn, why) in &applying.not_run {
            let why = match why {
                PlannedAs::NothingToDo => "nothing to do",
                PlannedAs::Refused { why } => why,
                PlannedAs::Run => continue,
            };
            err(format_args!("{txn}: not run: planned as {why}"));
        }
    }
    let started = match intervene::start(&p, applying.intervention).await {
        Ok(s) => s,
        Err(n) => return not_started_code(&n),
    };
    let select = SelectionArgs::default();
    let job = JobArgs::default();
    let req = Request {
        procedure,
        id: None,
        select: &select,
        force: false,
        json: a.json,
        why: &a.why,
        runner,
        job: &job,
    };
    let what = format!("the plan {}", a.file.display());
    execute(p, req, started, format, &what, drifted).await
}

/// Says why the plan is refused whole (on stdout too with `--json`);
/// returns [`exit::REFUSED_WHOLE`].
fn refused(a: &Args, message: String) -> i32 {
    err(format_args!("refused: {message}; nothing was done"));
    if a.json {
        outcome::print(&RefusedWhole {
            verdict: "refused",
            message,
            exit_code: exit::REFUSED_WHOLE,
        });
    }
    exit::REFUSED_WHOLE
}
