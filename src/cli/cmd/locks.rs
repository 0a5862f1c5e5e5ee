//! The read-only commands: `list`, `show` and `locks`. Each returns the
//! process exit code; none changes anything in the cluster.

use super::args::{ListArgs, LocksArgs, ShowArgs};
use super::output::{err, fail, out, print_json};
use super::show_json::detail_json;
use super::{render, show};
use crate::error::Error;
use crate::protocol::locks::lock_json;
use crate::protocol::read::locks as locks_read;
use crate::protocol::Protocol;
use serde_json::Value;

/// `list`: see [`super::list`].
pub async fn list(p: &Protocol, a: &ListArgs) -> i32 {
    super::list::run(p, a).await
}

/// `show ID`: one transaction with its accounts, locks and previews.
pub async fn show(p: &Protocol, a: &ShowArgs) -> i32 {
    let detail = match p.transaction_detail(&a.id).await {
        Ok(Some(d)) => d,
        Ok(None) => {
            return fail(&Error::NotFound {
                kind: "transaction",
                index: p.config().indices.transactions.clone(),
                id: a.id.clone(),
            })
        }
        Err(e) => return fail(&e),
    };
    let now = p.now().await;
    let c = p.config();
    if a.json {
        print_json(&detail_json(
            &detail,
            now,
            c.recovery_window,
            c.investigate_after,
        ));
    } else {
        for l in show::detail_lines(&detail, now, c.recovery_window, c.investigate_after) {
            out(l);
        }
    }
    0
}

/// `locks`: every lock, oldest first, with staleness. A partial view (some
/// shards failed) is refused unless `--allow-partial`, like `list`'s; when
/// fewer locks were read than the index holds, says how many of how many.
pub async fn locks(p: &Protocol, a: &LocksArgs) -> i32 {
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
    let now = p.now().await;
    let rows: Vec<Value> = listing.locks.iter().map(|v| lock_json(v, now)).collect();
    if a.json {
        print_json(&Value::Array(rows));
    } else {
        for l in render::locks_table(&rows) {
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
