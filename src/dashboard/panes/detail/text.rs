//! What the detail of the selected transaction says, line by line (most
//! important first): what became of it, what it is, how old, what is wrong
//! with it, where each account stands with it (by the one rule of
//! [`crate::protocol::read::progress`]: "not applied yet", "applied
//! (done)", "undone, or never applied", ...; missing or malformed), the
//! next protocol step recovery would take, what `R`, `F` and `L` would do
//! (the dialog re-reads before anything runs), its locks and the
//! interventions recorded on it. Drawn by `draw.rs`, and measured by
//! `derive` (how far the pane scrolls), so the update never asks the
//! drawing.

use super::view::{DetailAccount, DetailView, Fate};
use crate::dashboard::app::App;
use crate::dashboard::keymap::Op;
use crate::dashboard::ui::rows::{severity, txn_age, Severity};
use crate::dashboard::ui::theme::{
    amount_text, bold, datetime, route, signed, state_text, wrapped_rows, Theme,
};
use crate::protocol::executor::StepOutcome;
use crate::protocol::locks::Staleness;
use crate::protocol::read::poll::AccountEntry;
use crate::protocol::read::verdict::SafeAct;
use crate::protocol::read::{account_progress, AccountProgress};
use crate::protocol::steps::ProcedureRefusal;
use crate::protocol::time::human_duration;
use crate::protocol::trail::RecordStatus;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::views::Preview;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Rows the detail of `d` takes in a pane `width` columns wide (borders
/// included).
pub fn rows(app: &App, d: &DetailView, width: u16) -> usize {
    wrapped_rows(&lines(app, d), usize::from(width.saturating_sub(2)).max(1))
}

/// What became of the transaction, and whether `R`/`F`/`L` act on it
/// (the `target` module's rule).
fn fate_line(app: &App, d: &DetailView) -> Option<Line<'static>> {
    let th = &app.theme;
    let now = state_text(&d.txn);
    let pinned = app.selection.pinned.as_ref() == Some(&d.txn.id);
    if pinned && matches!(d.fate, Fate::Listed | Fate::Filtered | Fate::ReadById) {
        let text = match d.fate {
            Fate::ReadById => format!(
                "now {now} (read by id, opened with # or from its lock): \
                 the action keys act on it"
            ),
            _ => format!("{now}, opened with # or from its lock: the action keys act on it"),
        };
        return Some(Line::styled(
            text,
            Style::new().fg(th.good).add_modifier(Modifier::BOLD),
        ));
    }
    let (text, style) = match &d.fate {
        Fate::Listed => return None,
        Fate::Filtered => (
            "hidden by the filter (still selected)".to_string(),
            Style::new().fg(th.warn),
        ),
        Fate::Reading => (
            "left the in-flight list; re-reading it by id…".to_string(),
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        ),
        Fate::ReadById if d.txn.state.as_ref().is_some_and(TxnState::is_terminal) => (
            format!("now {now} (read by id; not in the in-flight list)"),
            Style::new().fg(th.good).add_modifier(Modifier::BOLD),
        ),
        Fate::ReadById => (
            format!("{now}, read by id (not in the listed rows)"),
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        ),
        Fate::Vanished => (
            "no longer exists (as last seen:)".to_string(),
            Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
        ),
        Fate::ReadFailed(e) => (
            format!("left the list; could not re-read it: {e}"),
            Style::new().fg(th.danger),
        ),
    };
    let how = match d.fate {
        Fate::Filtered => "R F L: clear the filter, or look it up with #, to act on it",
        _ => "R F L: look it up with # to act on it",
    };
    Some(Line::styled(format!("{text} · {how}"), style))
}

