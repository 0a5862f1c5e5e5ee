//! `estx-tui` against a cluster with security on, Elasticsearch's and
//! OpenSearch's, played by the test proxy in front of the server
//! (`common::proxy::security`; osmem-server has no security): the audit
//! record names the cluster user, `doctor` lists privileges per index and
//! what to grant, a user without write privilege is refused with the
//! cluster's reason and nothing written, and a wrong password is an
//! authentication error that never echoes the secret.

use super::*;
use common::proxy::{Product, Realm, User};
use common::FaultProxy;

const ADMIN: (&str, &str) = ("ops", "0ps-s3cret");
const VIEWER: (&str, &str) = ("viewer", "v13wer-s3cret");

/// A world behind a secured proxy: `g` talks to the proxy.
struct Secured {
    w: World,
    g: Globals,
    proxy: FaultProxy,
}

impl Secured {
    /// A pending transfer `t1` (A -> B, 100, 10 minutes old) behind a
    /// `product` security layer with the admin `ops` and `viewer`, who may
    /// write only the indices in `viewer_writes` (roles of the world).
    fn new(product: Product, viewer_writes: &[&str]) -> Secured {
        Secured::with(product, |w| {
            let writable: Vec<&str> = viewer_writes.iter().map(|r| w.index_of(r)).collect();
            vec![
                User::admin(ADMIN.0, ADMIN.1),
                User::read_only(VIEWER.0, VIEWER.1, &writable),
            ]
        })
    }

    /// The same world with the users `users` makes for it.
    fn with(product: Product, users: impl FnOnce(&World) -> Vec<User>) -> Secured {
        let w = World::new();
        w.stage_old_pending();
        w.refresh();
        let proxy = FaultProxy::start(&w.g.url);
        proxy.secure(Realm::new(product, users(&w)));
        let mut g = w.g.clone();
        g.url = proxy.url();
        Secured { w, g, proxy }
    }

    /// Runs the binary as `user` with `password` (an OS user `alice` too).
    fn run_as(&self, (user, password): (&str, &str), args: &[&str]) -> Out {
        let envs = [
            ("ESTX_USER", user),
            ("ESTX_PASSWORD", password),
            ("USER", "alice"),
        ];
        self.g.run_env(&envs, args)
    }

    /// `(_seq_no, _primary_term)` of every document the rollback would touch,
    /// and the document counts of the three indices.
    fn tokens(&self) -> (Vec<(i64, i64)>, [u64; 3]) {
        let w = &self.w;
        let docs = [
            (&w.ix.transactions, "t1"),
            (&w.ix.accounts, "A"),
            (&w.ix.accounts, "B"),
        ];
        let tokens = docs
            .iter()
            .map(|(index, id)| {
                let (status, body) =
                    common::http("GET", &w.url(index, &format!("_doc/{id}")), None);
                assert_eq!(status, 200, "{body}");
                let v: Value = serde_json::from_str(&body).unwrap();
                (
                    v["_seq_no"].as_i64().unwrap(),
                    v["_primary_term"].as_i64().unwrap(),
                )
            })
            .collect();
        (tokens, w.counts())
    }
}

impl World {
    /// The name of the index playing `role` (`transactions`, `accounts`,
    /// `locks`, `audit`).
    fn index_of(&self, role: &str) -> &str {
        match role {
            "transactions" => &self.ix.transactions,
            "accounts" => &self.ix.accounts,
            "locks" => &self.ix.locks,
            "audit" => &self.ix.audit,
            "acks" => &self.ix.acks,
            other => panic!("no index plays {other}"),
        }
    }
}

#[test]
fn the_audit_record_names_the_cluster_user_not_the_os_user() {
    for product in [Product::Elasticsearch, Product::OpenSearch] {
        let s = Secured::new(product, &[]);
        let out = s.run_as(ADMIN, &["rollback", "t1", "--reason", "INC-9"]);
        out.code(0).stdout_has("rolled-back");
        let records = s.w.audit_records();
        assert_eq!(records.len(), 1, "{product:?}: {records:#?}");
        let operator = &records[0]["operator"];
        assert_eq!(operator["user"], "ops", "{product:?}: {operator:#}");
        assert_eq!(operator["source"], "cluster", "{product:?}: {operator:#}");
        s.g.run_env(
            &[("ESTX_USER", ADMIN.0), ("ESTX_PASSWORD", ADMIN.1)],
            &["history", "t1"],
        )
        .code(0)
        .stdout_has("ops (cluster user)");
        assert_eq!(s.w.state("t1"), "rolled-back");
    }
}

