//! The session under what security-minded and busy production teams put on
//! a role or an index, each played by the test proxy as the product answers
//! (`tests/common/proxy/`, each rule citing its source): field-level
//! security (Elasticsearch's and OpenSearch's refusals of partial updates),
//! OpenSearch's derived source, a write block on the accounts, a lost shard
//! under a partial point-in-time.
//!
//! Set up as the plain session is; then, restricted: everything that reads
//! works and says what it sees, every act (one at a time, in bulk, batched)
//! is refused before its first write with nothing written, and its dry run
//! says the run would be refused; then, the restriction lifted, the same
//! acts repair everything and no unit is created or destroyed.

use super::common::proxy::{FlsProduct, Personality};
use super::common::{FaultProxy, TestServer};
use super::session::{self, Out, Session};
use serde_json::Value;

/// One restriction.
#[derive(Debug, Clone, Copy)]
pub enum Restriction {
    /// The role cannot read a field of the accounts (Elasticsearch's
    /// refusal of partial updates there).
    FieldSecurityOnAccounts,
    /// The role cannot read a field anywhere, the audit index included
    /// (OpenSearch's refusal).
    FieldSecurityEverywhere,
    /// OpenSearch 3.2+ derived source on every index.
    DerivedSource,
    /// `index.blocks.write` on the accounts.
    WriteBlockOnAccounts,
    /// A shard of every index lost (OpenSearch opens a partial
    /// point-in-time unless told not to).
    LostShard,
}

/// A field the application keeps and the role cannot read.
const HIDDEN: &str = "customer_note";

impl Restriction {
    fn personality(self) -> Personality {
        match self {
            Restriction::FieldSecurityOnAccounts => Personality::Elasticsearch8,
            Restriction::DerivedSource => Personality::OpenSearch3,
            _ => Personality::OpenSearch2,
        }
    }

