//! The dashboard never acts unseen. When the terminal is smaller than the
//! dashboard can be drawn in ([`super::layout::fits`], the one rule the
//! renderer asks too), the screen only says so; then every key but quit
//! (and Ctrl-C) and every mouse event is ignored, and a dialog or prompt
//! open when it shrank is closed, so nothing can be confirmed blind. The
//! flag is derived when the size changes ([`resized`]), never while
//! drawing. Once the dashboard shows again, the log says how many keys
//! were ignored.

use super::app::{App, LogLevel};
use super::keymap::Op;
use super::layout::fits;
use super::overlay::OverlayKind;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;

/// The terminal is now `w`×`h`: derives whether it shows the dashboard;
/// on shrinking below it closes what could be confirmed or typed into
/// blind, on growing back logs the keys ignored meanwhile.
pub fn resized(app: &mut App, w: u16, h: u16) {
    app.size = (w, h);
    let was = app.too_small;
    app.too_small = !fits(Rect::new(0, 0, w, h));
    if app.too_small && !was {
        close_prompts(app);
    }
    if !app.too_small && app.ignored_keys > 0 {
        let n = std::mem::take(&mut app.ignored_keys);
        app.push_log(
            LogLevel::Info,
            format!("{n} key(s) ignored while the terminal was too small to show the dashboard"),
        );
    }
}

/// Closes the confirmation dialog, the stop question, the jobs view's
/// resume prompt, and the filter and look-up being typed.
fn close_prompts(app: &mut App) {
    if let Some(d) = app.overlays.take_dialog() {
        app.push_log(
            LogLevel::Info,
            format!(
                "{} {}: dialog closed: the terminal became too small to show it; nothing done",
                d.action.title(),
                d.target
            ),
        );
    }
    if app.overlays.close(OverlayKind::StopRun) {
        app.push_log(
            LogLevel::Info,
            "stop question closed: the terminal became too small to show it; the run goes on",
        );
    }
    if app.jobs.prompt.take().is_some() {
        app.push_log(
            LogLevel::Info,
            "resume prompt closed: the terminal became too small to show it; nothing done",
        );
    }
    app.overlays.close(OverlayKind::Filter);
    app.overlays.close(OverlayKind::LookUp);
}

/// Whether `key` may act while the terminal is too small: quit and Ctrl-C
/// only (during a bulk run even these wait for a screen that can ask
/// first; the too-small screen says so). Counts the others.
pub fn passes(app: &mut App, key: &KeyEvent) -> bool {
    let ctrl_c = key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
    let quit = ctrl_c || app.keys.main_op(key.code) == Some(Op::Quit);
    if quit && app.bulk.is_none() {
        return true;
    }
    app.ignored_keys += 1;
    false
}
