//! Kept only so that the front ends' imports of
//! `protocol::trail::bulk::{Selection, Selected}` compile while they are
//! rewritten on other branches: a selection is part of an act, and lives in
//! `protocol::intervene`. Import it from there; this shim goes
//! once no front end names it.

#[doc(hidden)]
pub use crate::protocol::intervene::{BulkOptions, BulkRun, LeftOut, Selected, Selection};