#[test]
fn doctor_lists_privileges_per_index_and_what_to_grant() {
    let s = Secured::new(Product::Elasticsearch, &["audit"]);
    let out = s.run_as(VIEWER, &["doctor"]);
    out.code(3)
        .stdout_has("security       on, user viewer")
        .stdout_has(&format!("{}: ", s.w.ix.accounts))
        .stdout_has("write NO")
        .stdout_has("ERROR")
        .stdout_has("grant");
    let j = s.run_as(VIEWER, &["doctor", "--json"]).json();
    let security = &j["security"];
    assert_eq!(security["kind"], "privileges", "{security:#}");
    assert_eq!(security["user"], "viewer", "{security:#}");
    let accounts = &security["indices"][&s.w.ix.accounts];
    assert_eq!(accounts["write"], false, "{security:#}");
    assert_eq!(accounts["read"], true, "{security:#}");
    let audit = &security["indices"][&s.w.ix.audit];
    assert_eq!(
        audit["write"], true,
        "the audit index is asked too: {security:#}"
    );
    let problem = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["severity"] == "error" && c["text"].as_str().unwrap().contains(&s.w.ix.accounts)
        })
        .unwrap_or_else(|| panic!("no error about the accounts index: {j:#}"));
    let text = problem["text"].as_str().unwrap();
    for needed in ["write", "delete", "grant", "viewer"] {
        assert!(text.contains(needed), "{needed:?} missing from {text:?}");
    }

    // The operator with every privilege: no security finding.
    let j = s.run_as(ADMIN, &["doctor", "--json"]).json();
    assert_eq!(j["security"]["user"], "ops");
    let findings: Vec<&Value> = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["text"].as_str().unwrap().contains("credentials"))
        .collect();
    assert!(findings.is_empty(), "{findings:#?}");

    // OpenSearch: who and which roles; privileges cannot be asked there.
    let s = Secured::new(Product::OpenSearch, &[]);
    s.run_as(VIEWER, &["doctor"])
        .stdout_has("on (OpenSearch), user viewer, roles estx_viewer");
}

#[test]
fn a_user_without_write_privilege_is_refused_and_nothing_is_written() {
    for (product, says) in [
        (
            Product::Elasticsearch,
            "is unauthorized for user [viewer] with effective roles [estx_viewer]",
        ),
        (
            Product::OpenSearch,
            "no permissions for [indices:data/write",
        ),
    ] {
        // The audit trail is writable: the record says the rollback failed.
        let s = Secured::new(product, &["audit"]);
        let before = s.tokens();
        let out = s.run_as(VIEWER, &["rollback", "t1", "--reason", "INC-10"]);
        out.code(exit_code_of_auth())
            .stderr_has("HTTP 403")
            .stderr_has(says)
            .stderr_has("indices:data/write/");
        assert_eq!(
            s.tokens(),
            before,
            "{product:?}: something was written: {out}"
        );
        let records = s.w.audit_records();
        assert_eq!(records.len(), 1, "{product:?}: {records:#?}");
        let r = &records[0];
        assert_eq!(r["status"], "finished", "{r:#}");
        assert_eq!(r["outcome"], "failed", "{r:#}");
        assert_eq!(r["operator"]["user"], "viewer", "{r:#}");
        assert!(
            r["summary"].as_str().unwrap().contains("403"),
            "the record says why: {r:#}"
        );

        // Reading still works for that user.
        s.run_as(VIEWER, &["show", "t1"])
            .code(0)
            .stdout_has("pending");
        s.run_as(VIEWER, &["list", "--json"]).code(0);

        // Nothing writable at all: refused before anything, no record.
        let s = Secured::new(product, &[]);
        let before = s.tokens();
        let out = s.run_as(VIEWER, &["rollback", "t1", "--reason", "INC-10"]);
        out.code(exit_code_of_auth())
            .stderr_has("cannot write the audit record; nothing was done")
            .stderr_has("HTTP 403")
            .stderr_has(says);
        assert_eq!(s.tokens(), before, "{product:?}: {out}");
        assert!(s.w.audit_records().is_empty());
        assert!(
            !s.proxy.log().iter().any(|l| l.contains(&s.w.ix.accounts)
                && (l.starts_with("PUT") || l.starts_with("POST /"))
                && l.contains("_doc")),
            "{:#?}",
            s.proxy.log()
        );
    }
}

