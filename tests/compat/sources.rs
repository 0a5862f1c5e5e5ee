//! The whole-`_source` rewrite through the binary, under product
//! personalities: numbers the application wrote beside the protocol's
//! fields (an integer beyond 64 bits, a decimal with 23 significant digits)
//! keep their exact text through a transfer and a rollback, and an accounts
//! index whose mapping prunes the stored `_source` (`_source.excludes`) is
//! refused before any write (`doctor` names it), since rewriting a pruned
//! source would delete the pruned fields.

use super::common::proxy::Personality;
use super::common::{self, FaultProxy, TestServer};
use super::session::{Session, ACCOUNTS, BALANCE};
use serde_json::{json, Value};

/// Fields an application keeps beside the protocol's, as written (f64 keeps
/// 17 significant digits, i64 stops at 2^63).
const EXTRA: [&str; 2] = [
    r#""limit":123456789012345678901234567890"#,
    r#""rate":0.12345678901234567890123"#,
];

/// A proxy playing `p` and a session through it whose accounts index is
/// mapped as `init` maps it, changed by `change`, holding the accounts at
/// [`BALANCE`] with `extra` written as raw text (`None` under
/// `ESTX_TEST_URL`: the proxy fronts osmem-server only).
fn accounts_mapped(
    p: Personality,
    change: impl FnOnce(&mut Value),
    extra: &str,
) -> Option<(FaultProxy, Session)> {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("this test needs the proxy in front of osmem-server; skipped with ESTX_TEST_URL");
        return None;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    let s = Session::new(&proxy.url(), p.name());
    s.init();
    let accounts = s.ix.accounts.clone();
    let (status, answer) = s.http("DELETE", &accounts, None);
    assert_eq!(status, 200, "{answer}");
    let mut body: Value =
        serde_json::from_str(include_str!("../../assets/mappings/accounts.json")).unwrap();
    change(&mut body);
    let (status, answer) = s.http("PUT", &accounts, Some(&body));
    assert_eq!(status, 200, "{answer}");
    for a in ACCOUNTS {
        let doc = format!(r#"{{"balance":{BALANCE},"pending_transactions":[]{extra}}}"#);
        let url = format!("{}/{accounts}/_doc/{a}?refresh=true", server.url());
        let (status, answer) = common::http("PUT", &url, Some(&doc));
        assert!((200..300).contains(&status), "{answer}");
    }
    Some((proxy, s))
}

/// The stored document as the server sends it (raw text).
fn raw(index: &str, id: &str) -> String {
    let url = format!("{}/{index}/_doc/{id}", TestServer::shared().url());
    common::http("GET", &url, None).1
}

/// A completed transfer (A to B) and a rolled-back one (C to D, stopped
/// after its first apply) rewrite four accounts: each keeps the extra
/// fields' exact text, and no unit is created or destroyed.
fn exact_numbers_under(p: Personality) {
    let doubles = |body: &mut Value| {
        let props = body["mappings"]["properties"].as_object_mut().unwrap();
        for field in ["limit", "rate"] {
            props.insert(field.into(), json!({"type": "double"}));
        }
    };
    let extra = format!(",{}", EXTRA.join(","));
    let Some((_proxy, s)) = accounts_mapped(p, doubles, &extra) else {
        return;
    };
    s.run(&["transfer", "A", "B", "25", "--id", "t1"]).code(0);
    s.stage("p1", "C", "D", 2);
    s.backdate("p1", 10);
    s.run(&["rollback", "p1"]).code(0);
    assert_eq!(s.state("p1"), "rolled-back");
    for id in ["A", "B", "C", "D"] {
        let stored = raw(&s.ix.accounts, id);
        for field in EXTRA {
            assert!(
                stored.contains(field),
                "[{}] {id} lost {field}: {stored}",
                p.name()
            );
        }
    }
    assert_eq!(s.total_balance(), BALANCE * ACCOUNTS.len() as i64);
}

#[test]
fn exact_numbers_elasticsearch_8() {
    exact_numbers_under(Personality::Elasticsearch8);
}

#[test]
fn exact_numbers_opensearch_2() {
    exact_numbers_under(Personality::OpenSearch2);
}

/// `_source.excludes: ["secret"]` on the accounts: `doctor` names it as an
/// error, and a transfer is refused before its first write (no transaction
/// created, no account touched), since the rewrite would delete `secret`.
fn source_excludes_under(p: Personality) {
    let excludes = |body: &mut Value| body["mappings"]["_source"] = json!({"excludes": ["secret"]});
    let Some((_proxy, s)) = accounts_mapped(p, excludes, r#","secret":"s""#) else {
        return;
    };
    let named = "`_source.excludes: [\"secret\"]`";
    let doctor = s.run(&["doctor"]);
    assert!(doctor.stdout.contains(named), "{doctor}");
    let before = raw(&s.ix.accounts, "A");
    let out = s.run(&["transfer", "A", "B", "1", "--id", "t"]);
    assert_ne!(out.code, 0, "{out}");
    for part in [named, "refused before the first write"] {
        assert!(out.stderr.contains(part), "{part}: {out}");
    }
    assert_eq!(raw(&s.ix.accounts, "A"), before, "{out}");
    let (status, _) = s.http("GET", &format!("{}/_doc/t", s.ix.transactions), None);
    assert_eq!(status, 404, "a transaction was created: {out}");
}

#[test]
fn source_excludes_elasticsearch_9() {
    source_excludes_under(Personality::Elasticsearch9);
}

#[test]
fn source_excludes_aws_opensearch_2() {
    source_excludes_under(Personality::AwsOpenSearch2);
}
