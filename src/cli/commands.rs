//! The read-only commands: `list`, `show` and `locks`. Each returns the
//! process exit code; none changes anything in the cluster.

use super::args::{ListArgs, LocksArgs, ShowArgs};
use super::output::{fail, out, print_json};
use super::show_json::detail_json;
use super::{render, show};
use crate::error::Error;
use crate::protocol::locks::lock_json;
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
    let now = p.cluster().now();
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

/// `locks`: every lock, oldest first, with staleness.
pub async fn locks(p: &Protocol, a: &LocksArgs) -> i32 {
    let views = match p.list_locks().await {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    let now = p.cluster().now();
    let rows: Vec<Value> = views.iter().map(|v| lock_json(v, now)).collect();
    if a.json {
        print_json(&Value::Array(rows));
    } else {
        for l in render::locks_table(&rows) {
            out(l);
        }
    }
    0
}
