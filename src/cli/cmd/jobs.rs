//! `jobs`: the bulk runs (jobs) an operator may have to resume, as `kubectl
//! get jobs` lists them: running and unfinished ones (with `--all`,
//! finished ones too), newest first, each with its id, act, operator,
//! start, progress (done/refused/failed/left), life (live, presumed dead,
//! unknown: `protocol::jobs::life`) and the exact command that resumes it;
//! from the audit index or `--audit-trail file:PATH`. Changes nothing.

use crate::cli::output::{fail, out, print_json, Table};
use crate::protocol::jobs::{list_jobs, Job, JobState, SoFar};
use crate::protocol::time::{format_timestamp, human_age};
use crate::protocol::trail::{ActOutcome, ActionKind, Operator};
use crate::protocol::Protocol;
use serde::Serialize;

/// `jobs`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Finished jobs too (their outcome in place of a life).
    #[arg(long)]
    pub all: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One job in `--json`.
#[derive(Debug, Serialize)]
struct JobJson<'a> {
    id: &'a str,
    action: ActionKind,
    operator: &'a Operator,
    reason: Option<&'a str>,
    forced: bool,
    started_at: String,
    alive_at: Option<String>,
    /// `live`, `presumed dead`, `unknown` or `finished`.
    life: &'static str,
    /// In words: `live (heartbeat 3s ago)`, `finished: completed`.
    life_detail: String,
    progress: SoFar,
    summary: Option<&'a str>,
    /// The command that resumes it (none once finished).
    resume: Option<String>,
}

/// Lists the jobs; exit 0 (also when there are none).
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let jobs = match list_jobs(&p, a.all).await {
        Ok(j) => j,
        Err(e) => return fail(&e),
    };
    let resume = |j: &Job| resume_command(&p, j);
    if a.json {
        let rows: Vec<JobJson> = jobs.iter().map(|j| job_json(j, resume(j))).collect();
        match serde_json::to_value(&rows) {
            Ok(v) => print_json(&v),
            Err(e) => return fail(&crate::Error::Invalid(e.to_string())),
        }
        return 0;
    }
    if jobs.is_empty() {
        let what = if a.all {
            "no bulk run"
        } else {
            "no unfinished bulk run"
        };
        out(format_args!("{what} in {}", trail_name(&p)));
        return 0;
    }
    let now = p.cluster().now();
    let mut t = Table::new([
        "RUN_ID",
        "ACT",
        "OPERATOR",
        "STARTED",
        "DONE/REFUSED/FAILED/LEFT",
        "LIFE",
    ]);
    for j in &jobs {
        let r = &j.record;
        let age = human_age((now - r.started_at).num_seconds());
        t.row([
            r.record_id.clone(),
            r.action.to_string(),
            r.operator.to_string(),
            format!("{} ({age} ago)", format_timestamp(r.started_at)),
            progress(&j.so_far, &j.state),
            life(j),
        ]);
    }
    t.render().into_iter().for_each(out);
    for j in &jobs {
        if let Some(cmd) = resume(j) {
            let verb = match j.state {
                JobState::Finished(_) => "continue",
                JobState::Running(_) => "resume",
            };
            out(format_args!("{verb} {}: {cmd}", j.record.record_id));
        }
    }
    0
}

/// `done/refused/failed/left` of a running job (`+N stopped` when some
/// were), or the count of a finished one.
fn progress(s: &SoFar, state: &JobState) -> String {
    if let JobState::Finished(_) = state {
        return format!("{} transaction(s)", s.total);
    }
    let stopped = if s.stopped > 0 {
        format!(" +{} stopped", s.stopped)
    } else {
        String::new()
    };
    format!(
        "{}/{}/{}/{} of {}{stopped}",
        s.done, s.refused, s.failed, s.left, s.total
    )
}

/// The life in words: `live (heartbeat 4s ago)`; a finished job's
/// transactions counted by how they ended (`finished: 2 completed, 1
/// refused`: never the worst outcome alone), or its outcome when its record
/// keeps no counts.
fn life(j: &Job) -> String {
    match (&j.state, &j.record.counts) {
        (JobState::Running(l), _) => l.short(),
        (JobState::Finished(_), Some(counts)) => format!("finished: {}", counts.brief()),
        (JobState::Finished(Some(o)), None) => format!("finished: {o}"),
        (JobState::Finished(None), None) => "finished".to_string(),
    }
}

/// The exact command that resumes `j`, with the trail it is in and the
/// profile this listing used; a job not presumed dead only forced, with a
/// reason (`JobLife::resumable`). A job stopped on purpose continues from
/// the file of the ids it left, when that file is on this machine
/// ([`continue_command`]); None for any other finished job.
fn resume_command(p: &Protocol, j: &Job) -> Option<String> {
    if let JobState::Finished(outcome) = j.state {
        return (outcome == Some(ActOutcome::Stopped))
            .then(|| continue_command(p, j))
            .flatten();
    }
    let mut cmd = format!(
        "estx-tui {} --resume {}",
        j.record.action, j.record.record_id
    );
    if let Some(profile) = &p.config().profile {
        cmd.push_str(&format!(" --profile {profile}"));
    }
    if let Some(path) = &p.config().audit_file {
        cmd.push_str(&format!(" --audit-trail file:{}", path.display()));
    }
    if !j.state.resumable_unforced() {
        cmd.push_str(" --force --reason TEXT");
    }
    Some(cmd)
}

/// The command that continues a job stopped on purpose: `--ids-from` the
/// file its stop wrote where it writes by default (`local_files::left_ids_path`),
/// if that file is here and still names the job; the continuation
/// recognises the job's own writes and takes its reason (`cli::act::bulk`).
fn continue_command(p: &Protocol, j: &Job) -> Option<String> {
    let id = &j.record.record_id;
    let path = crate::local_files::left_ids_path(id)?;
    let text = std::fs::read_to_string(&path).ok()?;
    if crate::local_files::job_of(&text).as_deref() != Some(id.as_str()) {
        return None;
    }
    let mut cmd = format!("estx-tui {} --ids-from {}", j.record.action, path.display());
    if let Some(profile) = &p.config().profile {
        cmd.push_str(&format!(" --profile {profile}"));
    }
    if let Some(path) = &p.config().audit_file {
        cmd.push_str(&format!(" --audit-trail file:{}", path.display()));
    }
    Some(cmd)
}

fn job_json(j: &Job, resume: Option<String>) -> JobJson<'_> {
    let r = &j.record;
    let life_detail = match j.state {
        JobState::Running(l) => l.to_string(),
        JobState::Finished(_) => life(j),
    };
    JobJson {
        id: &r.record_id,
        action: r.action,
        operator: &r.operator,
        reason: r.reason.as_deref(),
        forced: r.forced,
        started_at: format_timestamp(r.started_at),
        alive_at: r.alive_at.map(format_timestamp),
        life: j.state.kind(),
        life_detail,
        progress: j.so_far,
        summary: r.summary.as_deref(),
        resume,
    }
}

/// Where the jobs were read from, in words.
fn trail_name(p: &Protocol) -> String {
    match &p.config().audit_file {
        Some(path) => format!("the audit trail file:{}", path.display()),
        None => format!("the audit index `{}`", p.config().indices.audit),
    }
}
