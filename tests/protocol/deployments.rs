//! Clusters shaped as real deployments are, not as `init` makes them:
//! indices auto-created by the application's first write (`text` +
//! `.keyword`), the article's verbatim mapping, a `dynamic: strict` accounts
//! index, a `dynamic: strict` transactions index from before `reverse`,
//! aliases over one and over two indices, 600 locks, a transaction
//! without a modification time. Each test asserts what the operator sees,
//! and that nothing was written when the tool refused.

use crate::common::{TestIndices, TestServer};
use chrono::{Duration as ChronoDuration, Utc};
use elasticsearch::http::Method;
use estx::cluster::{Cluster, ConnectOptions};
use estx::error::WriteRefusal;
use estx::protocol::read::verdict::{Cause, Refusal, SafeAct};
use estx::protocol::read::Target;
use estx::protocol::reverse::{ReverseOptions, ReverseVerdict};
use estx::protocol::time::format_timestamp;
use estx::protocol::{Protocol, ProtocolConfig, TxnState, Verdict};
use serde_json::{json, Value};

/// How the three indices came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `estx-tui init`'s mappings.
    Init,
    /// No mapping: created by the application's first write.
    AutoCreated,
    /// The article's mappings, verbatim (locks index auto-created).
    Article,
    /// `init`'s transactions and locks; accounts `dynamic: strict` with only
    /// the article's two fields.
    StrictAccounts,
    /// `init`'s accounts and locks; transactions `dynamic: strict` with
    /// `init`'s fields but not the reverse links (`reverses`,
    /// `reversed_by`): a deployment from before `reverse` existed.
    StrictTransactionsWithoutLinks,
    /// Each name an alias over one concrete index with `init`'s mappings.
    AliasOverOne,
    /// The transactions name an alias over two indices.
    AliasOverTwo,
}

/// The article's accounts mapping, verbatim.
pub const ARTICLE_ACCOUNTS: &str = r#"{"mappings":{"properties":{"balance":{"type":"long"},"pending_transactions":{"type":"keyword"}}}}"#;
/// The article's transactions mapping, verbatim (note `src_account`).
pub const ARTICLE_TRANSACTIONS: &str = r#"{"mappings":{"properties":{"amount":{"type":"long"},"creation_time":{"type":"date"},"modification_time":{"type":"date"},"dest_account":{"type":"keyword"},"src_account":{"type":"keyword"},"transaction_state":{"type":"keyword"}}}}"#;

/// A deployment of one shape on the shared server, with unique names.
pub struct Deployed {
    /// The names the tool is given (aliases for the alias shapes).
    pub ix: TestIndices,
    /// The tool's protocol handle.
    pub proto: Protocol,
}

fn init_body(index: &str) -> Value {
    let text = match index {
        "transactions" => include_str!("../../assets/mappings/transactions.json"),
        "accounts" => include_str!("../../assets/mappings/accounts.json"),
        _ => include_str!("../../assets/mappings/locks.json"),
    };
    serde_json::from_str(text).unwrap()
}

async fn create(cluster: &Cluster, name: &str, body: Value) {
    cluster.create_index(name, body).await.unwrap();
}

async fn alias(cluster: &Cluster, index: &str, alias: &str) {
    cluster
        .send_json(
            Method::Post,
            "/_aliases",
            json!({"actions": [{"add": {"index": index, "alias": alias}}]}),
            alias,
        )
        .await
        .unwrap();
}

