//! The names of the indices the tool reads and writes (the application's
//! three, and the tool's own audit trail and acknowledgements): a leaf that the
//! settings, the schema boundary and the read side all name. The locks
//! index alone may be absent (the article's own deployment has only
//! `transactions` and `accounts`): see [`Indices::locks_named`].

/// Names of the indices the tool reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Indices {
    /// Transaction documents.
    pub transactions: String,
    /// Account documents.
    pub accounts: String,
    /// Lock documents (id = locked resource).
    pub locks: String,
    /// The operator audit trail (one document per intervention).
    pub audit: String,
    /// The operators' acknowledgements (one document per acknowledged
    /// transaction: `protocol::acks`), the tool's own like the audit index.
    pub acks: String,
    /// The operator named the locks index (`--locks-index`, its variable,
    /// a profile). Only then is its absence a mistake (a typo, the wrong
    /// cluster) that refuses every act; the default name being absent is a
    /// deployment that takes no locks (discovery's [`Target::Absent`]).
    ///
    /// [`Target::Absent`]: crate::protocol::read::Target::Absent
    pub locks_named: bool,
}

impl Default for Indices {
    fn default() -> Self {
        Indices {
            transactions: "transactions".into(),
            accounts: "accounts".into(),
            locks: "locks".into(),
            audit: "estx-audit".into(),
            acks: "estx-acks".into(),
            locks_named: false,
        }
    }
}
