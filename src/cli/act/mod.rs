//! The headless side of the operator's acts, shared by the commands that
//! act (and importing none of them): `--reason` and the start of an act
//! ([`mod@start`]), the printing of one procedure's verdict ([`verdict`]), and the
//! rollback or recovery of one transaction, of a selection ([`bulk`]) or
//! its `--dry-run` ([`dry_run`]) or `--rehearse` ([`rehearse`]), through the protocol's plans and `Done`,
//! run and printed once for both commands ([`procedure`]).

pub mod bulk;
pub mod dry_run;
mod dry_summary;
pub mod job;
pub mod procedure;
pub mod rehearse;
pub mod request;
pub mod start;
pub mod verdict;

pub use start::{not_started_code, recorded, start, ReasonArgs};
