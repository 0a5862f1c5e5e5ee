//! Blocks are found before writing: an index the act writes that carries
//! `index.blocks.write` / `read_only` / `read_only_allow_delete`, or is
//! closed, refuses the act before step 1 with nothing written, naming the
//! block (osmem-server honours both, as the products do: 403
//! `cluster_block_exception` "FORBIDDEN/8/index write (api)").

use super::*;

#[test]
fn a_rollback_on_write_blocked_accounts_is_refused_before_step_one_naming_the_block() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("blocked", "A", "B", 100, 2);
    let state = w.state("blocked");
    let before = (w.acct("A"), w.acct("B"), w.txn("blocked"));
    let url = w.url(&w.ix.accounts, "_settings");
    for (setting, closed) in [
        ("index.blocks.write", false),
        ("index.blocks.read_only", false),
        ("index.blocks.read_only_allow_delete", false),
        ("", true),
    ] {
        if closed {
            let (s, b) = common::http("POST", &w.url(&w.ix.accounts, "_close"), None);
            assert_eq!(s, 200, "{b}");
        } else {
            let body = format!(r#"{{"{setting}": true}}"#);
            let (s, b) = common::http("PUT", &url, Some(&body));
            assert_eq!(s, 200, "{b}");
        }
        let out = w.run(&["rollback", "blocked", "--force"]);
        out.code(1).stderr_has("before the first write");
        if closed {
            out.stderr_has("is closed");
            let (s, b) = common::http("POST", &w.url(&w.ix.accounts, "_open"), None);
            assert_eq!(s, 200, "{b}");
        } else {
            out.stderr_has(setting);
            let body = format!(r#"{{"{setting}": null}}"#);
            let (s, b) = common::http("PUT", &url, Some(&body));
            assert_eq!(s, 200, "{b}");
        }
        assert_eq!(w.state("blocked"), state, "{out}");
        assert_eq!(
            (w.acct("A"), w.acct("B"), w.txn("blocked")),
            before,
            "{setting}: a refusal wrote something: {out}"
        );
    }
}

/// The previews say it too, writing nothing: `--dry-run` prints the plan
/// and that the run would be refused before its first write (exit 1), and
/// `show` says it under each procedure's preview, text and JSON.
#[test]
fn previews_of_an_act_on_write_blocked_accounts_say_it_would_be_refused() {
    let w = World::new();
    w.account("A", 500);
    w.account("B", 500);
    w.stage("previewed", "A", "B", 100, 2);
    w.backdate("previewed", 60);
    let before = (w.acct("A"), w.acct("B"), w.txn("previewed"));
    let url = w.url(&w.ix.accounts, "_settings");
    let (s, b) = common::http("PUT", &url, Some(r#"{"index.blocks.write": true}"#));
    assert_eq!(s, 200, "{b}");
    let out = w.run(&["rollback", "previewed", "--dry-run"]);
    out.code(1)
        .stderr_has("the run would be refused before its first write")
        .stderr_has("index.blocks.write");
    let out = w.run(&["show", "previewed"]);
    out.code(0)
        .stdout_has("refuse before the first write")
        .stdout_has("index.blocks.write");
    let json = w.run(&["show", "previewed", "--json"]).code(0).json();
    let refused = json["rollback"]["refused"].as_str().unwrap_or_default();
    assert!(refused.contains("index.blocks.write"), "{json}");
    let (s, b) = common::http("PUT", &url, Some(r#"{"index.blocks.write": null}"#));
    assert_eq!(s, 200, "{b}");
    assert_eq!((w.acct("A"), w.acct("B"), w.txn("previewed")), before);
    // Lifted, the same preview has nothing to refuse.
    let out = w.run(&["rollback", "previewed", "--dry-run"]);
    out.code(0);
    assert!(!out.stderr.contains("would be refused"), "{out}");
}