/// The detail of `d`, most important first.
pub fn lines(app: &App, d: &DetailView) -> Vec<Line<'static>> {
    let th = &app.theme;
    let t = &d.txn;
    let mut out: Vec<Line<'static>> = fate_line(app, d).into_iter().collect();
    out.push(Line::from(vec![
        Span::styled(state_text(t), bold()),
        Span::raw(format!(" · {} · {}", amount_text(t), route(t))),
    ]));
    match t.modification_time {
        Some(m) => out.push(Line::from(format!(
            "modified {} · {} ago",
            datetime(m),
            txn_age(app, t)
        ))),
        None => out.push(Line::styled("modified: unknown", Style::new().fg(th.odd))),
    }
    match severity(app, t) {
        Severity::Investigate => out.push(Line::styled(
            format!(
                "!! investigate: untouched > {}",
                human_duration(app.settings.investigate_after)
            ),
            Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
        )),
        Severity::Stuck => out.push(Line::styled(
            format!(
                "! stuck: untouched > {} (recovery window)",
                human_duration(app.settings.recovery_window)
            ),
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        )),
        Severity::Odd | Severity::Normal => {}
    }
    out.extend(cause_lines(app, d));
    if let Some(ack) = app.snapshot.as_ref().and_then(|s| s.acks.get(&t.id)) {
        out.push(Line::styled(format!("~ {ack}"), Style::new().fg(th.good)));
    }
    if let Some(by) = app.held_by(&t.id) {
        out.push(Line::styled(
            format!("@ held by {by}: acting on it needs force and a reason"),
            Style::new().fg(th.warn),
        ));
    }
    for p in &t.problems {
        out.push(Line::styled(format!("? {p}"), Style::new().fg(th.odd)));
    }
    out.extend(crate::dashboard::ui::reverse::link_lines(th, t));
    for a in &d.accounts {
        out.push(account_line(th, a, t));
    }
    out.extend(next_and_keys(app, d));
    for l in &d.locks {
        let (word, style) = match &l.staleness {
            Staleness::Live => ("live".to_string(), Style::new().fg(th.good)),
            Staleness::Stale(why) => (format!("stale: {why}"), Style::new().fg(th.warn)),
            Staleness::Unknown(why) => (format!("unknown: {why}"), Style::new().fg(th.odd)),
        };
        out.push(Line::from(vec![
            Span::raw(format!("lock {} ", l.info.resource)),
            Span::styled(word, style),
            Span::styled(format!(" · {}", l.info.holder_label()), th.dim_text()),
        ]));
    }
    if let Some(c) = t.creation_time {
        out.push(Line::styled(
            format!("created {}", datetime(c)),
            th.dim_text(),
        ));
    }
    out.extend(history_lines(app));
    out
}

/// Why it is stuck, the act that is safe, and the profile's runbook for
/// the cause.
fn cause_lines(app: &App, d: &DetailView) -> Vec<Line<'static>> {
    let th = &app.theme;
    let Some(c) = &d.cause else {
        return Vec::new();
    };
    let now = app.snapshot.as_ref().map_or(app.now, |s| s.taken_at);
    let colour = match c.safe_act() {
        SafeAct::Recover | SafeAct::ReleaseLock => th.warn,
        SafeAct::Wait => th.good,
        SafeAct::Investigate => th.odd,
    };
    let mut out = vec![Line::from(vec![
        Span::styled(format!("cause: {}", c.word()), Style::new().fg(colour)),
        Span::raw(format!(" · safe act: {}", c.safe_act().word())),
        Span::styled(format!(" · {}", c.evidence(now)), th.dim_text()),
    ])];
    if let Some(url) = app.settings.runbooks.get(c.kind()) {
        out.push(Line::styled(format!("runbook: {url}"), th.dim_text()));
    }
    out
}

/// What recovery would do next, and what each action key would do to it
/// (or that actions are off in read-only mode).
fn next_and_keys(app: &App, d: &DetailView) -> Vec<Line<'static>> {
    let th = &app.theme;
    let t = &d.txn;
    let recover = &d.recover;
    let mut out = Vec::new();
    let next = recover
        .steps
        .iter()
        .find(|s| matches!(s.outcome, StepOutcome::Updated(_)));
    out.push(match (next, &recover.refusal) {
        (Some(s), _) => Line::from(vec![
            Span::styled("next: ", bold()),
            Span::raw(s.step.purpose()),
        ]),
        (None, Some(_)) => Line::from(vec![
            Span::styled("next: ", bold()),
            Span::styled("— (recovery refuses)", th.dim_text()),
        ]),
        (None, None) => Line::from(vec![
            Span::styled("next: ", bold()),
            Span::styled("nothing to do", th.dim_text()),
        ]),
    });
    if app.settings.read_only {
        out.push(Line::styled(
            "read-only: actions disabled",
            Style::new().fg(th.warn),
        ));
    } else {
        let names = (
            t.src.as_deref().unwrap_or("src"),
            t.dest.as_deref().unwrap_or("dest"),
        );
        // The keys as the key table in force names them.
        let key = |op| app.keys.label(op);
        let (rollback, recover_key) = (
            format!("{} rollback", key(Op::Rollback)),
            format!("{} recover", key(Op::Recover)),
        );
        out.push(action_line(th, &rollback, &d.rollback, names, t));
        out.push(action_line(th, &recover_key, recover, names, t));
        let live = d.locks.iter().filter(|l| !l.staleness.is_stale()).count();
        let release = key(Op::Release);
        out.push(Line::from(match d.locks.len() {
            0 => Span::styled(format!("{release} release: no locks held"), th.dim_text()),
            n if live > 0 => Span::styled(
                format!("{release} release {n} lock(s), {live} not stale (force only)"),
                Style::new().fg(th.warn),
            ),
            n => Span::raw(format!("{release} release {n} stale lock(s)")),
        }));
        if let Some(finish_first) = d.reverse {
            let first = if finish_first { "finish it, then " } else { "" };
            out.push(Line::from(format!(
                "{} reverse: {first}a compensating transfer {} → {} of {}",
                key(Op::ReverseTransfer),
                names.1,
                names.0,
                amount_text(t)
            )));
        }
    }
    out
}

