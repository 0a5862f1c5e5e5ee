//! `locks`: every lock with its owner and whether it is stale, as a table
//! or JSON; changes nothing in the cluster.

use crate::cli::output::locks::locks_table;
use crate::cli::output::{err, fail, out, print_json};
use crate::protocol::locks::lock_json;
use crate::protocol::locks::read as locks_read;
use crate::protocol::Protocol;
use serde_json::Value;

/// `locks`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// List even when some shards failed to answer (locks may be missing).
    #[arg(long)]
    pub allow_partial: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `locks`: every lock, oldest first, with staleness. A partial view (some
/// shards failed) is refused unless `--allow-partial`, like `list`'s; when
/// fewer locks were read than the index holds, says how many of how many.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let listing = match p.list_locks_with(!a.allow_partial).await {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    if let Some(partial) = listing.summary.coverage.describe() {
        if a.allow_partial {
            err(format_args!("{partial}: locks may be missing"));
        } else {
            err(format_args!(
                "refused: {partial}; the listing stopped before the partial page. Pass --allow-partial to see it anyway"
            ));
            return 1;
        }
    }
    let absent = p.discovery().await.is_ok_and(|d| d.locks.is_absent());
    if absent && listing.locks.is_empty() && !a.json {
        out(no_locks_index(&p.config().indices.locks));
        return 0;
    }
    let now = p.now().await;
    if a.json {
        let rows: Vec<Value> = listing.locks.iter().map(|v| lock_json(v, now)).collect();
        print_json(&Value::Array(rows));
    } else {
        for l in locks_table(&listing.locks, now) {
            out(l);
        }
    }
    match locks_read::count_text(&listing) {
        Some(count) if a.json => err(count),
        Some(count) => out(count),
        None => {}
    }
    0
}

/// What `locks` and `release-lock` say on a deployment without a locks
/// index ([`crate::protocol::read::Target::Absent`]).
pub fn no_locks_index(index: &str) -> String {
    format!(
        "no locks index: `{index}` does not exist and no --locks-index was named, so this \
         deployment takes no locks"
    )
}
