//! The stop question's layer: its state, its text and its key hints (its
//! keys and what a stop does are in `dashboard::stop`).

pub mod draw;

use super::{Context, Effect, Hint, Outcome};
use crate::dashboard::event::OnMarks;
use crate::dashboard::keymap::{DialogOp, Keymap};
use crate::dashboard::log::LogLevel;
use crate::dashboard::progress::BulkProgress;
use crate::protocol::Procedure;
use crossterm::event::KeyEvent;
use std::path::Path;

/// The question before a bulk run is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopAsk {
    /// Asked by quitting (`q`, Ctrl-C): a stop is followed by the quit.
    pub quit: bool,
    /// `false`: "keep running" has focus (the default); `true`: "stop".
    pub confirm_focused: bool,
}

impl StopAsk {
    /// A key while the question is open (the dialog's key table):
    /// confirm stops, cancel keeps running, focus and Enter as in every
    /// dialog.
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        let stop = match cx.keys.dialog_op(key.code) {
            Some(DialogOp::Confirm) => true,
            Some(DialogOp::Press) => self.confirm_focused,
            Some(DialogOp::Cancel) => false,
            Some(DialogOp::Focus) => {
                self.confirm_focused = !self.confirm_focused;
                return Outcome::stay();
            }
            _ => return Outcome::stay(),
        };
        if !stop {
            let text = "the bulk run keeps running".to_string();
            return Outcome::with(Effect::Log(LogLevel::Info, text)).closing();
        }
        Outcome::with(Effect::StopBulk { quit: self.quit }).closing()
    }

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

/// The question's text: what stopping does, where the ids left go and how
/// to carry on; asked by quitting, "stop it and quit, or keep running?".
pub fn question(b: &BulkProgress, quit: bool, profile: Option<&str>) -> Vec<String> {
    let verb = b.on.verb();
    let mut out = vec![if quit {
        format!(
            "A bulk {verb} is running ({}/{}): stop it and quit, or keep running?",
            b.done, b.total
        )
    } else {
        format!("Stop the bulk {verb}? ({}/{} ended)", b.done, b.total)
    }];
    out.push(
        "Stopping: no new transaction starts; each started transaction is brought to a \
         state a resume or the application's recovery finishes."
            .into(),
    );
    match &b.left_file {
        Some(file) => {
            out.push(format!(
                "The ids left are written to {} (one a line).",
                file.display()
            ));
            out.push(format!(
                "Then resume with: {}",
                resume_line(b.on, file, profile)
            ));
        }
        None => out.push(
            "The ids left are named in the log (no state directory to write them to: set HOME \
             or XDG_STATE_HOME)."
                .into(),
        ),
    }
    if quit {
        out.push("The dashboard quits once the run has stopped.".into());
    }
    out
}

/// The command that carries on with the ids a stopped run left.
pub fn resume_line(on: OnMarks, file: &Path, profile: Option<&str>) -> String {
    let verb = match on {
        OnMarks::Procedure(Procedure::Rollback) => "rollback",
        _ => "recover",
    };
    let profile = profile.map_or(String::new(), |p| format!(" --profile {p}"));
    format!(
        "estx-tui {verb} --ids-from {}{profile} --reason TEXT",
        file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::layers::fixture::{key, Shared};
    use crossterm::event::KeyCode;

    #[test]
    fn cancel_keeps_the_run_and_confirm_stops_it_quitting_if_asked_by_quit() {
        let shared = Shared::new();
        let mut ask = StopAsk {
            quit: true,
            confirm_focused: false,
        };
        // Enter presses the focused button: "keep running" first.
        let out = ask.key(&shared.cx(), key(KeyCode::Enter));
        assert!(out.close, "{out:?}");
        assert!(
            matches!(out.effects[..], [Effect::Log(LogLevel::Info, _)]),
            "{out:?}"
        );
        let out = ask.key(&shared.cx(), key(KeyCode::Char('y')));
        assert!(out.close, "{out:?}");
        assert!(
            matches!(out.effects[..], [Effect::StopBulk { quit: true }]),
            "{out:?}"
        );
    }
}
