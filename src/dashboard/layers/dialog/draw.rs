//! The confirmation dialog, centred over everything. It names its target
//! whole and shows what the action would do from the documents as re-read
//! just now: every write in order (the protocol steps, then the lock
//! releases that follow), or the refusal (with only a Close button), the
//! balance effect per account from the re-read balances, the locks a
//! release would delete with their holders. When the protocol would refuse
//! an unforced run (modified within the recovery window, a live lock) it
//! says so in its own words, `y` stays refused, and a red Force (!) button
//! is the only way on. Rollback and lock release are destructive: red
//! border and red Confirm button.

use super::documents::{audit_dialog, lock_dialog, transaction_lines};
use super::{AckFor, Dialog, Pending, RunChoice};
use crate::dashboard::keymap::DialogOp;
use crate::dashboard::layers::DrawCx;
use crate::dashboard::load::Load;
use crate::dashboard::ui::theme::{bold, wrapped_rows, Theme};
use crate::dashboard::ui::theme::{more_hint, short_id};
use crate::protocol::intervene::{AckPlan, Act, Guard, JudgedOn};
use crate::protocol::time::human_age;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph, Wrap};
use ratatui::Frame;

/// The label of the Cancel button.
pub const CANCEL: &str = "[ Cancel ]";
/// The label of the Confirm button.
pub const CONFIRM: &str = "[ Confirm (y) ]";
/// The label of the only button when there is nothing to confirm.
pub const CLOSE: &str = "[ Close ]";
/// The label of the force button (shown only when `y` would be refused).
pub const FORCE: &str = "[ FORCE (!) ]";

/// How far the dialog's text can scroll on a screen of `size`.
pub fn scroll_max(cx: &DrawCx, d: &Dialog, size: (u16, u16)) -> usize {
    let width = size.0.saturating_sub(4).min(84);
    let inner_w = width.saturating_sub(4).max(1) as usize;
    let (body, pinned) = body(cx, d);
    let body_h = wrapped_rows(&body, inner_w);
    let room = usize::from(size.1.saturating_sub(2).saturating_sub(4));
    let text_h = room.saturating_sub(wrapped_rows(&pinned, inner_w));
    body_h.saturating_sub(text_h)
}

/// Draws the dialog over `area`.
pub fn render(frame: &mut Frame, cx: &DrawCx, d: &Dialog, area: Rect) {
    let th = &cx.theme;
    let colour = if d.destructive() { th.danger } else { th.warn };
    let (body, pinned) = body(cx, d);
    let width = area.width.saturating_sub(4).min(84);
    let inner_w = width.saturating_sub(4).max(1) as usize;
    let body_h = wrapped_rows(&body, inner_w);
    let pinned_h = wrapped_rows(&pinned, inner_w);
    let height = ((body_h + pinned_h) as u16 + 4).min(area.height.saturating_sub(2));
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    // Said in words too, not by the colour alone.
    let tag = if d.destructive() { "DESTRUCTIVE: " } else { "" };
    let title = format!("{tag}{}?", d.heading());
    let room = usize::from(width.saturating_sub(4));
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::new().fg(colour).add_modifier(Modifier::BOLD))
        .title(Line::from(format!(" {} ", short_id(&title, room))).centered())
        .title_style(Style::new().fg(colour).add_modifier(Modifier::BOLD))
        .padding(Padding::horizontal(1));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    // The reason (and a production profile's typed confirmation) stays
    // under the text, never scrolled away by a long list of ids.
    let [text, reason, hint, buttons] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(pinned_h as u16),
        Constraint::Length(1),
        Constraint::Length(1),
    ]));
    frame.render_widget(Paragraph::new(pinned).wrap(Wrap { trim: false }), reason);
    let text_h = usize::from(text.height);
    let scroll = d.scroll.min(body_h.saturating_sub(text_h));
    frame.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .scroll((scroll as u16, 0)),
        text,
    );
    let more = more_hint(scroll, text_h.min(body_h), body_h);
    if !more.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(
                    "{more}· {}/{} scroll",
                    cx.keys.dialog_key(DialogOp::ScrollDown),
                    cx.keys.dialog_key(DialogOp::ScrollUp)
                ),
                th.dim_text(),
            ))
            .right_aligned(),
            hint,
        );
    }
    frame.render_widget(
        Paragraph::new(buttons_line(th, d, colour)).centered(),
        buttons,
    );
}

