//! The proof a record's receipts give (issue 31, receipts; `audit
//! --receipts`): a pure check over audit records that every balance write
//! they keep adds up, that each transaction moved no money once it ended,
//! and that each account's writes chain from one to the next.
//!
//! Per record and transaction:
//! - each write's `after` is its `before` plus the change its step says it
//!   made (`applied -5`, `undone +5`);
//! - the writes imply one amount: an apply takes it from the source and
//!   gives it to the destination, an undo gives it back (`-amount` on the
//!   source, `+amount` on the destination, the opposite for an undo), so a
//!   transaction applied on both sides moved nothing in total;
//! - no account is applied twice without an undo between; once the record
//!   took the transaction to `rolled-back`, every apply it made was undone
//!   by it (an undo alone reverses an apply made before the record, of the
//!   amount its other writes imply); once it took it to `committed` or
//!   `finished`, it undid nothing.
//!
//! Per account, over every record read: the writes in version order
//! (primary term, then the `_seq_no` each landed at) chain where nobody
//! else can have written between them: a write conditional on the version
//! another landed at starts from the balance that one wrote, and the steps
//! folded in one write (a batched run's) follow each other, in the order
//! their balances chain (a bulk record lists its transactions by id, not
//! in the order the write folded them). Two writes of
//! different records cannot land at one version, and a write lands after
//! the version it was conditional on. A write whose answer was lost (its
//! landing version unknown) is checked alone.
//!
//! A record with balance writes and no receipts (written before receipts
//! existed) is counted apart, not as a mismatch.

use super::record::{Record, TrailStep};
use crate::error::Result;
use crate::protocol::steps::Step;
use crate::protocol::transaction::TxnState;
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// What is wrong with a receipt, or with the writes of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptProblem {
    /// A balance write with no receipt in a record that keeps receipts.
    Missing,
    /// The step's detail says no balance change (`applied -5`).
    NoChange(String),
    /// `after` is not `before` plus the step's change.
    Arithmetic {
        /// The balance before.
        before: i64,
        /// The balance after.
        after: i64,
        /// The change the step says it made.
        delta: i64,
    },
    /// This write implies another amount than the transaction's other
    /// writes: the source and destination did not move the same money.
    Amounts {
        /// The amount the earlier writes imply.
        expected: i64,
        /// The amount this one implies.
        found: i64,
    },
    /// Applied again without an undo between.
    AppliedTwice,
    /// The record rolled the transaction back and left this apply of its
    /// own standing.
    NotUndone,
    /// The record committed the transaction and undid an apply.
    UndoneAfterCommit,
    /// The write did not land after the version it was conditional on.
    Version {
        /// The `_seq_no` it was conditional on.
        on: i64,
        /// The `_seq_no` it landed at.
        at: i64,
    },
    /// Another record's write landed at the same version of the account.
    SameVersion {
        /// That record.
        other: String,
    },
    /// The write starts from another balance than the one the write
    /// before it on the account left.
    Chain {
        /// The record of the write before.
        previous: String,
        /// The balance that write left.
        left: i64,
        /// The balance this write started from.
        before: i64,
    },
}

impl ReceiptProblem {
    /// Its machine-readable kind (`audit --receipts --json`).
    pub fn kind(&self) -> &'static str {
        match self {
            ReceiptProblem::Missing => "missing",
            ReceiptProblem::NoChange(_) => "no_change",
            ReceiptProblem::Arithmetic { .. } => "arithmetic",
            ReceiptProblem::Amounts { .. } => "amounts",
            ReceiptProblem::AppliedTwice => "applied_twice",
            ReceiptProblem::NotUndone => "not_undone",
            ReceiptProblem::UndoneAfterCommit => "undone_after_commit",
            ReceiptProblem::Version { .. } => "version",
            ReceiptProblem::SameVersion { .. } => "same_version",
            ReceiptProblem::Chain { .. } => "chain",
        }
    }
}

impl fmt::Display for ReceiptProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReceiptProblem::Missing => f.write_str("a balance write without its receipt"),
            ReceiptProblem::NoChange(d) => write!(f, "the step says no balance change (`{d}`)"),
            ReceiptProblem::Arithmetic {
                before,
                after,
                delta,
            } => write!(f, "balance {before} -> {after} is not a change of {delta:+}"),
            ReceiptProblem::Amounts { expected, found } => write!(
                f,
                "moves {found} where the transaction's other writes move {expected}"
            ),
            ReceiptProblem::AppliedTwice => f.write_str("applied twice"),
            ReceiptProblem::NotUndone => f.write_str("rolled back with this apply not undone"),
            ReceiptProblem::UndoneAfterCommit => f.write_str("undone although committed"),
            ReceiptProblem::Version { on, at } => {
                write!(f, "landed at _seq_no {at}, not after {on} it was written on")
            }
            ReceiptProblem::SameVersion { other } => {
                write!(f, "landed at the version a write of record {other} landed at")
            }
            ReceiptProblem::Chain {
                previous,
                left,
                before,
            } => write!(
                f,
                "starts from balance {before}, but the write before it (record {previous}) left {left}"
            ),
        }
    }
}