/// The interventions recorded on the selected transaction (the audit
/// trail), oldest first; one never completed is marked.
fn history_lines(app: &App) -> Vec<Line<'static>> {
    let th = &app.theme;
    match app.selected_history() {
        None => vec![],
        Some(Err(e)) => vec![Line::styled(
            format!("interventions: cannot read the audit trail: {e}"),
            Style::new().fg(th.odd),
        )],
        Some(Ok(records)) if records.is_empty() => {
            vec![Line::styled("interventions: none recorded", th.dim_text())]
        }
        Some(Ok(records)) => {
            let mut out = vec![Line::styled(
                format!("interventions ({}):", records.len()),
                bold(),
            )];
            for r in records {
                let forced = if r.forced { " FORCED" } else { "" };
                let mut spans = vec![Span::raw(format!(
                    " {} {}{forced} by {} ({}) — ",
                    datetime(r.started_at),
                    r.action,
                    r.operator.user,
                    r.interface
                ))];
                spans.push(match (r.status, r.outcome) {
                    (RecordStatus::Running, _) | (_, None) => Span::styled(
                        "UNFINISHED (no end recorded)",
                        Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
                    ),
                    (_, Some(o)) => Span::raw(o.to_string()),
                });
                if let Some(why) = &r.reason {
                    spans.push(Span::styled(format!(" · \"{why}\""), th.dim_text()));
                }
                out.push(Line::from(spans));
            }
            out
        }
    }
}

fn account_line(th: &Theme, a: &DetailAccount, t: &Transaction) -> Line<'static> {
    let head = Span::styled(format!("{} {}: ", a.role, a.id), bold());
    let rest = match &a.entry {
        Some(AccountEntry::Ok(s)) => {
            let progress = account_progress(
                t.state.as_ref(),
                s.carries(&t.id),
                s.settled_of(&t.id).map(|r| r.outcome),
            );
            let style = if progress.is_odd() {
                Style::new().fg(th.odd)
            } else if progress.carries() {
                Style::new().fg(th.warn)
            } else if matches!(progress, AccountProgress::Settled(_)) {
                Style::new().fg(th.good)
            } else {
                th.dim_text()
            };
            vec![
                Span::raw(format!("{} · ", s.balance)),
                Span::styled(progress.to_string(), style),
            ]
        }
        Some(AccountEntry::Malformed(p)) => vec![Span::styled(
            format!("malformed: {p}"),
            Style::new().fg(th.odd),
        )],
        Some(AccountEntry::Missing) => vec![Span::styled(
            "missing (no such account)",
            Style::new().fg(th.odd),
        )],
        None => vec![Span::styled("not loaded", th.dim_text())],
    };
    let mut spans = vec![head];
    spans.extend(rest);
    Line::from(spans)
}

fn action_line(
    th: &Theme,
    label: &str,
    p: &Preview,
    (src, dest): (&str, &str),
    t: &Transaction,
) -> Line<'static> {
    let head = Span::styled(format!("{label} "), bold());
    if let Some(r) = &p.refusal {
        let why = match r {
            // The problems are listed above (`?` lines).
            ProcedureRefusal::Malformed(_) if !t.problems.is_empty() => {
                "the transaction is malformed".to_string()
            }
            _ => refusal_short(r),
        };
        return Line::from(vec![
            head,
            Span::styled(format!("refused: {why}"), Style::new().fg(th.danger)),
        ]);
    }
    if p.steps.is_empty() {
        return Line::from(vec![head, Span::styled("has nothing to do", th.dim_text())]);
    }
    let ends = p
        .ends_in
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| "?".into());
    let changes: Vec<String> = [(src, p.balance_change.0), (dest, p.balance_change.1)]
        .into_iter()
        .filter(|(_, d)| *d != 0)
        .map(|(who, d)| format!("{who} {}", signed(d)))
        .collect();
    let effect = if changes.is_empty() {
        "no balance change".to_string()
    } else {
        changes.join(", ")
    };
    Line::from(vec![head, Span::raw(format!("→ {ends}: {effect}"))])
}

/// A refusal in a few words (the dialog shows the full reason).
pub fn refusal_short(r: &ProcedureRefusal) -> String {
    match r {
        ProcedureRefusal::Committed => {
            "committed: let it finish (F), then reverse it with a new transfer".into()
        }
        ProcedureRefusal::UnknownState(s) => format!("unknown state `{s}`"),
        ProcedureRefusal::Recent { window, .. } => format!(
            "modified {}, within the {} recovery window",
            r.modified_ago().unwrap_or_default(),
            human_duration(*window)
        ),
        ProcedureRefusal::Malformed(p) => format!("malformed: {p}"),
        ProcedureRefusal::AlreadyExists(id) => format!("`{id}` already exists"),
        ProcedureRefusal::Unsafe(why) => why.clone(),
        ProcedureRefusal::LockHeld { resource, holder } => {
            format!("`{resource}` locked by {holder}")
        }
    }
}
