//! `estx-tui` CLI tests of the transport as deployments meet it: refused
//! logins however they are worded, secrets as mounted files deliver them, and
//! proxies from the environment.

use super::*;
use common::proxy::Canned;
use common::FaultProxy;

/// A transfer between two seeded accounts through `g`.
fn transfer(g: &Globals, envs: &[(&str, &str)], id: &str) -> Out {
    g.run_env(envs, &["transfer", "A", "B", "10", "--id", id])
}

fn seeded() -> World {
    let w = World::new();
    w.account("A", 100);
    w.account("B", 100);
    w
}

#[test]
fn a_refused_login_is_an_auth_error_whatever_the_body_and_nothing_is_written() {
    let w = seeded();
    for (i, canned) in [
        Canned::text(401, "Unauthorized"),
        Canned::empty(401),
        Canned::html(403, "403 Forbidden"),
    ]
    .into_iter()
    .enumerate()
    {
        let proxy = FaultProxy::start(&w.g.url);
        proxy.answer("", "", usize::MAX, canned.clone());
        let mut g = w.g.clone();
        g.url = proxy.url();
        let id = format!("refused{i}");
        let out = transfer(&g, &[("ESTX_API_KEY", "c2VjcmV0OmtleQ==")], &id);
        out.code(3)
            .stderr_has("authentication or authorisation failed");
        assert!(!out.stderr.contains("unexpected response"), "{out}");
        assert_eq!(proxy.forwarded(), 0, "{:?}", proxy.log());
        assert!(proxy.canned() > 0);
        assert!(w.source(&w.ix.transactions, &id).is_none());
        let list = g.run(&["list"]);
        list.code(3).stderr_has("authentication");
    }
    assert_eq!((w.balance("A"), w.balance("B")), (100, 100));
}

#[test]
fn a_secret_with_a_trailing_newline_works() {
    let w = seeded();
    transfer(&w.g, &[("ESTX_API_KEY", "c2VjcmV0OmtleQ==\n")], "key-nl").code(0);
    transfer(
        &w.g,
        &[("ESTX_USER", "operator\n"), ("ESTX_PASSWORD", "pw\r\n")],
        "basic-nl",
    )
    .code(0);
    assert_eq!((w.balance("A"), w.balance("B")), (80, 120));
}

#[test]
fn an_invalid_secret_is_a_clear_error_not_a_panic() {
    let w = seeded();
    for (var, value) in [
        ("ESTX_API_KEY", "c2VjcmV0\nOmtleQ=="),
        ("ESTX_API_KEY", "not base64 at all!"),
        ("ESTX_API_KEY", "clé"),
    ] {
        let out = transfer(&w.g, &[(var, value)], "bad-secret");
        out.code(2).stderr_has("invalid ESTX_API_KEY");
        assert!(!out.stderr.contains(value.trim()), "secret echoed: {out}");
    }
    let out = w.g.run_env(
        &[("ESTX_PASSWORD", "pw")],
        &["--user", "a:b", "transfer", "A", "B", "1"],
    );
    out.code(2).stderr_has("invalid ESTX_USER");
    assert!(w.source(&w.ix.transactions, "bad-secret").is_none());
    assert_eq!((w.balance("A"), w.balance("B")), (100, 100));
}

#[test]
fn proxy_variables_are_honoured_and_no_proxy_bypasses_them() {
    let w = seeded();
    let proxy = FaultProxy::start(&w.g.url);
    let mut g = w.g.clone();
    // A name that only the proxy can "resolve": it forwards to the server.
    g.url = "http://estx-via-proxy.invalid:9200".into();
    for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY"] {
        let before = proxy.proxied_requests();
        let id = format!("via-{var}");
        transfer(&g, &[(var, &proxy.url())], &id).code(0);
        assert!(
            proxy.proxied_requests() > before,
            "{var}: {:?}",
            proxy.log()
        );
        assert_eq!(w.state(&id), "finished");
    }
    let before = proxy.proxied_requests();
    let out = transfer(
        &g,
        &[
            ("HTTP_PROXY", &proxy.url()),
            ("NO_PROXY", "localhost,.invalid"),
        ],
        "bypassed",
    );
    out.code(3).stderr_has("unreachable");
    assert_eq!(proxy.proxied_requests(), before);
    // HTTPS_PROXY is for https URLs only.
    let out = transfer(&g, &[("HTTPS_PROXY", &proxy.url())], "https-only");
    out.code(3);
    assert_eq!(proxy.proxied_requests(), before);
    assert_eq!((w.balance("A"), w.balance("B")), (70, 130));
}

/// The cluster's own `now` is the clock; a fronting proxy's `Date` an hour
/// off is not believed. Only when the cluster's `now` cannot be asked does
/// the `Date` header stand in, and a local clock an hour off it is warned about.
#[test]
fn a_local_clock_an_hour_off_is_warned_about() {
    let w = seeded();
    w.run(&["list"]).code(0);
    let proxy = FaultProxy::start(&w.g.url);
    proxy.shift_date(3600);
    let mut g = w.g.clone();
    g.url = proxy.url();
    let out = g.run(&["list"]);
    out.code(0);
    assert!(!out.stderr.contains("clock"), "{out}");
    proxy.answer(
        "POST",
        "request_cache=false",
        usize::MAX,
        Canned::text(403, "Forbidden"),
    );
    let out = g.run(&["list"]);
    out.code(0).stderr_has("warning: local clock is 3");
    out.stderr_has("behind the cluster's");
    let direct = w.run(&["list"]);
    assert!(!direct.stderr.contains("clock"), "{direct}");
}

#[test]
fn https_signed_by_a_company_ca_works_with_ca_cert_or_the_system_store() {
    let w = World::new();
    let front = common::tls::TlsFront::start(&w.g.url);
    let mut g = w.g.clone();
    g.url = front.url();
    let ca = front.ca_file().display().to_string();
    // Unknown CA: refused, and the message says why.
    let out = g.run(&["list"]);
    out.code(3).stderr_has("unreachable");
    assert!(out.stderr.to_lowercase().contains("certificate"), "{out}");
    g.run(&["--ca-cert", &ca, "list"]).code(0);
    // The operating system's store (here: its `SSL_CERT_FILE` override).
    g.run_env(&[("SSL_CERT_FILE", &ca)], &["list"]).code(0);
}