/// One thing that does not verify, named by record, transaction and account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The record's id.
    pub record: String,
    /// The transaction.
    pub txn: String,
    /// The account written.
    pub account: String,
    /// What is wrong.
    pub problem: ReceiptProblem,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record {}, transaction {}, account {}: {}",
            self.record, self.txn, self.account, self.problem
        )
    }
}

/// What [`verify`] found over a set of records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    /// Records read.
    pub records: usize,
    /// Records whose receipts all verify (a record that wrote no balance
    /// has nothing to prove, and verifies).
    pub verified: usize,
    /// Records with balance writes and no receipts (written before
    /// receipts were kept).
    pub no_receipts: usize,
    /// Receipts checked.
    pub writes: usize,
    /// What does not verify.
    pub mismatches: Vec<Mismatch>,
}

impl Verification {
    /// Whether everything read verifies.
    pub fn ok(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// Which side of its transaction a step writes, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Apply,
    Undo,
}

/// A balance-writing step: its kind, and whether on the source.
fn balance_step(label: &str) -> Option<(Kind, bool)> {
    [
        (Step::ApplySource, Kind::Apply, true),
        (Step::ApplyDestination, Kind::Apply, false),
        (Step::UndoSource, Kind::Undo, true),
        (Step::UndoDestination, Kind::Undo, false),
    ]
    .into_iter()
    .find(|(s, ..)| s.label() == label)
    .map(|(_, k, src)| (k, src))
}

/// The balance change an `updated` step's detail says it made
/// (`Effect::Applied`/`Undone` as displayed): `applied -5`, `undone +5`.
fn change_of(detail: &str) -> Option<i64> {
    let n = detail
        .strip_prefix("applied ")
        .or_else(|| detail.strip_prefix("undone "))?;
    n.parse().ok()
}

/// Whether `s` wrote a balance (an apply or undo that changed it; a fence
/// is an undo that says `never applied`).
fn wrote_balance(s: &TrailStep) -> Option<(Kind, bool)> {
    let kind = balance_step(&s.label)?;
    (s.result == "updated" && !s.detail.starts_with("never applied")).then_some(kind)
}

fn account_of(target: &str) -> &str {
    target.split_once('/').map_or(target, |(_, id)| id)
}

/// One receipt where the chain check needs it.
struct Link<'a> {
    record: &'a str,
    /// The record's place in the input and the step's place in it.
    order: (usize, usize),
    txn: &'a str,
    before: i64,
    after: i64,
    term: i64,
    on: i64,
    at: i64,
}

/// Verifies the receipts of `records` (see the module's notes).
pub fn verify(records: &[Record]) -> Verification {
    verify_steps(
        records
            .iter()
            .map(|r| (r.record_id.as_str(), r.steps.as_slice())),
    )
}

/// [`verify`] over each record's id and steps (what a test that runs
/// procedures without a trail has: their reports' steps).
pub fn verify_steps<'a>(
    records: impl IntoIterator<Item = (&'a str, &'a [TrailStep])>,
) -> Verification {
    let mut v = Verification::default();
    let mut links: BTreeMap<&str, Vec<Link<'_>>> = BTreeMap::new();
    for (ri, (id, steps)) in records.into_iter().enumerate() {
        v.records += 1;
        let writes: Vec<(usize, &TrailStep)> = steps
            .iter()
            .enumerate()
            .filter(|(_, s)| wrote_balance(s).is_some())
            .collect();
        if !writes.is_empty() && writes.iter().all(|(_, s)| s.receipt.is_none()) {
            v.no_receipts += 1;
            continue;
        }
        let found = v.mismatches.len();
        check_record(id, steps, &mut v);
        for (si, s) in writes {
            let Some(rc) = s.receipt else { continue };
            v.writes += 1;
            if let Some(at) = rc.at {
                links.entry(account_of(&s.target)).or_default().push(Link {
                    record: id,
                    order: (ri, si),
                    txn: &s.txn,
                    before: rc.before,
                    after: rc.after,
                    term: rc.term,
                    on: rc.on,
                    at,
                });
            }
        }
        if v.mismatches.len() == found {
            v.verified += 1;
        }
    }
    let before_chains = v.mismatches.len();
    for (account, mut links) in links {
        links.sort_by_key(|l| (l.term, l.at, l.order));
        chain_folded(&mut links);
        for pair in links.windows(2) {
            if let Some(problem) = chain(&pair[0], &pair[1]) {
                v.mismatches.push(Mismatch {
                    record: pair[1].record.to_string(),
                    txn: pair[1].txn.to_string(),
                    account: account.to_string(),
                    problem,
                });
            }
        }
    }
    // A record found wrong only by the chain no longer counts as verified.
    let mut wrong: Vec<&str> = v.mismatches[before_chains..]
        .iter()
        .map(|m| m.record.as_str())
        .collect();
    wrong.sort_unstable();
    wrong.dedup();
    let already: Vec<&str> = v.mismatches[..before_chains]
        .iter()
        .map(|m| m.record.as_str())
        .collect();
    v.verified -= wrong.iter().filter(|r| !already.contains(r)).count();
    v
}

