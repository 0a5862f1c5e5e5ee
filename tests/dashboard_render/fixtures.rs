//! The hand-built world every rendering test draws: a fixed clock, dashboard
//! settings, a `Snapshot` with transactions in every state (stuck, half-applied,
//! unknown, malformed), accounts and locks, an `App` holding it, and helpers to
//! select a transaction and open a confirmation dialog on it.

use chrono::{DateTime, Duration as Age, TimeZone, Utc};
use estx::dashboard::app::{App, Dialog, LogEntry, LogLevel, Settings};
use estx::dashboard::load::Load;
use estx::protocol::account::AccountState;
use estx::protocol::decide::Fencing;
use estx::protocol::executor::StepOutcome;
use estx::protocol::integer::NotExact;
use estx::protocol::intervene::{AnyAct, Recover, ReleaseLocksOf, Rollback};
use estx::protocol::locks::LockView;
use estx::protocol::locks::{Heartbeat, LockInfo, Owner};
use estx::protocol::problem::{Problem, Problems};
use estx::protocol::read::poll::{AccountEntry, Snapshot, StateCount};
use estx::protocol::steps::ProcedureRefusal;
use estx::protocol::time::format_timestamp;
use estx::protocol::views::{preview, AccountView, TransactionDetail};
use estx::protocol::{Procedure, Transaction, TxnState};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

pub(crate) fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

pub(crate) fn ago(secs: i64) -> DateTime<Utc> {
    now() - Age::seconds(secs)
}

pub(crate) fn ts(secs_ago: i64) -> Value {
    json!(format_timestamp(ago(secs_ago)))
}

pub(crate) fn settings() -> Settings {
    Settings {
        url: "http://es.example:9200".into(),
        recovery_window: Duration::from_secs(120),
        investigate_after: Duration::from_secs(3600),
        read_only: false,
        transactions_index: "transactions".into(),
        profile: None,
        mark: None,
        runbooks: Default::default(),
        others_unavailable: None,
    }
}

pub(crate) fn txn(
    id: &str,
    state: Option<&str>,
    src: &str,
    dest: &str,
    amount: Value,
    modified_ago: i64,
) -> Transaction {
    let mut doc = json!({
        "src_acct": src, "dest_acct": dest, "amount": amount,
        "creation_time": ts(modified_ago + 60), "modification_time": ts(modified_ago),
    });
    if let Some(s) = state {
        doc["transaction_state"] = json!(s);
    }
    Transaction::from_source(id, doc.as_object().unwrap())
}

pub(crate) fn account(balance: i64, pending: &[&str]) -> AccountEntry {
    let mut s = AccountState::new(balance);
    s.pending = pending.iter().map(|p| p.to_string()).collect();
    AccountEntry::Ok(s)
}

pub(crate) fn lock(resource: &str, doc: Value, owner_state: Option<TxnState>) -> LockView {
    let info = LockInfo::from_source(resource, doc.as_object().unwrap());
    // The owner was touched just now: stale only when terminal (or the lease ran out).
    let owner_txn = owner_state
        .as_ref()
        .map(|s| txn("owner", Some(s.as_str()), "A", "B", json!(1), 3));
    let owner = Owner::from_lookup(owner_txn.as_ref());
    let config = estx::protocol::ProtocolConfig::default();
    let staleness = info.staleness(owner, Heartbeat::NotConfigured, ago(3), &config);
    let holder = info.staleness(Owner::Missing, Heartbeat::NotConfigured, ago(3), &config);
    LockView {
        info,
        owner_state,
        staleness,
        holder,
    }
}

pub(crate) fn count(state: Option<TxnState>, count: u64, oldest_ago: Option<i64>) -> StateCount {
    StateCount {
        state,
        count,
        oldest: oldest_ago.map(ago),
    }
}

