//! Ending a bulk run, only when the operator says so. The stop key (`S`,
//! rebindable as `stop_job`) asks first and says what stopping does; `q`
//! and Ctrl-C during a run ask "stop it and quit, or keep running" and
//! quit only once the run has stopped cleanly (the session then ends with
//! the command line's exit code for a stopped run); a stop signal (SIGTERM,
//! SIGHUP: nobody may be there to answer) stops it cleanly, then quits.
//! `Esc` never stops a run: it means back / clear filter / close. In the
//! question, `y` stops, `n`, `Esc` and `q` (the dialog's cancel keys) keep
//! it running, and Ctrl-C leaves the question open.
//!
//! A stop keeps new transactions from starting and lets each started one
//! reach a protocol state (every step is one conditional write), which a
//! resume or the application's own recovery finishes; the ids left are
//! written one a line to a file for `--ids-from` (by the task, as the
//! command line's stopped run writes them), and the log's counts say what
//! ended and what was left, never a left one as failed.

use super::app::{App, Ending, LogLevel};
use super::event::{Action, IoRequest, LeftIds};
use super::keymap::{DialogOp, Op};
use super::overlay::{Overlay, OverlayKind};
use crate::signals::StopSignal;
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

/// The stop key: asks before stopping the run in progress; without one (or
/// with one already stopping) says so.
pub fn ask_stop(app: &mut App) -> Vec<IoRequest> {
    match &app.bulk {
        None => app.push_log(LogLevel::Info, "no bulk run to stop"),
        Some(b) if b.stopping => app.push_log(LogLevel::Info, "the bulk run is already stopping"),
        Some(_) => app.overlays.open(Overlay::StopRun(StopAsk {
            quit: false,
            confirm_focused: false,
        })),
    }
    vec![]
}

/// `q` or Ctrl-C, wherever pressed: quits at once when no bulk run is in
/// progress; during one asks "stop it and quit, or keep running"; once the
/// run is stopping, quits as soon as it has stopped.
pub fn quit(app: &mut App) -> Vec<IoRequest> {
    match app.bulk.as_mut() {
        None => app.should_quit = true,
        Some(b) if b.stopping => {
            b.quit_when_stopped = true;
            app.push_log(
                LogLevel::Info,
                "quitting once the bulk run has stopped (its started transactions finish their step)",
            );
        }
        Some(_) => app.overlays.open(Overlay::StopRun(StopAsk {
            quit: true,
            confirm_focused: false,
        })),
    }
    vec![]
}

/// A stop signal: the run in progress, if any, is stopped cleanly and the
/// dashboard quits when it has; without one it quits at once.
pub fn signal(app: &mut App, s: StopSignal) -> Vec<IoRequest> {
    let Some(b) = app.bulk.as_mut() else {
        app.should_quit = true;
        return vec![];
    };
    b.quit_when_stopped = true;
    app.overlays.close(OverlayKind::StopRun);
    app.push_log(
        LogLevel::Info,
        format!("{}: stopping the bulk run, then quitting", s.name()),
    );
    begin(app)
}

/// Keys while the question is open (the dialog's key table): confirm
/// stops, cancel keeps running, focus and Enter as in every dialog.
pub fn on_key(app: &mut App, key: KeyEvent) -> Vec<IoRequest> {
    let op = app.keys.dialog_op(key.code);
    let Some(ask) = app.overlays.stop_ask_mut() else {
        return vec![];
    };
    let stop = match op {
        Some(DialogOp::Confirm) => true,
        Some(DialogOp::Press) => ask.confirm_focused,
        Some(DialogOp::Cancel) => false,
        Some(DialogOp::Focus) => {
            ask.confirm_focused = !ask.confirm_focused;
            return vec![];
        }
        _ => return vec![],
    };
    let quit = ask.quit;
    app.overlays.close(OverlayKind::StopRun);
    if !stop {
        app.push_log(LogLevel::Info, "the bulk run keeps running");
        return vec![];
    }
    if let Some(b) = app.bulk.as_mut() {
        b.quit_when_stopped |= quit;
    }
    begin(app)
}

/// Stops the run in progress: no new item starts; started ones reach their
/// next protocol state (a paused run is resumed for that).
fn begin(app: &mut App) -> Vec<IoRequest> {
    let Some(b) = app.bulk.as_mut().filter(|b| !b.stopping) else {
        return vec![];
    };
    b.stopping = true;
    b.paused = false;
    let then = if b.quit_when_stopped {
        ", then the dashboard quits"
    } else {
        ""
    };
    app.push_log(
        LogLevel::Info,
        format!(
            "stopping the bulk run: no new transaction starts; each started one reaches \
             its next protocol state{then}"
        ),
    );
    vec![IoRequest::StopBulk]
}

/// The question's text: what stopping does, where the ids left go and how
/// to carry on; asked by quitting, "stop it and quit, or keep running?".
pub fn question(app: &App) -> Vec<String> {
    let Some(b) = &app.bulk else {
        return Vec::new();
    };
    let quit = app.overlays.stop_ask().is_some_and(|a| a.quit);
    let verb = b.action.bulk_verb();
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
                resume_line(b.action, file, app.settings.profile.as_deref())
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
pub fn resume_line(action: Action, file: &Path, profile: Option<&str>) -> String {
    let verb = match action {
        Action::Rollback => "rollback",
        _ => "recover",
    };
    let profile = profile.map_or(String::new(), |p| format!(" --profile {p}"));
    format!(
        "estx-tui {verb} --ids-from {}{profile} --reason TEXT",
        file.display()
    )
}

/// The end of a stopped run: says how many were left and where their ids
/// are (with the line that carries on), and quits when the stop was asked
/// by quitting (with the stopped code when some were left).
pub fn ended(app: &mut App, action: Action, left: Option<LeftIds>, quit: bool) {
    // A question still open about a run that has ended asks nothing now.
    app.overlays.close(OverlayKind::StopRun);
    if let Some(l) = &left {
        let text = match &l.file {
            Ok(file) => format!(
                "{} transaction(s) left: their ids are in {}; resume with: {}",
                l.count,
                file.display(),
                resume_line(action, file, app.settings.profile.as_deref())
            ),
            Err(e) => format!(
                "{} transaction(s) left; cannot write their ids to a file: {e}",
                l.count
            ),
        };
        app.push_log(LogLevel::Info, text);
    }
    if quit {
        app.should_quit = true;
        if left.is_some_and(|l| l.count > 0) {
            app.ending = Ending::RunStopped;
        }
    }
}

/// The key bar's words for the keys of a bulk run (what the progress bar
/// shows): pause, stop, and that `q` asks.
pub fn bar_keys(app: &App, paused: bool) -> String {
    let pause = if paused { "resumes" } else { "pauses" };
    format!(
        "{} {pause} · {} stops (asks) · {} asks",
        app.keys.label(Op::PauseJob),
        app.keys.label(Op::StopJob),
        app.keys.key(Op::Quit)
    )
}