/// What `src/cli/exit.rs` says a refused login or privilege exits with.
fn exit_code_of_auth() -> i32 {
    estx::cli::exit::of_error(&estx::Error::Auth {
        status: 403,
        reason: String::new(),
    })
}

#[test]
fn a_wrong_password_is_an_auth_error_that_never_echoes_the_secret() {
    let wrong = "Wr0ng-pa55word";
    for (product, says) in [
        (Product::Elasticsearch, "unable to authenticate user [ops]"),
        (Product::OpenSearch, "Unauthorized"),
    ] {
        let s = Secured::new(product, &[]);
        let before = s.tokens();
        for args in [
            &["rollback", "t1", "--reason", "x"][..],
            &["list"][..],
            &["doctor"][..],
        ] {
            let out = s.run_as((ADMIN.0, wrong), args);
            out.code(3)
                .stderr_has("authentication or authorisation failed (HTTP 401)")
                .stderr_has(says);
            if product == Product::OpenSearch {
                // Its reason says nothing more: the tool says what to check.
                out.stderr_has("ESTX_PASSWORD");
            }
            assert!(!out.stderr.contains(wrong), "secret echoed: {out}");
            assert!(!out.stdout.contains(wrong), "secret echoed: {out}");
        }
        // No credentials at all.
        let out = s.g.run(&["list"]);
        out.code(3).stderr_has("HTTP 401");
        if product == Product::Elasticsearch {
            out.stderr_has("missing authentication credentials");
        }
        assert_eq!(s.tokens(), before, "{product:?}");
        assert!(s.w.audit_records().is_empty());
        let log = std::fs::read_to_string(&s.g.log).unwrap_or_default();
        assert!(!log.contains(wrong), "secret in the log file: {log}");
    }
}

#[test]
fn write_privilege_on_the_transactions_only_is_refused_before_step_one() {
    // Transactions and the trail writable, accounts not: the pre-flight's
    // partial update that changes nothing is refused on the accounts, so
    // the rollback is refused before its first write (it used to land the
    // transaction's `pending -> terminating` and stop at the account).
    let s = Secured::new(Product::Elasticsearch, &["audit", "transactions"]);
    let out = s.run_as(VIEWER, &["rollback", "t1", "--reason", "INC-11"]);
    out.code(exit_code_of_auth())
        .stderr_has("HTTP 403")
        .stderr_has("indices:data/write/update")
        .stderr_has(&s.w.ix.accounts);
    assert_eq!(s.w.state("t1"), "pending", "nothing written: {out}");
    assert_eq!((s.w.balance("A"), s.w.balance("B")), (400, 500), "{out}");
    let records = s.w.audit_records();
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0]["status"], "finished", "{:#}", records[0]);
    assert_eq!(records[0]["outcome"], "failed", "{:#}", records[0]);
    let steps = records[0]["steps"].as_array().cloned().unwrap_or_default();
    assert!(
        steps.iter().all(|st| st["result"] != "updated"),
        "nothing written: {:#}",
        records[0]
    );
    // An operator with every privilege finishes it.
    s.run_as(ADMIN, &["rollback", "t1", "--force", "--reason", "INC-11"])
        .code(0);
    assert_eq!(s.w.state("t1"), "rolled-back");
    assert_eq!((s.w.balance("A"), s.w.balance("B")), (500, 500));
}

