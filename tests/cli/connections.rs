//! The connections operators ask for, end to end through the test proxy:
//! bearer tokens (service-account, OAuth2, JWT) against Elasticsearch
//! security, one credential kind at a time, Elastic Cloud IDs refused next
//! to `--url`, and AWS SigV4 signing checked by a proxy that recomputes
//! every signature as Amazon OpenSearch Service does (and refuses with its
//! 403) through a whole session: `doctor`, `list`, a rollback.

use super::*;
use common::proxy::{verify_sigv4, Product, Realm, SigV4Key, User};
use common::FaultProxy;

const TOKEN: &str = "AAEAAWVsYXN0aWMvZmxlZXQtc2VydmVyL3Rva2VuMTo3TFdaSDZ";

/// A pending transfer `t1` (A -> B, 100, 10 minutes old) behind a proxy;
/// `g` talks to the proxy.
fn behind_proxy() -> (World, Globals, FaultProxy) {
    let w = World::new();
    w.stage_old_pending();
    w.refresh();
    let proxy = FaultProxy::start(&w.g.url);
    let mut g = w.g.clone();
    g.url = proxy.url();
    (w, g, proxy)
}

#[test]
fn a_bearer_token_authenticates_and_a_refused_one_names_its_variable() {
    let (w, g, proxy) = behind_proxy();
    proxy.secure(Realm::new(
        Product::Elasticsearch,
        vec![User::admin("svc", "unused-pw").with_bearer_token(TOKEN)],
    ));
    let out = g.run_env(&[("ESTX_BEARER_TOKEN", TOKEN)], &["doctor"]);
    out.stdout_has("credential     bearer token")
        .stdout_has("on, user svc");
    let doctor = g
        .run_env(&[("ESTX_BEARER_TOKEN", TOKEN)], &["doctor", "--json"])
        .json();
    assert_eq!(doctor["credential"]["kind"], "bearer", "{doctor}");
    g.run_env(&[("ESTX_BEARER_TOKEN", TOKEN)], &["list"])
        .code(0)
        .stdout_has("t1");
    let wrong = "AAEAAWVsYXN0aWMvd3Jvbmc";
    let out = g.run_env(&[("ESTX_BEARER_TOKEN", wrong)], &["list"]);
    out.code(3)
        .stderr_has("HTTP 401")
        .stderr_has("unable to authenticate with provided credentials")
        .stderr_has("credential in use: bearer token")
        .stderr_has("ESTX_BEARER_TOKEN");
    assert!(!out.stderr.contains(wrong), "secret echoed: {out}");
    // Two kinds at once are refused before anything is sent.
    let sent = proxy.canned();
    let out = g.run_env(
        &[("ESTX_BEARER_TOKEN", TOKEN), ("ESTX_API_KEY", "id:key")],
        &["list"],
    );
    assert_ne!(out.code, 0, "{out}");
    out.stderr_has("exactly one");
    assert!(!out.stderr.contains(TOKEN), "secret echoed: {out}");
    assert_eq!(proxy.canned(), sent, "nothing was sent");
    assert_eq!(w.state("t1"), "pending");
}

#[test]
fn a_cloud_id_next_to_a_url_is_refused() {
    let w = World::bare();
    // The harness always passes --url.
    let id = "staging:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRjZWM2ZjI2MWE3NGJmMjRjZTMzYmI4ODExYjg0Mjk0ZiRjNmMyY2E2ZDA0MjI0OWFmMGNjN2Q3YTllOTYyNTc0Mw==";
    w.g.run(&["--cloud-id", id, "list"])
        .code(2)
        .stderr_has("--cloud-id (ESTX_CLOUD_ID) and --url (ESTX_URL) both");
}

const AK: &str = "AKIDEXAMPLE";
const SK: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

fn aws_key(service: &str, session_token: Option<&str>) -> SigV4Key {
    SigV4Key {
        access_key: AK.into(),
        secret: SK.into(),
        session_token: session_token.map(str::to_string),
        region: "eu-west-1".into(),
        service: service.into(),
    }
}

#[test]
fn a_whole_session_is_signed_with_sigv4_and_checked_by_the_proxy() {
    let (w, g, proxy) = behind_proxy();
    proxy.require_sigv4(aws_key("es", None));
    let env = [
        ("AWS_ACCESS_KEY_ID", AK),
        ("AWS_SECRET_ACCESS_KEY", SK),
        ("AWS_REGION", "eu-west-1"),
    ];
    let sigv4 = ["--aws-sigv4", "es"];
    let run = |args: &[&str]| g.run_env(&env, &[&sigv4[..], args].concat());
    run(&["doctor"]).stdout_has("credential     AWS SigV4 (service `es`)");
    let doctor = run(&["doctor", "--json"]).json();
    assert_eq!(
        doctor["credential"],
        serde_json::json!({"kind": "aws_sigv4", "service": "es"})
    );
    run(&["list"]).code(0).stdout_has("t1");
    run(&["rollback", "t1", "--reason", "signed"]).code(0);
    assert_eq!(w.state("t1"), "rolled-back");
    assert_eq!(
        proxy.canned(),
        0,
        "a request was refused: {:?}",
        proxy.log()
    );
    assert!(proxy.sigv4_accepted() >= 10, "{}", proxy.sigv4_accepted());

    // The proxy does refuse: unsigned (IAM's `anonymous`, as a domain
    // answers, which the tool reads as "not signed"), and signed with
    // another secret.
    let out = g.run(&["list"]);
    out.code(3)
        .stderr_has("HTTP 403")
        .stderr_has("User: anonymous is not authorized to perform: es:ESHttp")
        .stderr_has("an unsigned request")
        .stderr_has("--aws-sigv4");
    let bad = [
        ("AWS_ACCESS_KEY_ID", AK),
        ("AWS_SECRET_ACCESS_KEY", "not-the-secret"),
        ("AWS_REGION", "eu-west-1"),
    ];
    let out = g.run_env(&bad, &["--aws-sigv4", "es", "list"]);
    out.code(3)
        .stderr_has("HTTP 403")
        .stderr_has("signature we calculated does not match");
    assert!(
        !out.stderr.contains("not-the-secret"),
        "secret echoed: {out}"
    );
    // The region is part of the signature.
    let out = g.run_env(
        &env,
        &["--aws-sigv4", "es", "--aws-region", "us-east-1", "list"],
    );
    out.code(3).stderr_has("scoped to a valid region");
}

