//! `update`: the one function that changes the dashboard's state. Events in,
//! state changed, commands out; no I/O, no clock, so it is tested directly.

use super::app::{App, Dialog, LogLevel, Pane, STATE_FILTERS};
use super::event::{Action, Command, Event, PollFailure};
use super::ui;
use crate::protocol::report::StepResult;
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};
use ratatui::layout::Rect;
use std::time::Duration;

/// Shortest and longest poll intervals `-`/`+` allow.
pub const INTERVAL_RANGE: (Duration, Duration) = (Duration::from_secs(1), Duration::from_secs(60));

/// Applies one event to the state and says what I/O should follow.
pub fn update(app: &mut App, event: Event) -> Vec<Command> {
    match event {
        Event::Key(key) => on_key(app, key),
        Event::Mouse(m) => {
            if app.dialog.is_some() || app.help {
                return vec![];
            }
            match m.kind {
                MouseEventKind::ScrollDown => move_selection(app, 1),
                MouseEventKind::ScrollUp => move_selection(app, -1),
                MouseEventKind::Down(MouseButton::Left) => click(app, m.column, m.row),
                _ => {}
            }
            vec![]
        }
        Event::Resize(w, h) => {
            app.size = (w, h);
            vec![]
        }
        Event::Tick(now) => {
            app.now = now;
            vec![]
        }
        Event::PollStarted => {
            app.polling = true;
            vec![]
        }
        Event::Polled(Ok(snapshot)) => {
            app.polling = false;
            if app.poll_error.take().is_some() {
                app.push_log(LogLevel::Info, "cluster reachable again");
            }
            app.now = app.now.max(snapshot.taken_at);
            app.snapshot = Some(*snapshot);
            if app.selected.is_none() {
                app.select_index(0);
            }
            vec![]
        }
        Event::Polled(Err(failure)) => {
            app.polling = false;
            if app.poll_error.as_ref() != Some(&failure) {
                let hint = match failure {
                    PollFailure::Auth(_) => " (not retrying: fix the credentials, then press r)",
                    _ => " (retrying with backoff)",
                };
                app.push_log(
                    LogLevel::Error,
                    format!("poll failed: {}{hint}", failure.message()),
                );
            }
            app.poll_error = Some(failure);
            vec![]
        }
        Event::Preview { action, detail } => {
            if let Some(d) = app.dialog.as_mut() {
                let same = match &detail {
                    Ok(det) => det.txn.id == d.txn,
                    Err(_) => true,
                };
                if d.action == action && same {
                    d.detail = Some(detail);
                }
            }
            vec![]
        }
        Event::Step(report) => {
            let level = match report.result {
                StepResult::Updated(_) => LogLevel::Updated,
                StepResult::Noop(_) => LogLevel::Noop,
                StepResult::Error(_) => LogLevel::Error,
            };
            app.push_log(level, format!("{}: {report}", report.txn));
            vec![]
        }
        Event::ActionDone(outcome) => {
            app.running = None;
            let level = if outcome.ok {
                LogLevel::Updated
            } else {
                LogLevel::Error
            };
            app.push_log(
                level,
                format!(
                    "{} {}: {}",
                    outcome.action.title(),
                    outcome.txn,
                    outcome.summary
                ),
            );
            vec![Command::PollNow]
        }
    }
}

