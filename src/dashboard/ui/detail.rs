//! Detail of the selected transaction, from the last snapshot: what it is,
//! how old, what is wrong with it, where each account stands with it
//! ("carries it", "settled (applied|undone)", "not applied", missing or
//! malformed), the next protocol step recovery would take, what `R`, `F`
//! and `L` would do (the dialog re-reads before anything runs), its locks.
//! Most important first: a short pane cuts the end.

use super::theme::{
    amount_text, bold, datetime, dim, pane_block, route, severity, signed, state_text, txn_age,
    Severity, DANGER, GOOD, ODD, WARN,
};
use crate::dashboard::app::{App, Pane};
use crate::dashboard::snapshot::AccountEntry;
use crate::protocol::executor::Outcome;
use crate::protocol::lock::Staleness;
use crate::protocol::steps::{Procedure, Refusal};
use crate::protocol::time::human_age;
use crate::protocol::transaction::Transaction;
use crate::protocol::views::Preview;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Draws the detail pane.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let focused = app.focus == Pane::Detail;
    let Some(t) = app.selected_transaction() else {
        let block = pane_block(" detail ", focused);
        frame.render_widget(
            Paragraph::new("no transaction selected")
                .style(dim())
                .block(block),
            area,
        );
        return;
    };
    let block = pane_block(format!(" detail: {} ", t.id), focused);
    frame.render_widget(
        Paragraph::new(lines(app, t))
            .wrap(Wrap { trim: false })
            .block(block),
        area,
    );
}

fn lines(app: &App, t: &Transaction) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(vec![
        Span::styled(state_text(t), bold()),
        Span::raw(format!(" · {} · {}", amount_text(t), route(t))),
    ])];
    match t.modification_time {
        Some(m) => out.push(Line::from(format!(
            "modified {} · {} ago",
            datetime(m),
            txn_age(app, t)
        ))),
        None => out.push(Line::styled("modified: unknown", Style::new().fg(ODD))),
    }
    match severity(app, t) {
        Severity::Investigate => out.push(Line::styled(
            format!(
                "!! investigate: untouched > {}",
                human_age(app.settings.investigate_after.as_secs() as i64)
            ),
            Style::new().fg(DANGER).add_modifier(Modifier::BOLD),
        )),
        Severity::Stuck => out.push(Line::styled(
            format!(
                "! stuck: untouched > {} (recovery window)",
                human_age(app.settings.recovery_window.as_secs() as i64)
            ),
            Style::new().fg(WARN).add_modifier(Modifier::BOLD),
        )),
        Severity::Odd | Severity::Normal => {}
    }
    for p in &t.problems {
        out.push(Line::styled(format!("? {p}"), Style::new().fg(ODD)));
    }
    for (role, id) in [("src", &t.src), ("dst", &t.dest)] {
        if let Some(id) = id {
            out.push(account_line(app, role, id, &t.id));
        }
    }
    let recover = app.preview(t, Procedure::Recover);
    let next = recover
        .steps
        .iter()
        .find(|s| matches!(s.outcome, Outcome::Updated(_)));
    out.push(match (next, &recover.refusal) {
        (Some(s), _) => Line::from(vec![
            Span::styled("next: ", bold()),
            Span::raw(s.step.label()),
        ]),
        (None, Some(_)) => Line::from(vec![
            Span::styled("next: ", bold()),
            Span::styled("— (recovery refuses)", dim()),
        ]),
        (None, None) => Line::from(vec![
            Span::styled("next: ", bold()),
            Span::styled("nothing to do", dim()),
        ]),
    });
    if app.settings.read_only {
        out.push(Line::styled(
            "read-only: actions disabled",
            Style::new().fg(WARN),
        ));
    } else {
        let names = (
            t.src.as_deref().unwrap_or("src"),
            t.dest.as_deref().unwrap_or("dest"),
        );
        out.push(action_line(
            "R rollback",
            &app.preview(t, Procedure::Rollback),
            names,
            t,
        ));
        out.push(action_line("F recover", &recover, names, t));
        let locks: Vec<_> = owned_locks(app, t).collect();
        let live = locks.iter().filter(|l| !l.staleness.is_stale()).count();
        out.push(Line::from(match locks.len() {
            0 => Span::styled("L release: no locks held", dim()),
            n if live > 0 => Span::styled(
                format!("L release {n} lock(s), {live} not stale"),
                Style::new().fg(WARN),
            ),
            n => Span::raw(format!("L release {n} stale lock(s)")),
        }));
    }
    for l in owned_locks(app, t) {
        let (word, style) = match &l.staleness {
            Staleness::Live => ("live".to_string(), Style::new().fg(GOOD)),
            Staleness::Stale(why) => (format!("stale: {why}"), Style::new().fg(WARN)),
            Staleness::Unknown(why) => (format!("unknown: {why}"), Style::new().fg(ODD)),
        };
        out.push(Line::from(vec![
            Span::raw(format!("lock {} ", l.info.resource)),
            Span::styled(word, style),
            Span::styled(format!(" · {}", l.info.holder_label()), dim()),
        ]));
    }
    if let Some(c) = t.creation_time {
        out.push(Line::styled(format!("created {}", datetime(c)), dim()));
    }
    out
}