    fn apply(self, proxy: &FaultProxy, s: &Session, on: bool) {
        match self {
            Restriction::FieldSecurityOnAccounts => proxy.field_security_on(
                on.then_some((FlsProduct::Elasticsearch, &[HIDDEN][..])),
                &[&s.ix.accounts],
            ),
            Restriction::FieldSecurityEverywhere => {
                proxy.field_security(on.then_some((FlsProduct::OpenSearch, &[HIDDEN][..])))
            }
            Restriction::DerivedSource => proxy.derived_source(on),
            Restriction::WriteBlockOnAccounts => {
                let value = if on { "true" } else { "null" };
                let body: Value =
                    serde_json::from_str(&format!(r#"{{"index.blocks.write": {value}}}"#)).unwrap();
                let (status, answer) =
                    s.http("PUT", &format!("{}/_settings", s.ix.accounts), Some(&body));
                assert_eq!(status, 200, "{answer}");
            }
            Restriction::LostShard => proxy.lose_a_shard(on),
        }
    }

    /// What the refusal of an act names.
    fn named(self, s: &Session) -> String {
        match self {
            Restriction::FieldSecurityOnAccounts => {
                format!("refuses partial updates on `{}`", s.ix.accounts)
            }
            Restriction::FieldSecurityEverywhere => "refuses partial updates".into(),
            Restriction::DerivedSource => "index.derived_source.enabled".into(),
            Restriction::WriteBlockOnAccounts => "index.blocks.write".into(),
            Restriction::LostShard => "partial".into(),
        }
    }
}

/// The session under `r` (see the module docs).
pub fn under(r: Restriction) {
    let server = TestServer::shared();
    let p = r.personality();
    if server.is_external() {
        eprintln!("{r:?}: restrictions are played by the proxy in front of osmem-server only");
        return;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    let label = format!("{}, {r:?}", p.name());
    let s = Session::as_user(&proxy.url(), &label, None, server.url());
    s.init();
    let staged = session::seed(&s);
    keep_a_hidden_field(&s);
    r.apply(&proxy, &s, true);

    if matches!(r, Restriction::LostShard) {
        let list = s.run(&["list", "--stuck", "--retry-budget", "1s"]);
        assert_ne!(list.code, 0, "{list}");
        assert!(list.stderr.to_lowercase().contains("partial"), "{list}");
    } else {
        // A block or a source the tool cannot write back is found by
        // discovery: `doctor` names it and exits 3 (cannot act here);
        // field security is not (no product reports it).
        let blocks = matches!(
            r,
            Restriction::WriteBlockOnAccounts | Restriction::DerivedSource
        );
        let codes: &[i32] = if blocks { &[3] } else { &[0, 1] };
        session::looking_with(&s, Some(p), &staged, codes);
        if blocks {
            s.run(&["doctor"]).code(3);
            let doctor = s.run(&["doctor"]);
            assert!(doctor.stdout.contains(&r.named(&s)), "{doctor}");
        }
    }

    let before = stored(&s);
    let named = r.named(&s);
    let refused = |out: &Out| {
        assert_ne!(out.code, 0, "{out}");
        let said = format!("{}{}", out.stdout, out.stderr).to_lowercase();
        assert!(
            said.contains(&named.to_lowercase()),
            "does not name `{named}`: {out}"
        );
    };
    // A lost shard refuses what selects by a scan (the proxy loses no
    // document read by id); the others refuse every act.
    let lost = matches!(r, Restriction::LostShard);
    let dry = if lost {
        s.run(&[
            "rollback",
            "--state",
            "pending",
            "--dry-run",
            "--retry-budget",
            "1s",
        ])
    } else {
        s.run(&["rollback", "p1", "--dry-run"])
    };
    refused(&dry);
    if !lost {
        assert!(
            dry.stderr
                .contains("would be refused before its first write"),
            "{dry}"
        );
    }
    let singles: &[&[&str]] = if lost {
        &[]
    } else {
        &[&["rollback", "p1"], &["recover", "m1"]]
    };
    let selections: &[&[&str]] = &[
        &["rollback", "--state", "pending"],
        &["recover", "--all-stuck"],
    ];
    for args in singles.iter().chain(selections) {
        let out = s.run(&[args, &["--retry-budget", "1s"][..]].concat());
        refused(&out);
        assert_eq!(stored(&s), before, "{out}");
    }
    // Nothing of a refused act was written: the stale lock is still held
    // (a bulk recovery's closing sweep would have released it).
    let (status, lock) = s.http("GET", &format!("{}/_doc/R1", s.ix.locks), None);
    assert_eq!(
        (status, lock["found"].clone()),
        (200, true.into()),
        "{lock}"
    );

    r.apply(&proxy, &s, false);
    s.refresh();
    session::intervening(&s);
    session::closing(&s);
    // Every document the tool wrote still carries what the role could not
    // read.
    for (id, source) in stored(&s) {
        assert!(
            source.get(HIDDEN).is_some(),
            "{id} lost `{HIDDEN}`: {source}"
        );
    }
}

/// Gives every account and staged transaction a field of the application's.
fn keep_a_hidden_field(s: &Session) {
    for (index, id) in documents(s) {
        let path = format!("{index}/_update/{id}?refresh=true");
        let body = serde_json::json!({"doc": {HIDDEN: format!("kept: {id}")}});
        let (status, answer) = s.http("POST", &path, Some(&body));
        assert_eq!(status, 200, "{answer}");
    }
}

fn documents(s: &Session) -> Vec<(String, String)> {
    let accounts = session::ACCOUNTS.map(|a| (s.ix.accounts.clone(), a.to_string()));
    let txns = ["c1", "c2", "p1", "p2", "p3", "m1"].map(|t| (s.ix.transactions.clone(), t.into()));
    accounts.into_iter().chain(txns).collect()
}

/// Every account and staged transaction as stored (read from the server).
fn stored(s: &Session) -> Vec<(String, Value)> {
    documents(s)
        .into_iter()
        .map(|(index, id)| {
            let (_, doc) = s.http("GET", &format!("{index}/_doc/{id}"), None);
            (format!("{index}/{id}"), doc["_source"].clone())
        })
        .collect()
}
