//! `update`: the one function that changes the dashboard's state. Events in,
//! state changed, commands out; no I/O, no clock, so it is tested directly.
//! After every change the view (rows, selection, scroll, detail, previews)
//! is derived again, so drawing only reads. Keys go through the one key
//! table ([`keymap`]); the confirmation dialog's keys are in [`super::confirm`].

use super::app::{next_state_filter, App, LogLevel, Pane};
use super::confirm::{on_dialog_key, open_bulk_dialog, open_dialog, open_lock_dialog, step_seen};
use super::event::{Action, Event, IoRequest, PollFailure};
use super::keymap::Op;
use super::load::Load;
use super::navigation::{cycle_focus, follow_focus, move_selection};
use super::overlay::{Overlay, OverlayKind};
use super::ui;
use crate::protocol::read::poll::Snapshot;
use crate::protocol::report::{StepReport, StepResult};
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use std::time::Duration;

/// Shortest and longest poll intervals `-`/`+` allow.
pub const INTERVAL_RANGE: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(60));

/// Applies one event to the state and says what I/O should follow.
pub fn update(app: &mut App, event: Event) -> Vec<IoRequest> {
    let tick = matches!(event, Event::Tick(_));
    let mut cmds = apply(app, event);
    // The cluster runs the table's filter: a changed filter starts at its
    // first page, and its rows come with the next poll (asked at once).
    // Text being typed narrows the loaded rows only; the cluster runs it
    // once it is kept (Enter), not each prefix on the way.
    if !app.overlays.is_open(OverlayKind::Filter) {
        sync_listing(app, &mut cmds);
    }
    if !tick {
        app.refresh_view();
    }
    if let Some(id) = app.take_lookup() {
        cmds.push(IoRequest::LookUp(id));
    }
    if let Some(id) = app.take_history() {
        cmds.push(IoRequest::LoadHistory(id));
    }
    cmds
}

/// Asks the poller for the table's filter and page when they changed (a
/// changed filter starting at its first page).
fn sync_listing(app: &mut App, cmds: &mut Vec<IoRequest>) {
    if !app.table_filter().same_rows(&app.listing) {
        app.page = 0;
    }
    let wanted = app.table_filter();
    if wanted != app.listing {
        app.listing = wanted.clone();
        app.select_on_arrival = true;
        cmds.push(IoRequest::SetListing(wanted));
    }
}

fn apply(app: &mut App, event: Event) -> Vec<IoRequest> {
    match event {
        Event::Key(key) => {
            let cmds = on_key(app, key);
            follow_focus(app);
            cmds
        }
        Event::Mouse(m) => {
            on_mouse(app, m);
            vec![]
        }
        Event::Resize(w, h) => {
            app.size = (w, h);
            vec![]
        }
        Event::Tick(now) => {
            app.now = now;
            if let Some(b) = app.bulk.as_mut() {
                b.pace(now);
            }
            super::audit::audit_if_due(app, false)
        }
        Event::PollStarted => {
            app.polling = true;
            vec![]
        }
        Event::Polled(result) => {
            polled(app, result);
            vec![]
        }
        Event::Exported(Ok((path, n))) => {
            app.push_log(LogLevel::Updated, format!("exported {n} row(s) to {path}"));
            vec![]
        }
        Event::Exported(Err(e)) => {
            app.push_log(LogLevel::Error, format!("export failed: {e}"));
            vec![]
        }
        Event::History { id, records } => {
            if app.selected.as_ref() == Some(&id) {
                app.history = Load::Loaded((id, records));
            } else {
                app.history.settle();
            }
            vec![]
        }
        Event::ActionDone(outcome) => {
            app.history_asked = None;
            // A selection read by id is read again: the action changed it.
            app.lookup_asked = None;
            let mut cmds = super::confirm::action_done(app, outcome);
            cmds.extend(super::audit::audit_if_due(app, true));
            cmds
        }
        Event::Audited(report, cost) => {
            super::audit::audited(app, report, cost);
            vec![]
        }
        Event::Grouped(groups) => {
            app.groups = Load::of(groups.map(|g| *g));
            let n = app.groups.value().map_or(0, |g| g.groups.len());
            app.group_cursor = app.group_cursor.min(n.saturating_sub(1));
            vec![]
        }
        other => on_task_event(app, other),
    }
}