fn owned_locks<'a>(
    app: &'a App,
    t: &'a Transaction,
) -> impl Iterator<Item = &'a crate::protocol::locks::LockView> + 'a {
    app.snapshot
        .iter()
        .flat_map(|s| s.locks.iter())
        .filter(move |l| l.info.owner.as_deref() == Some(t.id.as_str()))
}

fn account_line(app: &App, role: &str, id: &str, txn: &str) -> Line<'static> {
    let head = Span::styled(format!("{role} {id}: "), bold());
    let rest = match app.account(id) {
        Some(AccountEntry::Ok(s)) => {
            let (what, style) = if s.carries(txn) {
                ("carries it".to_string(), Style::new().fg(WARN))
            } else if let Some(r) = s.settled_of(txn) {
                (
                    format!("settled ({})", r.outcome.as_str()),
                    Style::new().fg(GOOD),
                )
            } else {
                ("not applied".to_string(), dim())
            };
            vec![
                Span::raw(format!("{} · ", s.balance)),
                Span::styled(what, style),
            ]
        }
        Some(AccountEntry::Malformed(p)) => vec![Span::styled(
            format!("malformed: {}", p.join("; ")),
            Style::new().fg(ODD),
        )],
        Some(AccountEntry::Missing) => vec![Span::styled(
            "missing (no such account)",
            Style::new().fg(ODD),
        )],
        None => vec![Span::styled("not loaded", dim())],
    };
    let mut spans = vec![head];
    spans.extend(rest);
    Line::from(spans)
}

fn action_line(
    label: &str,
    p: &Preview,
    (src, dest): (&str, &str),
    t: &Transaction,
) -> Line<'static> {
    let head = Span::styled(format!("{label} "), bold());
    if let Some(r) = &p.refusal {
        let why = match r {
            // The problems are listed above (`?` lines).
            Refusal::Malformed(_) if !t.problems.is_empty() => {
                "the transaction is malformed".to_string()
            }
            _ => refusal_short(r),
        };
        return Line::from(vec![
            head,
            Span::styled(format!("refused: {why}"), Style::new().fg(DANGER)),
        ]);
    }
    if p.steps.is_empty() {
        return Line::from(vec![head, Span::styled("has nothing to do", dim())]);
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
pub fn refusal_short(r: &Refusal) -> String {
    match r {
        Refusal::Committed => {
            "committed: let it finish (F), then reverse it with a new transfer".into()
        }
        Refusal::UnknownState(s) => format!("unknown state `{s}`"),
        Refusal::Recent { age_seconds, .. } => {
            format!("modified {age_seconds}s ago, within the recovery window")
        }
        Refusal::Malformed(p) => format!("malformed: {p}"),
        Refusal::AlreadyExists(id) => format!("`{id}` already exists"),
        Refusal::Unsafe(why) => why.clone(),
        Refusal::LockHeld { resource, holder } => format!("`{resource}` locked by {holder}"),
    }
}