fn buttons_line(th: &Theme, d: &Dialog, colour: Color) -> Line<'static> {
    let focused = Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD);
    let loaded = d.loaded();
    if loaded && !d.can_confirm() {
        return Line::from(Span::styled(CLOSE, focused));
    }
    let cancel = if d.confirm_focused {
        Style::new()
    } else {
        focused
    };
    let forced = d.needs_force();
    let confirm = match (loaded && !forced, d.confirm_focused) {
        (false, false) => th.dim_text(),
        (false, true) => th.dim_text().add_modifier(Modifier::REVERSED),
        (true, false) => Style::new().fg(colour).add_modifier(Modifier::BOLD),
        (true, true) => th.alert(colour),
    };
    let mut spans = vec![
        Span::styled(CANCEL, cancel),
        Span::raw("    "),
        Span::styled(CONFIRM, confirm),
    ];
    if forced {
        spans.push(Span::raw("    "));
        spans.push(Span::styled(
            FORCE,
            Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
        ));
    }
    Line::from(spans)
}

/// The dialog's text (scrolled) and, once it can be confirmed, the reason
/// field pinned under it.
fn body(cx: &DrawCx, d: &Dialog) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    let shown = match &d.pending {
        Pending::Bulk(_) | Pending::Resume(_) => true,
        Pending::One(_) => matches!(d.preview, Load::Loaded(_)),
    };
    let pinned = if shown && d.can_confirm() {
        reason_lines(cx, d)
    } else {
        Vec::new()
    };
    (text(cx, d), pinned)
}

/// What the dialog says of its target and what the act would do.
fn text(cx: &DrawCx, d: &Dialog) -> Vec<Line<'static>> {
    let th = &cx.theme;
    if let Some(b) = d.bulk() {
        return super::bulk::dialog_lines(th, b);
    }
    if let Some(r) = d.resuming() {
        let mut out = vec![
            Line::from(vec![
                Span::styled("job ", th.dim_text()),
                Span::styled(r.run.clone(), bold()),
            ]),
            Line::from(format!(
                "{} of {} transaction(s), from its record: each read and decided again, \
                 as `--resume` does ({})",
                crate::dashboard::event::OnMarks::Procedure(r.procedure).verb(),
                r.total,
                r.life.short()
            )),
        ];
        out.extend(refusal_lines(cx, d));
        return out;
    }
    match &d.preview {
        Load::Idle | Load::Loading | Load::Reloading(_) => {
            vec![
                Line::from(""),
                Line::styled("re-reading documents…", th.dim_text()),
            ]
        }
        Load::Failed(e) => vec![
            Line::styled(
                "cannot go on:",
                Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
            ),
            Line::styled(e.clone(), Style::new().fg(th.danger)),
            Line::from("nothing was changed."),
        ],
        Load::Loaded(plan) => {
            let subject = d.act().map(Act::subject);
            let mut out = vec![Line::from(vec![
                Span::styled(subject.as_ref().map_or("", |s| s.kind()), th.dim_text()),
                Span::styled(
                    subject
                        .as_ref()
                        .map_or_else(String::new, ToString::to_string),
                    bold(),
                ),
            ])];
            out.extend(refusal_lines(cx, d));
            out.extend(match plan.judged() {
                Some(JudgedOn::Procedure(t)) => transaction_lines(cx, &t.detail, Some(t)),
                Some(JudgedOn::LocksOf(l)) => transaction_lines(cx, &l.detail, None),
                Some(JudgedOn::Lock(l)) => lock_dialog(cx, l.view.as_deref()),
                Some(JudgedOn::Audit(r)) => audit_dialog(th, r),
                Some(JudgedOn::Reversal(r)) => super::reverse::dialog_lines(cx, r),
                Some(JudgedOn::Acks(a)) => ack_lines(th, a),
                None => Vec::new(),
            });
            out
        }
    }
}

/// An ack's or unack's dialog: each transaction, its ack now, the ids
/// left out, and how long a new ack holds.
fn ack_lines(th: &Theme, a: &AckPlan) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = a
        .ids
        .iter()
        .map(|id| match a.acks.get(id) {
            Some(ack) => Line::from(format!("{id}: {ack}")),
            None => Line::from(format!("{id}: not acknowledged")),
        })
        .collect();
    for l in &a.left_out {
        out.push(Line::styled(
            format!("left out: {}: {}", l.txn, l.why),
            th.dim_text(),
        ));
    }
    if let Some(d) = a.lasts {
        out.push(Line::styled(
            format!(
                "holds for {} unless the `for` field below says otherwise; check and \
                 the bulk acts leave them out meanwhile",
                human_age(d.as_secs() as i64)
            ),
            th.dim_text(),
        ));
    }
    out
}