#[test]
fn serverless_signing_carries_the_session_token_and_the_body_hash() {
    let (w, g, proxy) = behind_proxy();
    proxy.require_sigv4(aws_key("aoss", Some("FwoGZXIvYXdzEXAMPLE")));
    let env = [
        ("AWS_ACCESS_KEY_ID", AK),
        ("AWS_SECRET_ACCESS_KEY", SK),
        ("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEXAMPLE"),
        ("AWS_DEFAULT_REGION", "eu-west-1"),
    ];
    // Searches and the rollback's writes have bodies: each one is hashed.
    g.run_env(&env, &["--aws-sigv4", "aoss", "list"])
        .code(0)
        .stdout_has("t1");
    g.run_env(
        &env,
        &["--aws-sigv4", "aoss", "rollback", "t1", "--reason", "x"],
    )
    .code(0);
    assert_eq!(w.state("t1"), "rolled-back");
    assert_eq!(
        proxy.canned(),
        0,
        "a request was refused: {:?}",
        proxy.log()
    );
    // Without the region anywhere, nothing is sent.
    let out = g.run_env(&env[..3], &["--aws-sigv4", "aoss", "list"]);
    assert_ne!(out.code, 0, "{out}");
    out.stderr_has("--aws-region");
}

/// The proxy's own verifier against AWS's published SigV4 test suite
/// (aws-c-auth `aws-signing-test-suite/v4`, the vectors that sign the body:
/// `post-x-www-form-urlencoded` and `post-x-www-form-urlencoded-parameters`).
#[test]
fn the_verifying_proxy_agrees_with_the_published_vectors() {
    let key = SigV4Key {
        access_key: AK.into(),
        secret: SK.into(),
        session_token: None,
        region: "us-east-1".into(),
        service: "service".into(),
    };
    let hash = "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e";
    let check = |content_type: &str, signature: &str, body: &[u8]| {
        let auth = format!(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date, \
             Signature={signature}"
        );
        let headers = [
            ("Content-Type", content_type),
            ("Host", "example.amazonaws.com"),
            ("Content-Length", "13"),
            ("X-Amz-Date", "20150830T123600Z"),
            ("X-Amz-Content-Sha256", hash),
            ("Authorization", auth.as_str()),
        ];
        verify_sigv4(&key, "POST", "/", &headers, body)
    };
    let plain = "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b";
    let charset = "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422";
    let form = "application/x-www-form-urlencoded";
    let form_utf8 = "application/x-www-form-urlencoded; charset=utf-8";
    assert_eq!(check(form, plain, b"Param1=value1"), Ok(()));
    assert_eq!(check(form_utf8, charset, b"Param1=value1"), Ok(()));
    // A changed body, header or signature is caught.
    assert!(check(form, plain, b"Param1=value2")
        .unwrap_err()
        .contains("x-amz-content-sha256"));
    assert!(check(form_utf8, plain, b"Param1=value1")
        .unwrap_err()
        .contains("does not match"));
}

#[test]
fn sigv4_signs_on_the_clusters_clock_when_the_local_clock_is_off() {
    let (w, g, proxy) = behind_proxy();
    proxy.require_sigv4(aws_key("es", None));
    // AWS refuses a signature more than 5 minutes off its clock; this
    // cluster's clock is 20 minutes ahead of ours.
    proxy.sigv4_window(300);
    proxy.shift_date(1200);
    let env = [
        ("AWS_ACCESS_KEY_ID", AK),
        ("AWS_SECRET_ACCESS_KEY", SK),
        ("AWS_REGION", "eu-west-1"),
    ];
    let run = |args: &[&str]| g.run_env(&env, &[&["--aws-sigv4", "es"][..], args].concat());
    let list = run(&["list"]);
    list.code(0).stdout_has("t1");
    // One refusal ("Signature expired") taught the signer the offset.
    assert_eq!(proxy.canned(), 1, "{list}\n{:#?}", proxy.log());
    run(&["rollback", "t1", "--reason", "skewed"]).code(0);
    assert_eq!(w.state("t1"), "rolled-back");
    // A new process learns it again (requests already in flight are each
    // refused once and signed again), never more than once a request.
    let refused = proxy.log().iter().filter(|l| l.contains("-> 403")).count();
    assert!(refused >= 2, "{:#?}", proxy.log());
}