/// Six transactions in flight (one of each non-terminal state, some stuck,
/// one half-applied), one in an unknown state, one malformed; accounts
/// with pending entries, settled records, a malformed and a missing one;
/// a stale, two live and one ownerless lock.
pub(crate) fn snapshot() -> Snapshot {
    let transactions = vec![
        txn(
            "t-pend-1",
            Some("pending"),
            "alice",
            "bob",
            json!(100),
            7200,
        ),
        txn(
            "t-commit-1",
            Some("committed"),
            "carol",
            "dave",
            json!(250),
            300,
        ),
        txn(
            "t-created-2",
            Some("created"),
            "carol",
            "dave",
            json!(75),
            240,
        ),
        txn(
            "t-term-1",
            Some("terminating"),
            "erin",
            "frank",
            json!(30),
            90,
        ),
        txn(
            "t-created-1",
            Some("created"),
            "alice",
            "bob",
            json!(50),
            30,
        ),
        txn("t-pend-2", Some("pending"), "erin", "frank", json!(20), 10),
        txn("t-weird", Some("paused"), "alice", "carol", json!(10), 4200),
        txn("t-broken", None, "grace", "heidi", json!("lots"), 1200),
    ];
    let mut frank = AccountState::new(1000);
    frank.settled.push(estx::protocol::account::Settled {
        txn: "t-term-1".into(),
        outcome: estx::protocol::account::SettledOutcome::Undone,
        at: ago(60),
    });
    let accounts: BTreeMap<String, AccountEntry> = [
        ("alice", account(400, &["t-pend-1"])),
        ("bob", account(500, &[])),
        ("carol", account(750, &["t-commit-1"])),
        ("dave", account(1250, &["t-commit-1"])),
        ("erin", account(950, &["t-term-1", "t-pend-2"])),
        ("frank", AccountEntry::Ok(frank)),
        (
            "grace",
            AccountEntry::Malformed(Problems::one(Problem::NotAnInteger {
                field: "balance".into(),
                value: "\"lots\"".into(),
                why: NotExact::NotANumber,
            })),
        ),
        ("heidi", AccountEntry::Missing),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let locks = vec![
        lock(
            "legacy-7",
            json!({"process_id": "batch-9", "created_at": ts(3 * 86_400)}),
            None,
        ),
        lock(
            "alice",
            json!({"owner": "t-pend-1", "process_id": "worker-7:4242", "created_at": ts(7200), "expires_at": ts(7080)}),
            Some(TxnState::Pending),
        ),
        lock(
            "bob",
            json!({"owner": "t-pend-1", "process_id": "worker-2:99", "created_at": ts(100), "expires_at": ts(-20)}),
            Some(TxnState::Pending),
        ),
        lock(
            "erin",
            json!({"owner": "t-term-1", "process_id": "worker-3:17", "created_at": ts(90), "expires_at": ts(-30)}),
            Some(TxnState::Terminating),
        ),
    ];
    Snapshot {
        taken_at: ago(3),
        duration: Duration::from_millis(42),
        requests: 3,
        health: Some("yellow".into()),
        state_counts: vec![
            count(Some(TxnState::Created), 2, Some(240)),
            count(Some(TxnState::Pending), 5, Some(7200)),
            count(Some(TxnState::Committed), 1, Some(300)),
            count(Some(TxnState::Terminating), 1, Some(90)),
            count(Some(TxnState::Finished), 1204, Some(30 * 86_400)),
            count(Some(TxnState::RolledBack), 12, Some(20 * 86_400)),
            count(None, 1, Some(1200)),
            count(Some(TxnState::Unknown("paused".into())), 1, Some(4200)),
        ],
        table: estx::protocol::read::TablePage {
            filter: Default::default(),
            listed: transactions.len(),
            total: transactions.len() as u64,
            page_size: 500,
        },
        transactions,
        in_flight_total: 9,
        accounts,
        locks,
        ..Snapshot::default()
    }
}

pub(crate) fn log_entry(secs_ago: i64, level: LogLevel, text: &str) -> LogEntry {
    LogEntry {
        at: ago(secs_ago),
        level,
        text: text.into(),
    }
}

pub(crate) fn app() -> App {
    let mut app = App::new(settings(), Duration::from_secs(5), now());
    app.terminal.size = (100, 30);
    app.snapshot = Some(snapshot());
    app.log.extend([
        log_entry(120, LogLevel::Info, "dashboard started"),
        log_entry(
            61,
            LogLevel::Updated,
            "t-old: core 7: committed -> finished: updated (state committed -> finished)",
        ),
        log_entry(
            60,
            LogLevel::Noop,
            "t-old: core 5: remove from source: no-op (not in pending_transactions)",
        ),
        log_entry(
            30,
            LogLevel::Error,
            "poll failed: cluster unreachable: connection refused (retrying with backoff)",
        ),
        log_entry(25, LogLevel::Info, "cluster reachable again"),
    ]);
    app.refresh_view();
    // As the first poll does: the oldest row is selected.
    app.select_index(0);
    app
}

pub(crate) fn select(app: &mut App, id: &str) {
    app.select(id.into());
    assert_eq!(
        app.selected_transaction().map(|t| t.id.as_str()),
        Some(id),
        "{id} not visible"
    );
}

/// What `Protocol::transaction_detail` would return for `id`, built from the snapshot.
pub(crate) fn detail(app: &App, id: &str) -> TransactionDetail {
    let snap = app.snapshot.as_ref().unwrap();
    let txn = snap
        .transactions
        .iter()
        .find(|t| t.id == id)
        .unwrap()
        .clone();
    let accounts: Vec<AccountView> = [&txn.src, &txn.dest]
        .into_iter()
        .flatten()
        .map(|a| match &snap.accounts[a] {
            AccountEntry::Ok(s) => AccountView {
                id: a.clone(),
                state: Some(s.clone()),
                carries: s.carries(id),
                settled: s.settled_of(id).map(|r| r.outcome),
                problems: Problems::default(),
            },
            AccountEntry::Malformed(p) => AccountView {
                id: a.clone(),
                state: None,
                carries: false,
                settled: None,
                problems: p.clone(),
            },
            AccountEntry::Missing => AccountView {
                id: a.clone(),
                state: None,
                carries: false,
                settled: None,
                problems: Problems::one(Problem::AccountMissing),
            },
        })
        .collect();
    let locks = snap
        .locks
        .iter()
        .filter(|l| l.info.owner.as_deref() == Some(id))
        .cloned()
        .collect();
    let st = |k: usize| accounts.get(k).and_then(|a: &AccountView| a.state.as_ref());
    let recover = preview(Procedure::Recover, &txn, st(0), st(1), Fencing::On);
    let rollback = preview(Procedure::Rollback, &txn, st(0), st(1), Fencing::On);
    let next_step = recover
        .steps
        .iter()
        .find(|s| matches!(s.outcome, StepOutcome::Updated(_)))
        .map(|s| s.step);
    TransactionDetail {
        txn,
        accounts,
        locks,
        next_step,
        recover,
        rollback,
    }
}

/// What `Protocol::check_actionable` says of an unforced run: refused
/// within the recovery window, in the protocol's own words.
pub(crate) fn unforced_refusal(
    app: &App,
    d: &TransactionDetail,
) -> Option<estx::protocol::intervene::ActRefusal> {
    let window = app.settings.recovery_window;
    let age = now() - d.txn.modification_time?;
    (d.txn.state.as_ref().is_some_and(|s| s.is_in_flight())
        && age < chrono::TimeDelta::from_std(window).ok()?)
    .then_some(estx::protocol::intervene::ActRefusal::Procedure(
        ProcedureRefusal::Recent { age, window },
    ))
}

/// The acts R, F and L make of a transaction, as the dashboard builds them.
pub(crate) fn rollback(id: &str) -> AnyAct {
    Rollback::new(id).into()
}

/// F's act.
pub(crate) fn recover(id: &str) -> AnyAct {
    Recover::new(id).into()
}

/// L's act on a transaction.
pub(crate) fn release_locks_of(id: &str) -> AnyAct {
    ReleaseLocksOf {
        txn: id.into(),
        allow_partial: true,
    }
    .into()
}

/// The dialog of the act `act` makes of transaction `id`, its preview
/// `loaded` (on the fixture's documents) or not yet.
pub(crate) fn open_dialog(app: &mut App, act: fn(&str) -> AnyAct, id: &str, loaded: bool) {
    select(app, id);
    let act = act(id);
    let procedure = match &act {
        AnyAct::Rollback(_) => Some(Procedure::Rollback),
        AnyAct::Recover(_) => Some(Procedure::Recover),
        _ => None,
    };
    let preview = match loaded {
        false => Load::Loading,
        true => Load::Loaded({
            let d = detail(app, id);
            let refusal = procedure.and_then(|_| unforced_refusal(app, &d));
            plan_on(procedure, d, refusal)
        }),
    };
    app.overlays.open_dialog(Dialog {
        preview,
        ..Dialog::new(act)
    });
}

/// An unfinished bulk recovery of 300 transactions started `minutes`
/// before the clock by `user`; `beat`: seconds since its last heartbeat
/// (every 10 s), none for an older version's record.
pub(crate) fn job(
    id: &str,
    minutes: i64,
    user: &str,
    beat: Option<i64>,
) -> estx::protocol::trail::Record {
    use estx::protocol::trail::{ActionKind, Interface, Operator, Record};
    let op = Operator::cluster(user, "bastion");
    let started = now() - Age::minutes(minutes);
    Record {
        transactions: (0..300).map(|i| format!("t-{i}")).collect(),
        targets: vec!["--all-stuck".into()],
        reason: Some("INC-5 outage".into()),
        bulk: true,
        alive_at: beat.map(|s| now() - Age::seconds(s)),
        alive_every_ms: beat.map(|_| 10_000),
        tool_version: "0".into(),
        profile: Some("prod-eu".into()),
        production: true,
        ..Record::new(id, ActionKind::Recover, Interface::Cli, op, started)
    }
}

/// The plan a dialog receives for `procedure` on `d` (`None`: the release
/// of its locks), as the protocol's preview makes it.
pub(crate) fn plan_on(
    procedure: Option<estx::protocol::Procedure>,
    d: estx::protocol::views::TransactionDetail,
    refusal: Option<estx::protocol::intervene::ActRefusal>,
) -> estx::protocol::intervene::AnyPlan {
    use estx::protocol::intervene::{AnyPlan, LocksOfActPlan, LocksOfPlan, ProcedurePlan, TxnPlan};
    use estx::protocol::Procedure;
    match procedure {
        Some(p) => {
            let plan = ProcedurePlan::Judged(Box::new(TxnPlan::on_transaction(p, d, refusal)));
            match p {
                Procedure::Rollback => AnyPlan::Rollback(plan),
                Procedure::Recover => AnyPlan::Recover(plan),
            }
        }
        None => AnyPlan::ReleaseLocksOf(LocksOfActPlan::Judged(LocksOfPlan {
            detail: Box::new(d),
        })),
    }
}

/// The one bulk act's plan of `procedure` over `items` (each one's own
/// plan on its documents), as a bulk dialog receives it.
pub(crate) fn bulk_of(
    procedure: estx::protocol::Procedure,
    items: Vec<estx::protocol::intervene::TxnPlan>,
) -> estx::dashboard::event::Marked {
    use estx::protocol::intervene::{Selected, SelectionPlan};
    estx::dashboard::event::Marked::Bulk(SelectionPlan {
        procedure,
        targets: vec![],
        selected: Selected {
            transactions: vec![],
            left_out: vec![],
        },
        sweeps: false,
        items,
        sweep: vec![],
        locks_absent: false,
        versions: Default::default(),
    })
}
