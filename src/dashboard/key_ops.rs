//! What a key does on the dashboard: the overlay on top takes it (dialog,
//! help, filter, look-up, groups, audit, jobs), else the main key table's
//! op acts on the panes — moving and filtering, polling and export, the
//! acts and marks. Called by [`super::update::update`].

use super::app::{next_state_filter, App, LogLevel, Pane};
use super::confirm::{on_dialog_key, open_bulk_dialog, open_dialog, open_lock_dialog};
use super::event::{Action, IoRequest};
use super::keymap::Op;
use super::navigation::{cycle_focus, move_selection};
use super::overlay::{Overlay, OverlayKind};
use super::ui;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::time::Duration;

/// Shortest and longest poll intervals `-`/`+` allow.
pub const INTERVAL_RANGE: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(60));

/// A key: ignored but quit while the terminal is too small to show the
/// dashboard ([`super::unseen`]); Ctrl-C is quit (during a bulk run it
/// asks first, as `q` does); Alt-<key> is Esc then the key; the top
/// overlay takes it; the panes only get it when none is open.
pub(super) fn on_key(app: &mut App, key: KeyEvent) -> Vec<IoRequest> {
    if key.kind == KeyEventKind::Release {
        return vec![];
    }
    if app.too_small {
        // Only quit acts, whatever is open (nothing else can be seen).
        return match super::unseen::passes(app, &key) {
            true => super::stop::quit(app),
            false => vec![],
        };
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        if app.overlays.is_open(OverlayKind::StopRun) {
            // Already asking: the question stays until it is answered.
            return vec![];
        }
        return super::stop::quit(app);
    }
    if key.modifiers.contains(KeyModifiers::ALT) {
        // No key is bound with Alt: an Alt-<key> is an Esc typed just
        // before the key (a terminal or tmux within its `escape-time` sends
        // the two as one), so it is handled as Esc then the key.
        let mut cmds = on_key(app, KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
        let mut plain = key;
        plain.modifiers.remove(KeyModifiers::ALT);
        cmds.extend(on_key(app, plain));
        return cmds;
    }
    // The top overlay takes the key; the panes only get it when none is open.
    match app.overlays.top().map(Overlay::kind) {
        Some(OverlayKind::Dialog) => on_dialog_key(app, key),
        Some(OverlayKind::Help) => {
            on_help_key(app, key.code);
            vec![]
        }
        Some(OverlayKind::Filter) => {
            super::follow::on_filter_key(app, key.code);
            vec![]
        }
        Some(OverlayKind::LookUp) => {
            on_lookup_key(app, key.code);
            vec![]
        }
        Some(OverlayKind::Groups) => app
            .keys
            .main_op(key.code)
            .map_or_else(Vec::new, |op| super::groups::on_groups_op(app, op)),
        Some(OverlayKind::Audit) => app
            .keys
            .main_op(key.code)
            .map_or_else(Vec::new, |op| super::audit::on_audit_op(app, op)),
        Some(OverlayKind::Jobs) => super::jobs::on_key(app, key),
        Some(OverlayKind::StopRun) => super::stop::on_key(app, key),
        None => app
            .keys
            .main_op(key.code)
            .map_or_else(Vec::new, |op| on_op(app, op)),
    }
}

/// A key while help is open: scroll it, or close it (any other key).
fn on_help_key(app: &mut App, code: KeyCode) {
    let max = ui::help_scroll_max(app);
    let Some(Overlay::Help { scroll }) = app.overlays.top_mut() else {
        return;
    };
    match app.keys.main_op(code) {
        Some(Op::Down) => *scroll = (*scroll + 1).min(max),
        Some(Op::Up) => *scroll = scroll.saturating_sub(1),
        Some(Op::PageDown) => *scroll = (*scroll + 10).min(max),
        Some(Op::PageUp) => *scroll = scroll.saturating_sub(10),
        _ => {
            app.overlays.close(OverlayKind::Help);
        }
    }
}

/// A key while typing an id to look up (`#`): Enter selects it (read by
/// id, pinned as the keys' target), Esc cancels.
fn on_lookup_key(app: &mut App, code: KeyCode) {
    let Some(Overlay::LookUp(typed)) = app.overlays.top_mut() else {
        return;
    };
    match code {
        KeyCode::Enter => {
            let id = typed.trim().to_string();
            app.overlays.close(OverlayKind::LookUp);
            if !id.is_empty() {
                app.focus = Pane::Detail;
                app.push_log(LogLevel::Info, format!("looking up {id}"));
                // Read it again even if it was read before.
                app.lookup_asked = None;
                app.looked_up = None;
                app.select(id.clone());
                app.pinned = Some(id);
            }
        }
        KeyCode::Esc => {
            app.overlays.close(OverlayKind::LookUp);
        }
        KeyCode::Backspace => {
            typed.pop();
        }
        KeyCode::Char(c) => typed.push(c),
        _ => {}
    }
}

/// A key of the main table on the panes: quit, help, open, back, or the
/// view's, the poll's and the acts' keys.
fn on_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    match op {
        Op::Quit => return super::stop::quit(app),
        Op::Help => app.overlays.open(Overlay::Help { scroll: 0 }),
        Op::Open => open_focused(app),
        Op::PauseJob => return super::bulk::pause(app),
        Op::StopJob => return super::stop::ask_stop(app),
        Op::Jobs => return super::jobs::open(app),
        Op::Back => back(app),
        Op::Groups => return super::groups::open(app),
        Op::Refresh | Op::Pause | Op::Slower | Op::Faster | Op::Export => {
            return on_poll_op(app, op)
        }
        Op::Rollback
        | Op::Recover
        | Op::Release
        | Op::Audit
        | Op::ReverseTransfer
        | Op::Mark
        | Op::MarkAll
        | Op::ClearMarks => return on_act_op(app, op),
        _ => on_view_op(app, op),
    }
    vec![]
}

