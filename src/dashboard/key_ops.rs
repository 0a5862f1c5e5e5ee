//! What a key does on the dashboard: the layer on top takes it (dialog,
//! help, filter, look-up, by cause, audit, jobs, stop question: see
//! [`super::layers`]) and this module applies the [`Outcome`] it returns;
//! else the main key table's op acts on the panes — moving and filtering,
//! polling and export, the acts and marks. Called by
//! [`super::update::update`].

use super::app::{App, LogLevel, Pane};
use super::confirm::{open_bulk_dialog, open_dialog, open_lock_dialog};
use super::event::{IoRequest, OnMarks};
use super::keymap::Op;
use super::layers::audit::Audit;
use super::layers::FilterEdit;
use super::layers::{self, Context, Effect, Outcome, Overlay, OverlayKind};
use super::panes;
use super::selection::navigation::{cycle_focus, move_selection};
use crate::protocol::intervene::{Recover, ReleaseLocksOf, Rollback};
use crate::protocol::Procedure;
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
    if app.terminal.too_small {
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
        Some(_) => on_layer_key(app, key),
        None => app
            .keys
            .main_op(key.code)
            .map_or_else(Vec::new, |op| on_op(app, op)),
    }
}

/// A key for the top layer: it changes its own state, reading only what
/// it is given ([`Context`]); the stack closes it if it says so and does
/// what else it asks ([`apply`]).
fn on_layer_key(app: &mut App, key: KeyEvent) -> Vec<IoRequest> {
    let screen = app.screen();
    let help_rows = (
        layers::help::draw::rows(&app.draw_cx()),
        layers::help::draw::visible_rows(app.screen().height),
    );
    let cx = Context {
        keys: &app.keys,
        settings: &app.settings,
        now: app.now,
        audit: &app.audit,
        help_rows,
        screen: (screen.width, screen.height),
        // Field by field, so the stack below can be changed.
        draw: layers::DrawCx {
            theme: &app.theme,
            keys: &app.keys,
            settings: &app.settings,
            now: app.now,
            size: app.terminal.size,
            audit: &app.audit,
            bulk: app.bulk.as_ref(),
        },
    };
    let Some(top) = app.overlays.top_mut() else {
        return vec![];
    };
    let kind = top.kind();
    let outcome = top.key(&cx, key);
    apply(app, kind, outcome)
}

/// Does what a layer's key asked: closes it, then each effect in order.
pub(super) fn apply(app: &mut App, kind: OverlayKind, outcome: Outcome) -> Vec<IoRequest> {
    if outcome.close {
        app.overlays.close(kind);
    }
    let mut io = Vec::new();
    for effect in outcome.effects {
        match effect {
            Effect::Io(r) => io.push(r),
            Effect::Log(level, text) => app.push_log(level, text),
            Effect::Quit => io.extend(super::stop::quit(app)),
            Effect::AuditNow => io.extend(super::audit::audit_if_due(app, true)),
            Effect::ConfirmResume(dialog) => super::confirm::open_resume(app, *dialog),
            Effect::Confirm(act) => io.extend(super::confirm::open_on(app, act)),
            Effect::ShowTransaction { id, pinned } => {
                app.focus = Pane::Detail;
                if pinned {
                    // Read it again even if it was read before.
                    app.reads.lookup_asked = None;
                    app.reads.looked_up = None;
                }
                app.select(id.clone());
                if pinned {
                    app.selection.pinned = Some(id);
                }
            }
            Effect::ShowAccount(id) => {
                app.selection.account = Some(id);
                app.focus = Pane::Accounts;
            }
            Effect::Filter(edit) => filter_edit(app, edit),
            Effect::Start { run, planned } => {
                app.running = Some(super::app::Running {
                    act: run.act().clone(),
                    forced: run.intervention.choices.force,
                    planned,
                    seen: Vec::new(),
                });
                io.push(IoRequest::Run(run));
            }
            Effect::StartBulk(dialog) => io.extend(super::bulk::confirm(app, *dialog)),
            Effect::StopBulk { quit } => {
                if let Some(b) = app.bulk.as_mut() {
                    b.quit_when_stopped |= quit;
                }
                io.extend(super::stop::begin(app));
            }
            Effect::OpenGroup(g) => {
                app.query.text.clear();
                app.query.before_drill = None;
                app.query.state = None;
                app.query.stuck_only = false;
                app.query.old_only = false;
                app.focus = Pane::Transactions;
                app.query.group = Some(g);
                super::selection::follow::keep_selection_visible(app);
            }
            Effect::ResumeJob {
                run,
                procedure,
                total,
                confirmed,
            } => {
                // The run shows as the progress bar: the jobs view closes.
                app.overlays.close(OverlayKind::Jobs);
                let on = OnMarks::Procedure(procedure);
                app.bulk = Some(super::progress::BulkProgress::new(on, total, app.now));
                io.push(IoRequest::ResumeJob {
                    run,
                    procedure,
                    confirmed,
                });
            }
        }
    }
    io
}

/// The text filter typed: the table narrows as it is typed, starting at
/// the top of its rows ([`super::selection::follow`]).
fn filter_edit(app: &mut App, edit: FilterEdit) {
    match edit {
        FilterEdit::Push(c) => {
            app.query.text.push(c);
            super::selection::follow::new_filter(app);
        }
        FilterEdit::Pop => {
            if app.query.text.pop().is_some() {
                super::selection::follow::new_filter(app);
            }
        }
        FilterEdit::Clear => {
            app.query.text.clear();
            super::selection::follow::keep_selection_visible(app);
        }
    }
}