/// What a dialog's, a look-up's or an action's task reported.
fn on_task_event(app: &mut App, event: Event) -> Vec<IoRequest> {
    match event {
        Event::Preview {
            action,
            target,
            plan,
        } => {
            if let Some(d) = app.overlays.dialog_mut() {
                if d.action == action && d.target == target {
                    d.preview = Load::of(plan);
                }
            }
            vec![]
        }
        Event::LookedUp { id, detail } => {
            if app.selected.as_ref() == Some(&id) {
                if let Err(e) = &detail {
                    app.push_log(LogLevel::Error, format!("reading {id} by id failed: {e}"));
                }
                app.looked_up = Some((id, detail));
            }
            vec![]
        }
        Event::Step(report) => {
            step_seen(app, &report);
            app.push_log(step_level(&report), format!("{}: {report}", report.txn));
            vec![]
        }
        Event::BulkPreview { action, plan } => {
            if let Some(d) = app.overlays.dialog_mut() {
                if let (true, Some(b)) = (d.action == action, d.bulk.as_mut()) {
                    super::bulk::reread(b, action, plan);
                }
            }
            vec![]
        }
        Event::BulkItem {
            action,
            id,
            summary,
            ok,
        } => {
            super::bulk::item_done(app, action, &id, &summary, ok);
            vec![]
        }
        Event::Jobs(jobs) => {
            super::jobs::loaded(app, jobs);
            vec![]
        }
        Event::JobResumed { run, total } => {
            super::jobs::resumed(app, &run, total);
            vec![]
        }
        Event::BulkDone {
            action,
            not_started,
            summary,
        } => {
            let mut cmds = super::bulk::done(app, action, not_started, &summary);
            cmds.extend(super::audit::audit_if_due(app, true));
            cmds
        }
        _ => vec![],
    }
}

/// A mouse event: the wheel scrolls and a click focuses the pane under
/// the pointer, unless a dialog or help covers the panes.
fn on_mouse(app: &mut App, m: MouseEvent) {
    if matches!(
        app.overlays.top().map(Overlay::kind),
        Some(OverlayKind::Dialog | OverlayKind::Help | OverlayKind::Jobs)
    ) {
        return;
    }
    match m.kind {
        MouseEventKind::ScrollDown => super::mouse::wheel(app, m.column, m.row, 1),
        MouseEventKind::ScrollUp => super::mouse::wheel(app, m.column, m.row, -1),
        MouseEventKind::Down(MouseButton::Left) => super::mouse::click(app, m.column, m.row),
        _ => {}
    }
    follow_focus(app);
}

/// A poll ended: its snapshot replaces the last (the first one selects the
/// first row), or its failure is logged once and kept.
fn polled(app: &mut App, result: Result<Box<Snapshot>, PollFailure>) {
    app.polling = false;
    let snapshot = match result {
        Ok(s) => s,
        Err(failure) => {
            if app.poll_error.as_ref() != Some(&failure) {
                let hint = match failure {
                    PollFailure::Auth(_) => " (not retrying: fix the credentials, then press r)",
                    _ => " (retrying with backoff)",
                };
                let text = format!("poll failed: {}{hint}", failure.message());
                app.push_log(LogLevel::Error, text);
            }
            app.poll_error = Some(failure);
            return;
        }
    };
    if app.poll_error.take().is_some() {
        app.push_log(LogLevel::Info, "cluster reachable again");
    }
    app.now = app.now.max(snapshot.taken_at);
    let attention = app.attention(&snapshot);
    app.trends.record(&snapshot, attention);
    // The selection's interventions are read again when its document
    // changed (an act, by anyone, moves it) or their last read is old.
    let before = app.selected_version();
    app.snapshot = Some(*snapshot);
    if app.selected_version() != before || app.history_is_old() {
        app.history_asked = None;
    }
    if app.selected.is_none() {
        app.refresh_view();
        app.select_index(0);
    } else if app.select_on_arrival && app.table_page().is_some() {
        // The rows of a filter or page the operator asked for: the
        // selection follows them as it follows a filter typed.
        app.select_on_arrival = false;
        super::follow::keep_selection_visible(app);
    }
}

/// How the log shows a step that ended.
fn step_level(report: &StepReport) -> LogLevel {
    match report.result {
        StepResult::Updated(_) => LogLevel::Updated,
        StepResult::Noop(_) => LogLevel::Noop,
        StepResult::Error(_) => LogLevel::Error,
    }
}

fn on_key(app: &mut App, key: KeyEvent) -> Vec<IoRequest> {
    if key.kind == KeyEventKind::Release {
        return vec![];
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        app.should_quit = true;
        return vec![];
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

fn on_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    match op {
        Op::Quit => app.should_quit = true,
        Op::Help => app.overlays.open(Overlay::Help { scroll: 0 }),
        Op::Open => open_focused(app),
        Op::Back if app.bulk.is_some() => return super::bulk::stop(app),
        Op::PauseJob => return super::bulk::pause(app),
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

fn change_interval(app: &mut App, delta: i64) -> Vec<IoRequest> {
    let secs = (app.interval.as_secs() as i64 + delta).clamp(
        INTERVAL_RANGE.0.as_secs() as i64,
        INTERVAL_RANGE.1.as_secs() as i64,
    );
    app.interval = Duration::from_secs(secs as u64);
    vec![IoRequest::SetInterval(app.interval)]
}
