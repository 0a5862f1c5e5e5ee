//! The audit pane (`A`), drawn over the panes like the help: the last
//! invariant audit's findings (dangling pending entries, missing accounts,
//! malformed documents, stale locks), the balance total, when it ran. The
//! selected finding's repair (Enter) goes through the same confirmation
//! dialog as every other action.

use crate::dashboard::keymap::Op;
use crate::dashboard::layers::audit::Audit;
use crate::dashboard::layers::DrawCx;
use crate::dashboard::layout::{first_shown, fitting};
use crate::dashboard::ui::theme::{clock, more_hint, wrapped_rows};
use crate::protocol::audit::FindingKind;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// What Enter does on a finding of `kind`.
pub fn action_of(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::StaleLock => "Enter: release it",
        FindingKind::DanglingPending => "Enter: repair",
        FindingKind::MalformedAccount => "Enter: show the account",
        FindingKind::MissingAccount
        | FindingKind::UnknownState
        | FindingKind::MalformedTransaction => "Enter: show it",
        FindingKind::PartialLocks
        | FindingKind::TotalMismatch
        | FindingKind::UndatedTransaction => "",
    }
}

/// Draws the pane over `area`.
pub fn render(frame: &mut Frame, cx: &DrawCx, pane: &Audit, area: Rect) {
    let th = &cx.theme;
    let a = &cx.audit;
    let width = area.width.saturating_sub(4).min(110);
    let height = area.height.saturating_sub(4).max(3);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let rows = usize::from(height.saturating_sub(3)).max(1);
    let findings = a.findings();
    let inner_w = usize::from(width.saturating_sub(4)).max(1);
    // Each finding wraps whole (its id and amounts stay readable): rows
    // per finding, and the first finding shown so the selected one fits.
    let texts: Vec<String> = findings
        .iter()
        .map(|f| format!("{} {}: {}", f.kind, f.id, f.detail))
        .collect();
    let heights: Vec<usize> = texts
        .iter()
        .map(|t| wrapped_rows(&[Line::from(format!("▶ {t}"))], inner_w))
        .collect();
    let offset = first_shown(&heights, pane.cursor, rows);
    let shown = fitting(&heights[offset.min(heights.len())..], rows);
    let mut title = format!(" audit: {} finding(s) ", findings.len());
    if let Some(r) = a.report.value() {
        title.push_str(&format!("· balances {} ", r.total_balance));
    }
    if let Some(at) = a.asked_at {
        title.push_str(&format!("· {} ", clock(at)));
    }
    if a.report.is_loading() {
        title.push_str("· running… ");
    } else if let Some(next) = a.next_at {
        title.push_str(&format!("· next {} ", clock(next)));
    }
    title.push_str(&more_hint(offset, shown, findings.len()));
    let mut lines = finding_lines(cx, pane.cursor, &texts, offset, shown);
    let hint = findings
        .get(pane.cursor)
        .map(|f| action_of(f.kind))
        .unwrap_or("");
    let inner = crate::dashboard::ui::theme::draw_overlay(frame, rect, th, title);
    let [body, keys] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
    ]));
    lines.truncate(rows);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), body);
    frame.render_widget(
        Paragraph::new(Line::styled(
            {
                let k = |op| cx.keys.key(op);
                let (select, close) = (
                    format!("{}/{} select", k(Op::Down), k(Op::Up)),
                    format!("{} audit now · {} close", k(Op::Refresh), k(Op::Back)),
                );
                match hint {
                    "" => format!("{select} · {close}"),
                    hint => format!("{select} · {hint} · {close}"),
                }
            },
            th.dim_text(),
        )),
        keys,
    );
}

/// The findings shown (from `offset`, `shown` of them, the cursor's
/// highlighted and coloured by kind), or what the audit says instead.
fn finding_lines(
    cx: &DrawCx,
    cursor: usize,
    texts: &[String],
    offset: usize,
    shown: usize,
) -> Vec<Line<'static>> {
    let th = &cx.theme;
    let a = &cx.audit;
    let findings = a.findings();
    match a.report.last() {
        None => vec![Line::styled("auditing…", th.dim_text())],
        Some(Err(e)) => vec![Line::styled(
            format!("the audit failed: {e}"),
            Style::new().fg(th.danger),
        )],
        Some(Ok(_)) if findings.is_empty() => vec![Line::styled(
            "no findings: every pending entry belongs to a transaction in flight",
            th.dim_text(),
        )],
        Some(Ok(_)) => findings
            .iter()
            .zip(texts)
            .enumerate()
            .skip(offset)
            .take(shown.max(1))
            .map(|(i, (f, text))| {
                let colour = match f.kind {
                    FindingKind::StaleLock => th.warn,
                    FindingKind::DanglingPending | FindingKind::MissingAccount => th.danger,
                    _ => th.odd,
                };
                let mut style = Style::new().fg(colour);
                if i == cursor {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                let mark = if i == cursor { "▶ " } else { "  " };
                Line::from(vec![Span::raw(mark), Span::styled(text.clone(), style)])
            })
            .collect(),
    }
}