/// A key of the main table on the panes: quit, help, open, back, or the
/// view's, the poll's and the acts' keys.
fn on_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    if let Some((layer, io)) = layers::open_for(op, &mut app.overlays) {
        app.overlays.open(layer);
        return io;
    }
    match op {
        Op::Quit => return super::stop::quit(app),
        Op::Open => open_focused(app),
        Op::PauseJob => return super::bulk::pause(app),
        Op::StopJob => return super::stop::ask_stop(app),
        Op::Back => back(app),
        Op::Refresh | Op::Pause | Op::Slower | Op::Faster | Op::Export => {
            return on_poll_op(app, op)
        }
        Op::Rollback
        | Op::Recover
        | Op::Release
        | Op::Audit
        | Op::ReverseTransfer
        | Op::Ack
        | Op::Mark
        | Op::MarkAll
        | Op::ClearMarks => return on_act_op(app, op),
        _ => on_view_op(app, op),
    }
    vec![]
}

/// Moving, filtering and sorting: what the screen shows, no I/O.
fn on_view_op(app: &mut App, op: Op) {
    if panes::transactions::on_query_op(app, op) {
        return;
    }
    match op {
        Op::NextPane => cycle_focus(app, 1),
        Op::PrevPane => cycle_focus(app, -1),
        Op::Down => move_selection(app, 1),
        Op::Up => move_selection(app, -1),
        Op::PageDown => move_selection(app, 10),
        Op::PageUp => move_selection(app, -10),
        Op::Top => move_selection(app, isize::MIN / 2),
        Op::Bottom if app.focus == Pane::Log => panes::log::follow(app),
        Op::Bottom => move_selection(app, isize::MAX / 2),
        _ => {}
    }
}

/// Enter: the table opens the detail, an account drills into it, a lock
/// opens its owner transaction (each pane's own `open`).
fn open_focused(app: &mut App) {
    match app.focus {
        Pane::Transactions => app.focus = Pane::Detail,
        Pane::Accounts => panes::account_detail::open(app),
        Pane::Locks => panes::locks::open(app),
        _ => {}
    }
}

/// Esc on the panes: the detail goes back to where it was opened from (an
/// account drilled into puts its filters back), else the filter clears.
/// It never stops a bulk run (the stop key does, after asking).
fn back(app: &mut App) {
    if app.focus == Pane::Detail {
        app.focus = if app.selection.drill.take().is_some() {
            panes::account_detail::restore_filter(app);
            Pane::Accounts
        } else {
            Pane::Transactions
        };
    } else if app.query.before_drill.is_some() {
        panes::account_detail::restore_filter(app);
    } else if app.query.text.is_empty() {
        app.query.group = None;
    } else {
        app.query.text.clear();
    }
    super::selection::follow::keep_selection_visible(app);
}

/// Polling and export: what the loop does next.
fn on_poll_op(app: &mut App, op: Op) -> Vec<IoRequest> {
    match op {
        Op::Refresh => {
            app.push_log(LogLevel::Info, "refresh requested");
            vec![IoRequest::PollNow]
        }
        Op::Pause => {
            app.poll.paused = !app.poll.paused;
            let what = if app.poll.paused {
                "polling paused"
            } else {
                "polling resumed"
            };
            app.push_log(LogLevel::Info, what);
            vec![IoRequest::SetPaused(app.poll.paused)]
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
    let bulk = !app.selection.marks.is_empty() && app.focus != Pane::Locks;
    match op {
        Op::Mark => super::bulk::toggle_mark(app),
        Op::MarkAll => super::bulk::mark_all(app),
        Op::ClearMarks => super::bulk::clear_marks(app),
        Op::Rollback if bulk => {
            return open_bulk_dialog(app, OnMarks::Procedure(Procedure::Rollback))
        }
        Op::Recover if bulk => {
            return open_bulk_dialog(app, OnMarks::Procedure(Procedure::Recover))
        }
        Op::Release if bulk => return open_bulk_dialog(app, OnMarks::ReleaseLocks),
        Op::Rollback => return open_dialog(app, |id| Rollback::new(id).into()),
        Op::Recover => return open_dialog(app, |id| Recover::new(id).into()),
        Op::Release if app.focus == Pane::Locks => return open_lock_dialog(app),
        Op::Release => {
            let release = |txn| ReleaseLocksOf {
                txn,
                allow_partial: true,
            };
            return open_dialog(app, |id| release(id).into());
        }
        Op::ReverseTransfer => return super::reverse::open(app),
        Op::Ack => return super::confirm::open_ack_dialog(app, bulk),
        Op::Audit => {
            let pane = app.overlays.take_kept::<Audit>().unwrap_or_default();
            app.overlays.open(Overlay::Audit(pane));
            return super::audit::audit_if_due(app, true);
        }
        _ => {}
    }
    vec![]
}

/// The poll interval `delta` seconds longer (kept in [`INTERVAL_RANGE`]).
fn change_interval(app: &mut App, delta: i64) -> Vec<IoRequest> {
    let secs = (app.poll.interval.as_secs() as i64 + delta).clamp(
        INTERVAL_RANGE.0.as_secs() as i64,
        INTERVAL_RANGE.1.as_secs() as i64,
    );
    app.poll.interval = Duration::from_secs(secs as u64);
    vec![IoRequest::SetInterval(app.poll.interval)]
}
