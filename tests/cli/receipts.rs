//! `audit --receipts` (issue 31, receipts): after a rollback and an
//! operator's transfer every record's receipts verify (exit 0); a balance
//! edited by hand in a stored record is named by record, transaction and
//! account (exit 1); `--json` has its shape; a file trail verifies too.

use super::*;

impl World {
    /// The audit records (not their parts) as stored (packed), with their ids.
    fn stored_records(&self) -> Vec<(String, Value)> {
        self.stored_hits(&self.ix.audit, 1000)
            .iter()
            .filter(|h| h["_source"].get("run_id").is_none())
            .map(|h| (h["_id"].as_str().unwrap().to_string(), h["_source"].clone()))
            .collect()
    }
}

#[test]
fn audit_receipts_verifies_after_acts_and_names_an_edited_record() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.account("C", 500);
    w.account("D", 500);
    w.stage("rb", "A", "B", 100, 2);
    w.run(&["rollback", "rb", "--force", "--reason", "INC-1"])
        .code(0);
    w.run(&["transfer", "C", "D", "50"]).code(0);
    w.refresh();

    w.run(&["audit", "--receipts"])
        .code(0)
        .stdout_has("every receipt verifies");
    let out = w.run(&["audit", "--receipts", "--json", "--since", "1h"]);
    out.code(0);
    let v = out.json();
    assert_eq!(v["records"], 2, "{out}");
    assert_eq!(v["verified"], 2, "{out}");
    assert_eq!(v["no_receipts"], 0, "{out}");
    assert_eq!(v["writes"], 3, "an undo and two applies: {out}");
    assert_eq!(v["mismatches"], json!([]), "{out}");

    // The rollback's record, its undo's balance before edited by hand.
    let (id, mut doc) = w
        .stored_records()
        .into_iter()
        .find(|(_, r)| r["action"] == "rollback")
        .expect("the rollback's record");
    assert!(
        common::tamper::edit_first_receipt(&mut doc["st"], 1),
        "{doc:#}"
    );
    w.put(&w.ix.audit, &id, &doc);
    w.refresh();
    common::refresh(&w.g.url, &w.ix.audit);

    let out = w.run(&["audit", "--receipts", "--json"]);
    out.code(1);
    let v = out.json();
    assert_eq!(v["verified"], 1, "{out}");
    let m = &v["mismatches"][0];
    assert_eq!(m["record"], json!(id), "{out}");
    assert_eq!(m["transaction"], "rb", "{out}");
    assert_eq!(m["account"], "A", "{out}");
    assert_eq!(m["kind"], "arithmetic", "{out}");
    assert!(
        m["detail"].as_str().unwrap().contains("401 -> 500"),
        "{out}"
    );
    w.run(&["audit", "--receipts"])
        .code(1)
        .stdout_has(&id)
        .stdout_has("1 mismatch");
    // A window after the edited record leaves it out.
    let later = (chrono::Utc::now() + chrono::Duration::minutes(5)).to_rfc3339();
    w.run(&["audit", "--receipts", "--since", &later]).code(0);
}

#[test]
fn audit_receipts_reads_a_file_trail() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    let path = w._dir.path().join("trail.jsonl");
    let spec = format!("file:{}", path.display());
    w.run(&["transfer", "A", "B", "70", "--audit-trail", &spec])
        .code(0);
    let out = w.run(&["audit", "--receipts", "--json", "--audit-trail", &spec]);
    out.code(0);
    let v = out.json();
    assert_eq!(
        (v["records"].clone(), v["writes"].clone()),
        (json!(1), json!(2)),
        "{out}"
    );
}
