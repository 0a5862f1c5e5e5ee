//! The application's names of the protocol's fields and states, as a
//! profile's `[schema]` table gives them: the [`Schema`] map itself, which
//! the boundary, the messages and the proposals of this module read.

use serde::Serialize;
use std::collections::BTreeMap;

/// A field the protocol reads or writes in the application's documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Field {
    /// Transaction `transaction_state`.
    State,
    /// Transaction `src_acct`.
    Source,
    /// Transaction `dest_acct`.
    Destination,
    /// Transaction `amount`.
    Amount,
    /// Transaction `creation_time`.
    CreationTime,
    /// Transaction `modification_time`.
    ModificationTime,
    /// Account `balance`.
    Balance,
    /// Account `pending_transactions`.
    Pending,
    /// Lock `owner`.
    LockOwner,
    /// Lock `process_id` (the process holding it).
    LockProcess,
    /// Lock `created_at`.
    LockCreated,
    /// Lock `expires_at` (the lease).
    LockExpires,
}

/// Which of the three indices a document belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum DocKind {
    /// The transactions index.
    Transactions,
    /// The accounts index.
    Accounts,
    /// The locks index.
    Locks,
}

impl Field {
    /// Every field, in the order `doctor` lists them.
    pub const ALL: [Field; 12] = [
        Field::State,
        Field::Source,
        Field::Destination,
        Field::Amount,
        Field::CreationTime,
        Field::ModificationTime,
        Field::Balance,
        Field::Pending,
        Field::LockOwner,
        Field::LockProcess,
        Field::LockCreated,
        Field::LockExpires,
    ];

    /// The article's name, used everywhere inside the tool (and the key of
    /// the field in `[profiles.NAME.schema]`).
    pub fn canonical(self) -> &'static str {
        match self {
            Field::State => "transaction_state",
            Field::Source => "src_acct",
            Field::Destination => "dest_acct",
            Field::Amount => "amount",
            Field::CreationTime => "creation_time",
            Field::ModificationTime => "modification_time",
            Field::Balance => "balance",
            Field::Pending => "pending_transactions",
            Field::LockOwner => "owner",
            Field::LockProcess => "process_id",
            Field::LockCreated => "created_at",
            Field::LockExpires => "expires_at",
        }
    }

    /// The index its documents live in.
    pub fn kind(self) -> DocKind {
        match self {
            Field::Balance | Field::Pending => DocKind::Accounts,
            Field::LockOwner | Field::LockProcess | Field::LockCreated | Field::LockExpires => {
                DocKind::Locks
            }
            _ => DocKind::Transactions,
        }
    }

    /// The field whose canonical name is `name`.
    pub fn by_canonical(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.canonical() == name)
    }
}

/// The six protocol states' canonical values, in protocol order.
pub const STATES: [&str; 6] = [
    "created",
    "pending",
    "committed",
    "terminating",
    "finished",
    "rolled-back",
];

/// The map in force: the application's name of each field and value of each
/// state, only where it differs from the article's (so two maps that
/// translate alike are equal).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Schema {
    /// Field -> the application's name (absent: the canonical name).
    fields: BTreeMap<Field, String>,
    /// Canonical state -> the application's value (absent: the canonical).
    states: BTreeMap<String, String>,
}

/// Why a `[profiles.NAME.schema]` table cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("schema: {0}")]
pub struct SchemaError(pub String);

impl Schema {
    /// A map from the profile's table: canonical field names as keys, and a
    /// `states` sub-table with canonical states as keys. Unknown keys, two
    /// fields of one index under one name and two states under one value
    /// are refused (a map that cannot be inverted would misread documents).
    pub fn from_table(table: &toml::Table) -> Result<Schema, SchemaError> {
        let mut s = Schema::default();
        for (key, value) in table {
            if key == "states" {
                let states = value
                    .as_table()
                    .ok_or_else(|| SchemaError("`states` must be a table".into()))?;
                for (state, v) in states {
                    if !STATES.contains(&state.as_str()) {
                        return Err(SchemaError(format!(
                            "unknown state `{state}` (one of {})",
                            STATES.join(", ")
                        )));
                    }
                    s = s.with_state(state, &text(state, v)?);
                }
                continue;
            }
            let field = Field::by_canonical(key).ok_or_else(|| {
                SchemaError(format!(
                    "unknown field `{key}` (one of {}, or `states`)",
                    Field::ALL.map(Field::canonical).join(", ")
                ))
            })?;
            s = s.with_field(field, &text(key, value)?);
        }
        s.check()?;
        Ok(s)
    }

