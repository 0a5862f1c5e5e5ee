//! The demo library against a live server: an `OsmemServer` started by the
//! demo module itself, or the cluster at `ESTX_TEST_URL` (with unique index
//! names). Checks the seeded mess, the refusal to seed over data, and that a
//! workload on top of the mess drains to a consistent state.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use estx::cluster::{Cluster, ConnectOptions};
use estx::demo::{self, DemoError, OsmemServer, RecoveryScope, SeedOptions, WorkloadOptions};
use estx::protocol::account::AccountState;
use estx::protocol::rows::TransactionRow;
use estx::protocol::{Indices, Protocol, ProtocolConfig, TxnState};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A cluster and a protocol over fresh indices on it.
struct World {
    _server: Option<OsmemServer>,
    proto: Protocol,
    url: String,
    config: ProtocolConfig,
}

fn world(adjust: impl FnOnce(&mut ProtocolConfig)) -> World {
    let (server, url) = match std::env::var("ESTX_TEST_URL") {
        Ok(u) if !u.trim().is_empty() => (None, u.trim().trim_end_matches('/').to_string()),
        _ => {
            let s = OsmemServer::start_reporting(&mut |step| eprintln!("{step}"))
                .unwrap_or_else(|e| panic!("{e}"));
            let url = s.url().to_string();
            (Some(s), url)
        }
    };
    let prefix = format!("demo{:08x}-", rand::random::<u32>());
    let mut config = ProtocolConfig {
        indices: Indices {
            transactions: format!("{prefix}transactions"),
            accounts: format!("{prefix}accounts"),
            locks: format!("{prefix}locks"),
            audit: format!("{prefix}audit"),
            acks: format!("{prefix}acks"),
            locks_named: true,
        },
        ..ProtocolConfig::default()
    };
    adjust(&mut config);
    let cluster = Cluster::connect(&ConnectOptions::new(url.clone())).unwrap();
    World {
        _server: server,
        proto: Protocol::new(cluster, config.clone()),
        url,
        config,
    }
}

impl World {
    /// A protocol over the same indices with other settings.
    fn protocol(&self, adjust: impl FnOnce(&mut ProtocolConfig)) -> Protocol {
        let mut config = self.config.clone();
        adjust(&mut config);
        Protocol::new(
            Cluster::connect(&ConnectOptions::new(self.url.clone())).unwrap(),
            config,
        )
    }

    async fn count(&self, index: &str) -> u64 {
        self.proto.cluster().refresh(index).await.unwrap();
        self.proto
            .cluster()
            .count(index, json!({"match_all": {}}))
            .await
            .unwrap()
    }