/// Moving, filtering and sorting: what the screen shows, no I/O.
fn on_view_op(app: &mut App, op: Op) {
    match op {
        Op::NextPane => cycle_focus(app, 1),
        Op::PrevPane => cycle_focus(app, -1),
        Op::Down => move_selection(app, 1),
        Op::Up => move_selection(app, -1),
        Op::PageDown => move_selection(app, 10),
        Op::PageUp => move_selection(app, -10),
        Op::Top => move_selection(app, isize::MIN / 2),
        Op::Bottom if app.focus == Pane::Log => app.log_top = None,
        Op::Bottom => move_selection(app, isize::MAX / 2),
        Op::Filter => {
            app.filter_before_drill = None;
            app.overlays.open(Overlay::Filter);
            app.focus = Pane::Transactions;
        }
        Op::LookUp => app.overlays.open(Overlay::LookUp(String::new())),
        Op::CycleState => {
            app.state_filter = next_state_filter(app.state_filter.as_ref());
            super::follow::keep_selection_visible(app);
        }
        Op::StuckOnly => {
            app.stuck_only = !app.stuck_only;
            super::follow::keep_selection_visible(app);
        }
        Op::OldOnly => {
            app.old_only = !app.old_only;
            super::follow::keep_selection_visible(app);
        }
        Op::NextPage | Op::PrevPage => super::follow::turn_page(app, op == Op::NextPage),
        Op::Sort => app.cycle_sort(),
        Op::Reverse => app.sort_desc = !app.sort_desc,
        _ => {}
    }
}

/// Enter: the table opens the detail, an account drills into it, a lock
/// opens its owner transaction.
fn open_focused(app: &mut App) {
    match app.focus {
        Pane::Transactions => app.focus = Pane::Detail,
        Pane::Accounts => super::drill::open(app),
        Pane::Locks => {
            let owner = app.lock_at_cursor().and_then(|l| l.info.owner.clone());
            if let Some(owner) = owner {
                // Opened explicitly from its lock: the detail names it
                // as the target of R/F/L, as a look-up with # does.
                app.select(owner.clone());
                app.pinned = Some(owner);
                app.focus = Pane::Detail;
            }
        }
        _ => {}
    }
}

/// Esc on the panes: the detail goes back to where it was opened from (an
/// account drilled into puts its filters back), else the filter clears.
/// It never stops a bulk run (the stop key does, after asking).
fn back(app: &mut App) {
    if app.focus == Pane::Detail {
        app.focus = if app.account_drill.take().is_some() {
            super::drill::restore_filter(app);
            Pane::Accounts
        } else {
            Pane::Transactions
        };
    } else if app.filter_before_drill.is_some() {
        super::drill::restore_filter(app);
    } else if app.filter.is_empty() {
        app.group = None;
    } else {
        app.filter.clear();
    }
    super::follow::keep_selection_visible(app);
}

/// Polling and export: what the loop does next.
fn on_poll_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    match op {
        Op::Refresh => {
            app.push_log(LogLevel::Info, "refresh requested");
            vec![IoRequest::PollNow]
        }
        Op::Pause => {
            app.paused = !app.paused;
            let what = if app.paused {
                "polling paused"
            } else {
                "polling resumed"
            };
            app.push_log(LogLevel::Info, what);
            vec![IoRequest::SetPaused(app.paused)]
        }
        Op::Slower => change_interval(app, 1),
        Op::Faster => change_interval(app, -1),
        Op::Export => {
            app.push_log(LogLevel::Info, "exporting every match of the filter…");
            vec![IoRequest::Export(app.table_filter().first_page())]
        }
        _ => vec![],
    }
}

/// The action keys and marks: R/F/L on the marked rows (bulk) or on the
/// selection, V, the audit pane.
fn on_act_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    let bulk = !app.marks.is_empty() && app.focus != Pane::Locks;
    match op {
        Op::Mark => super::bulk::toggle_mark(app),
        Op::MarkAll => super::bulk::mark_all(app),
        Op::ClearMarks => super::bulk::clear_marks(app),
        Op::Rollback if bulk => return open_bulk_dialog(app, Action::Rollback),
        Op::Recover if bulk => return open_bulk_dialog(app, Action::Recover),
        Op::Release if bulk => return open_bulk_dialog(app, Action::ReleaseLocks),
        Op::Rollback => return open_dialog(app, Action::Rollback),
        Op::Recover => return open_dialog(app, Action::Recover),
        Op::Release if app.focus == Pane::Locks => return open_lock_dialog(app),
        Op::Release => return open_dialog(app, Action::ReleaseLocks),
        Op::ReverseTransfer => return super::reverse::open(app),
        Op::Audit => {
            app.overlays.open(Overlay::Audit);
            return super::audit::audit_if_due(app, true);
        }
        _ => {}
    }
    vec![]
}

/// The poll interval `delta` seconds longer (kept in [`INTERVAL_RANGE`]).
fn change_interval(app: &mut App, delta: i64) -> Vec<IoRequest> {
    let secs = (app.interval.as_secs() as i64 + delta).clamp(
        INTERVAL_RANGE.0.as_secs() as i64,
        INTERVAL_RANGE.1.as_secs() as i64,
    );
    app.interval = Duration::from_secs(secs as u64);
    vec![IoRequest::SetInterval(app.interval)]
}
