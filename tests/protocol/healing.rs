//! The healing verdict beside the test application (`tests/common/app/`):
//! its recovery loop stopped leaves stuck transactions that read stalled
//! once the oldest has waited three recovery windows (backdated, never
//! slept on), or not running when its heartbeats are old; one pass of the
//! loop (restarted) reads healing at once, in `check` and in the poll;
//! nothing stuck is idle, never an alarm, whatever the heartbeats say.
//! An operator's own act is never read as the application healing, even
//! before the audit index shows its record.

use crate::common::app::names::{Names, ARTICLE, JAVA};
use crate::common::app::{recovery, AppConfig, AppIndices, World};
use crate::common::{TestIndices, TestServer};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::locks::LivenessSource;
use estx::protocol::read::poll::DEFAULT_CAP;
use estx::protocol::read::verdict::Healing;
use estx::protocol::time::format_timestamp;
use estx::protocol::{Protocol, ProtocolConfig};
use serde_json::json;
use std::time::Duration;

/// The tool's recovery window.
const W: Duration = Duration::from_secs(60);

fn ago(d: Duration) -> String {
    format_timestamp(chrono::Utc::now() - chrono::Duration::from_std(d).unwrap())
}

/// The verdict `check` reads, and the one the dashboard's poll reads.
async fn verdicts(p: &Protocol) -> (Healing, Healing) {
    let check = p.check_reading().await.unwrap();
    assert_eq!(
        check.counts.recovery_stalled,
        u64::from(check.healing.is_alarm())
    );
    let poll = p.poll_snapshot(DEFAULT_CAP).await.unwrap();
    (check.healing, poll.healing)
}

/// The test application beside the tool over the same indices. The
/// application's own window is twice the tool's: what it leaves between
/// the two is stuck for the tool and not yet for it.
struct Setting {
    names: &'static Names,
    server: &'static TestServer,
    app_ix: AppIndices,
    w: World,
    config: ProtocolConfig,
}

impl Setting {
    /// The article's application.
    async fn new() -> Setting {
        Setting::named(&ARTICLE).await
    }

    /// An application writing under `names`, the tool told them by a
    /// schema map where they are not the article's.
    async fn named(names: &'static Names) -> Setting {
        let server = TestServer::shared();
        let ix = TestIndices::unique();
        let app_ix = AppIndices::of(&ix);
        let cfg = AppConfig {
            accounts: 4,
            initial_balance: 1000,
            invoices: 0,
            budget: Duration::from_secs(1),
            crash_rate: 0.0,
            lock_wait: Duration::from_millis(200),
            heartbeat_every: Duration::from_millis(100),
            heartbeat_timeout: Duration::from_secs(30),
            recovery_window: W * 2,
            recovery_every: W,
        };
        let w = World::setup(server.url(), app_ix.clone(), names, cfg).await;
        let config = ProtocolConfig {
            indices: ix.indices(),
            recovery_window: W,
            schema: if *names == ARTICLE {
                Default::default()
            } else {
                crate::application::schema_of(names)
            },
            ..ProtocolConfig::default()
        };
        Setting {
            names,
            server,
            app_ix,
            w,
            config,
        }
    }

    /// A tool's handle (one process) under `config`.
    fn tool(&self, config: ProtocolConfig) -> Protocol {
        let cluster = Cluster::connect(&ConnectOptions::new(self.server.url())).unwrap();
        Protocol::new(cluster, config)
    }
}

#[tokio::test]
async fn stopped_reads_stalled_restarted_reads_healing_idle_is_no_alarm() {
    stopped_then_restarted(&ARTICLE).await;
}

/// The same under an application's own names (the recoveries' search
/// reads only their two times, by the application's names).
#[tokio::test]
async fn under_an_applications_own_names_too() {
    stopped_then_restarted(&JAVA).await;
}

