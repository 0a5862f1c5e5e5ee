//! `update`: the one function that changes the dashboard's state. Events in,
//! state changed, commands out; no I/O, no clock, so it is tested directly.
//! After every change the view (rows, selection, scroll, detail, previews)
//! is derived again, so drawing only reads. Keys go through the one key
//! table ([`super::keymap`]): what each key does is in [`super::key_ops`];
//! the layers' keys (the confirmation dialog's among them) are in
//! [`super::layers`].

use super::app::{App, LogLevel};
use super::confirm::step_seen;
use super::event::{Event, IoRequest, PollFailure};
use super::key_ops::on_key;
pub use super::key_ops::INTERVAL_RANGE;
use super::layers::timeline::{self, TimelineView};
use super::layers::{groups::GroupsView, jobs::JobsView, Overlay, OverlayKind};
use super::load::Load;
use super::selection::navigation::follow_focus;
use crate::protocol::read::poll::Snapshot;
use crate::protocol::read::verdict::{rejudge, Previous};
use crate::protocol::report::{StepReport, StepResult};
use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

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
    if tick {
        app.refresh_detail_rows();
    } else {
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
    if !app.table_filter().same_rows(&app.query.listing) {
        app.query.page = 0;
    }
    let wanted = app.table_filter();
    if wanted != app.query.listing {
        app.query.listing = wanted.clone();
        app.query.select_on_arrival = true;
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
        // Nothing the pointer hits acts while the dashboard is not shown.
        Event::Mouse(_) if app.terminal.too_small => vec![],
        Event::Mouse(m) => {
            on_mouse(app, m);
            vec![]
        }
        Event::Resize(w, h) => {
            super::unseen::resized(app, w, h);
            vec![]
        }
        Event::Signal(s) => super::stop::signal(app, s),
        Event::Tick(now) => {
            app.now = now;
            if let Some(b) = app.bulk.as_mut() {
                b.pace(now);
            }
            if let Some(jobs) = app.overlays.state_mut::<JobsView>() {
                jobs.judge(now);
            }
            super::audit::audit_if_due(app, false)
        }
        Event::PollStarted => {
            app.poll.running = true;
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
        Event::PlanSaved(Ok((path, hash))) => {
            let text =
                format!("plan saved to {path} ({hash}): estx-tui apply {path} --reason TEXT");
            app.push_log(LogLevel::Updated, text);
            vec![]
        }
        Event::PlanSaved(Err(e)) => {
            app.push_log(LogLevel::Error, format!("cannot save the plan: {e}"));
            vec![]
        }
        Event::Exported(Err(e)) => {
            app.push_log(LogLevel::Error, format!("export failed: {e}"));
            vec![]
        }
        Event::History { id, records } => {
            if app.selection.txn.as_ref() == Some(&id) {
                app.reads.history = Load::Loaded((id, records.map_err(|e| e.to_string())));
            } else {
                app.reads.history.settle();
            }
            vec![]
        }
        Event::ActionDone(outcome) => {
            if let Some(r) = &outcome.record {
                app.poll.others.own(r);
            }
            app.reads.history_asked = None;
            // A selection read by id is read again: the action changed it.
            app.reads.lookup_asked = None;
            let mut cmds = super::confirm::action_done(app, outcome);
            if app.exit.after_act {
                // `q` was pressed while it ran: the act has ended.
                app.exit.quit = true;
                return cmds;
            }
            cmds.extend(super::audit::audit_if_due(app, true));
            cmds
        }
        Event::Audited(report, cost) => {
            super::audit::audited(app, report.map_err(|e| e.to_string()), cost);
            vec![]
        }
        Event::Grouped(groups) => {
            // Each group's cause, judged on the poll on screen.
            let mut groups = groups.map(|g| *g).map_err(|e| e.to_string());
            if let (Ok(g), Some(snap)) = (groups.as_mut(), app.snapshot.as_ref()) {
                snap.judge_groups(g);
            }
            if let Some(view) = app.overlays.state_mut::<GroupsView>() {
                view.counted(groups);
            }
            vec![]
        }
        other => on_task_event(app, other),
    }
}

/// What a dialog's, a look-up's or an action's task reported.
fn on_task_event(app: &mut App, event: Event) -> Vec<IoRequest> {
    match event {
        Event::Preview { act, plan } => {
            if let Some(d) = app.overlays.dialog_mut() {
                if d.act() == Some(&act) {
                    d.preview = Load::of(plan);
                }
            }
            vec![]
        }
        Event::LookedUp { id, detail } => {
            if app.selection.txn.as_ref() == Some(&id) {
                if let Err(e) = &detail {
                    app.push_log(LogLevel::Error, format!("reading {id} by id failed: {e}"));
                }
                app.reads.looked_up = Some((id, detail.map_err(|e| e.to_string())));
            }
            vec![]
        }
        Event::Step(report) => {
            step_seen(app, &report);
            app.push_log(step_level(&report), format!("{}: {report}", report.txn));
            vec![]
        }
        Event::BulkPreview { on, plan } => {
            if let Some(b) = app.overlays.dialog_mut().and_then(|d| d.bulk_mut()) {
                if b.on == on {
                    super::bulk::reread(b, plan);
                }
            }
            vec![]
        }
        Event::BulkStarted { run, left_file } => {
            app.poll.others.own(&run);
            super::bulk::started(app, run, left_file);
            vec![]
        }
        Event::BulkItem {
            act,
            summary,
            outcome,
        } => {
            super::bulk::item_done(app, &act, &summary, outcome);
            vec![]
        }
        Event::Jobs(jobs) => {
            let now = app.now;
            if let Some(view) = app.overlays.state_mut::<JobsView>() {
                view.loaded(jobs.map_err(|e| e.to_string()), now);
            }
            vec![]
        }
        Event::Timeline { since, entries } => {
            if let Some(view) = app.overlays.state_mut::<TimelineView>() {
                let read = entries.map(|entries| timeline::Read { since, entries });
                view.loaded(read.map_err(|e| e.to_string()));
            }
            vec![]
        }
        Event::JobResumed {
            run,
            total,
            left_file,
        } => {
            app.poll.others.own(&run);
            super::bulk::resumed(app, &run, total, left_file);
            vec![]
        }
        Event::BulkDone {
            on,
            not_started,
            summary,
            record,
            left,
            receipts,
        } => {
            let said = record.unwrap_or(summary);
            let mut cmds = super::bulk::done(app, on, not_started, &said, left, receipts);
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
        Some(OverlayKind::Dialog | OverlayKind::Help | OverlayKind::Jobs | OverlayKind::StopRun)
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

/// The healing verdict of `snap`, judged again with what the dashboard
/// remembers of its polls (the slope of the oldest stuck age, the last
/// recovery seen), and a log line (its evidence in words) when it turns to
/// an alarm or away from one.
fn healing(app: &mut App, snap: &mut Snapshot) {
    let memory = app.poll.healing_memory;
    let window = app.settings.recovery_window;
    snap.healing = rejudge(&snap.healing_evidence, memory, snap.taken_at, window);
    app.poll.healing_memory = Some(Previous::after(memory, &snap.healing_evidence));
    let before = app.snapshot.as_ref().map(|s| s.healing);
    let changed = before.is_none_or(|b| b.word() != snap.healing.word());
    let alarm = snap.healing.is_alarm() || before.is_some_and(|b| b.is_alarm());
    if changed && alarm {
        let text = format!(
            "recovery {}: {}",
            snap.healing.short(),
            snap.healing.evidence(snap.taken_at)
        );
        let level = match snap.healing.is_alarm() {
            true => LogLevel::Error,
            false => LogLevel::Info,
        };
        app.push_log(level, text);
    }
}

/// A poll ended: its snapshot replaces the last (the first one selects the
/// first row), or its failure is logged once and kept.
fn polled(app: &mut App, result: Result<Box<Snapshot>, PollFailure>) {
    app.poll.running = false;
    let snapshot = match result {
        Ok(s) => s,
        Err(failure) => {
            if app.poll.error.as_ref() != Some(&failure) {
                let hint = match failure {
                    PollFailure::Auth(_) => " (not retrying: fix the credentials, then press r)",
                    _ => " (retrying with backoff)",
                };
                let text = format!("poll failed: {}{hint}", failure.message());
                app.push_log(LogLevel::Error, text);
            }
            app.poll.error = Some(failure);
            return;
        }
    };
    if app.poll.error.take().is_some() {
        app.push_log(LogLevel::Info, "cluster reachable again");
    }
    app.now = app.now.max(snapshot.taken_at);
    let mut snapshot = snapshot;
    healing(app, &mut snapshot);
    let attention = app.attention(&snapshot);
    app.trends.record(&snapshot, attention);
    // The selection's interventions are read again when its document
    // changed (an act, by anyone, moves it) or their last read is old.
    let before = app.selected_version();
    app.poll.retired = app.snapshot.replace(*snapshot);
    if let Some(s) = app.snapshot.as_ref() {
        app.poll.causes.judge(s, app.settings.recovery_window);
        for line in app.poll.others.news(s) {
            app.push_log(LogLevel::Info, line);
        }
    }
    if app.selected_version() != before || app.history_is_old() {
        app.reads.history_asked = None;
    }
    if app.selection.txn.is_none() {
        app.refresh_view();
        app.select_index(0);
    } else if app.query.select_on_arrival && app.table_page().is_some() {
        // The rows of a filter or page the operator asked for: the
        // selection follows them as it follows a filter typed.
        app.query.select_on_arrival = false;
        super::selection::follow::keep_selection_visible(app);
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
