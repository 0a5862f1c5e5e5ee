//! The stop question's layer state (the question itself, its keys and what
//! a stop does are in `dashboard::stop`).

use super::Hint;
use crate::dashboard::keymap::{DialogOp, Keymap};

/// The question before a bulk run is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopAsk {
    /// Asked by quitting (`q`, Ctrl-C): a stop is followed by the quit.
    pub quit: bool,
    /// `false`: "keep running" has focus (the default); `true`: "stop".
    pub confirm_focused: bool,
}

impl StopAsk {
    /// The key bar while the question is open: the dialog's confirm and
    /// cancel keys, as stop and keep running.
    pub fn hints(keys: &Keymap) -> Vec<Hint> {
        keys.dialog
            .iter()
            .filter(|b| matches!(b.op, DialogOp::Confirm | DialogOp::Cancel))
            .map(|b| {
                let what = if b.op == DialogOp::Confirm {
                    "stop"
                } else {
                    "keep running"
                };
                (0, b.label.to_string(), what.to_string())
            })
            .collect()
    }
}