fn on_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    if key.kind == KeyEventKind::Release {
        return vec![];
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        app.should_quit = true;
        return vec![Command::Quit];
    }
    if app.dialog.is_some() {
        return on_dialog_key(app, key);
    }
    if app.help {
        app.help = false;
        return vec![];
    }
    if app.editing_filter {
        match key.code {
            KeyCode::Enter => app.editing_filter = false,
            KeyCode::Esc => {
                app.editing_filter = false;
                app.filter.clear();
            }
            KeyCode::Backspace => {
                app.filter.pop();
            }
            KeyCode::Char(c) => app.filter.push(c),
            _ => {}
        }
        app.select_index(0);
        return vec![];
    }
    match key.code {
        KeyCode::Char('q') => {
            app.should_quit = true;
            vec![Command::Quit]
        }
        KeyCode::Char('?') => {
            app.help = true;
            vec![]
        }
        KeyCode::Tab => {
            cycle_focus(app, 1);
            vec![]
        }
        KeyCode::BackTab => {
            cycle_focus(app, -1);
            vec![]
        }
        KeyCode::Down | KeyCode::Char('j') => {
            move_selection(app, 1);
            vec![]
        }
        KeyCode::Up | KeyCode::Char('k') => {
            move_selection(app, -1);
            vec![]
        }
        KeyCode::PageDown => {
            move_selection(app, 10);
            vec![]
        }
        KeyCode::PageUp => {
            move_selection(app, -10);
            vec![]
        }
        KeyCode::Char('g') | KeyCode::Home => {
            move_selection(app, isize::MIN / 2);
            vec![]
        }
        KeyCode::Char('G') | KeyCode::End => {
            move_selection(app, isize::MAX / 2);
            vec![]
        }
        KeyCode::Enter => {
            if app.focus == Pane::Transactions {
                app.focus = Pane::Detail;
            }
            vec![]
        }
        KeyCode::Esc => {
            if app.focus == Pane::Detail {
                app.focus = Pane::Transactions;
            } else {
                app.filter.clear();
            }
            vec![]
        }
        KeyCode::Char('/') => {
            app.editing_filter = true;
            app.focus = Pane::Transactions;
            vec![]
        }
        KeyCode::Char('s') => {
            app.state_filter = (app.state_filter + 1) % STATE_FILTERS.len();
            app.select_index(0);
            vec![]
        }
        KeyCode::Char('o') => {
            app.cycle_sort();
            vec![]
        }
        KeyCode::Char('O') => {
            app.sort_desc = !app.sort_desc;
            vec![]
        }
        KeyCode::Char('r') => {
            app.push_log(LogLevel::Info, "refresh requested");
            vec![Command::PollNow]
        }
        KeyCode::Char('p') => {
            app.paused = !app.paused;
            app.push_log(
                LogLevel::Info,
                if app.paused {
                    "polling paused"
                } else {
                    "polling resumed"
                },
            );
            vec![Command::SetPaused(app.paused)]
        }
        KeyCode::Char('+') | KeyCode::Char('=') => change_interval(app, 1),
        KeyCode::Char('-') => change_interval(app, -1),
        KeyCode::Char('R') => open_dialog(app, Action::Rollback),
        KeyCode::Char('F') => open_dialog(app, Action::ForceRecover),
        KeyCode::Char('L') => open_dialog(app, Action::ReleaseLocks),
        _ => vec![],
    }
}

fn on_dialog_key(app: &mut App, key: KeyEvent) -> Vec<Command> {
    let Some(dialog) = app.dialog.as_mut() else {
        return vec![];
    };
    match key.code {
        KeyCode::Char('y') | KeyCode::Char('Y') => confirm(app),
        KeyCode::Enter if dialog.confirm_focused => confirm(app),
        KeyCode::Char('n')
        | KeyCode::Char('N')
        | KeyCode::Esc
        | KeyCode::Enter
        | KeyCode::Char('q') => {
            app.dialog = None;
            vec![]
        }
        KeyCode::Tab
        | KeyCode::BackTab
        | KeyCode::Left
        | KeyCode::Right
        | KeyCode::Char('h')
        | KeyCode::Char('l') => {
            dialog.confirm_focused = !dialog.confirm_focused;
            vec![]
        }
        _ => vec![],
    }
}

/// Whether the dialog's documents allow confirming (loaded, and not refused).
pub fn dialog_can_confirm(d: &Dialog) -> bool {
    match (&d.detail, d.action) {
        (Some(Ok(det)), Action::Rollback) => {
            det.rollback.refusal.is_none() && !det.rollback.steps.is_empty()
        }
        (Some(Ok(det)), Action::ForceRecover) => {
            det.recover.refusal.is_none() && !det.recover.steps.is_empty()
        }
        (Some(Ok(det)), Action::ReleaseLocks) => !det.locks.is_empty(),
        _ => false,
    }
}