impl Deployed {
    /// Creates the indices of `shape` (none for the auto-created one).
    pub async fn new(shape: Shape) -> Deployed {
        let server = TestServer::shared();
        let ix = TestIndices::unique();
        let cluster = Cluster::connect(&ConnectOptions::new(server.url())).unwrap();
        let names = [
            (&ix.transactions, "transactions"),
            (&ix.accounts, "accounts"),
            (&ix.locks, "locks"),
        ];
        match shape {
            Shape::Init => {
                for (n, k) in names {
                    create(&cluster, n, init_body(k)).await;
                }
            }
            Shape::AutoCreated => {}
            Shape::Article => {
                create(
                    &cluster,
                    &ix.transactions,
                    serde_json::from_str(ARTICLE_TRANSACTIONS).unwrap(),
                )
                .await;
                create(
                    &cluster,
                    &ix.accounts,
                    serde_json::from_str(ARTICLE_ACCOUNTS).unwrap(),
                )
                .await;
            }
            Shape::StrictAccounts => {
                create(&cluster, &ix.transactions, init_body("transactions")).await;
                create(&cluster, &ix.locks, init_body("locks")).await;
                let mut strict: Value = serde_json::from_str(ARTICLE_ACCOUNTS).unwrap();
                strict["mappings"]["dynamic"] = json!("strict");
                create(&cluster, &ix.accounts, strict).await;
            }
            Shape::StrictTransactionsWithoutLinks => {
                create(&cluster, &ix.accounts, init_body("accounts")).await;
                create(&cluster, &ix.locks, init_body("locks")).await;
                let mut strict = init_body("transactions");
                strict["mappings"]["dynamic"] = json!("strict");
                let props = strict["mappings"]["properties"].as_object_mut().unwrap();
                for link in ["reverses", "reversed_by"] {
                    props.remove(link).unwrap();
                }
                create(&cluster, &ix.transactions, strict).await;
            }
            Shape::AliasOverOne => {
                for (n, k) in names {
                    let real = format!("{n}-v1");
                    create(&cluster, &real, init_body(k)).await;
                    alias(&cluster, &real, n).await;
                }
            }
            Shape::AliasOverTwo => {
                for (n, k) in names.into_iter().skip(1) {
                    create(&cluster, n, init_body(k)).await;
                }
                for v in ["v1", "v2"] {
                    let real = format!("{}-{v}", ix.transactions);
                    create(&cluster, &real, init_body("transactions")).await;
                    alias(&cluster, &real, &ix.transactions).await;
                }
            }
        }
        let config = ProtocolConfig {
            indices: ix.indices(),
            ..ProtocolConfig::default()
        };
        Deployed {
            proto: Protocol::new(cluster, config),
            ix,
        }
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        self.proto.cluster()
    }

    /// Writes a document as the application would (plain index by id).
    pub async fn put(&self, index: &str, id: &str, doc: Value) {
        self.cluster().put(index, id, &doc).await.unwrap();
    }

    /// The application's documents: two accounts per transaction, a
    /// finished, a rolled-back, a stuck pending (source applied, 10 minutes
    /// old, with its lock) and a fresh created transaction.
    pub async fn seed_the_application(&self, txns_index: &str) {
        let ago = |m: i64| format_timestamp(Utc::now() - ChronoDuration::minutes(m));
        for (id, balance, pending) in [
            ("A", 400, json!(["stuck"])),
            ("B", 500, json!([])),
            ("C", 500, json!([])),
            ("D", 500, json!([])),
        ] {
            self.put(
                &self.ix.accounts,
                id,
                json!({"balance": balance, "pending_transactions": pending}),
            )
            .await;
        }
        for (id, state, src, dest, m) in [
            ("done", "finished", "C", "D", 300),
            ("undone", "rolled-back", "C", "D", 200),
            ("stuck", "pending", "A", "B", 10),
            ("fresh", "created", "C", "D", 0),
        ] {
            self.put(
                txns_index,
                id,
                json!({"src_acct": src, "dest_acct": dest, "amount": 100,
                    "transaction_state": state, "creation_time": ago(m + 1),
                    "modification_time": ago(m)}),
            )
            .await;
        }
        self.put(
            &self.ix.locks,
            "A",
            json!({"owner": "stuck", "process_id": "app:1", "created_at": ago(10)}),
        )
        .await;
        self.refresh().await;
    }

    /// Makes every write visible to search.
    pub async fn refresh(&self) {
        for index in [&self.ix.transactions, &self.ix.accounts, &self.ix.locks] {
            self.cluster().refresh(index).await.unwrap();
        }
    }

    /// The sources of `ids` in `index` (for "nothing was written").
    pub async fn sources(&self, index: &str, ids: &[&str]) -> Vec<Value> {
        let mut out = Vec::new();
        for id in ids {
            let d = self.cluster().get(index, id).await.unwrap();
            out.push(
                d.map(|d| json!([d.seq_no, d.source]))
                    .unwrap_or(Value::Null),
            );
        }
        out
    }
}

fn count(snap: &estx::protocol::read::poll::Snapshot, s: TxnState) -> u64 {
    snap.state_counts
        .iter()
        .find(|c| c.state.as_ref() == Some(&s))
        .map(|c| c.count)
        .unwrap_or(0)
}

