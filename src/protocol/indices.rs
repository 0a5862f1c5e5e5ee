//! The names of the four indices the tool reads and writes: a leaf that the
//! settings, the schema boundary and the read side all name.

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
}

impl Default for Indices {
    fn default() -> Self {
        Indices {
            transactions: "transactions".into(),
            accounts: "accounts".into(),
            locks: "locks".into(),
            audit: "estx-audit".into(),
        }
    }
}
