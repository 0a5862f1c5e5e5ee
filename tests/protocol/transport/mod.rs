//! The transport as production deployments answer: errors classified by
//! status whatever the body, throttling honoured, a health check that never
//! holds a poll up, and one clock (the cluster's) for every time the protocol
//! writes and judges. Faults come from the test proxy's canned answers.

mod clock;
mod errors;
mod health;
mod load;

use crate::common::FaultProxy;
use crate::fixture::Fx;
use estx::cluster::{Cluster, ConnectOptions};
use estx::protocol::{NewTransfer, Protocol};
use std::time::Duration;

/// A cluster handle through `proxy`.
fn via(proxy: &FaultProxy) -> Cluster {
    let mut opts = ConnectOptions::new(proxy.url());
    opts.timeout = Duration::from_secs(10);
    Cluster::connect(&opts).unwrap()
}

/// A world with accounts A and B holding 100 each.
async fn two_accounts() -> Fx {
    let fx = Fx::new().await;
    fx.account("A", 100).await;
    fx.account("B", 100).await;
    fx
}

/// A transfer of 10 from A to B with this id.
fn ten(id: &str) -> NewTransfer {
    NewTransfer {
        id: Some(id.into()),
        src: "A".into(),
        dest: "B".into(),
        amount: 10,
    }
}

/// The protocol of `fx` over another cluster handle.
fn proto_on(fx: &Fx, cluster: Cluster) -> Protocol {
    Protocol::new(cluster, fx.proto.config().clone())
}