/// The acks index (issue 30 item 3's leftover): every operator reads it
/// (each poll, `check` and bulk selection leave acked transactions out),
/// and an acting one writes it (`ack`, `unack`, the dashboard's `K`).
#[test]
fn doctor_names_the_privileges_the_acks_index_needs() {
    // May write every index but the acks index: acknowledging is refused.
    let s = Secured::new(
        Product::Elasticsearch,
        &["transactions", "accounts", "locks", "audit"],
    );
    let acks = s.w.index_of("acks").to_string();
    let out = s.run_as(VIEWER, &["doctor"]);
    out.code(1)
        .stdout_has(&format!(
            "warn  user `viewer` may read the acks index `{acks}`"
        ))
        .stdout_has("`ack` and `unack` (and the dashboard's K) are refused")
        .stdout_has(&format!("grant [read, write] on `{acks}`"));
    let j = s.run_as(VIEWER, &["doctor", "--json"]).json();
    let granted = &j["security"]["indices"][&acks];
    assert_eq!(granted["read"], true, "{j:#}");
    assert_eq!(granted["write"], false, "{j:#}");

    // May not read it: acked transactions would page and be selected again.
    let s = Secured::with(Product::Elasticsearch, |w| {
        let readable = ["transactions", "accounts", "locks", "audit"].map(|r| w.index_of(r));
        vec![User::admin(ADMIN.0, ADMIN.1).reading_only(&readable)]
    });
    let acks = s.w.index_of("acks").to_string();
    s.run_as(ADMIN, &["doctor"])
        .code(3)
        .stdout_has(&format!("user `ops` lacks read on the acks index `{acks}`"))
        .stdout_has("grant read on");

    // Every privilege: no line about the acks index.
    let s = Secured::new(Product::Elasticsearch, &[]);
    let out = s.run_as(ADMIN, &["doctor"]);
    assert!(!out.stdout.contains("acks index"), "{out}");
}

#[test]
fn without_monitor_doctor_warns_and_interventions_still_work() {
    let s = Secured::with(Product::Elasticsearch, |_| {
        vec![User::admin(ADMIN.0, ADMIN.1).without_monitor()]
    });
    let out = s.run_as(ADMIN, &["doctor"]);
    out.code(1)
        .stdout_has("warn  user `ops` lacks the cluster privilege monitor")
        .stdout_has("grant the cluster privilege [monitor]");
    s.run_as(ADMIN, &["rollback", "t1", "--reason", "INC-12"])
        .code(0);
    assert_eq!(s.w.state("t1"), "rolled-back");
}

#[test]
fn without_view_index_metadata_the_error_names_the_privilege() {
    let s = Secured::with(Product::Elasticsearch, |_| {
        vec![User::admin(ADMIN.0, ADMIN.1).without_view_index_metadata()]
    });
    let before = s.tokens();
    for args in [&["list"][..], &["rollback", "t1", "--reason", "x"][..]] {
        let out = s.run_as(ADMIN, args);
        out.code(3).stderr_has("HTTP 403");
        assert!(
            out.stderr.contains("view_index_metadata"),
            "the missing privilege is named: {out}"
        );
    }
    assert_eq!(s.tokens(), before);
}

#[test]
fn doctor_asks_privileges_before_init() {
    // No index exists yet: Elasticsearch refuses a `_has_privileges` entry
    // without names (400), which must not read as "security off".
    let w = World::bare();
    let proxy = FaultProxy::start(&w.g.url);
    proxy.secure(Realm::new(
        Product::Elasticsearch,
        vec![User::admin(ADMIN.0, ADMIN.1)],
    ));
    let mut g = w.g.clone();
    g.url = proxy.url();
    let envs = [("ESTX_USER", ADMIN.0), ("ESTX_PASSWORD", ADMIN.1)];
    let out = g.run_env(&envs, &["doctor", "--json"]);
    out.code(3);
    let security = &out.json()["security"];
    assert_eq!(security["kind"], "privileges", "{out}");
    assert_eq!(security["indices"][&w.ix.accounts]["write"], true, "{out}");
}

#[test]
fn doctor_names_opensearchs_cluster_level_composite_actions() {
    // A role with only the index permissions (what the README once said):
    // OpenSearch refuses `_mget`/`_msearch`, which it authorises as cluster
    // permissions.
    let s = Secured::with(Product::OpenSearch, |_| {
        vec![
            User::admin(ADMIN.0, ADMIN.1),
            User::admin(VIEWER.0, VIEWER.1).without_composite_actions(),
        ]
    });
    let out = s.run_as(VIEWER, &["doctor"]);
    out.code(3)
        .stdout_has("indices:data/read/mget, indices:data/read/msearch")
        .stdout_has("cluster_permissions");
    let batch = s.run_as(VIEWER, &["recover", "--all-stuck"]);
    assert_ne!(batch.code, 0, "{batch}");
    batch.stderr_has("no permissions for [indices:data/");
    let ok = s.run_as(ADMIN, &["doctor"]);
    assert!(!ok.stdout.contains("indices:data/read/mget"), "{ok}");
}
