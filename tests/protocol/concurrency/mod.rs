//! Concurrency: workers, a recovery loop that races them, and an operator
//! forcing rollbacks, all at once on five accounts; then the invariants. And
//! deterministic interleavings showing that the fence is what keeps a slow
//! worker from moving money twice (a late apply, and a worker held between
//! its claim and its account write), that accounts stay the same size however
//! many transfers they see, and a locked transfer that must release its locks
//! after another process ended its transaction. In the racing tests every
//! act of the tool is a recorded intervention (`recorded.rs`), and
//! `audit --receipts` verifies one record per act.

pub mod actors;
mod constant_size;
mod ended_elsewhere;
mod fencing;
mod held_worker;
pub mod recorded;
mod stress;
mod with_locks;
