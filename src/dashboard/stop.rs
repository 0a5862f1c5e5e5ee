//! Ending a bulk run, only when the operator says so. The stop key (`S`,
//! rebindable as `stop_job`) asks first and says what stopping does; `q`
//! and Ctrl-C during a run ask "stop it and quit, or keep running" and
//! quit only once the run has stopped cleanly (the session then ends with
//! the command line's exit code for a stopped run); a stop signal (SIGTERM,
//! SIGHUP: nobody may be there to answer) stops it cleanly, then quits.
//! `Esc` never stops a run: it means back / clear filter / close. `q`
//! during a single act quits once the act has ended (a second `q` at once). In the
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
use super::event::{IoRequest, LeftIds, OnMarks};
use super::keymap::Op;
pub use super::layers::stop::resume_line;
pub use super::layers::stop::StopAsk;
use super::layers::{Overlay, OverlayKind};
use crate::signals::StopSignal;

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
        // A single act is short: the session ends once it has (its writes
        // and its record done); a second `q` does not wait.
        None if app.running.is_some() && !app.exit.after_act => {
            app.exit.after_act = true;
            let what = app
                .running
                .as_ref()
                .map(|r| super::event::titled(&r.act))
                .unwrap_or_default();
            app.push_log(
                LogLevel::Info,
                format!(
                    "quitting once {what} has ended (its record completed); \
                     q again quits at once, leaving its record unfinished"
                ),
            );
        }
        None => app.exit.quit = true,
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
        app.exit.quit = true;
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

/// Stops the run in progress: no new item starts; started ones reach their
/// next protocol state (a paused run is resumed for that).
pub(super) fn begin(app: &mut App) -> Vec<IoRequest> {
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

/// The question's text as the open stop question asks it
/// ([`super::layers::stop::question`]).
pub fn question(app: &App) -> Vec<String> {
    let quit = app.overlays.stop_ask().is_some_and(|a| a.quit);
    app.bulk.as_ref().map_or_else(Vec::new, |b| {
        super::layers::stop::question(b, quit, app.settings.profile.as_deref())
    })
}

/// The end of a stopped run: says how many were left and where their ids
/// are (with the line that carries on), and quits when the stop was asked
/// by quitting (with the stopped code when some were left).
pub fn ended(app: &mut App, on: OnMarks, left: Option<LeftIds>, quit: bool) {
    // A question still open about a run that has ended asks nothing now;
    // when `q` asked it, the log says the key was not lost.
    let asked_by_quit = app.overlays.stop_ask().is_some_and(|a| a.quit);
    if app.overlays.close(OverlayKind::StopRun) && asked_by_quit && !quit {
        app.push_log(
            LogLevel::Info,
            "the bulk run ended before the answer: nothing to stop; q quits now",
        );
    }
    if let Some(l) = &left {
        let text = match &l.file {
            Ok(file) => format!(
                "{} transaction(s) left: their ids are in {}; resume with: {}",
                l.count,
                file.display(),
                resume_line(on, file, app.settings.profile.as_deref())
            ),
            Err(e) => format!(
                "{} transaction(s) left; cannot write their ids to a file: {e}",
                l.count
            ),
        };
        app.push_log(LogLevel::Info, text);
    }
    if quit {
        app.exit.quit = true;
        if left.is_some_and(|l| l.count > 0) {
            app.exit.ending = Ending::RunStopped;
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