    /// Sets `field`'s name (tests and proposals).
    pub fn with_field(mut self, field: Field, name: &str) -> Schema {
        if name == field.canonical() {
            self.fields.remove(&field);
        } else {
            self.fields.insert(field, name.to_string());
        }
        self
    }

    /// Sets the application's value of canonical `state`.
    pub fn with_state(mut self, state: &str, value: &str) -> Schema {
        if state == value {
            self.states.remove(state);
        } else {
            self.states.insert(state.to_string(), value.to_string());
        }
        self
    }

    fn check(&self) -> Result<(), SchemaError> {
        for a in Field::ALL {
            for b in Field::ALL {
                if a < b && a.kind() == b.kind() && self.name(a) == self.name(b) {
                    return Err(SchemaError(format!(
                        "`{}` and `{}` are both named `{}`",
                        a.canonical(),
                        b.canonical(),
                        self.name(a)
                    )));
                }
            }
        }
        for (i, a) in STATES.iter().enumerate() {
            for b in &STATES[i + 1..] {
                if self.state_value(a) == self.state_value(b) {
                    return Err(SchemaError(format!(
                        "states `{a}` and `{b}` are both written `{}`",
                        self.state_value(a)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Whether this is the article's map (nothing is translated).
    pub fn is_default(&self) -> bool {
        Field::ALL.iter().all(|f| self.name(*f) == f.canonical())
            && STATES.iter().all(|s| self.state_value(s) == *s)
    }

    /// The application's name of `field`.
    pub fn name(&self, field: Field) -> &str {
        self.fields
            .get(&field)
            .map(String::as_str)
            .unwrap_or(field.canonical())
    }

    /// The application's value of a canonical state (anything else, an
    /// unknown state an operator typed, passes unchanged).
    pub fn state_value<'a>(&'a self, canonical: &'a str) -> &'a str {
        self.states
            .get(canonical)
            .map(String::as_str)
            .unwrap_or(canonical)
    }

    /// The canonical state of a value the application wrote. A value the
    /// map does not name stays as it is, so it reads as unknown; one that
    /// happens to spell a canonical state the application writes otherwise
    /// is marked (`unmapped:pending`) so it is never taken for that state.
    pub fn state_from_app(&self, value: &str) -> String {
        if let Some(s) = STATES.iter().find(|s| self.state_value(s) == value) {
            return (*s).to_string();
        }
        if STATES.contains(&value) || value.starts_with(UNMAPPED) {
            return format!("{UNMAPPED}{value}");
        }
        value.to_string()
    }

    /// The value to write for a canonical (or marked unknown) state: the
    /// inverse of [`Self::state_from_app`].
    pub fn state_to_app(&self, canonical: &str) -> String {
        match canonical.strip_prefix(UNMAPPED) {
            Some(raw) => raw.to_string(),
            None => self.state_value(canonical).to_string(),
        }
    }

    /// The map in force as rows (canonical, application's name), for
    /// `doctor`.
    pub fn field_rows(&self) -> Vec<(Field, &str)> {
        Field::ALL.iter().map(|f| (*f, self.name(*f))).collect()
    }

    /// The states as rows (canonical, application's value).
    pub fn state_rows(&self) -> Vec<(&'static str, &str)> {
        STATES.iter().map(|s| (*s, self.state_value(s))).collect()
    }

    /// The map as the TOML table a profile takes (`[profiles.NAME.schema]`).
    pub fn to_toml(&self, profile: &str) -> String {
        let mut out = format!("[profiles.{profile}.schema]\n");
        for (f, name) in self.field_rows() {
            out.push_str(&format!("{} = \"{name}\"\n", f.canonical()));
        }
        out.push_str(&format!("\n[profiles.{profile}.schema.states]\n"));
        for (s, v) in self.state_rows() {
            out.push_str(&format!("{} = \"{v}\"\n", toml_key(s)));
        }
        out
    }
}

/// The mark of a state value the map does not name that spells a canonical
/// state (see [`Schema::state_from_app`]).
pub(super) const UNMAPPED: &str = "unmapped:";

fn toml_key(k: &str) -> String {
    if k.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        format!("\"{k}\"")
    }
}

fn text(key: &str, v: &toml::Value) -> Result<String, SchemaError> {
    match v.as_str() {
        Some(s) if !s.is_empty() && !s.contains('.') => Ok(s.to_string()),
        _ => Err(SchemaError(format!(
            "`{key}` must be a non-empty top-level field name (a string without dots)"
        ))),
    }
}
