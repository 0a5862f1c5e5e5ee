//! Discovery's proposal of a map: when a name in force is absent from the
//! live mapping, the spellings applications use (snake_case, camelCase,
//! PascalCase, and the usual abbreviations) are looked for, and the state
//! values found on the cluster are matched to the protocol's states. It is
//! only ever proposed: `doctor` prints it as TOML to paste into the profile,
//! and the procedures refuse to act until a map is configured.

use super::{Field, Schema, STATES};
use serde::Serialize;

/// A proposed map, and what could not be matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Proposal {
    /// The proposed map (the names in force where nothing better was found).
    pub schema: Schema,
    /// Fields whose name in force is absent and another spelling was found:
    /// (field, name in force, name found).
    pub renamed: Vec<(Field, String, String)>,
    /// State values found on the cluster that match no protocol state.
    pub unmatched_states: Vec<String>,
}

impl Proposal {
    /// Whether the proposal differs from the map in force.
    pub fn differs(&self, in_force: &Schema) -> bool {
        self.schema != *in_force
    }
}

/// The spellings of `field` applications use, most likely first.
pub fn spellings(field: Field) -> Vec<String> {
    let extra: &[&str] = match field {
        Field::State => &["state", "status", "txn_state"],
        Field::Source => &[
            "src_account",
            "source_account",
            "src",
            "source",
            "from_account",
        ],
        Field::Destination => &[
            "dst_acct",
            "dest_account",
            "destination_account",
            "dst_account",
            "dest",
            "destination",
            "to_account",
        ],
        Field::CreationTime => &["created_at", "creation_date", "created"],
        Field::ModificationTime => &["modified_at", "updated_at", "last_modified"],
        Field::Pending => &["pending_txns", "pending"],
        Field::LockOwner => &["holder", "locked_by"],
        Field::LockCreated => &["creation_time", "locked_at", "timestamp"],
        Field::LockExpires => &["expiration_time", "expires", "lease_until"],
        _ => &[],
    };
    let mut out = Vec::new();
    for base in std::iter::once(field.canonical()).chain(extra.iter().copied()) {
        for s in [base.to_string(), camel(base, false), camel(base, true)] {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// `snake_case` as camelCase (or PascalCase).
fn camel(s: &str, pascal: bool) -> String {
    let mut out = String::new();
    for (i, part) in s.split(['_', '-']).enumerate() {
        let mut c = part.chars();
        if let Some(first) = c.next() {
            if i == 0 && !pascal {
                out.push(first);
            } else {
                out.extend(first.to_uppercase());
            }
            out.extend(c);
        }
    }
    out
}

/// The protocol state a value spells in another case or separator style
/// (`PENDING`, `RolledBack`, `ROLLED_BACK`), if any.
pub fn state_of_value(value: &str) -> Option<&'static str> {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let n = norm(value);
    STATES
        .iter()
        .copied()
        .find(|s| norm(s) == n || (*s == "rolled-back" && n == "cancelled"))
}

/// The proposal over `in_force`: `mapped(field, name)` says whether the
/// mapping of `field`'s index has `name`; `seen_states` are the values the
/// state field holds on the cluster.
pub fn propose(
    in_force: &Schema,
    mapped: impl Fn(Field, &str) -> bool,
    seen_states: &[String],
) -> Proposal {
    let mut schema = in_force.clone();
    let mut renamed = Vec::new();
    for f in Field::ALL {
        let current = in_force.name(f);
        if mapped(f, current) {
            continue;
        }
        if let Some(found) = spellings(f).into_iter().find(|s| mapped(f, s)) {
            renamed.push((f, current.to_string(), found.clone()));
            schema = schema.with_field(f, &found);
        }
    }
    let mut unmatched_states = Vec::new();
    for v in seen_states {
        if STATES.iter().any(|s| in_force.state_value(s) == v) {
            continue;
        }
        match state_of_value(v) {
            Some(s) if schema.state_value(s) == s || schema.state_value(s) == v => {
                schema = schema.with_state(s, v);
            }
            _ => unmatched_states.push(v.clone()),
        }
    }
    if schema.states_upper_case() {
        schema = schema.fill_upper_case_states();
    }
    Proposal {
        schema,
        renamed,
        unmatched_states,
    }
}

impl Schema {
    /// Whether every state value the map names is upper case (and at least
    /// one does): the states not seen yet are proposed the same way.
    fn states_upper_case(&self) -> bool {
        let named: Vec<&str> = STATES
            .iter()
            .map(|s| self.state_value(s))
            .filter(|v| !STATES.contains(v))
            .collect();
        !named.is_empty()
            && named
                .iter()
                .all(|v| v.chars().all(|c| !c.is_ascii_lowercase()))
    }

    fn fill_upper_case_states(mut self) -> Schema {
        for s in STATES {
            if self.state_value(s) == s {
                self = self.with_state(s, &s.replace('-', "_").to_ascii_uppercase());
            }
        }
        self
    }
}
