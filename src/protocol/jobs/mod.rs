//! Durable bulk jobs: what makes a rollback or recovery over thousands of
//! transactions a job an operator can steer. A job is the bulk act's run
//! record (its id is the record's id); here are the pieces around it:
//!
//! - [`Pace`]: the one write-rate limiter (`--max-rate`), a token bucket
//!   both the batched and the one-at-a-time paths wait on before a write,
//!   which backs off (AIMD) when the cluster sheds load (429,
//!   `es_rejected_execution_exception`), so a throttle slows the job and is
//!   never a failed item;
//! - [`Progress`]: done, refused, failed and left, with rate and ETA;
//! - [`JobLife`]: whether a job still runs somewhere, read from the
//!   heartbeat its record carries ([`job_life`]), and whether it may be
//!   resumed (only when presumed dead, unless forced);
//! - [`list_jobs`]: the jobs of the audit trail, each with its life and
//!   how far it got (`estx-tui jobs`);
//! - [`LiveJobs`], [`SeenAct`]: what other operators' live jobs hold and
//!   what their acts did lately (several operators at once);
//! - [`OwnWrites`]: the transactions a job last wrote itself, on its
//!   record's evidence, which its way back does not refuse as recent;
//! - [`wait_unless`]: a wait that ends early when the job is stopped, so
//!   Ctrl-C is heard within a fraction of a second whatever the job waits on.
//!
//! Checkpoints (the steps of ended transactions written as the run goes)
//! and resuming a run from its record are the trail's and the act's
//! (`trail::checkpoint`, `intervene::resume`).

mod alive;
mod checkpoint;
mod life;
mod listing;
mod others;
mod own;
mod pace;
mod progress;
mod wait;

pub use super::config::HEARTBEAT_EVERY;
pub use alive::keep_alive;
pub use checkpoint::{Checkpoints, Ended, MIN_TRANSACTIONS};
pub use life::{job_life, JobLife, SILENT_PERIODS};
pub use listing::{list_jobs, Job, JobState, SoFar};
pub use others::{
    live_jobs, live_jobs_for_act, live_jobs_searches, others_unavailable, recent_acts_search,
    HeldBy, JobLists, LiveJobs, OthersUnavailable, SeenAct, SeenActs, PART_ASKS,
};
pub use own::OwnWrites;
pub use pace::{Pace, PaceStats};
pub use progress::{Progress, ProgressView};
pub use wait::wait_unless;
