//! `estx-tui` CLI tests: init and transfer.

use super::*;

#[test]
fn init_creates_the_indices_and_is_idempotent() {
    let w = World::bare();
    let first = w.run(&["init"]);
    first.code(0);
    for index in [&w.ix.transactions, &w.ix.accounts, &w.ix.locks, &w.ix.audit] {
        first.stdout_has(&format!("{index}: created"));
        let (status, body) = common::http("HEAD", &w.url(index, ""), None);
        assert_eq!(status, 200, "{index} after init: {body}");
    }
    let second = w.run(&["init"]);
    second.code(0);
    for index in [&w.ix.transactions, &w.ix.accounts, &w.ix.locks, &w.ix.audit] {
        second.stdout_has(&format!("{index}: already exists"));
    }
    assert!(!second.stdout.contains("created"), "{second}");
}

#[test]
fn transfer_runs_the_seven_core_steps() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let out = w.run(&["transfer", "A", "B", "100", "--id", "t1"]);
    out.code(0).stdout_has("t1").stdout_has("finished");
    let steps: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("core "))
        .collect();
    assert_eq!(steps.len(), 7, "{out}");
    for (i, line) in steps.iter().enumerate() {
        assert!(
            line.trim_start().starts_with(&format!("core {}:", i + 1)),
            "{out}"
        );
        assert!(line.contains("updated"), "{out}");
    }
    assert!(out.stderr.is_empty(), "{out}");
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
    assert!(w.pending("A").is_empty() && w.pending("B").is_empty());
    assert_eq!(w.state("t1"), "finished");
    // Logs go to --log-file, never to the terminal.
    let log = std::fs::read_to_string(&w.g.log).unwrap_or_default();
    assert!(!log.is_empty(), "nothing logged to {}", w.g.log.display());

    // A generated id works as well.
    let out = w.run(&["transfer", "B", "A", "50"]);
    out.code(0).stdout_has("completed: transaction is finished");
    assert_eq!((w.balance("A"), w.balance("B")), (450, 550));
}

#[test]
fn invalid_transfers_are_refused_without_writing() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);

    // Same account: the library refuses (Error::Invalid), exit 1 with why.
    let out = w.run(&["transfer", "A", "A", "5", "--id", "same"]);
    out.code(1).stderr_has("both `A`");
    assert!(w.source(&w.ix.transactions, "same").is_none());

    // Unknown account: exit 1 naming it.
    let out = w.run(&["transfer", "A", "nope", "5", "--id", "nope1"]);
    out.code(1).stderr_has("`nope`").stderr_has("not found");
    assert!(w.source(&w.ix.transactions, "nope1").is_none());

    // Non-positive amounts are usage errors (clap's range check).
    for amount in ["0", "-5"] {
        let out = w.run(&["transfer", "A", "B", amount, "--id", "zero"]);
        out.code(2).stderr_has("AMOUNT");
        assert!(w.source(&w.ix.transactions, "zero").is_none());
    }
    let out = w.run(&["transfer", "A", "B", "lots"]);
    out.code(2);
    assert_eq!((w.balance("A"), w.balance("B")), (500, 500));
}

#[test]
fn transfer_with_an_existing_id_changes_nothing() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.run(&["transfer", "A", "B", "100", "--id", "X"]).code(0);
    let before = (w.acct("A"), w.acct("B"), w.txn("X"));
    let again = w.run(&["transfer", "A", "B", "100", "--id", "X"]);
    again.code(1).stderr_has("already exists");
    assert!(!again.stdout.contains("core 1"), "{again}");
    assert_eq!((w.acct("A"), w.acct("B"), w.txn("X")), before);
    assert_eq!((w.balance("A"), w.balance("B")), (400, 600));
}

#[test]
fn transfer_with_locks_takes_and_releases_both() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let out = w.run(&["transfer", "A", "B", "25", "--locks", "--id", "L"]);
    out.code(0)
        .stdout_has("holding locks on both accounts")
        .stdout_has("completed: transaction is finished");
    let count = |what: &str| {
        out.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(what))
            .count()
    };
    assert_eq!(
        (count("acquire lock"), count("core "), count("release lock")),
        (2, 7, 2),
        "{out}"
    );
    assert_eq!((w.balance("A"), w.balance("B")), (475, 525));
    assert!(w.source(&w.ix.locks, "A").is_none() && w.source(&w.ix.locks, "B").is_none());
    w.refresh();
    w.run(&["locks"]).code(0).stdout_has("no locks held");
}