/// The reason field: what was typed, whether the trail requires one (its
/// one rule), and, while typing, how to go on.
fn reason_lines(cx: &DrawCx, d: &Dialog) -> Vec<Line<'static>> {
    let th = &cx.theme;
    let force = d.reason_for.is_some_and(RunChoice::is_forced);
    let required = d.reason_missing(force, "").is_some();
    let label = if required {
        "reason (required, recorded in the audit trail): "
    } else {
        "reason (optional, recorded in the audit trail): "
    };
    let mut field = vec![Span::styled(label, bold())];
    match d.reason_for {
        Some(_) if d.typed.is_none() && !d.lasts.as_ref().is_some_and(|l| l.focused) => {
            field.push(Span::styled(
                format!("{}▏", d.reason),
                Style::new().add_modifier(Modifier::UNDERLINED),
            ));
        }
        None if d.reason.is_empty() => {
            let (y, force) = (
                cx.keys.dialog_key(DialogOp::Confirm),
                cx.keys.dialog_key(DialogOp::Force),
            );
            field.push(Span::styled(
                format!("(asked after {y} / {force})"),
                th.dim_text(),
            ))
        }
        _ => field.push(Span::raw(d.reason.clone())),
    }
    let mut out = vec![Line::from(""), Line::from(field)];
    out.extend(d.lasts.as_ref().map(|l| lasts_line(d, l)));
    let guard = d.guard(cx.settings);
    match (d.reason_for.map(RunChoice::is_forced), &d.typed, &guard) {
        (Some(_), Some(typed), Some(g)) => out.extend(typed_lines(th, typed, g)),
        (Some(_), None, Some(g)) => out.push(Line::styled(
            format!("type the reason · Enter, then type {} · Esc back", g.asks()),
            Style::new().fg(th.warn),
        )),
        (Some(force), _, _) => {
            let run = if force { "runs FORCED" } else { "runs" };
            let tab = if d.lasts.is_some() {
                " · Tab the duration"
            } else {
                ""
            };
            out.push(Line::styled(
                format!("type the reason{tab} · Enter {run} · Esc back"),
                Style::new().fg(th.warn),
            ));
        }
        (None, _, _) => {}
    }
    out
}

/// An ack's duration field, under the reason: what was typed, a cursor
/// while keys type into it, and why it is not a duration if it is not.
fn lasts_line(d: &Dialog, l: &AckFor) -> Line<'static> {
    let mut field = vec![Span::styled("for (how long the ack holds): ", bold())];
    match d.reason_for {
        Some(_) if d.typed.is_none() && l.focused => field.push(Span::styled(
            format!("{}▏", l.text),
            Style::new().add_modifier(Modifier::UNDERLINED),
        )),
        _ => field.push(Span::raw(l.text.clone())),
    }
    if let Err(why) = l.duration() {
        field.push(Span::styled(format!("  {why}"), bold()));
    }
    Line::from(field)
}

/// The typed confirmation a production profile asks for after the reason:
/// what to type, what was typed so far, how to go on.
fn typed_lines(th: &Theme, typed: &str, g: &Guard) -> Vec<Line<'static>> {
    let red = Style::new().fg(th.danger).add_modifier(Modifier::BOLD);
    vec![
        Line::from(vec![
            Span::styled(" PRODUCTION ", th.alert(th.danger)),
            Span::styled(
                format!(" profile `{}`: to run, type {}", g.profile, g.asks()),
                red,
            ),
        ]),
        Line::from(vec![
            Span::styled("confirm: ", bold()),
            Span::styled(
                format!("{typed}▏"),
                Style::new().add_modifier(Modifier::UNDERLINED),
            ),
        ]),
        Line::styled(
            "Enter runs if it matches (anything else runs nothing) · Esc back to the reason",
            Style::new().fg(th.warn),
        ),
    ]
}

/// The protocol's refusal of an unforced run, in its words, and the way on.
fn refusal_lines(cx: &DrawCx, d: &Dialog) -> Vec<Line<'static>> {
    let th = &cx.theme;
    let Some(why) = d.refusal_now(cx.now, cx.settings.recovery_window, &cx.keys.force_hint())
    else {
        return vec![];
    };
    let red = Style::new().fg(th.danger).add_modifier(Modifier::BOLD);
    vec![
        Line::from(vec![
            Span::styled(" REFUSED ", th.alert(th.danger)),
            Span::styled(format!(" y is refused: {why}"), red),
        ]),
        Line::styled(
            format!(
                "only {} acts anyway; nothing happens otherwise",
                cx.keys.force_hint()
            ),
            red,
        ),
    ]
}