    async fn counts(&self) -> [u64; 3] {
        let ix = &self.config.indices;
        [
            self.count(&ix.transactions).await,
            self.count(&ix.accounts).await,
            self.count(&ix.locks).await,
        ]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn seed_leaves_every_kind_of_mess_and_refuses_to_seed_over_data() {
    let w = world(|_| {});
    let report = demo::seed(&w.proto, &SeedOptions::default()).await.unwrap();
    eprintln!("{}", report.notes.join("\n"));
    assert_eq!(report.accounts.len(), 8);
    assert_eq!(report.total_balance, 8000);

    let txns = w.proto.list_transactions(&[], None).await.unwrap();
    assert_eq!(txns.len(), report.transactions.len(), "{:#?}", report.notes);
    let states: BTreeSet<TxnState> = txns.iter().filter_map(|t| t.state.clone()).collect();
    for s in [
        TxnState::Created,
        TxnState::Pending,
        TxnState::Committed,
        TxnState::Terminating,
        TxnState::Finished,
        TxnState::RolledBack,
    ] {
        assert!(
            states.contains(&s),
            "no {s} transaction: {:#?}",
            report.notes
        );
    }
    let now = Utc::now();
    let old = txns
        .iter()
        .filter(|t| {
            TransactionRow::with_windows(
                t,
                now,
                w.config.recovery_window,
                w.config.investigate_after,
            )
            .needs_investigation
        })
        .count();
    assert!(
        old >= 3,
        "only {old} transactions need investigation: {:#?}",
        report.notes
    );
    let stuck = w.proto.stuck_transactions().await.unwrap();
    assert!(
        stuck.len() >= 10,
        "{} stuck: {:#?}",
        stuck.len(),
        report.notes
    );

    let locks = w.proto.list_locks().await.unwrap();
    assert_eq!(locks.len(), report.locks.len());
    assert!(
        locks.iter().filter(|l| l.staleness.is_stale()).count() >= 2,
        "{locks:#?}"
    );

    let audit = w
        .proto
        .audit(Some(report.total_balance), false)
        .await
        .unwrap();
    let kinds: Vec<&str> = audit.findings.iter().map(|f| f.kind.as_str()).collect();
    assert!(kinds.contains(&"dangling_pending"), "{audit:#?}");
    assert!(kinds.contains(&"stale_lock"), "{audit:#?}");
    assert!(
        kinds.contains(&"total_mismatch"),
        "the late apply breaks conservation: {audit:#?}"
    );

    // Seeding again is refused and changes nothing.
    let before = w.counts().await;
    let err = demo::seed(&w.proto, &SeedOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, DemoError::NotEmpty { .. }), "{err}");
    assert!(err.to_string().contains("already holds"), "{err}");
    assert_eq!(w.counts().await, before);

    // With force it adds a new batch.
    let again = demo::seed(
        &w.proto,
        &SeedOptions {
            force: true,
            ..SeedOptions::default()
        },
    )
    .await
    .unwrap();
    let after = w.counts().await;
    assert_eq!(after[0], before[0] + again.transactions.len() as u64);
    assert_eq!(after[1], before[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workload_on_the_mess_drains_to_a_consistent_state() {
    // A short recovery window so the workload's recovery loop gets to work,
    // and a short lock wait so transfers meeting a seeded lock give up fast.
    let w = world(|c| {
        c.recovery_window = Duration::from_secs(1);
        c.lock_wait = Duration::from_millis(300);
    });
    let opts = SeedOptions::default();
    let seeded = demo::seed(&w.proto, &opts).await.unwrap();
    let seeded_ids: BTreeSet<String> = seeded
        .transactions
        .iter()
        .map(|(id, _)| id.clone())
        .collect();

    let load = demo::spawn(
        w.proto.clone(),
        seeded.accounts.clone(),
        WorkloadOptions {
            workers: 2,
            crash_rate: 0.3,
            pause: Duration::from_millis(10),
            recovery_interval: Duration::from_millis(200),
            recovery: RecoveryScope::OwnCrashes,
        },
    );
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let s = load.stats();
        if s.transfers >= 20 && s.crashed >= 2 && s.recovered >= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "workload too slow: {s:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stats = load.stats();
    load.stop().await;

    // The seeded mess was left alone by a recovery loop scoped to its own crashes.
    let still: Vec<String> = w
        .proto
        .stuck_transactions()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    for (id, state) in &seeded.transactions {
        if !state.is_terminal() {
            assert!(
                still.contains(id),
                "seeded {id} ({state}) was recovered by the workload"
            );
        }
    }

    // Drain: everything stuck, with no window.
    let drain = w.protocol(|c| c.recovery_window = Duration::ZERO);
    let ix = &w.config.indices;
    for round in 0.. {
        drain.cluster().refresh(&ix.transactions).await.unwrap();
        if drain.stuck_transactions().await.unwrap().is_empty() {
            break;
        }
        assert!(round < 10, "still stuck after {round} rounds");
        drain.recover_all_stuck(4).await.unwrap().locks.unwrap();
    }
    let txns = drain.list_transactions(&[], None).await.unwrap();
    assert!(txns.len() as u64 >= stats.transfers + seeded_ids.len() as u64);
    for t in &txns {
        assert!(
            t.state.as_ref().is_some_and(TxnState::is_terminal),
            "{} ends {:?}",
            t.id,
            t.state
        );
    }

    // The seeded late apply is the only thing that breaks conservation.
    drain.cluster().refresh(&ix.accounts).await.unwrap();
    let repaired = drain.audit(Some(seeded.total_balance), true).await.unwrap();
    assert_eq!(repaired.repairs.len(), 1, "{repaired:#?}");
    drain.cluster().refresh(&ix.accounts).await.unwrap();
    let audit = drain
        .audit(Some(seeded.total_balance), false)
        .await
        .unwrap();
    assert!(
        audit
            .findings
            .iter()
            .all(|f| f.kind.as_str() != "dangling_pending" && f.kind.as_str() != "total_mismatch"),
        "{audit:#?}"
    );
    let docs = drain
        .cluster()
        .mget(&ix.accounts, &seeded.accounts)
        .await
        .unwrap();
    let mut total = 0;
    for (id, doc) in seeded.accounts.iter().zip(docs) {
        let state = AccountState::from_source(&doc.unwrap().source).unwrap();
        assert!(
            state.pending.is_empty(),
            "{id} still carries {:?}",
            state.pending
        );
        total += state.balance;
    }
    assert_eq!(total, opts.balance * opts.accounts as i64);
}

#[test]
fn server_starts_and_stops() {
    if std::env::var("ESTX_TEST_URL").is_ok_and(|u| !u.trim().is_empty()) {
        return; // testing against an external cluster; osmem-server may be absent
    }
    let server = OsmemServer::start_reporting(&mut |step| eprintln!("{step}"))
        .unwrap_or_else(|e| panic!("{e}"));
    let url = url::Url::parse(server.url()).unwrap();
    let addr = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    assert!(std::net::TcpStream::connect(&addr).is_ok());
    let log = server.log_path().map(|p| p.to_path_buf());
    server.stop();
    assert!(
        std::net::TcpStream::connect(&addr).is_err(),
        "still listening after stop"
    );
    assert!(
        log.is_none_or(|p| !p.exists()),
        "log not removed after a clean stop"
    );
}
