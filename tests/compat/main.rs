//! The compatibility suite: one operator's session — discovery and
//! `doctor`, the dashboard's poll, `list`/`list --all`/`list --stuck`,
//! `audit`, `check`, `locks`, one intervention of each kind (rollback,
//! recover, release-lock, transfer, reverse), a bulk rollback and a batched
//! `recover --all-stuck` — run under every product personality of the test
//! proxy (`tests/common/proxy/personality.rs`: `GET /`, no `Date`,
//! point-in-time dialect, the `_shard_doc` restriction, missing APIs, size
//! limits, fine-grained access control, explicit indices refused in multi
//! requests, a role granted on alias names only), each through its own proxy in
//! front of the shared osmem-server.
//!
//! With `ESTX_TEST_URL` the personalities do not apply (they translate
//! osmem's dialect, and the proxy speaks plain http only): each personality
//! test then says so and passes, and [`the_cluster_as_it_is`] runs the same
//! session straight against the real cluster, whatever product it is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
mod doctor_roles;
mod faults;
mod freshness;
mod mappings;
mod restricted;
mod scoped;
mod session;
mod sources;

use common::proxy::{Difference, Personality, Product, Realm, User};
use common::{FaultProxy, TestServer};
use session::Session;

/// The user a personality with security authenticates as (basic auth, as
/// with fine-grained access control's internal user database).
const USER: (&str, &str) = ("estx", "estx-compat-1");

/// Runs the session under `p` (through a proxy playing it); with security,
/// as a user granted what the README's OpenSearch role grants: read and
/// metadata everywhere, writes on the tool's four indices, the cluster's
/// `monitor` and the composite actions.
fn under(p: Personality) {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!(
            "{}: personalities apply to osmem-server only; `the_cluster_as_it_is` runs the \
             session against ESTX_TEST_URL",
            p.name()
        );
        return;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(p);
    if p.has(Difference::AliasOnlyRole) {
        return alias_only(&proxy, p, server.url());
    }
    if !p.has(Difference::FineGrainedAccessControl) {
        session::run(&proxy.url(), Some(p));
        return;
    }
    let s = Session::as_user(&proxy.url(), p.name(), Some(USER), server.url());
    let writable = s.index_names();
    let user = User::read_only(USER.0, USER.1, &writable)
        .with_backend_roles(&["arn:aws:iam::123456789012:role/estx-operator"]);
    proxy.secure(Realm::new(Product::OpenSearch, vec![user]));
    session::run_in(&s, Some(p));
}

/// The session on indices that are aliases, each over one concrete index,
/// as a user whose role is granted on the alias names only (Elasticsearch
/// security): point-in-time pages are refused (the personality), and
/// `_has_privileges` answers `read` on the aliases only.
fn alias_only(proxy: &FaultProxy, p: Personality, server: &str) {
    let s = Session::as_user(&proxy.url(), p.name(), Some(USER), server);
    s.behind_aliases();
    let names = s.index_names();
    let user = User::read_only(USER.0, USER.1, &names).reading_only(&names);
    proxy.secure(Realm::new(Product::Elasticsearch, vec![user]));
    session::run_in(&s, Some(p));
}

#[test]
fn the_cluster_as_it_is() {
    session::run(TestServer::shared().url(), None);
}

#[test]
fn elasticsearch_7_17() {
    under(Personality::Elasticsearch717);
}

#[test]
fn elasticsearch_8() {
    under(Personality::Elasticsearch8);
}

#[test]
fn elasticsearch_9() {
    under(Personality::Elasticsearch9);
}

#[test]
fn elasticsearch_9_with_date() {
    under(Personality::Elasticsearch9Dated);
}

#[test]
fn elasticsearch_serverless() {
    under(Personality::ElasticsearchServerless);
}

#[test]
fn opensearch_2() {
    under(Personality::OpenSearch2);
}

#[test]
fn opensearch_3() {
    under(Personality::OpenSearch3);
}

#[test]
fn opensearch_3_2() {
    under(Personality::OpenSearch32);
}

#[test]
fn aws_opensearch_2() {
    under(Personality::AwsOpenSearch2);
}

#[test]
fn aws_opensearch_2_with_fine_grained_access_control() {
    under(Personality::AwsOpenSearch2Fgac);
}

#[test]
fn aws_opensearch_2_with_explicit_index_refused() {
    under(Personality::AwsOpenSearch2ExplicitIndexRefused);
}

#[test]
fn elasticsearch_8_with_a_role_on_alias_names_only() {
    under(Personality::Elasticsearch8AliasOnlyRole);
}

/// The session where an ingest pipeline stamps `modification_time` on every
/// write (the article's own pipeline; the proxy emulates it, see
/// `proxy/fls.rs`): the tool recognises its own writes by the fields it
/// wrote, so the stamp neither hides a landed step whose answer was lost
/// nor stops a run.
#[test]
fn opensearch_2_with_a_pipeline_stamping_every_write() {
    let server = TestServer::shared();
    if server.is_external() {
        eprintln!("personalities apply to osmem-server only");
        return;
    }
    let proxy = FaultProxy::start(server.url());
    proxy.personality(Personality::OpenSearch2);
    proxy.stamp_writes(Some("modification_time"));
    // The session's own seeding (staged transfers backdated an hour) goes
    // to the server: through the pipeline no backdate would hold.
    let p = Personality::OpenSearch2;
    let s = Session::as_user(
        &proxy.url(),
        "opensearch-2, stamping pipeline",
        None,
        server.url(),
    );
    // The answer to the recovery's first write of `m1` is lost after it
    // landed, stamped: the tool must know the write for its own by the
    // fields it wrote (it read it as another process's before, exit 5).
    proxy.drop_responses("POST", &format!("/{}/_update/m1", s.ix.transactions), 1);
    session::run_in(&s, Some(p));
    assert_eq!(proxy.dropped(), 1, "the lost answer was not exercised");
}

/// The session under field-level security on the accounts (Elasticsearch's
/// refusal of partial updates), see `restricted.rs`.
#[test]
fn elasticsearch_8_with_field_security_on_the_accounts() {
    restricted::under(restricted::Restriction::FieldSecurityOnAccounts);
}

/// The session under field-level security on every index, the audit index
/// included (OpenSearch's refusal).
#[test]
fn opensearch_2_with_field_security_everywhere() {
    restricted::under(restricted::Restriction::FieldSecurityEverywhere);
}

/// The session on indices with derived source (OpenSearch 3.2+).
#[test]
fn opensearch_3_with_derived_source() {
    restricted::under(restricted::Restriction::DerivedSource);
}

/// The session with `index.blocks.write` on the accounts.
#[test]
fn opensearch_2_with_write_blocked_accounts() {
    restricted::under(restricted::Restriction::WriteBlockOnAccounts);
}

/// The session with a shard of every index lost (a partial point-in-time).
#[test]
fn opensearch_2_with_a_lost_shard() {
    restricted::under(restricted::Restriction::LostShard);
}
