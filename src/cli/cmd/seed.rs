//! `seed`: the demo's mess (accounts, transactions stuck in every state,
//! stale locks, a dangling entry) written into the cluster at `--url`.

use crate::cli::output::{err, fail, out};
use crate::cli::values;
use crate::demo::seed::MIN_ACCOUNTS;
use crate::demo::{self, DemoError, SeedOptions, SeedReport};
use crate::protocol::Protocol;

/// `seed`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// How many accounts, with what balance.
    #[command(flatten)]
    pub size: Size,
    /// Seed even though the indices already hold documents.
    #[arg(long)]
    pub force: bool,
}

/// The accounts `seed` and `demo` create: one definition of the two flags.
#[derive(Debug, Clone, clap::Args)]
pub struct Size {
    /// Accounts to create (at least 4).
    #[arg(long, default_value_t = 8, value_parser = values::count_at_least(MIN_ACCOUNTS))]
    pub accounts: usize,
    /// Starting balance of each account (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(i64).range(1..))]
    pub balance: i64,
}

impl Size {
    /// The seeding options for these accounts.
    pub fn options(&self, force: bool) -> SeedOptions {
        SeedOptions {
            accounts: self.accounts,
            balance: self.balance,
            force,
        }
    }
}

/// Exit code for demo failures that are not the cluster's (server not installed).
pub(super) const EXIT_SETUP: i32 = crate::cli::exit::SETUP;

/// Prints a failure of the demo's set-up; returns its exit code.
pub(super) fn demo_failure(e: &DemoError) -> i32 {
    match e {
        DemoError::Cluster(inner) => fail(inner),
        other => {
            err(other);
            EXIT_SETUP
        }
    }
}

/// Prints what was seeded.
pub(super) fn print_report(report: &SeedReport) {
    out(format_args!(
        "seeded {} accounts ({} units in all) and {} transactions, {} locks",
        report.accounts.len(),
        report.total_balance,
        report.transactions.len(),
        report.locks.len()
    ));
    for (id, state) in &report.transactions {
        out(format_args!("  {state:<12} {id}"));
    }
    for note in &report.notes {
        out(format_args!("  note: {note}"));
    }
}

/// `seed`: refuses indices that already hold documents unless `--force`.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let opts = a.size.options(a.force);
    match demo::seed(&p, &opts).await {
        Ok(report) => {
            print_report(&report);
            0
        }
        Err(e) => demo_failure(&e),
    }
}
