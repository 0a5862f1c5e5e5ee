//! `init`: creates the transactions, accounts and locks indices with the
//! mappings in `assets/mappings/`, leaving existing indices alone.

use super::output::{fail, out};
use crate::error::Error;
use crate::protocol::Protocol;
use serde_json::Value;

/// Mapping of the transactions index.
pub const TRANSACTIONS_MAPPING: &str = include_str!("../../assets/mappings/transactions.json");
/// Mapping of the accounts index.
pub const ACCOUNTS_MAPPING: &str = include_str!("../../assets/mappings/accounts.json");
/// Mapping of the locks index.
pub const LOCKS_MAPPING: &str = include_str!("../../assets/mappings/locks.json");

/// The index-creation body of a bundled mapping.
fn body(name: &str, text: &str) -> Result<Value, Error> {
    serde_json::from_str(text).map_err(|e| {
        Error::Invalid(format!(
            "bundled mapping for `{name}` is not valid JSON: {e}"
        ))
    })
}

/// Creates the three indices; prints `created` or `already exists` for each.
pub async fn run(p: &Protocol) -> i32 {
    let idx = &p.config().indices;
    let wanted = [
        (idx.transactions.as_str(), TRANSACTIONS_MAPPING),
        (idx.accounts.as_str(), ACCOUNTS_MAPPING),
        (idx.locks.as_str(), LOCKS_MAPPING),
    ];
    for (index, mapping) in wanted {
        let result = match body(index, mapping) {
            Ok(b) => p.cluster().create_index(index, b).await,
            Err(e) => Err(e),
        };
        match result {
            Ok(true) => out(format_args!("{index}: created")),
            Ok(false) => out(format_args!("{index}: already exists")),
            Err(e) => return fail(&e),
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_mappings_parse_and_type_the_protocol_fields() {
        let t = body("t", TRANSACTIONS_MAPPING).unwrap();
        let props = &t["mappings"]["properties"];
        for f in [
            "src_acct",
            "dest_acct",
            "src_account",
            "dest_account",
            "transaction_state",
        ] {
            assert_eq!(props[f]["type"], "keyword", "{f}");
        }
        assert_eq!(props["amount"]["type"], "long");
        assert_eq!(props["modification_time"]["type"], "date");
        let a = body("a", ACCOUNTS_MAPPING).unwrap();
        let props = &a["mappings"]["properties"];
        assert_eq!(props["balance"]["type"], "long");
        assert_eq!(
            props["settled_transactions"]["properties"]["at"]["type"],
            "date"
        );
        let l = body("l", LOCKS_MAPPING).unwrap();
        assert_eq!(l["mappings"]["properties"]["expires_at"]["type"], "date");
        assert_eq!(l["mappings"]["properties"]["lock_count"]["type"], "long");
    }
}
