//! Rendering of the dashboard as a pure function of `App`: snapshots of every
//! screen an operator can see (through `TestBackend`, no cluster needed) and
//! cell-colour checks of the destructive confirmation dialogs.
//!
//! Everything is built by hand with a fixed clock, so the snapshots are
//! deterministic. Update them with
//! `INSTA_UPDATE=always cargo test --test dashboard_render`, then read the
//! `.snap` files before committing them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// `insta::assert_snapshot!` pinned to the snapshot files this crate had as a
/// single `tests/dashboard_render.rs`: `tests/snapshots/dashboard_render__<name>.snap`.
/// Without it insta would look in `tests/dashboard_render/snapshots/` and put
/// the module path (`dashboard_render__screens__…`) into the file name.
macro_rules! assert_snapshot {
    ($name:expr, $value:expr $(,)?) => {
        insta::with_settings!(
            {
                snapshot_path => "../snapshots",
                prepend_module_to_snapshot => false,
            },
            {
                insta::assert_snapshot!(format!("dashboard_render__{}", $name), $value)
            }
        )
    };
}

mod cluster_status;
mod colours;
mod dialogs;
mod drawing;
mod fixtures;
mod layout;
mod looking;
mod narrow;
mod production;
mod reverse;
mod screens;
mod themes;
mod timeline;
mod trends;
mod walk;
