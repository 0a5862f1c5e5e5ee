//! What the products answer besides success, each named for what it is:
//! the `_shard_doc` refusal (a scan scrolls instead, once, and closes the
//! point-in-time it opened), busy answers to the reads sent as `POST`
//! (retried), blocks, closed indices and a proxy's 404; and the refusals
//! of Amazon OpenSearch Service (fine-grained access control, IAM), each
//! saying what to grant where.

use super::common::proxy::partial_search;
use super::common::proxy::{Canned, Personality, Product, Realm, User};
use super::common::{self, FaultProxy, TestServer};
use super::session::Session;
use serde_json::json;

/// A session through a proxy playing `p` (`None`: no personality), or
/// `None` under `ESTX_TEST_URL` (the proxy fronts osmem-server only).
fn through_proxy(p: Option<Personality>) -> Option<(FaultProxy, Session)> {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("this test needs the proxy in front of osmem-server; skipped with ESTX_TEST_URL");
        return None;
    }
    let proxy = FaultProxy::start(server.url());
    if let Some(p) = p {
        proxy.personality(p);
    }
    let s = Session::new(&proxy.url(), p.map_or("proxy", Personality::name));
    s.init();
    Some((proxy, s))
}

fn count_in_log(proxy: &FaultProxy, method: &str, needle: &str) -> usize {
    proxy
        .log()
        .iter()
        .filter(|l| l.starts_with(method) && l.contains(needle))
        .count()
}

#[test]
fn a_refused_pit_tiebreak_scrolls_once_and_closes_the_pit() {
    let Some((proxy, s)) = through_proxy(Some(Personality::OpenSearch2)) else {
        return;
    };
    s.stage("c1", "A", "B", 0);
    s.refresh();
    for _ in 0..2 {
        let mut seen = Vec::new();
        let summary =
            s.rt.block_on(s.proto.scan_transactions(json!({"match_all": {}}), |page| {
                seen.extend(page.into_iter().map(|t| t.id));
                true
            }))
            .unwrap();
        assert_eq!(seen, ["c1"], "{:#?}", proxy.log());
        assert!(!summary.point_in_time);
    }
    let log = proxy.log();
    assert_eq!(
        count_in_log(&proxy, "POST", "/_search/point_in_time"),
        1,
        "one PIT opened, then remembered: {log:#?}"
    );
    assert_eq!(
        count_in_log(&proxy, "DELETE", "/_search/point_in_time"),
        1,
        "the PIT is closed: {log:#?}"
    );
    assert_eq!(
        count_in_log(&proxy, "POST", "_search?scroll"),
        2,
        "{log:#?}"
    );
}

#[test]
fn busy_answers_to_post_reads_are_retried() {
    let Some((proxy, s)) = through_proxy(Some(Personality::Elasticsearch8)) else {
        return;
    };
    s.stage("c1", "A", "B", 0);
    s.refresh();
    // The PIT's opening and its first page, each throttled once.
    proxy.answer("POST", "/_pit", 1, Canned::throttled("0"));
    proxy.answer("POST", "/_search", 1, Canned::throttled("0"));
    let out = s.run(&["list", "--json"]);
    out.code(0);
    assert_eq!(out.json()[0]["id"], "c1", "{out}");
    assert_eq!(proxy.canned(), 2, "{:#?}", proxy.log());
    // Under OpenSearch 2 the first scroll page, once.
    let Some((proxy, s)) = through_proxy(Some(Personality::OpenSearch2)) else {
        return;
    };
    s.stage("c1", "A", "B", 0);
    s.refresh();
    proxy.answer(
        "POST",
        "_search?scroll",
        1,
        Canned::json(
            503,
            json!({"error": {"type": "unavailable_shards_exception",
            "reason": "primary shard is not active"}, "status": 503}),
        ),
    );
    let out = s.run(&["list", "--json"]);
    out.code(0);
    assert_eq!(out.json()[0]["id"], "c1", "{out}");
}

#[test]
fn a_write_block_is_named_not_called_an_authentication_failure() {
    let s = Session::new(TestServer::shared().url(), "blocks");
    s.init();
    let settings = format!("{}/_settings", s.ix.accounts);
    let (status, body) = s.http("PUT", &settings, Some(&json!({"index.blocks.write": true})));
    assert_eq!(status, 200, "{body}");
    let out = s.run(&["transfer", "A", "B", "5"]);
    s.http(
        "PUT",
        &settings,
        Some(&json!({"index.blocks.write": false})),
    );
    // Found by discovery, refused before the first write (nothing written).
    assert_eq!(out.code, 1, "{out}");
    assert!(out.stderr.contains("before the first write"), "{out}");
    assert!(out.stderr.contains("index.blocks.write"), "{out}");
    assert!(!out.stderr.contains("authentication"), "{out}");
}

#[test]
fn a_closed_index_is_named() {
    let s = Session::new(TestServer::shared().url(), "closed");
    s.init();
    let (status, body) = s.http("POST", &format!("{}/_close", s.ix.transactions), None);
    assert_eq!(status, 200, "{body}");
    let out = s.run(&["list"]);
    out.code(3);
    assert!(
        out.stderr
            .contains(&format!("`{}` is closed", s.ix.transactions)),
        "{out}"
    );
}

#[test]
fn a_proxys_404_is_not_a_missing_index() {
    let Some((proxy, s)) = through_proxy(None) else {
        return;
    };
    proxy.answer("", "", usize::MAX, Canned::text(404, "Unknown resource"));
    for args in [&["list"][..], &["transfer", "A", "B", "5"], &["doctor"]] {
        let out = s.run(args);
        out.code(3);
        assert!(out.stderr.contains("Unknown resource"), "{out}");
        assert!(!out.stderr.contains("init"), "{out}");
    }
}

