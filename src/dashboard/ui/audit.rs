//! The audit pane (`A`), drawn over the panes like the help: the last
//! invariant audit's findings (dangling pending entries, missing accounts,
//! malformed documents, stale locks), the balance total, when it ran. The
//! selected finding's repair (Enter) goes through the same confirmation
//! dialog as every other action.

use super::theme::{bold, clock, dim, more_hint, short_id, DANGER, FOCUS, ODD, WARN};
use crate::dashboard::app::App;
use crate::dashboard::view::keep_visible;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph};
use ratatui::Frame;

/// What Enter does on a finding of `kind`.
pub fn action_of(kind: &str) -> &'static str {
    match kind {
        "stale_lock" => "Enter: release it",
        "dangling_pending" => "Enter: repair",
        "malformed_account" => "Enter: show the account",
        "missing_account" | "unknown_state" | "malformed_transaction" => "Enter: show it",
        _ => "",
    }
}

/// Draws the pane over `area`.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let a = &app.audit;
    let width = area.width.saturating_sub(4).min(110);
    let height = area.height.saturating_sub(4).max(3);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let rows = usize::from(height.saturating_sub(3)).max(1);
    let findings = a.findings();
    let offset = keep_visible(0, Some(a.cursor), findings.len(), rows);
    let mut title = format!(" audit: {} finding(s) ", findings.len());
    if let Some(Ok(r)) = &a.report {
        title.push_str(&format!("· balances {} ", r.total_balance));
    }
    if let Some(at) = a.asked_at {
        title.push_str(&format!("· {} ", clock(at)));
    }
    if a.running {
        title.push_str("· running… ");
    }
    title.push_str(&more_hint(offset, rows.min(findings.len()), findings.len()));
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::new().fg(FOCUS))
        .title(Line::from(title).centered())
        .title_style(bold().fg(FOCUS))
        .padding(Padding::horizontal(1));
    let inner_w = usize::from(width.saturating_sub(4));
    let mut lines: Vec<Line> = match &a.report {
        None => vec![Line::styled("auditing…", dim())],
        Some(Err(e)) => vec![Line::styled(
            format!("the audit failed: {e}"),
            Style::new().fg(DANGER),
        )],
        Some(Ok(_)) if findings.is_empty() => vec![Line::styled(
            "no findings: every pending entry belongs to a transaction in flight",
            dim(),
        )],
        Some(Ok(_)) => findings
            .iter()
            .enumerate()
            .skip(offset)
            .take(rows)
            .map(|(i, f)| {
                let colour = match f.kind.as_str() {
                    "stale_lock" => WARN,
                    "dangling_pending" | "missing_account" => DANGER,
                    _ => ODD,
                };
                let mut style = Style::new().fg(colour);
                if i == a.cursor {
                    style = style.add_modifier(Modifier::REVERSED);
                }
                let mark = if i == a.cursor { "▶" } else { " " };
                let text = format!("{} {}: {}", f.kind, f.id, f.detail);
                Line::from(vec![
                    Span::raw(mark),
                    Span::styled(short_id(&text, inner_w.saturating_sub(2)), style),
                ])
            })
            .collect(),
    };
    let hint = findings
        .get(a.cursor)
        .map(|f| action_of(&f.kind))
        .unwrap_or("");
    lines.truncate(rows);
    while lines.len() < rows {
        lines.push(Line::from(""));
    }
    lines.push(Line::styled(
        format!("j/k select · {hint} · r audit now · Esc close"),
        dim(),
    ));
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
