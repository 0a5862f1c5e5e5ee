//! The dashboard's read model: what one poll loaded. It is the protocol
//! module's read side ([`crate::protocol::read::poll`]) — the dashboard has
//! no read path of its own; these names stay here for the UI.

pub use crate::protocol::read::poll::{
    load, AccountEntry, ReadStatus, Snapshot, StateCount, TerminalListing, DEFAULT_CAP, LOCKS_CAP,
    PENDING_ACCOUNTS_CAP,
};
