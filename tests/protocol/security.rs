//! The protocol module against a cluster with security on, Elasticsearch's
//! and OpenSearch's, as the test proxy plays them (`common::proxy::security`;
//! osmem-server has none): who the cluster says we are, a refused login, a
//! user without write privilege whose rollback fails at its first write with
//! nothing written, and the dashboard's poll working read-only.

use crate::common::proxy::{Product, Realm, User};
use crate::common::FaultProxy;
use crate::fixture::Fx;
use crate::procedures::stage;
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::{Procedure, Protocol, RunLimits, Verdict};
use estx::Error;
use std::time::Duration;

const PRODUCTS: [Product; 2] = [Product::Elasticsearch, Product::OpenSearch];

/// A `product` security layer in front of `fx`'s server, with the admin
/// `ops` and `viewer`, who may write nothing.
fn secured(fx: &Fx, product: Product) -> FaultProxy {
    let proxy = FaultProxy::start(&fx.url);
    proxy.secure(Realm::new(
        product,
        vec![
            User::admin("ops", "ops-pw"),
            User::read_only("viewer", "viewer-pw", &[]),
            User::read_only("blind", "blind-pw", &[]).without_monitor(),
        ],
    ));
    proxy
}

/// A handle through `proxy` logged in as `user` with `password`.
fn login(proxy: &FaultProxy, user: &str, password: &str) -> Cluster {
    let mut opts = ConnectOptions::new(proxy.url());
    opts.user = Some(user.into());
    opts.password = Some(password.into());
    opts.timeout = Duration::from_secs(10);
    Cluster::connect(&opts).unwrap()
}

#[tokio::test]
async fn the_cluster_names_the_user_in_either_product_and_none_without_security() {
    let fx = Fx::new().await;
    for product in PRODUCTS {
        let proxy = secured(&fx, product);
        for user in ["ops", "viewer"] {
            let cluster = login(&proxy, user, &format!("{user}-pw"));
            let got = cluster.authenticated_user().await.unwrap();
            assert_eq!(
                got.as_deref(),
                Some(user),
                "{product:?}: {:#?}",
                proxy.log()
            );
        }
    }
    // No security layer: neither endpoint answers with a user.
    assert_eq!(fx.cluster().authenticated_user().await.unwrap(), None);
}

#[tokio::test]
async fn a_refused_login_is_an_auth_error_without_the_secret() {
    let fx = Fx::new().await;
    for product in PRODUCTS {
        let proxy = secured(&fx, product);
        let cluster = login(&proxy, "ops", "not-the-pw");
        let e = cluster.authenticated_user().await.unwrap_err();
        assert!(
            matches!(e, Error::Auth { status: 401, .. }),
            "{product:?}: {e:?}"
        );
        assert!(!e.to_string().contains("not-the-pw"), "{e}");
        // Retrying cannot help: one request, no second endpoint tried.
        assert_eq!(proxy.log().len(), 1, "{:#?}", proxy.log());
        // The dashboard's poll says the same.
        let e = estx::protocol::read::poll::load(&cluster, &fx.ix.indices(), 10)
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::Auth { status: 401, .. }),
            "{product:?}: {e:?}"
        );
    }
}

#[tokio::test]
async fn a_rollback_without_write_privilege_fails_at_its_first_write_with_nothing_written() {
    let fx = Fx::new().await;
    for product in PRODUCTS {
        let tag = format!("{product:?}");
        let (id, src, dest) = stage(&fx, &tag, 2).await;
        let docs = [
            (fx.ix.transactions.clone(), id.clone()),
            (fx.ix.accounts.clone(), src.clone()),
            (fx.ix.accounts.clone(), dest.clone()),
        ];
        let mut before = Vec::new();
        for (index, doc) in &docs {
            before.push(fx.cluster().get(index, doc).await.unwrap().unwrap());
        }
        let proxy = secured(&fx, product);
        let viewer = Protocol::new(
            login(&proxy, "viewer", "viewer-pw"),
            fx.proto.config().clone(),
        );
        let report = viewer
            .run_procedure(&id, Procedure::Rollback, false, RunLimits::default())
            .await;
        match &report.verdict {
            Verdict::Failed(
                e @ Error::Auth {
                    status: 403,
                    reason,
                },
            ) => {
                assert!(!e.is_transient());
                assert!(
                    reason.contains("indices:data/write/"),
                    "{product:?}: {reason}"
                );
            }
            other => panic!(
                "{product:?}: expected a 403, got {other:?}\n{:#?}",
                proxy.log()
            ),
        }
        assert!(!report.wrote(), "{product:?}: {:#?}", report.steps);
        let refused = proxy.log().iter().filter(|l| l.contains("-> 403")).count();
        assert_eq!(
            refused,
            1,
            "one refused write, not retried: {:#?}",
            proxy.log()
        );
        for ((index, doc), was) in docs.iter().zip(&before) {
            let now = fx.cluster().get(index, doc).await.unwrap().unwrap();
            assert_eq!(
                (now.seq_no, now.primary_term, &now.source),
                (was.seq_no, was.primary_term, &was.source),
                "{product:?}: {index}/{doc} changed"
            );
        }
    }
}

#[tokio::test]
async fn the_dashboard_poll_works_read_only() {
    let fx = Fx::new().await;
    let (id, _, _) = stage(&fx, "ro", 2).await;
    fx.refresh().await;
    for product in PRODUCTS {
        let proxy = secured(&fx, product);
        let viewer = Protocol::new(
            login(&proxy, "viewer", "viewer-pw"),
            fx.proto.config().clone(),
        );
        let snap = viewer.poll_snapshot(500).await.unwrap();
        assert!(
            snap.transactions.iter().any(|t| t.id == id),
            "{product:?}: {:#?}",
            snap.transactions
        );
        assert!(
            snap.missing_indices.is_empty(),
            "{:?}",
            snap.missing_indices
        );
        let refused: Vec<String> = proxy
            .log()
            .into_iter()
            .filter(|l| l.contains("-> 401") || l.contains("-> 403"))
            .collect();
        assert!(refused.is_empty(), "{product:?}: {refused:#?}");
        assert!(proxy.forwarded() > 0);

        // Without the cluster privilege `monitor`: no health, the rest works.
        let blind = Protocol::new(
            login(&proxy, "blind", "blind-pw"),
            fx.proto.config().clone(),
        );
        let snap = blind.poll_snapshot(500).await.unwrap();
        assert_eq!(snap.health, None, "{product:?}");
        assert!(snap.transactions.iter().any(|t| t.id == id), "{product:?}");
        assert!(
            proxy
                .log()
                .iter()
                .any(|l| l.contains("_cluster/health") && l.contains("-> 403")),
            "{:#?}",
            proxy.log()
        );
    }
}