fn confirm(app: &mut App) -> Vec<Command> {
    let Some(dialog) = app.dialog.take() else {
        return vec![];
    };
    if !dialog_can_confirm(&dialog) {
        app.push_log(
            LogLevel::Error,
            format!(
                "{} {}: nothing to confirm",
                dialog.action.title(),
                dialog.txn
            ),
        );
        return vec![];
    }
    app.running = Some((dialog.action, dialog.txn.clone()));
    app.push_log(
        LogLevel::Info,
        format!(
            "{} {}: confirmed, running",
            dialog.action.title(),
            dialog.txn
        ),
    );
    vec![Command::Run(dialog.action, dialog.txn)]
}

fn open_dialog(app: &mut App, action: Action) -> Vec<Command> {
    if app.settings.read_only {
        app.push_log(
            LogLevel::Error,
            "read-only mode: rollback, recovery and lock release are disabled",
        );
        return vec![];
    }
    if let Some((a, id)) = &app.running {
        app.push_log(
            LogLevel::Error,
            format!("wait: {} {id} is still running", a.title()),
        );
        return vec![];
    }
    let Some(id) = app.selected_transaction().map(|t| t.id.clone()) else {
        app.push_log(LogLevel::Info, "no transaction selected");
        return vec![];
    };
    app.dialog = Some(Dialog {
        action,
        txn: id.clone(),
        detail: None,
        confirm_focused: false,
    });
    vec![Command::LoadPreview(action, id)]
}

fn change_interval(app: &mut App, delta: i64) -> Vec<Command> {
    let secs = (app.interval.as_secs() as i64 + delta).clamp(
        INTERVAL_RANGE.0.as_secs() as i64,
        INTERVAL_RANGE.1.as_secs() as i64,
    );
    app.interval = Duration::from_secs(secs as u64);
    vec![Command::SetInterval(app.interval)]
}

fn cycle_focus(app: &mut App, step: isize) {
    let n = Pane::ORDER.len() as isize;
    let i = Pane::ORDER
        .iter()
        .position(|p| *p == app.focus)
        .unwrap_or(0) as isize;
    app.focus = Pane::ORDER[((i + step).rem_euclid(n)) as usize];
}

fn move_selection(app: &mut App, delta: isize) {
    match app.focus {
        Pane::Transactions | Pane::Detail => {
            let len = app.visible().len();
            if len == 0 {
                return;
            }
            let cur = app.selected_index().unwrap_or(0) as isize;
            let next = (cur.saturating_add(delta)).clamp(0, len as isize - 1);
            app.select_index(next as usize);
        }
        Pane::Accounts | Pane::Locks | Pane::Log => {
            let k = match app.focus {
                Pane::Accounts => 0,
                Pane::Locks => 1,
                _ => 2,
            };
            let cur = app.scroll[k] as isize;
            app.scroll[k] = cur.saturating_add(delta).clamp(0, 100_000) as usize;
        }
    }
}

/// A left click focuses the pane under the pointer; in the transaction table
/// it also selects the row (the table scrolls the way ratatui does: just
/// enough to keep the selection visible).
fn click(app: &mut App, column: u16, row: u16) {
    let areas = ui::layout(Rect::new(0, 0, app.size.0, app.size.1));
    let Some(pane) = areas.pane_at(column, row) else {
        return;
    };
    app.focus = pane;
    if pane != Pane::Transactions {
        return;
    }
    let t = areas.transactions;
    let first = t.y + 2; // border and header line
    let last = t.y + t.height.saturating_sub(1);
    if row < first || row >= last {
        return;
    }
    let visible = usize::from(t.height.saturating_sub(3)).max(1);
    let offset = (app.selected_index().unwrap_or(0) + 1).saturating_sub(visible);
    let index = offset + usize::from(row - first);
    if index < app.visible().len() {
        app.select_index(index);
    }
}