#[test]
fn counts_and_histories_refuse_partial_answers() {
    let Some((proxy, s)) = through_proxy(None) else {
        return;
    };
    s.run(&["transfer", "A", "B", "5", "--id", "t1"]).code(0);
    s.refresh();
    common::refresh(&s.url, &s.ix.audit);
    s.run(&["history", "t1"]).code(0);
    let partial = partial_search(vec![], 0);
    proxy.answer(
        "",
        "/_count",
        1,
        Canned::json(
            200,
            json!({"count": 0, "_shards": partial["_shards"].clone()}),
        ),
    );
    let check = s.run(&["check", "--json"]);
    check.code(3);
    assert_eq!(check.json()["status"], "UNKNOWN", "{check}");
    assert!(check.stdout.contains("1 of 2 shards failed"), "{check}");
    proxy.answer(
        "POST",
        &format!("/{}/_search", s.ix.audit),
        1,
        Canned::json(200, partial),
    );
    let history = s.run(&["history", "t1"]);
    history.code(3);
    assert!(history.stderr.contains("1 of 2 shards failed"), "{history}");
}

#[test]
fn required_routing_is_refused_clearly() {
    let s = Session::new(TestServer::shared().url(), "routing");
    let (status, body) = s.http(
        "PUT",
        &s.ix.accounts,
        Some(&json!({"mappings": {"_routing": {"required": true}}})),
    );
    assert_eq!(status, 200, "{body}");
    s.run(&["init"]).code(0);
    let doctor = s.run(&["doctor"]);
    doctor.code(3);
    assert!(
        doctor.stdout.contains("requires custom routing"),
        "{doctor}"
    );
    // A reader that cannot read the deployment exits as `check` says
    // UNKNOWN (3), not with the code of findings (1).
    let audit = s.run(&["audit"]);
    audit.code(3);
    assert!(audit.stderr.contains("requires custom routing"), "{audit}");
    let check = s.run(&["check"]);
    check.code(3);
    let out = s.run(&["transfer", "A", "B", "5"]);
    out.code(1);
    assert!(out.stderr.contains("requires custom routing"), "{out}");
    assert!(out.stderr.contains("before the first write"), "{out}");
}

/// Fine-grained access control refuses what the user's roles do not grant
/// (here the composite actions OpenSearch authorises `_mget`, `_msearch`,
/// `_bulk` and scroll pages as): the error names the action, the user and
/// its backend role, and says to map a role (not an IAM policy).
#[test]
fn fine_grained_access_control_refusals_say_which_role_mapping_is_missing() {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("this test needs the proxy in front of osmem-server; skipped with ESTX_TEST_URL");
        return;
    }
    let p = Personality::AwsOpenSearch2Fgac;
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    let s = Session::as_user(&proxy.url(), p.name(), Some(("estx", "pw-1")), server.url());
    let writable = s.index_names();
    let role = "arn:aws:iam::123456789012:role/estx-operator";
    let user = User::read_only("estx", "pw-1", &writable)
        .without_composite_actions()
        .with_backend_roles(&[role]);
    proxy.secure(Realm::new(Product::OpenSearch, vec![user]));
    s.init();
    let out = s.run(&["audit"]);
    eprintln!("{out}");
    assert_ne!(out.code, 0, "{out}");
    for part in ["no permissions for [indices:data/", role, "rolesmapping"] {
        assert!(out.stderr.contains(part), "{part}: {out}");
    }
}

/// IAM allows only `es:ESHttpGet` and `es:ESHttpHead` (the tool writes and
/// searches with `POST`): the rollback fails with nothing written, and the
/// error names the IAM action, the principal and the policies that grant it.
#[test]
fn iam_refusals_say_which_action_and_which_policy() {
    let Some((proxy, s)) = through_proxy(Some(Personality::AwsOpenSearch2)) else {
        return;
    };
    s.stage("c1", "A", "B", 0);
    s.backdate("c1", 10);
    let principal = "arn:aws:iam::123456789012:user/estx";
    proxy.iam_denies(principal, &["PUT", "POST", "DELETE"]);
    let out = s.run(&["rollback", "c1"]);
    eprintln!("{out}");
    assert_ne!(out.code, 0, "{out}");
    for part in ["`es:ESHttpPost`", principal, "access policy"] {
        assert!(out.stderr.contains(part), "{part}: {out}");
    }
    assert_eq!(s.state("c1"), "created");
}

/// Seeding 12 MiB of documents through Amazon OpenSearch Service's 10 MiB
/// payload limit: `bulk_index` splits them into requests within it and every
/// document is indexed (one request of all would be refused with 413).
#[test]
fn bulk_indexing_stays_under_the_aws_payload_limit() {
    let Some((proxy, s)) = through_proxy(Some(Personality::AwsOpenSearch2)) else {
        return;
    };
    let index = format!("{}-seeded", s.ix.transactions);
    let (status, answer) = s.http(
        "PUT",
        &index,
        Some(&json!({"mappings": {"dynamic": false}})),
    );
    assert_eq!(status, 200, "{answer}");
    let blob = "x".repeat(1024 * 1024);
    let docs: Vec<(String, serde_json::Value)> = (0..12)
        .map(|i| (format!("d{i}"), json!({ "blob": blob })))
        .collect();
    s.rt.block_on(s.proto.cluster().bulk_index(&index, &docs))
        .unwrap_or_else(|e| panic!("{e}: {:#?}", proxy.log()));
    assert!(
        proxy.largest_body() <= 10 * 1024 * 1024,
        "{}",
        proxy.largest_body()
    );
    common::refresh(&s.url, &index);
    let (_, count) = s.http("GET", &format!("{index}/_count"), None);
    assert_eq!(count["count"], 12, "{count}");
}
