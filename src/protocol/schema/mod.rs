//! The schema map: what the application calls each field the protocol reads
//! or writes, and what it writes for each state. The article's snake_case
//! names and lowercase states are the default; a profile's
//! `[profiles.NAME.schema]` names others (a Java or C# application writes
//! `transactionState`, `srcAcct`, `PENDING`...).
//!
//! The map is applied at one boundary, the cluster's document reads and
//! writes ([`Boundary`], installed by `Protocol::new`):
//! a document of one of the three indices is renamed to the canonical names
//! as it is read and back to the application's as it is written, unknown
//! fields kept in their order. Everything above works on canonical names.
//! Queries are built from `protocol::read::Fields`, resolved under
//! the application's names ([`Schema::name`]), and name states through
//! [`Schema::state_value`]. Discovery proposes a map when the names in force
//! are absent ([`propose`]). Messages that name a field are given the names
//! in force before an operator reads them ([`messages`]); `doctor` warns of
//! state values the map leaves unmapped ([`advice`]).
//!
//! The tool's own additions (`pending_deltas`, `settled_transactions`,
//! `reverses`, `reversed_by`) are not in the map: they keep their names.

pub mod advice;
mod messages;
mod names;
pub mod propose;
mod translate;

pub use names::{DocKind, Field, Schema, SchemaError, STATES};
pub use propose::Proposal;
pub use translate::Boundary;

#[cfg(test)]
mod tests;
