//! End-to-end tests of the real `estx-tui` binary: the dashboard runs in a
//! detached tmux session (fixed size) against the test server (osmem-server,
//! or the cluster at `ESTX_TEST_URL`); the test types keys with
//! `tmux send-keys`, reads the screen with `tmux capture-pane`, and checks
//! the documents through the library.
//!
//! Nothing synchronises by sleeping: every wait polls the screen or the
//! documents with a deadline.
//!
//! Visibility: the dashboard's polls are searches, and osmem-server has no
//! automatic refresh (a real cluster refreshes every second). So the tests
//! refresh the three indices after seeding, and — because the dashboard never
//! refreshes anything itself — keep refreshing them while they wait for the
//! screen to show the effect of an action (the writes the dashboard made).
//! The confirmation dialogs do not depend on this: they re-read by id, which
//! is realtime.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
mod screen;
mod world;

use common::tmux;

mod actions;
mod audit;
mod bulk;
mod filter_then_act;
mod groups;
mod jobs;
mod looking;
mod looks;
mod operators;
mod pause;
mod production;
mod reverse;
mod search;
mod session;
mod stopping;
mod timeline;
mod unseen;
