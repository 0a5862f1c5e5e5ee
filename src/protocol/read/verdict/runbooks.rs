//! The names of the causes ([`super::cause`]) and a profile's runbooks by
//! them: a leaf the configuration holds without reaching the verdict's
//! evidence (locks, transactions).

use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// A cause's name: the runbooks' keys, the exporter's label, `list
/// --json`'s and `check --format json`'s `cause`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// [`Cause::HolderDead`].
    HolderDead,
    /// [`Cause::HolderLive`].
    HolderLive,
    /// [`Cause::HotAccount`].
    HotAccount,
    /// [`Cause::Refused`].
    Refused,
    /// [`Cause::AppRecovering`].
    AppRecovering,
    /// [`Cause::Unknown`].
    Unknown,
}

impl CauseKind {
    /// Every kind, in the order counts are shown.
    pub const ALL: [CauseKind; 6] = [
        CauseKind::HolderDead,
        CauseKind::HolderLive,
        CauseKind::HotAccount,
        CauseKind::Refused,
        CauseKind::AppRecovering,
        CauseKind::Unknown,
    ];

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            CauseKind::HolderDead => "holder_dead",
            CauseKind::HolderLive => "holder_live",
            CauseKind::HotAccount => "hot_account",
            CauseKind::Refused => "refused",
            CauseKind::AppRecovering => "app_recovering",
            CauseKind::Unknown => "unknown",
        }
    }

    /// The kind named `name` (snake_case).
    pub fn parse(name: &str) -> Option<CauseKind> {
        CauseKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for CauseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile's runbook URL per cause (`[profiles.NAME.runbooks]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runbooks(pub BTreeMap<CauseKind, String>);

impl Runbooks {
    /// The runbook for `kind`, if the profile names one.
    pub fn get(&self, kind: CauseKind) -> Option<&str> {
        self.0.get(&kind).map(String::as_str)
    }

    /// From a profile's table: each key a cause's snake_case name, each
    /// value a URL; an unknown key is refused, naming the valid ones.
    pub fn from_table(table: &BTreeMap<String, String>) -> Result<Runbooks, String> {
        let mut out = BTreeMap::new();
        for (key, url) in table {
            let Some(kind) = CauseKind::parse(key) else {
                let valid: Vec<&str> = CauseKind::ALL.iter().map(|k| k.name()).collect();
                return Err(format!(
                    "runbooks: unknown cause `{key}` (valid: {})",
                    valid.join(", ")
                ));
            };
            out.insert(kind, url.clone());
        }
        Ok(Runbooks(out))
    }
}

impl Serialize for Runbooks {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k.name(), v)))
    }
}
