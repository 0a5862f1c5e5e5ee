//! Reversing a finished transfer from the dashboard (`V`), the state side:
//! which selection the key opens the dialog on (finished, or committed and
//! finished first; anything else is refused at once in the protocol's own
//! words), what a confirmed run must still find, and which reported steps
//! are the reversal's. What its dialog previews is the protocol's plan of
//! the reversal ([`crate::protocol::intervene::JudgedReversal::on_reversal`]).

use super::app::{App, LogLevel};
use super::event::IoRequest;
use crate::protocol::intervene::{Act, Reverse};
use crate::protocol::reverse::admit;

/// `V`: opens the reverse dialog on the selected transaction when the
/// protocol's rule admits it as it is on screen (finished, or committed:
/// finished first); otherwise logs the protocol's refusal.
pub fn open(app: &mut App) -> Vec<IoRequest> {
    // Only a transaction the operator can see selected (the one rule of
    // [`super::selection::target`]), before the protocol's judgement of it.
    if let Err(why) = super::selection::target::transaction_target(app) {
        let text = format!("{}: {why}", reverse(String::new()).title());
        app.push_log(LogLevel::Error, text);
        return vec![];
    }
    let Some(t) = app.selected_transaction().cloned() else {
        app.push_log(LogLevel::Info, "no transaction selected");
        return vec![];
    };
    if let Err(why) = admit(&t, None, true) {
        app.push_log(
            LogLevel::Error,
            format!(
                "{} {}: refused: {why}",
                reverse(String::new()).title(),
                t.id
            ),
        );
        return vec![];
    }
    super::confirm::open_dialog(app, |id| reverse(id).into())
}

/// The reversal `V` confirms: a committed original is finished first.
fn reverse(txn: String) -> Reverse {
    Reverse {
        txn,
        finish_committed: true,
    }
}