/// What every deployment must show the operator the same way.
async fn the_operator_sees_the_same(d: &Deployed) {
    let snap = d.proto.poll_snapshot(500).await.unwrap();
    assert!(snap.missing_indices.is_empty(), "{snap:?}");
    assert!(!snap.read.coverage.is_partial());
    assert_eq!(
        [
            count(&snap, TxnState::Created),
            count(&snap, TxnState::Pending),
            count(&snap, TxnState::Finished),
            count(&snap, TxnState::RolledBack),
        ],
        [1, 1, 1, 1],
        "{:?}",
        snap.state_counts
    );
    assert_eq!(snap.in_flight_total, 2);
    assert_eq!(snap.read.locks_total, 1);
    assert_eq!(snap.read.pending_accounts_total, 1);
    let stuck = d.proto.stuck().await.unwrap();
    let ids: Vec<&str> = stuck.transactions.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["stuck"]);
    let rolled = d
        .proto
        .list_transactions(&["rolled-back".into()], None)
        .await
        .unwrap();
    assert_eq!(rolled.len(), 1);
    let audit = match d.proto.audit(Some(2000), false).await {
        Err(e)
            if d.proto
                .discovery()
                .await
                .unwrap()
                .transactions
                .id_problem()
                .is_some() =>
        {
            assert!(e.to_string().contains("cannot audit"), "{e}");
            return;
        }
        other => other.unwrap(),
    };
    assert!(
        audit.findings.iter().all(
            |f| !f.kind.as_str().starts_with("malformed") && f.kind.as_str() != "unknown_state"
        ),
        "{:?}",
        audit.findings
    );
}

async fn recovers(d: &Deployed) {
    let r = d.proto.recover("stuck", false).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::Finished)),
        "{:?}",
        r.verdict
    );
    let b = d.cluster().get(&d.ix.accounts, "B").await.unwrap().unwrap();
    assert_eq!(b.source["balance"], 600);
}

#[tokio::test]
async fn an_index_auto_created_by_the_first_write_polls_and_counts() {
    let d = Deployed::new(Shape::AutoCreated).await;
    d.seed_the_application(&d.ix.transactions).await;
    let disc = d.proto.discovery().await.unwrap();
    assert_eq!(
        disc.fields.state.exact.as_deref(),
        Some("transaction_state.keyword")
    );
    assert_eq!(disc.fields.owner.exact.as_deref(), Some("owner.keyword"));
    the_operator_sees_the_same(&d).await;
    recovers(&d).await;
}

#[tokio::test]
async fn the_articles_mapping_works_with_the_names_documents_write() {
    let d = Deployed::new(Shape::Article).await;
    d.seed_the_application(&d.ix.transactions).await;
    let disc = d.proto.discovery().await.unwrap();
    let src: Vec<&str> = disc.fields.src.iter().map(|f| f.query_name()).collect();
    assert_eq!(src, ["src_acct.keyword", "src_account"]);
    the_operator_sees_the_same(&d).await;
    recovers(&d).await;
}

#[tokio::test]
async fn a_strict_accounts_index_is_refused_up_front_then_upgraded() {
    let d = Deployed::new(Shape::StrictAccounts).await;
    d.seed_the_application(&d.ix.transactions).await;
    the_operator_sees_the_same(&d).await;
    // Its cause says so before anything is tried: refused by the write
    // check, with its refusal (the cause verdict, issue 30 item 2).
    let cause = |r: &estx::protocol::check::CheckReading| {
        r.stuck
            .iter()
            .find(|s| s.transaction.id == "stuck")
            .and_then(|s| s.cause.clone())
    };
    let r = d.proto.check_reading().await.unwrap();
    let refused = cause(&r);
    assert!(
        matches!(
            &refused,
            Some(Cause::Refused(Refusal::Writes(WriteRefusal::BeforeFirstWrite(p))))
                if p.iter().any(|p| p.contains("dynamic: strict"))
        ),
        "{refused:?}"
    );
    assert_eq!(refused.map(|c| c.safe_act()), Some(SafeAct::Investigate));
    let before = (
        d.sources(&d.ix.transactions, &["stuck"]).await,
        d.sources(&d.ix.accounts, &["A", "B"]).await,
    );
    let r = d.proto.recover("stuck", false).await;
    let Verdict::Failed(e) = &r.verdict else {
        panic!("{:?}", r.verdict)
    };
    let text = e.to_string();
    assert!(
        text.contains("dynamic: strict")
            && text.contains("pending_deltas")
            && !text.contains("settled_transactions")
            && text.contains("init --upgrade-mappings"),
        "{text}"
    );
    assert!(r.steps.is_empty(), "no step ran: {:?}", r.steps);
    let after = (
        d.sources(&d.ix.transactions, &["stuck"]).await,
        d.sources(&d.ix.accounts, &["A", "B"]).await,
    );
    assert_eq!(before, after, "nothing was written");

    let applied = d.proto.upgrade_mappings().await.unwrap();
    assert_eq!(applied.len(), 1, "{applied:?}");
    assert!(applied[0].contains("settled_transactions"));
    assert!(
        d.proto.upgrade_mappings().await.unwrap().is_empty(),
        "idempotent"
    );
    d.proto.rediscover().await.unwrap();
    let r = d.proto.check_reading().await.unwrap();
    assert!(
        !matches!(cause(&r), Some(Cause::Refused(_))),
        "upgraded: {:?}",
        cause(&r)
    );
    recovers(&d).await;
}

