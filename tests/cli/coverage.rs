//! Honest coverage: a scan over an OpenSearch index with a lost shard must
//! not look whole. OpenSearch opens a partial point-in-time unless told not
//! to (`allow_partial_pit_creation`, default true), and its pages then
//! report no failed shard while the lost shard's documents are missing.

use super::jobs::stuck;
use super::*;
use common::FaultProxy;

#[test]
fn list_recover_and_audit_over_a_lost_shard_say_partial_and_act_on_nothing() {
    let n = 20;
    let w = World::new();
    stuck(&w, n);
    let proxy = FaultProxy::start(&w.g.url);
    proxy.lose_a_shard(true);
    let mut via = w.g.clone();
    via.url = proxy.url();
    let budget = ["--retry-budget", "1s"];
    let said_partial = |out: &Out| out.stderr.to_lowercase().contains("partial");

    let list = via.run(&[&["list", "--stuck"][..], &budget].concat());
    assert_ne!(list.code, 0, "{list}");
    assert!(said_partial(&list), "{list}");

    let recover = via.run(&[&["recover", "--all-stuck"][..], &budget].concat());
    assert_ne!(recover.code, 0, "{recover}");
    assert!(said_partial(&recover), "{recover}");
    let txns = w.source_all_states();
    assert!(txns.iter().all(|s| s == "created"), "{txns:?}");

    let total = (200 * n).to_string();
    let audit = via.run(&[&["audit", "--expect-total", &total][..], &budget].concat());
    assert_ne!(audit.code, 0, "{audit}");
    assert!(said_partial(&audit), "{audit}");
    assert!(!audit.stdout.contains("missing"), "{audit}");
}

impl World {
    /// The state of every transaction (after a refresh).
    fn source_all_states(&self) -> Vec<String> {
        self.stored_hits(&self.ix.transactions, 10000)
            .iter()
            .map(|h| {
                h["_source"]["transaction_state"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }
}

/// A role that may search but not create a point-in-time (OpenSearch's
/// security plugin answers 403 to `POST /{index}/_search/point_in_time`
/// without `indices:data/read/point_in_time/create`): scans scroll, and
/// `doctor` names the missing privilege instead of saying the cluster
/// has no point-in-time.
#[test]
fn doctor_names_a_role_refused_the_opening_of_a_point_in_time() {
    use common::proxy::Canned;
    let w = World::new();
    w.account("A", 500);
    let proxy = FaultProxy::start(&w.g.url);
    let refusal = json!({
        "error": {
            "root_cause": [{"type": "security_exception", "reason": "no permissions for [indices:data/read/point_in_time/create] and User [name=estx, backend_roles=[], requestedTenant=null]"}],
            "type": "security_exception",
            "reason": "no permissions for [indices:data/read/point_in_time/create] and User [name=estx, backend_roles=[], requestedTenant=null]"
        },
        "status": 403
    });
    proxy.answer(
        "POST",
        "_search/point_in_time",
        usize::MAX,
        Canned::json(403, refusal),
    );
    let mut via = w.g.clone();
    via.url = proxy.url();
    let doctor = via.run(&["doctor", "--json"]);
    assert_eq!(
        doctor.json()["paging"],
        "scroll_point_in_time_open_forbidden",
        "{doctor}"
    );
    via.run(&["doctor"])
        .stdout_has("opening a point-in-time is refused to this role")
        .stdout_has("indices:data/read/point_in_time/create");
    // Scans still see everything, by scroll.
    let list = via.run(&["list", "--all", "--json"]);
    list.code(0);
}
