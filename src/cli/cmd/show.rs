//! `show ID`: one transaction with its accounts, locks and previews, as
//! text for people: the transaction, its two accounts, its locks, where the
//! protocol stopped, and what recover and rollback would do from here (the
//! same previews the JSON output of [`json`] carries).

pub mod json;

use crate::cli::output::locks::lock_mark;
use crate::cli::output::{cell, err, fail, out, print_json, Table};
use crate::error::Error;
use crate::protocol::intervene::{EffectKind, TxnPlan};
use crate::protocol::locks::lock_json;
use crate::protocol::read::{account_progress, row_notes};
use crate::protocol::rows::TransactionRow;
use crate::protocol::time::human_age;
use crate::protocol::views::TransactionDetail;
use crate::protocol::{Procedure, Protocol};
use chrono::{DateTime, Utc};
use json::{detail_json, Shown};
use std::time::Duration;

/// `show ID`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Transaction id.
    pub id: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `show ID`: one transaction with its accounts, locks and previews.
pub async fn run(p: Protocol, a: &Args) -> i32 {
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
    // What the mappings, blocks and source already tell of any write (no
    // update is sent by a read command; `--dry-run` asks the rest).
    let refused = p.mappings_refuse_writes().await;
    let c = p.config();
    let windows = (c.recovery_window, c.investigate_after);
    if a.json {
        // The row carries its cause and `in_job` as `list --json`'s does,
        // judged on the same reading (what cannot be read: said, left out).
        let (notes, unread) = row_notes(&p, now).await;
        for u in unread {
            err(u);
        }
        if let Some(why) = notes.others_unavailable() {
            err(why);
        }
        let cause = notes.cause(&detail.txn);
        let beside = notes.beside(&detail.txn.id, cause.as_ref());
        let shown = Shown {
            now,
            windows,
            refused: refused.as_ref(),
            beside,
            runbooks: &c.runbooks,
        };
        print_json(&detail_json(&detail, &shown));
    } else {
        for l in detail_lines(&detail, now, windows, refused.as_ref()) {
            out(l);
        }
    }
    0
}

/// The `show` text of one transaction; `refused`: why any write would be
/// refused before the first, whatever the documents
/// ([`Protocol::mappings_refuse_writes`]).
pub fn detail_lines(
    d: &TransactionDetail,
    now: DateTime<Utc>,
    (recovery_window, investigate_after): (Duration, Duration),
    refused: Option<&Error>,
) -> Vec<String> {
    let row = TransactionRow::with_windows(&d.txn, now, recovery_window, investigate_after);
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let mut lines = Vec::new();
    let mut field = |name: &str, value: String| lines.push(format!("{name:<12} {value}"));
    field("transaction", d.txn.id.clone());
    let state = d
        .txn
        .state
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| "-".into());
    let flag = if row.needs_investigation {
        format!(
            "   !! needs investigation: unchanged for over {}",
            human_age(investigate_after.as_secs() as i64)
        )
    } else if row.stuck {
        format!(
            "   ! stuck: unchanged for over {}",
            human_age(recovery_window.as_secs() as i64)
        )
    } else {
        String::new()
    };
    field("state", format!("{state}{flag}"));
    field("source", dash(&row.src_acct));
    field("destination", dash(&row.dest_acct));
    field("amount", dash(&row.amount.map(|a| a.to_string())));
    field("created", dash(&row.creation_time));
    let modified = match row.age_seconds {
        Some(a) => format!("{} ({} ago)", dash(&row.modification_time), human_age(a)),
        None => dash(&row.modification_time),
    };
    field("modified", modified);
    if let Some(by) = &d.txn.reversed_by {
        field("reversed by", format!("{by} (its compensating transfer)"));
    }
    if let Some(of) = &d.txn.reverses {
        field(
            "reverses",
            format!("{of} (this is its compensating transfer)"),
        );
    }
    if !row.problems.is_empty() {
        field("problems", row.problems.join("; "));
    }

    lines.extend(account_lines(d));
    lines.extend(lock_lines(d, now));
    lines.push(String::new());
    let next = match (&d.next_step, &d.txn.state) {
        (Some(s), _) => s.label().to_string(),
        (None, Some(s)) if s.is_terminal() => format!("none: the transaction is {s}"),
        (None, _) if d.recover.refusal.is_some() => {
            "none: recovery would refuse (see below)".into()
        }
        (None, _) => "none: every step is already done".into(),
    };
    lines.push(format!("{:<12} {next}", "next step"));
    lines.push(String::new());
    lines.extend(preview_lines("recover", d, Procedure::Recover, refused));
    lines.push(String::new());
    lines.extend(preview_lines("rollback", d, Procedure::Rollback, refused));
    lines
}

