//! The jobs view (`J`), drawn over the panes like the audit pane: the bulk
//! runs whose audit record is still `running`, newest first, each with its
//! action, size, where it was started from, by whom and when; and, after
//! Enter, the prompt that resumes the selected one.

use super::audit::first_shown;
use super::theme::{bold, clock, more_hint};
use crate::dashboard::app::App;
use crate::dashboard::jobs::resume_word;
use crate::dashboard::keymap::Op;
use crate::protocol::time::human_age;
use crate::protocol::trail::Record;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui::Frame;

/// Draws the view over `area`.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let j = &app.jobs;
    let width = area.width.saturating_sub(4).min(120);
    let height = area.height.saturating_sub(4).max(6);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let jobs = j.list.value().map_or(&[][..], Vec::as_slice);
    let prompt_h = if j.resuming.is_some() { 4 } else { 1 };
    let rows = usize::from(height.saturating_sub(2 + prompt_h)).max(2);
    let offset = first_shown(&vec![2; jobs.len()], j.cursor, rows);
    let shown = (rows / 2).min(jobs.len().saturating_sub(offset));
    let mut title = format!(" jobs: {} unfinished bulk run(s) ", jobs.len());
    if j.list.is_loading() {
        title.push_str("· reading… ");
    }
    title.push_str(&more_hint(offset, shown, jobs.len()));
    let block = super::theme::overlay_block(&app.theme, title);
    frame.render_widget(Clear, rect);
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let [body, keys] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(prompt_h),
    ]));
    let lines = match j.list.last() {
        None => vec![Line::styled(
            "reading the audit trail…",
            app.theme.dim_text(),
        )],
        Some(Err(e)) => vec![Line::styled(
            format!("cannot read the jobs: {e}"),
            Style::new().fg(app.theme.danger),
        )],
        Some(Ok(l)) if l.is_empty() => vec![Line::styled(
            "no unfinished bulk run: every job's record is finished",
            app.theme.dim_text(),
        )],
        Some(Ok(_)) => jobs
            .iter()
            .enumerate()
            .skip(offset)
            .take(shown.max(1))
            .flat_map(|(i, r)| job_lines(app, r, i == j.cursor))
            .collect(),
    };
    frame.render_widget(Paragraph::new(lines), body);
    frame.render_widget(Paragraph::new(prompt(app)).wrap(Wrap { trim: false }), keys);
}

/// One job in two lines: what and how big, then who and when.
fn job_lines(app: &App, r: &Record, selected: bool) -> [Line<'static>; 2] {
    let mut style = Style::new().fg(app.theme.warn);
    if selected {
        style = style.add_modifier(Modifier::REVERSED);
    }
    let mark = if selected { "▶ " } else { "  " };
    let profile = r
        .profile
        .as_deref()
        .map(|p| format!(" · profile {p}"))
        .unwrap_or_default();
    let head = format!(
        "{} · {} of {} transaction(s) · from the {}{profile}",
        r.record_id,
        r.action,
        r.transactions.len(),
        r.interface
    );
    let age = human_age((app.now - r.started_at).num_seconds());
    let reason = r
        .reason
        .as_deref()
        .map(|t| format!(" · reason: {t}"))
        .unwrap_or_default();
    let who = format!(
        "  by {} · started {} ({age} ago){reason}",
        r.operator,
        clock(r.started_at)
    );
    [
        Line::from(vec![Span::raw(mark), Span::styled(head, style)]),
        Line::styled(who, app.theme.dim_text()),
    ]
}

/// The keys, or the resume prompt with what was typed.
fn prompt(app: &App) -> Vec<Line<'static>> {
    let Some(typed) = &app.jobs.resuming else {
        let k = |op| app.keys.key(op);
        return vec![Line::styled(
            format!(
                "{}/{} select · {} resume · {} read again · {} close",
                k(Op::Down),
                k(Op::Up),
                k(Op::Open),
                k(Op::Refresh),
                k(Op::Back)
            ),
            app.theme.dim_text(),
        )];
    };
    let run = app
        .jobs
        .selected()
        .map_or_else(String::new, |r| r.record_id.clone());
    vec![
        Line::styled(
            format!(
                "resume {run} from its record? Only if its process is gone: one still \
                 running elsewhere would run twice (fenced: no step applied twice)."
            ),
            Style::new().fg(app.theme.warn),
        ),
        Line::from(vec![
            Span::styled(format!("type {} then Enter: ", resume_word(app)), bold()),
            Span::styled(
                format!("{typed}▏"),
                Style::new().add_modifier(Modifier::UNDERLINED),
            ),
        ]),
        Line::styled("Esc back", app.theme.dim_text()),
    ]
}