/// A strict transactions index without the reverse links: recovery and
/// rollback (which never write them) go through; `reverse` (which does) is
/// refused before any write, naming the mapping change; once
/// `init --upgrade-mappings` added them, `reverse` works.
#[tokio::test]
async fn a_strict_transactions_index_without_the_reverse_links_refuses_only_reverse() {
    let d = Deployed::new(Shape::StrictTransactionsWithoutLinks).await;
    d.seed_the_application(&d.ix.transactions).await;
    the_operator_sees_the_same(&d).await;
    recovers(&d).await;
    let r = d.proto.rollback("fresh", true).await;
    assert!(
        matches!(r.verdict, Verdict::Completed(TxnState::RolledBack)),
        "{:?}",
        r.verdict
    );

    d.refresh().await;
    let before = (
        d.sources(&d.ix.transactions, &["done", "done-reversal"])
            .await,
        d.sources(&d.ix.accounts, &["C", "D"]).await,
    );
    let r = d.proto.reverse("done", ReverseOptions::default()).await;
    let ReverseVerdict::Failed(e) = &r.verdict else {
        panic!("{:?}", r.verdict)
    };
    let text = e.to_string();
    assert!(
        text.contains("refused before the first write")
            && text.contains("dynamic: strict")
            && text.contains("reverses")
            && text.contains("reversed_by")
            && text.contains(&format!("PUT {}/_mapping", d.ix.transactions))
            && text.contains("init --upgrade-mappings"),
        "{text}"
    );
    assert!(r.steps.is_empty(), "no step ran: {:?}", r.steps);
    let after = (
        d.sources(&d.ix.transactions, &["done", "done-reversal"])
            .await,
        d.sources(&d.ix.accounts, &["C", "D"]).await,
    );
    assert_eq!(before, after, "nothing was written");

    let applied = d.proto.upgrade_mappings().await.unwrap();
    assert_eq!(applied.len(), 1, "{applied:?}");
    assert!(
        applied[0].contains("reverses") && applied[0].contains("reversed_by"),
        "{applied:?}"
    );
    let r = d.proto.reverse("done", ReverseOptions::default()).await;
    assert!(
        matches!(r.verdict, ReverseVerdict::Reversed),
        "{:?}",
        r.verdict
    );
}

