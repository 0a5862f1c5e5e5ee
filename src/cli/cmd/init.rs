//! `init`: creates the transactions, accounts and locks indices with the
//! mappings in `assets/mappings/`, leaving existing indices alone; with
//! `--upgrade-mappings`, also adds to existing indices every shipped field
//! they lack (what the write check asks for), and nothing else.

use crate::cli::output::{fail, out};
use crate::protocol::Protocol;

/// `init`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Also add to existing indices every field of the shipped mappings
    /// they lack (idempotent; only adds, never changes a field).
    #[arg(long)]
    pub upgrade_mappings: bool,
}

/// Creates the three indices; prints `created` or `already exists` for each,
/// then each mapping change applied (or that none was needed).
pub async fn run(p: Protocol, a: &Args) -> i32 {
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
