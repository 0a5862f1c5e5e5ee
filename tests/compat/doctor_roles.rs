//! `doctor` under Amazon OpenSearch Service's fine-grained access control:
//! per-index privileges cannot be asked there, so it shows what the role
//! mapping needs instead: the user, its OpenSearch roles and its backend
//! roles (`_plugins/_security/api/account`).

use super::common::proxy::{Personality, Product, Realm, User};
use super::common::{FaultProxy, TestServer};
use super::session::Session;

const ROLE_ARN: &str = "arn:aws:iam::123456789012:role/estx-doctor";

#[test]
fn under_fgac_doctor_shows_the_users_roles_and_backend_roles() {
    let p = Personality::AwsOpenSearch2Fgac;
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("{}: personalities apply to osmem-server only", p.name());
        return;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    let user = ("estx-doc", "estx-doc-1");
    let s = Session::as_user(&proxy.url(), p.name(), Some(user), server.url());
    let writable = s.index_names();
    let granted = User::read_only(user.0, user.1, &writable).with_backend_roles(&[ROLE_ARN]);
    proxy.secure(Realm::new(Product::OpenSearch, vec![granted]));
    s.init();

    let json = s.run(&["doctor", "--json"]);
    let security = &json.json()["security"];
    assert_eq!(security["kind"], "roles", "{json}");
    assert_eq!(security["user"], user.0, "{json}");
    assert_eq!(security["backend_roles"][0], ROLE_ARN, "{json}");
    assert!(
        !security["roles"].as_array().is_none_or(Vec::is_empty),
        "{json}"
    );
    let text = s.run(&["doctor"]);
    let line = text
        .stdout
        .lines()
        .find(|l| l.starts_with("security"))
        .unwrap_or_else(|| panic!("no security line: {text}"));
    assert!(
        line.contains(&format!("backend roles {ROLE_ARN}")),
        "{text}"
    );
    assert!(
        text.stdout.contains(&format!("backend roles [{ROLE_ARN}]"))
            && text.stdout.contains("rolesmapping"),
        "the check names the backend roles a mapping can use: {text}"
    );
}