/// Reads every record started at or after `since` (every record without
/// it), from the audit index or the file trail, and verifies their
/// receipts: `audit --receipts`.
pub async fn verify_since(p: &Protocol, since: Option<DateTime<Utc>>) -> Result<Verification> {
    let records = super::records_since(p, since.unwrap_or(DateTime::UNIX_EPOCH)).await?;
    Ok(verify(&records))
}

/// Puts each run of writes folded into one (one record's, written on one
/// version and landed at one: a batched run's) in the order their balances
/// chain, from the one whose balance before no other of them left. A
/// record lists a bulk run's transactions by id, not in the order the
/// write folded them. What does not chain keeps its place, for [`chain`]
/// to name.
fn chain_folded<'a>(links: &mut [Link<'a>]) {
    let key = |l: &Link<'a>| -> (&'a str, i64, i64, i64) { (l.record, l.term, l.on, l.at) };
    let mut start = 0;
    while start < links.len() {
        let k = key(&links[start]);
        let len = links[start..].iter().take_while(|l| key(l) == k).count();
        order_by_chain(&mut links[start..start + len]);
        start += len;
    }
}

/// [`chain_folded`] over one run of folded writes.
fn order_by_chain(group: &mut [Link<'_>]) {
    if group.len() < 2 {
        return;
    }
    let mut left: HashMap<i64, usize> = HashMap::new();
    for l in group.iter() {
        *left.entry(l.after).or_default() += 1;
    }
    let first = group.iter().position(|l| {
        let own = usize::from(l.after == l.before);
        left.get(&l.before).copied().unwrap_or(0) <= own
    });
    if let Some(first) = first {
        group[..=first].rotate_right(1);
    }
    for k in 1..group.len() {
        let want = group[k - 1].after;
        if let Some(next) = (k..group.len()).find(|&i| group[i].before == want) {
            group[k..=next].rotate_right(1);
        }
    }
}

/// What is wrong between write `a` and the next write `b` on one account.
fn chain(a: &Link<'_>, b: &Link<'_>) -> Option<ReceiptProblem> {
    let folded = (a.term, a.on, a.at) == (b.term, b.on, b.at);
    if (a.term, a.at) == (b.term, b.at) && (!folded || a.record != b.record) {
        return Some(ReceiptProblem::SameVersion {
            other: a.record.to_string(),
        });
    }
    let follows = folded || (b.term == a.term && b.on == a.at);
    (follows && b.before != a.after).then(|| ReceiptProblem::Chain {
        previous: a.record.to_string(),
        left: a.after,
        before: b.before,
    })
}

/// The checks within one record (see the module's notes).
fn check_record(id: &str, all: &[TrailStep], v: &mut Verification) {
    // Each transaction's steps in record order, the transactions in the
    // order they first appear (one pass: a bulk record holds thousands).
    let mut txns: Vec<(&str, Vec<&TrailStep>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for s in all {
        let i = *at.entry(&s.txn).or_insert_with(|| {
            txns.push((&s.txn, Vec::new()));
            txns.len() - 1
        });
        txns[i].1.push(s);
    }
    for (txn, steps) in txns {
        let mut amount: Option<i64> = None;
        let mut applied: HashMap<&str, bool> = HashMap::new();
        let mut undid = None;
        let mut push = |account: &str, problem| {
            v.mismatches.push(Mismatch {
                record: id.to_string(),
                txn: txn.to_string(),
                account: account.to_string(),
                problem,
            })
        };
        for s in &steps {
            let Some((kind, source)) = wrote_balance(s) else {
                continue;
            };
            let account = account_of(&s.target);
            let Some(rc) = s.receipt else {
                push(account, ReceiptProblem::Missing);
                continue;
            };
            if let Some(at) = rc.at.filter(|at| *at <= rc.on) {
                push(account, ReceiptProblem::Version { on: rc.on, at });
            }
            let Some(delta) = change_of(&s.detail) else {
                push(account, ReceiptProblem::NoChange(s.detail.clone()));
                continue;
            };
            if rc.before.checked_add(delta) != Some(rc.after) {
                push(
                    account,
                    ReceiptProblem::Arithmetic {
                        before: rc.before,
                        after: rc.after,
                        delta,
                    },
                );
            }
            let implied = match (kind, source) {
                (Kind::Apply, true) | (Kind::Undo, false) => delta.checked_neg(),
                (Kind::Apply, false) | (Kind::Undo, true) => Some(delta),
            };
            match (amount, implied) {
                (None, Some(found)) => amount = Some(found),
                (Some(expected), Some(found)) if expected == found => {}
                (Some(expected), found) => push(
                    account,
                    ReceiptProblem::Amounts {
                        expected,
                        found: found.unwrap_or(i64::MIN),
                    },
                ),
                (None, None) => {}
            }
            let carried = applied.entry(account).or_default();
            match kind {
                Kind::Apply if *carried => push(account, ReceiptProblem::AppliedTwice),
                Kind::Apply => *carried = true,
                Kind::Undo => {
                    *carried = false;
                    undid = Some(account);
                }
            }
        }
        let ended = steps
            .iter()
            .rev()
            .find_map(|s| s.wrote_state.as_deref())
            .map(TxnState::parse);
        match ended {
            Some(TxnState::RolledBack) => {
                let mut left: Vec<&str> = applied
                    .iter()
                    .filter(|(_, carried)| **carried)
                    .map(|(a, _)| *a)
                    .collect();
                left.sort_unstable();
                for account in left {
                    push(account, ReceiptProblem::NotUndone);
                }
            }
            Some(TxnState::Committed | TxnState::Finished) => {
                if let Some(account) = undid {
                    push(account, ReceiptProblem::UndoneAfterCommit);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::receipt::Receipt;
    use crate::protocol::trail::{ActionKind, Interface, Operator, RecordStatus};

    fn record(id: &str, steps: Vec<TrailStep>) -> Record {
        let op = Operator::os("op", "h");
        Record {
            status: RecordStatus::Finished,
            steps,
            ..Record::new(id, ActionKind::Recover, Interface::Cli, op, Utc::now())
        }
    }

    fn state(txn: &str, step: Step, to: &str) -> TrailStep {
        TrailStep {
            txn: txn.into(),
            label: step.label().into(),
            target: format!("tx/{txn}"),
            result: "updated".into(),
            detail: format!("state x -> {to}"),
            wrote_state: Some(to.into()),
            receipt: None,
        }
    }

    /// A balance write of `txn` by `step` on `acct`, `before -> after`,
    /// conditional on `on`, landed at `at`.
    fn write(txn: &str, step: Step, acct: &str, b: i64, a: i64, on: i64, at: i64) -> TrailStep {
        let word = if matches!(step, Step::ApplySource | Step::ApplyDestination) {
            "applied"
        } else {
            "undone"
        };
        TrailStep {
            txn: txn.into(),
            label: step.label().into(),
            target: format!("acc/{acct}"),
            result: "updated".into(),
            detail: format!("{word} {:+}", a - b),
            wrote_state: None,
            receipt: Some(Receipt::new(b, a, (on, 1), Some((at, 1)))),
        }
    }

    fn recovered(id: &str, txn: &str) -> Record {
        record(
            id,
            vec![
                state(txn, Step::Begin, "pending"),
                write(txn, Step::ApplySource, "a", 100, 95, 1, 2),
                write(txn, Step::ApplyDestination, "b", 0, 5, 1, 3),
                state(txn, Step::Commit, "committed"),
            ],
        )
    }

    #[test]
    fn a_recovery_and_a_rollback_chained_on_its_accounts_verify() {
        let rolled = record(
            "r2",
            vec![
                state("t2", Step::Terminate, "terminating"),
                // Conditional on the version r1's apply left: chained.
                write("t2", Step::UndoSource, "a", 95, 100, 2, 7),
                state("t2", Step::RolledBack, "rolled-back"),
            ],
        );
        let v = verify(&[recovered("r1", "t1"), rolled]);
        assert_eq!(v.mismatches, vec![], "{v:?}");
        assert_eq!((v.records, v.verified, v.writes), (2, 2, 3));
    }

    #[test]
    fn an_edited_balance_is_named_by_record_transaction_and_account() {
        let mut r = recovered("r1", "t1");
        if let Some(rc) = r.steps[2].receipt.as_mut() {
            rc.after = 50;
        }
        let v = verify(&[r]);
        assert!(!v.ok());
        assert_eq!(v.verified, 0);
        let m = &v.mismatches[0];
        assert_eq!(
            (m.record.as_str(), m.txn.as_str(), m.account.as_str()),
            ("r1", "t1", "b")
        );
        assert_eq!(m.problem.kind(), "arithmetic");
    }

    #[test]
    fn sides_that_move_different_amounts_do_not_conserve() {
        let mut r = recovered("r1", "t1");
        r.steps[2] = write("t1", Step::ApplyDestination, "b", 0, 7, 1, 3);
        let v = verify(&[r]);
        assert_eq!(
            v.mismatches[0].problem,
            ReceiptProblem::Amounts {
                expected: 5,
                found: 7
            }
        );
    }

    #[test]
    fn a_rollback_that_leaves_its_own_apply_does_not_conserve() {
        let r = record(
            "r1",
            vec![
                write("t1", Step::ApplySource, "a", 100, 95, 1, 2),
                state("t1", Step::RolledBack, "rolled-back"),
            ],
        );
        let v = verify(&[r]);
        assert_eq!(v.mismatches[0].problem, ReceiptProblem::NotUndone);
    }

    #[test]
    fn a_write_that_does_not_start_where_the_last_one_left_breaks_the_chain() {
        let rolled = record("r2", vec![write("t2", Step::UndoSource, "a", 90, 95, 2, 7)]);
        let v = verify(&[recovered("r1", "t1"), rolled]);
        assert_eq!(v.verified, 1);
        let m = &v.mismatches[0];
        assert_eq!((m.record.as_str(), m.account.as_str()), ("r2", "a"));
        assert_eq!(
            m.problem,
            ReceiptProblem::Chain {
                previous: "r1".into(),
                left: 95,
                before: 90
            }
        );
    }

    #[test]
    fn another_writer_between_two_writes_breaks_no_chain() {
        // Conditional on version 5, not on 2 where r1's apply landed: the
        // application wrote in between.
        let r2 = record("r2", vec![write("t2", Step::UndoSource, "a", 40, 45, 5, 7)]);
        assert!(verify(&[recovered("r1", "t1"), r2]).ok());
    }

    #[test]
    fn folded_writes_chain_in_record_order_and_two_records_cannot_share_a_version() {
        let folded = record(
            "r1",
            vec![
                write("t1", Step::ApplySource, "a", 100, 95, 1, 2),
                write("t2", Step::UndoSource, "a", 95, 105, 1, 2),
            ],
        );
        assert!(verify(std::slice::from_ref(&folded)).ok());
        let twin = record("r2", vec![write("t3", Step::UndoSource, "a", 0, 5, 1, 2)]);
        let v = verify(&[folded, twin]);
        assert_eq!(v.mismatches[0].problem.kind(), "same_version");
    }

    /// A batched run folds several transactions' writes on one account
    /// into one write, in the order it met them; its record lists the
    /// transactions by id (`BulkDone`'s reports), so the folded writes can
    /// come in another order than the one they chain in (seen in the
    /// batched chaos test: `w0-5` 1002 -> 1037 listed before `w1-5`
    /// 992 -> 1002, both on 91, landed at 97).
    #[test]
    fn folded_writes_listed_out_of_their_order_still_chain() {
        let r = record(
            "r1",
            vec![
                write("t2", Step::ApplyDestination, "a", 105, 110, 1, 2),
                write("t1", Step::ApplyDestination, "a", 100, 105, 1, 2),
            ],
        );
        let v = verify(&[r]);
        assert_eq!(v.mismatches, vec![], "{v:?}");
        // Out of order and not chaining either way: still caught.
        let broken = record(
            "r1",
            vec![
                write("t2", Step::ApplyDestination, "a", 106, 110, 1, 2),
                write("t1", Step::ApplyDestination, "a", 100, 105, 1, 2),
            ],
        );
        let v = verify(&[broken]);
        assert_eq!(v.mismatches[0].problem.kind(), "chain", "{v:?}");
    }

    #[test]
    fn a_record_without_receipts_is_counted_apart() {
        let mut r = recovered("r1", "t1");
        for s in &mut r.steps {
            s.receipt = None;
        }
        let v = verify(&[r, record("r2", vec![state("t2", Step::Finish, "finished")])]);
        assert!(v.ok());
        assert_eq!((v.no_receipts, v.verified, v.writes), (1, 1, 0));
    }
}