async fn stopped_then_restarted(names: &'static Names) {
    let s = Setting::named(names).await;
    let (app_ix, w) = (&s.app_ix, &s.w);
    let p = s.tool(s.config.clone());
    // The same, told where the application's heartbeats are.
    let watched = s.tool(ProtocolConfig {
        liveness: Some(LivenessSource {
            index: app_ix.heartbeats.clone(),
            instance_field: format!("{}.keyword", s.names.instance),
            time_field: s.names.heartbeat.into(),
            timeout: Duration::from_secs(30),
        }),
        ..s.config.clone()
    });
    let n = s.names;
    // The application's only instance beat 10 minutes ago: it is gone.
    let beat = json!({n.instance: "i-1", n.heartbeat: ago(Duration::from_secs(600))});
    w.cluster
        .put(&app_ix.heartbeats, "i-1", &beat)
        .await
        .unwrap();
    w.refresh().await;
    // Nothing stuck: idle, even with the application's heartbeat dead.
    for v in [verdicts(&p).await, verdicts(&watched).await] {
        assert_eq!(v, (Healing::Idle, Healing::Idle));
    }

    // The loop stopped long ago: transfers stuck in `created` since just
    // past three of the tool's windows, and one since one and a half.
    let stuck = |age: Duration| {
        json!({n.src: "acct-00", n.dest: "acct-01", n.amount: 5,
            n.state: n.state_value(crate::common::app::names::State::Created),
            n.creation_time: ago(age), n.modification_time: ago(age)})
    };
    for i in 0..3 {
        let doc = stuck(W * 3 + Duration::from_secs(5 + i));
        w.cluster
            .put(&app_ix.transactions, &format!("old-{i}"), &doc)
            .await
            .unwrap();
    }
    let young = stuck(W + W / 2);
    w.cluster
        .put(&app_ix.transactions, "young", &young)
        .await
        .unwrap();
    w.refresh().await;
    let (check, poll) = verdicts(&p).await;
    assert!(
        matches!(check, Healing::Stalled { stuck: 4, .. }),
        "{check:?}"
    );
    assert!(
        matches!(poll, Healing::Stalled { stuck: 4, .. }),
        "{poll:?}"
    );
    let (check, poll) = verdicts(&watched).await;
    assert!(
        matches!(check, Healing::NotRunning { stuck: 4, .. }),
        "{check:?}"
    );
    assert_eq!(poll.word(), "not running", "{poll:?}");

    // The loop restarted: one pass moves the old ones on (the young one
    // is not yet stuck for it). Healing at once, heartbeats or not.
    recovery::pass(w, 1).await;
    w.refresh().await;
    for (check, poll) in [verdicts(&p).await, verdicts(&watched).await] {
        for v in [check, poll] {
            assert_eq!(v.word(), "healing", "{v:?}");
            assert!(
                v.evidence(chrono::Utc::now())
                    .starts_with("3 transaction(s) left"),
                "{v:?}"
            );
        }
    }
}

/// The oldest stuck transaction leaving between two polls reads healing
/// only while no operator acted: an operator's recovery of the oldest,
/// on a transaction the recoveries' search cannot see (the application
/// writes no creation time), leaves the verdict stalled for a watcher that
/// remembers the poll before (the dashboard), whoever acted.
#[tokio::test]
async fn an_operators_act_on_the_oldest_is_not_read_as_healing() {
    use estx::protocol::intervene::{self, Choices, Intervention, Recover};
    use estx::protocol::read::verdict::{rejudge, Previous};
    use estx::protocol::trail::Interface;
    let s = Setting::new().await;
    let (app_ix, w) = (&s.app_ix, &s.w);
    let operator = s.tool(s.config.clone());
    let other = s.tool(s.config.clone());
    operator.ensure_indices().await.unwrap();
    let n = &ARTICLE;
    for i in 0..3 {
        let doc = json!({n.src: "acct-00", n.dest: "acct-01", n.amount: 5,
            n.state: n.state_value(crate::common::app::names::State::Created),
            n.modification_time: ago(W * 3 + Duration::from_secs(5 + i))});
        w.cluster
            .put(&app_ix.transactions, &format!("old-{i}"), &doc)
            .await
            .unwrap();
    }
    w.refresh().await;
    let first = operator.poll_snapshot(DEFAULT_CAP).await.unwrap();
    assert!(
        matches!(first.healing, Healing::Stalled { stuck: 3, .. }),
        "{:?}",
        first.healing
    );
    let memory = Some(Previous::after(None, &first.healing_evidence));

    // The operator recovers the oldest.
    let choices = Choices::new(Interface::Dashboard, Some("INC-7 worker died".into()));
    let done = intervene::run(&operator, Intervention::new(Recover::new("old-2"), choices))
        .await
        .unwrap();
    assert!(done.record_error.is_none(), "{done}");
    w.refresh().await;
    for p in [&operator, &other] {
        let snap = p.poll_snapshot(DEFAULT_CAP).await.unwrap();
        let e = &snap.healing_evidence;
        assert_eq!(e.stuck, Some(2));
        let v = rejudge(e, memory, snap.taken_at, W);
        assert!(
            matches!(v, Healing::Stalled { stuck: 2, .. }),
            "the operator's act read as {v:?} ({e:?})"
        );
    }
}
