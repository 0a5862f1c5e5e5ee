//! `init`: creates the transactions, accounts and locks indices with the
//! mappings in `assets/mappings/`, leaving existing indices alone; with
//! `--upgrade-mappings`, also adds to existing indices every shipped field
//! they lack (what the write check asks for), and nothing else.

use super::output::{fail, out};
use super::subcommands::InitArgs;
use crate::protocol::Protocol;

/// Creates the three indices; prints `created` or `already exists` for each,
/// then each mapping change applied (or that none was needed).
pub async fn run(p: &Protocol, a: &InitArgs) -> i32 {
    match p.ensure_indices().await {
        Ok(done) => {
            for (index, created) in done {
                if created {
                    out(format_args!("{index}: created"));
                } else {
                    out(format_args!("{index}: already exists"));
                }
            }
        }
        Err(e) => return fail(&e),
    }
    if !a.upgrade_mappings {
        return 0;
    }
    match p.upgrade_mappings().await {
        Ok(applied) if applied.is_empty() => {
            out("mappings: nothing missing");
            0
        }
        Ok(applied) => {
            for r in applied {
                out(format_args!("applied: {r}"));
            }
            0
        }
        Err(e) => fail(&e),
    }
}
