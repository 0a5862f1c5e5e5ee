//! The jobs view's tasks (after [`super::task`]): reading the unfinished
//! bulk jobs from the audit trail, and resuming one from its record as the
//! dashboard's bulk run, reporting on the one event channel as every task
//! does.

use super::event::runner_for;
use super::event::{Action, Event};
use crate::protocol::intervene::{self, Choices, Stop};
use crate::protocol::jobs::Pace;
use crate::protocol::trail::Interface;
use crate::protocol::{Procedure, Protocol};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// Reads the unfinished bulk jobs for the jobs view.
pub fn spawn_jobs(proto: Protocol, events: UnboundedSender<Event>) {
    tokio::spawn(async move {
        let jobs = crate::protocol::trail::unfinished_jobs(&proto)
            .await
            .map_err(|e| e.to_string());
        let _ = events.send(Event::Jobs(jobs));
    });
}

/// An unfinished job the operator chose to resume.
#[derive(Debug, Clone)]
pub struct Job {
    /// Its audit record's id.
    pub run: String,
    /// Rollback or recover.
    pub action: Action,
    /// What the operator typed to confirm it on a production profile, and
    /// the reason when forced over a job not presumed dead.
    pub confirmed: super::jobs::ResumeConfirmed,
}

/// Resumes `job` from its record ([`intervene::resume`], as `--resume`
/// does) as the dashboard's bulk run: its items reported as they end,
/// `stop` and `pace` steering it; says how many it runs, then how it ended.
pub fn spawn_resume(
    proto: Protocol,
    job: Job,
    stop: Arc<Stop>,
    pace: Arc<Pace>,
    events: UnboundedSender<Event>,
) {
    tokio::spawn(async move {
        let action = job.action;
        let proto = proto.with_pace(pace);
        let runner = runner_for(action.procedure().unwrap_or(Procedure::Recover));
        let c = job.confirmed;
        let choices = Choices::new(Interface::Dashboard, c.forced_with.clone())
            .forced(c.forced_with.is_some())
            .confirmed(c.typed);
        let started = match intervene::resume(&proto, &job.run, runner, choices).await {
            Ok(s) => s,
            Err(n) => {
                let summary = format!("job {} not resumed: {n}", job.run);
                let _ = events.send(Event::BulkDone {
                    action,
                    not_started: 0,
                    summary,
                    record: None,
                    left: None,
                });
                return;
            }
        };
        let total = started.plan().transactions.len();
        let _ = events.send(Event::JobResumed {
            run: job.run.clone(),
            total,
            left_file: crate::local_files::left_ids_path(&job.run),
        });
        let ended = super::task::run_reporting(&proto, started, action, &stop, &events).await;
        let _ = events.send(Event::BulkDone {
            action,
            not_started: ended.not_started,
            summary: ended.summary,
            record: ended.record,
            left: ended.left,
        });
    });
}
