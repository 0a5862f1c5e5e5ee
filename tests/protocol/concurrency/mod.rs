//! Concurrency: workers, a recovery loop that races them, and an operator
//! forcing rollbacks, all at once on five accounts; then the invariants. And
//! two deterministic interleavings showing that the fencing records are what
//! keeps a slow worker from moving money twice, and a locked transfer that
//! must release its locks after another process ended its transaction.

mod ended_elsewhere;
mod fencing;
mod stress;
mod with_locks;