#[tokio::test]
async fn aliases_over_one_index_work_and_over_two_are_refused_for_writes() {
    let one = Deployed::new(Shape::AliasOverOne).await;
    one.seed_the_application(&one.ix.transactions).await;
    let disc = one.proto.discovery().await.unwrap();
    assert!(matches!(&disc.transactions.target, Target::Alias { indices } if indices.len() == 1));
    the_operator_sees_the_same(&one).await;
    recovers(&one).await;

    let two = Deployed::new(Shape::AliasOverTwo).await;
    let first = format!("{}-v1", two.ix.transactions);
    two.seed_the_application(&first).await;
    the_operator_sees_the_same(&two).await;
    // A lock whose owner is not listed: its state is looked up by an `ids`
    // search, as a multi-get cannot read an alias over two indices.
    two.put(
        &two.ix.locks,
        "C",
        json!({"owner": "done", "process_id": "app:2", "created_at": format_timestamp(Utc::now())}),
    )
    .await;
    two.refresh().await;
    let snap = two.proto.poll_snapshot(500).await.unwrap();
    let c = snap.locks.iter().find(|l| l.info.resource == "C").unwrap();
    assert_eq!(c.owner_state, Some(TxnState::Finished));
    assert!(
        snap.read
            .warnings
            .iter()
            .any(|w| w.contains("alias over 2")),
        "{:?}",
        snap.read.warnings
    );
    let before = two.sources(&first, &["stuck"]).await;
    let err = two.proto.check_writable().await.unwrap_err().to_string();
    assert!(err.contains("alias over 2 indices"), "{err}");
    // The exact reason (the cluster's refusal, a second copy through the
    // write index) and what to do.
    for why in [
        "can't execute a single index op",
        "second copy",
        "`--transactions-index`",
    ] {
        assert!(err.contains(why), "{why}: {err}");
    }
    assert_eq!(before, two.sources(&first, &["stuck"]).await);
}

#[tokio::test]
async fn six_hundred_locks_show_with_their_total() {
    let d = Deployed::new(Shape::Init).await;
    let docs: Vec<(String, Value)> = (0..600)
        .map(|i| {
            (
                format!("R{i:03}"),
                json!({"owner": format!("t{i}"), "process_id": "w",
                    "created_at": format_timestamp(Utc::now())}),
            )
        })
        .collect();
    d.cluster().bulk_index(&d.ix.locks, &docs).await.unwrap();
    d.refresh().await;
    let snap = d.proto.poll_snapshot(500).await.unwrap();
    assert_eq!(snap.locks.len(), 500);
    assert_eq!(snap.read.locks_total, 600);
}

#[tokio::test]
async fn a_transaction_without_modification_time_is_counted_and_stuck() {
    let d = Deployed::new(Shape::Init).await;
    d.seed_the_application(&d.ix.transactions).await;
    d.put(
        &d.ix.transactions,
        "undated",
        json!({"src_acct": "C", "dest_acct": "D", "amount": 5, "transaction_state": "pending"}),
    )
    .await;
    d.refresh().await;
    let snap = d.proto.poll_snapshot(500).await.unwrap();
    assert_eq!(snap.read.undated_in_flight, 1);
    assert_eq!(
        snap.transactions[0].id, "undated",
        "undated rows come first"
    );
    let stuck = d.proto.stuck().await.unwrap();
    let ids: Vec<&str> = stuck.transactions.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["undated", "stuck"]);
}

/// An alias over two transactions indices mapped differently (one lost its
/// template and was auto-created: `transaction_state` is `text` there): the
/// shards of the odd index fail the per-state aggregation, as on a real
/// cluster, and the poll says it is partial instead of showing short counts.
/// (osmem-server answers a *sort* on such a field with "all shards failed"
/// where Elasticsearch fails only that index's shards, so the refusal of
/// the stuck list and `recover --all-stuck` is shown on a rewritten answer
/// in the unit tests of `read::coverage`, not here.)
#[tokio::test]
async fn shard_failures_make_the_poll_say_it_is_partial() {
    let d = Deployed::new(Shape::AliasOverTwo).await;
    let (v1, v2) = (
        format!("{}-v1", d.ix.transactions),
        format!("{}-v2-text", d.ix.transactions),
    );
    d.cluster()
        .create_index(
            &v2,
            json!({"mappings": {"properties": {"transaction_state": {"type": "text"},
                "modification_time": {"type": "date"}}}}),
        )
        .await
        .unwrap();
    alias(d.cluster(), &v2, &d.ix.transactions).await;
    d.seed_the_application(&v1).await;
    d.put(
        &v2,
        "elsewhere",
        json!({"src_acct": "C", "dest_acct": "D", "amount": 1, "transaction_state": "pending",
            "modification_time": format_timestamp(Utc::now() - ChronoDuration::hours(3))}),
    )
    .await;
    d.refresh().await;

    let snap = d.proto.poll_snapshot(500).await.unwrap();
    let partial = snap.read.coverage.describe().unwrap_or_default();
    assert!(
        partial.starts_with("partial: ") && partial.contains("shards failed"),
        "{partial:?}"
    );
    assert!(
        snap.read
            .warnings
            .iter()
            .any(|w| w.contains("spans indices mapping transaction_state")),
        "{:?}",
        snap.read.warnings
    );
}
