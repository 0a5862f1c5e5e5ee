//! `estx-tui` CLI tests: connection and usage errors.

use super::*;

#[test]
fn an_unreachable_cluster_exits_3() {
    let w = World::bare();
    let mut g = w.g.clone();
    g.url = "http://127.0.0.1:9".into();
    let started = Instant::now();
    let out = g.run(&["list"]);
    out.code(3).stderr_has("unreachable");
    assert!(out.stdout.is_empty(), "{out}");
    assert!(started.elapsed() < Duration::from_secs(15), "{out}");
}

#[test]
fn usage_errors_exit_2() {
    let w = World::bare();
    w.run(&["frobnicate"]).code(2);
    w.run(&["list", "--frobnicate"]).code(2);
    w.run(&["show"]).code(2);
    w.run(&["list", "--timeout", "soon"]).code(2);
    let help = w.run(&["--help"]);
    help.code(0)
        .stdout_has("release-lock")
        .stdout_has("ESTX_PASSWORD");
}

#[test]
fn a_missing_index_points_at_init() {
    let w = World::new();
    let mut g = w.g.clone();
    g.transactions = format!("{}nosuch", w.ix.prefix);
    let out = g.run(&["list"]);
    assert_ne!(out.code, 0, "{out}");
    out.stderr_has("estx-tui init");
    // README: 3 for a cluster error "including a missing index".
    out.code(3);
    g.run(&["show", "x"]).code(3).stderr_has("estx-tui init");
}

/// Issue 28, item 4: a missing index is answered with what exists (a
/// close name: the typo), the index options in force and the likely
/// causes first; `init` last, for a new cluster only.
#[test]
fn a_missing_index_names_close_names_the_options_in_force_and_causes_before_init() {
    let w = World::new();
    let mut g = w.g.clone();
    // A typo: one letter dropped.
    g.transactions = w.ix.transactions.replacen("transactions", "transactons", 1);
    let out = g.run(&["list"]);
    out.code(3)
        .stderr_has(&format!("index `{}` does not exist", g.transactions))
        .stderr_has(&format!("--transactions-index {}", g.transactions))
        .stderr_has("no profile")
        .stderr_has(&format!("with a close name: {}", w.ix.transactions))
        .stderr_has("likely causes: the wrong cluster")
        .stderr_has("snapshot restore")
        .stderr_has("only on a new cluster: `estx-tui init`");
    let at = |s: &str| out.stderr.find(s).unwrap();
    assert!(
        at("likely causes") < at("estx-tui init"),
        "init last: {out}"
    );
    assert!(!out.stderr.contains("create it with"), "{out}");
}

#[test]
fn a_user_without_a_password_is_refused() {
    let w = World::new();
    let out = w.g.run(&["--user", "u", "list"]);
    out.code(2).stderr_has("ESTX_PASSWORD");
    // An empty password (or only a newline) counts as none.
    for empty in ["", "\n"] {
        let out =
            w.g.run_env(&[("ESTX_PASSWORD", empty)], &["--user", "u", "list"]);
        out.code(2).stderr_has("ESTX_PASSWORD");
    }
}

/// Issue 28, item 8: a URL without a scheme is a usage error saying what
/// to add, not a cluster error about "cannot-be-a-base" URLs.
#[test]
fn a_url_without_a_scheme_is_a_usage_error_saying_to_add_one() {
    let w = World::bare();
    let mut g = w.g.clone();
    g.url = "localhost:9200".into();
    let out = g.run(&["list"]);
    out.code(2)
        .stderr_has("has no scheme: add http:// or https://")
        .stderr_has("http://localhost:9200");
    assert!(!out.stderr.contains("cannot-be-a-base"), "{out}");
}

/// Issue 28, item 8: `https://` to a plain-HTTP port says the server
/// answered plain HTTP, not "corrupt message of type InvalidContentType".
#[test]
fn https_to_a_plain_http_port_says_the_server_answered_plain_http() {
    let w = World::new();
    let mut g = w.g.clone();
    g.url = w.g.url.replacen("http://", "https://", 1);
    let out = g.run(&["list"]);
    out.code(3).stderr_has(
        "the server answered plain HTTP to a TLS handshake: use http:// instead of https://",
    );
}

/// Issue 28, item 8: an id that names nothing is "not found" (exit 1), and
/// says so, for every command taking one.
#[test]
fn an_unknown_id_is_not_found_for_every_command_taking_one() {
    let w = World::new();
    for args in [
        &["history", "txn-nope"][..],
        &["history", "txn-nope", "--json"],
        &["release-lock", "acct-99"],
        &["release-lock", "--txn", "txn-nope"],
        &["show", "txn-nope"],
        &["rollback", "txn-nope"],
        &["recover", "txn-nope"],
        &["reverse", "txn-nope"],
    ] {
        let out = w.run(args);
        out.code(1).stderr_has("not found");
        assert!(!out.stderr.contains("again to carry on"), "{out}");
    }
}
