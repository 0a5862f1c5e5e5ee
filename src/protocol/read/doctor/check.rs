//! One judged point of `doctor`'s report ([`Check`]) and how bad it is
//! ([`Severity`]): what every part of the report (the indices, the fields,
//! the credentials) is judged into.

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Works.
    Ok,
    /// Works, worse (slower queries, lagging data, a cap).
    Warning,
    /// Something the tool needs will fail.
    Error,
}

/// One judged point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// How bad.
    pub severity: Severity,
    /// What, in words.
    pub text: String,
}
