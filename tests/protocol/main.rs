//! Integration tests of the protocol module against a real server
//! (osmem-server, or the cluster at `ESTX_TEST_URL`). One test binary, so the
//! suite links once and shares one server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod amounts;
mod application;
mod audit;
mod batch;
mod bulk;
mod causes;
mod concurrency;
mod deployments;
mod exact;
mod field_security;
mod fixture;
mod healing;
mod ids;
mod locks;
mod long_values;
mod lost_responses;
mod malformed;
mod mapped_times;
mod mapped_values;
mod operators;
mod plan_files;
mod poll_kept;
mod poll_kept_bound;
mod poll_requests;
mod procedures;
mod receipts;
mod reverse;
mod security;
mod snapshot_poll;
mod stuck;
mod trail;
mod transport;
