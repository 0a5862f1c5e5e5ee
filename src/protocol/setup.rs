//! Creating the indices (transactions, accounts, locks, audit trail, acknowledgements) with the mappings the tool ships
//! (`assets/mappings/`), idempotently. Used by `init`, `seed` and the demo.

use super::schema::{Boundary, Schema};
use super::Indices;
use crate::cluster::Translate;
use crate::error::{Error, Result};
use serde_json::Value;

/// Mapping of the transactions index.
pub const TRANSACTIONS_MAPPING: &str = include_str!("../../assets/mappings/transactions.json");
/// Mapping of the accounts index.
pub const ACCOUNTS_MAPPING: &str = include_str!("../../assets/mappings/accounts.json");
/// Mapping of the locks index.
pub const LOCKS_MAPPING: &str = include_str!("../../assets/mappings/locks.json");
/// Mapping of the operator audit-trail index.
pub const AUDIT_MAPPING: &str = include_str!("../../assets/mappings/audit.json");
/// Mapping of the acknowledgements index (`protocol::acks`).
pub const ACKS_MAPPING: &str = include_str!("../../assets/mappings/acks.json");

/// The index-creation bodies by index name, the protocol's fields under the
/// names `schema` gives them.
pub fn index_bodies(ix: &Indices, schema: &Schema) -> Result<Vec<(String, Value)>> {
    let boundary = Boundary::new(schema, ix);
    [
        (&ix.transactions, TRANSACTIONS_MAPPING),
        (&ix.accounts, ACCOUNTS_MAPPING),
        (&ix.locks, LOCKS_MAPPING),
        (&ix.audit, AUDIT_MAPPING),
        (&ix.acks, ACKS_MAPPING),
    ]
    .into_iter()
    .map(|(name, text)| {
        serde_json::from_str(text)
            .map(|mut body: Value| {
                let props = body
                    .pointer_mut("/mappings/properties")
                    .and_then(Value::as_object_mut);
                if let (Some(b), Some(props)) = (&boundary, props) {
                    *props = b.write(name, props);
                }
                (name.clone(), body)
            })
            .map_err(|e| {
                Error::Invalid(format!(
                    "bundled mapping for `{name}` is not valid JSON: {e}"
                ))
            })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_mappings_type_the_protocol_fields() {
        let bodies = index_bodies(&Indices::default(), &Schema::default()).unwrap();
        let t = &bodies[0].1["mappings"]["properties"];
        for f in [
            "src_acct",
            "dest_acct",
            "src_account",
            "dest_account",
            "transaction_state",
        ] {
            assert_eq!(t[f]["type"], "keyword", "{f}");
        }
        assert_eq!(t["modification_time"]["type"], "date");
        assert_eq!(
            bodies[1].1["mappings"]["properties"]["pending_transactions"]["type"],
            "keyword"
        );
        assert_eq!(
            bodies[2].1["mappings"]["properties"]["owner"]["type"],
            "keyword"
        );
    }
}
