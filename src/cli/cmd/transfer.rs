//! `transfer SRC DEST AMOUNT`: moves money with the full protocol, as an
//! operator's act recorded in the audit trail. Each step is printed as it
//! ends, then the verdict; with `--json`, only the outcome, at the end.

use crate::cli::act::verdict::{finish, not_started, observed};
use crate::cli::act::{recorded, start, ReasonArgs};
use crate::cli::output::out;
use crate::protocol::create::new_transaction_id;
use crate::protocol::intervene::Transfer;
use crate::protocol::{NewTransfer, Protocol};

/// `transfer SRC DEST AMOUNT`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Source account id.
    pub src: String,
    /// Destination account id.
    pub dest: String,
    /// Units to move (a positive integer).
    #[arg(value_parser = clap::value_parser!(i64).range(1..), allow_negative_numbers = true)]
    pub amount: i64,
    /// Transaction id [default: generated].
    #[arg(long)]
    pub id: Option<String>,
    /// Hold locks on both accounts for the duration of the transfer.
    #[arg(long)]
    pub locks: bool,
    /// Print the outcome as JSON (state reached, by whom, each step, verdict).
    #[arg(long)]
    pub json: bool,
    /// Why (recorded in the audit trail).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// `transfer SRC DEST AMOUNT`.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let id = a.id.clone().unwrap_or_else(new_transaction_id);
    let req = NewTransfer {
        id: Some(id.clone()),
        src: a.src.clone(),
        dest: a.dest.clone(),
        amount: a.amount,
    };
    let act = Transfer {
        transfer: req,
        locks: a.locks,
    };
    let started = match start(&p, act, false, &a.why).await {
        Ok(s) => s,
        Err(code) => return not_started(code, a.json),
    };
    let locks = if a.locks {
        ", holding locks on both accounts"
    } else {
        ""
    };
    if !a.json {
        out(format_args!(
            "transfer {id}: {} -> {}, amount {}{locks}",
            a.src, a.dest, a.amount
        ));
    }
    let index = started.index().to_string();
    let mut done = started.run(&observed(p, a.json, false)).await;
    let report = &mut done.value;
    // A new transfer was not anywhere before: no "(was created)" suffix.
    report.started_in = None;
    let code = finish(report, a.json);
    recorded(&done, &index, code)
}
