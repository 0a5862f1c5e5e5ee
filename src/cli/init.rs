//! `init`: creates the transactions, accounts and locks indices with the
//! mappings in `assets/mappings/`, leaving existing indices alone.

use super::output::{fail, out};
use crate::protocol::Protocol;

/// Creates the three indices; prints `created` or `already exists` for each.
pub async fn run(p: &Protocol) -> i32 {
    match p.ensure_indices().await {
        Ok(done) => {
            for (index, created) in done {
                if created {
                    out(format_args!("{index}: created"));
                } else {
                    out(format_args!("{index}: already exists"));
                }
            }
            0
        }
        Err(e) => fail(&e),
    }
}