/// The accounts part of `show`: both accounts as a table.
fn account_lines(d: &TransactionDetail) -> Vec<String> {
    let mut lines = Vec::new();
    lines.push(String::new());
    lines.push("accounts".into());
    if d.accounts.is_empty() {
        lines.push("  (the transaction names no account)".into());
    } else {
        let mut t = Table::new([
            "ROLE", "ID", "BALANCE", "PENDING", "HAS THIS", "STANDS", "PROBLEMS",
        ]);
        for (i, a) in d.accounts.iter().enumerate() {
            let role = if Some(&a.id) == d.txn.src.as_ref() && i == 0 {
                "source"
            } else {
                "destination"
            };
            let (balance, pending) = match &a.state {
                Some(s) => (
                    s.balance.to_string(),
                    if s.pending.is_empty() {
                        "-".to_string()
                    } else {
                        s.pending.join(",")
                    },
                ),
                None => ("-".into(), "-".into()),
            };
            t.row([
                role.to_string(),
                a.id.clone(),
                balance,
                pending,
                if a.carries { "yes" } else { "no" }.to_string(),
                match &a.state {
                    Some(_) => {
                        account_progress(d.txn.state.as_ref(), a.carries, a.settled).to_string()
                    }
                    None => "-".into(),
                },
                a.problems.to_string(),
            ]);
        }
        lines.extend(t.render().into_iter().map(|l| format!("  {l}")));
    }

    lines
}

/// The locks part of `show`: the locks the transaction holds.
fn lock_lines(d: &TransactionDetail, now: DateTime<Utc>) -> Vec<String> {
    let mut lines = Vec::new();
    lines.push(String::new());
    lines.push("locks".into());
    if d.locks.is_empty() {
        lines.push("  (none held by this transaction)".into());
    } else {
        let mut t = Table::new(["", "RESOURCE", "HOLDER", "AGE", "STATUS"]);
        for l in &d.locks {
            let j = lock_json(l, now);
            t.row([
                lock_mark(&l.staleness).to_string(),
                cell(&j["resource"]),
                cell(&j["holder"]),
                j["age_seconds"]
                    .as_i64()
                    .map(human_age)
                    .unwrap_or_else(|| "-".into()),
                cell(&j["staleness"]),
            ]);
        }
        lines.extend(t.render().into_iter().map(|l| format!("  {l}")));
    }

    lines
}

/// What one procedure would do, as text: its plan on these documents
/// ([`TxnPlan::of_detail`]: every write the dialog confirms and the run
/// makes, the lock releases that end it included).
fn preview_lines(
    name: &str,
    d: &TransactionDetail,
    procedure: Procedure,
    refused: Option<&Error>,
) -> Vec<String> {
    let plan = TxnPlan::of_detail(procedure, d.clone());
    let p = d.preview(procedure);
    let mut lines = vec![format!("{name} would:")];
    for (i, (s, e)) in plan.steps_in_full().enumerate() {
        let what = &e.effect;
        let verb = if s.writes() { "write" } else { "noop" };
        lines.push(format!(
            "  {:>2}. {:<40} {verb}: {what}",
            i + 1,
            s.to_string()
        ));
    }
    if let Some(r) = &p.refusal {
        lines.push(format!("  refuse: {r}"));
    } else if let Some(e) = refused.filter(|_| !plan.steps.is_empty()) {
        lines.push(format!("  refuse before the first write: {e}"));
    } else if plan.steps.is_empty() {
        lines.push("  nothing: the transaction is already terminal".into());
    } else if !plan.runs_a_procedure() {
        lines.push(format!(
            "  no balance change; the transaction is {}",
            p.ends_in
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_else(|| "-".into())
        ));
    } else {
        let ends = p
            .ends_in
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| "-".into());
        lines.push(format!(
            "  balance change: source {:+}, destination {:+}; ends {ends}",
            p.balance_change.0, p.balance_change.1
        ));
        if let Some(w) = plan
            .in_words
            .as_ref()
            .filter(|w| w.kind != EffectKind::None)
        {
            lines.push(format!("  balance: {w}"));
        }
    }
    lines
}
