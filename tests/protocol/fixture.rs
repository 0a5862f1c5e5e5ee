//! A fresh set of indices on the shared test server, a `Protocol` over them,
//! and helpers to seed and inspect documents.

use crate::common::world::Kit;
use crate::common::{TestIndices, TestServer};
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::account::AccountState;
use estx::protocol::{Protocol, ProtocolConfig, Transaction, TxnState};
use serde_json::{Map, Value};

/// One test's world: unique indices and a protocol handle.
pub struct Fx {
    /// The indices of this test.
    pub ix: TestIndices,
    /// Protocol over the server directly.
    pub proto: Protocol,
    /// The server URL.
    pub url: String,
    config: ProtocolConfig,
}

/// The mappings `estx-tui init` creates, by index.
pub fn mappings(ix: &TestIndices) -> [(String, Value); 3] {
    let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap();
    [
        (
            ix.transactions.clone(),
            parse(include_str!("../../assets/mappings/transactions.json")),
        ),
        (
            ix.accounts.clone(),
            parse(include_str!("../../assets/mappings/accounts.json")),
        ),
        (
            ix.locks.clone(),
            parse(include_str!("../../assets/mappings/locks.json")),
        ),
    ]
}

impl Fx {
    /// A fresh world with the default protocol settings.
    pub async fn new() -> Fx {
        Fx::with(|_| {}).await
    }

    /// A fresh world with adjusted settings.
    pub async fn with(adjust: impl FnOnce(&mut ProtocolConfig)) -> Fx {
        Fx::with_mappings(adjust, |_| {}).await
    }

    /// A fresh world with adjusted settings and `init`'s mappings changed
    /// by `remap` (transactions, accounts, locks: as an application mapped them).
    pub async fn with_mappings(
        adjust: impl FnOnce(&mut ProtocolConfig),
        remap: impl FnOnce(&mut [(String, Value); 3]),
    ) -> Fx {
        let server = TestServer::shared();
        let ix = TestIndices::unique();
        let mut config = ProtocolConfig {
            indices: ix.indices(),
            ..ProtocolConfig::default()
        };
        adjust(&mut config);
        let cluster = Cluster::connect(&ConnectOptions::new(server.url())).unwrap();
        let mut bodies = mappings(&ix);
        remap(&mut bodies);
        for (name, body) in bodies {
            cluster.create_index(&name, body).await.unwrap();
        }
        let proto = Protocol::new(cluster, config.clone());
        Fx {
            ix,
            proto,
            url: server.url().to_string(),
            config,
        }
    }

    /// A protocol handle on the same indices through another URL (a proxy).
    pub fn proto_via(&self, url: &str) -> Protocol {
        let mut opts = ConnectOptions::new(url);
        opts.timeout = std::time::Duration::from_secs(5);
        Protocol::new(Cluster::connect(&opts).unwrap(), self.config.clone())
    }

    /// The world-building kit over this world's indices.
    pub fn kit(&self) -> Kit<'_> {
        Kit::new(&self.proto)
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        self.proto.cluster()
    }

    /// Writes an account with `balance` and no pending transactions.
    pub async fn account(&self, id: &str, balance: i64) {
        self.kit().account(id, balance).await;
    }

    /// Writes a raw document into an index.
    pub async fn put(&self, index: &str, id: &str, doc: Value) {
        self.cluster().put(index, id, &doc).await.unwrap();
    }

    /// Writes a raw transaction document as an application would have.
    pub async fn put_txn(&self, id: &str, doc: Value) {
        self.put(&self.ix.transactions, id, doc).await;
    }

    /// The source of a document (panics if missing).
    pub async fn source(&self, index: &str, id: &str) -> Map<String, Value> {
        self.cluster()
            .get(index, id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{index}/{id} missing"))
            .source
    }

    /// The account's protocol fields.
    pub async fn acct(&self, id: &str) -> AccountState {
        AccountState::from_source(&self.source(&self.ix.accounts, id).await).unwrap()
    }

    /// The transaction as read.
    pub async fn txn(&self, id: &str) -> Transaction {
        Transaction::from_source(id, &self.source(&self.ix.transactions, id).await)
    }

    /// The transaction's state.
    pub async fn state(&self, id: &str) -> TxnState {
        self.txn(id).await.state.unwrap()
    }

    /// Sets the transaction's modification time `minutes` into the past, as if
    /// its worker had died that long ago.
    pub async fn backdate(&self, id: &str, minutes: i64) {
        self.kit().backdate(id, minutes).await;
    }

    /// Makes every write visible to search (osmem has no refresh interval).
    pub async fn refresh(&self) {
        for index in [&self.ix.transactions, &self.ix.accounts, &self.ix.locks] {
            self.cluster().refresh(index).await.unwrap();
        }
    }

    /// Sum of the balances of `ids`.
    pub async fn total(&self, ids: &[&str]) -> i64 {
        let mut sum = 0;
        for id in ids {
            sum += self.acct(id).await.balance;
        }
        sum
    }
}
