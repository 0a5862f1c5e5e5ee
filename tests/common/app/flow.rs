//! The article's procedures over one transaction: creation with `_create`,
//! core steps 1-7, the rollback of a created or a pending transaction, and
//! where recovery resumes each state. Before every write the caller's
//! [`Guard`] may stop the thread (an injected crash, or the processing
//! budget spent): the transaction then stays where it is, for recovery.

use super::names::State;
use super::scripts::{ingest_timestamp, Result as Script, ScriptError};
use super::World;
use chrono::Utc;
use estx::cluster::CreateOutcome;
use serde_json::{json, Value};

/// A point where a thread may stop before writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Point {
    /// Before taking the locks.
    Lock,
    Create,
    Core(u8),
    Rollback(u8),
    CancelCreated,
    /// After the transfer ended, before its locks are released.
    Unlock,
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Point::Lock => write!(f, "lock"),
            Point::Create => write!(f, "create"),
            Point::Core(n) => write!(f, "core {n}"),
            Point::Rollback(n) => write!(f, "rollback {n}"),
            Point::CancelCreated => write!(f, "rollback created"),
            Point::Unlock => write!(f, "unlock"),
        }
    }
}

/// Decides, before each write, whether the thread goes on.
pub trait Guard {
    /// `Err(why)` stops the thread before `point`'s write.
    fn before(&mut self, point: Point) -> std::result::Result<(), Stop>;
}

/// Why a thread stopped.
#[derive(Debug)]
pub enum Stop {
    /// An injected crash at this point.
    Crash(Point),
    /// The processing budget was spent before this point.
    OverBudget(Point),
    /// The instance's heartbeats are too old to go on (half the timeout):
    /// others may soon judge it dead.
    Lapsed(Point),
    /// A write failed after the article's retries.
    Failed(ScriptError),
}

/// How a run of steps ended.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// This thread moved it to `finished`.
    Finished,
    /// This thread moved it to `rolled-back`.
    RolledBack,
    /// A state update was a noop: someone else moved it; left to them.
    Noop(Point),
}

/// One transfer, as `curr_trans` in the article.
#[derive(Debug, Clone)]
pub struct Txn {
    pub id: String,
    pub src: String,
    pub dest: String,
    pub amount: i64,
}

/// Where recovery resumes a transaction in `state` (the article's
/// "Recovering from errors").
pub fn resume_point(state: State) -> Option<Point> {
    match state {
        State::Created => Some(Point::Core(1)),
        State::Pending => Some(Point::Core(2)),
        State::Committed => Some(Point::Core(5)),
        State::Terminating => Some(Point::Rollback(2)),
        State::Finished | State::RolledBack => None,
    }
}

fn failed(e: ScriptError) -> Stop {
    Stop::Failed(e)
}

impl World {
    /// `PUT transactions/_create/ID` (through `initialize_time`, whose
    /// timestamps are written here: osmem has no ingest pipelines). False
    /// when it already exists: leave it to recovery, as the article says.
    pub async fn create(
        &self,
        t: &Txn,
        g: &mut (dyn Guard + Send),
    ) -> std::result::Result<bool, Stop> {
        g.before(Point::Create)?;
        let n = self.names;
        let now = ingest_timestamp(Utc::now());
        let doc = json!({n.src: t.src, n.dest: t.dest, n.amount: t.amount,
            n.state: n.state_value(State::Created),
            n.creation_time: now, n.modification_time: now});
        let Value::Object(doc) = doc else {
            unreachable!()
        };
        match self
            .cluster
            .create(&self.ix.transactions, &t.id, &doc)
            .await
        {
            Ok(CreateOutcome::Created) => Ok(true),
            Ok(CreateOutcome::AlreadyExists) => Ok(false),
            Err(e) => Err(Stop::Failed(ScriptError::Cluster(e))),
        }
    }

    /// Runs the article's steps on `t` from `from` to the end.
    pub async fn run_from(
        &self,
        t: &Txn,
        from: Point,
        cancel_at: Option<Point>,
        g: &mut (dyn Guard + Send),
    ) -> std::result::Result<End, Stop> {
        let mut at = from;
        loop {
            if Some(at) == cancel_at {
                at = match at {
                    Point::Core(1) => Point::CancelCreated,
                    _ => Point::Rollback(1),
                };
            }
            g.before(at)?;
            match self.step(t, at).await.map_err(failed)? {
                Next::Go(next) => at = next,
                Next::End(end) => return Ok(end),
            }
        }
    }

    /// One step's write and what comes after it.
    async fn step(&self, t: &Txn, at: Point) -> std::result::Result<Next, ScriptError> {
        use State::*;
        let state = |cur, next, then: Next| async move {
            Ok(
                match self.update_transaction_state(&t.id, cur, next).await? {
                    Script::Updated => then,
                    Script::Noop => Next::End(End::Noop(at)),
                },
            )
        };
        let (id, a) = (t.id.as_str(), t.amount);
        match at {
            Point::Core(1) => state(Created, Pending, Next::Go(Point::Core(2))).await,
            Point::Core(2) => {
                self.apply_transaction_to_account(&t.src, id, -a).await?;
                Ok(Next::Go(Point::Core(3)))
            }
            Point::Core(3) => {
                self.apply_transaction_to_account(&t.dest, id, a).await?;
                Ok(Next::Go(Point::Core(4)))
            }
            Point::Core(4) => state(Pending, Committed, Next::Go(Point::Core(5))).await,
            Point::Core(5) => {
                self.remove_transaction_from_account(&t.src, id).await?;
                Ok(Next::Go(Point::Core(6)))
            }
            Point::Core(6) => {
                self.remove_transaction_from_account(&t.dest, id).await?;
                Ok(Next::Go(Point::Core(7)))
            }
            Point::Core(_) => state(Committed, Finished, Next::End(End::Finished)).await,
            Point::CancelCreated => state(Created, RolledBack, Next::End(End::RolledBack)).await,
            Point::Rollback(1) => state(Pending, Terminating, Next::Go(Point::Rollback(2))).await,
            Point::Rollback(2) => {
                self.undo_transaction_on_account(&t.src, id, -a).await?;
                Ok(Next::Go(Point::Rollback(3)))
            }
            Point::Rollback(3) => {
                self.undo_transaction_on_account(&t.dest, id, a).await?;
                Ok(Next::Go(Point::Rollback(4)))
            }
            Point::Rollback(_) => state(Terminating, RolledBack, Next::End(End::RolledBack)).await,
            Point::Lock | Point::Create | Point::Unlock => unreachable!("{at} is not a step"),
        }
    }
}

enum Next {
    Go(Point),
    End(End),
}
