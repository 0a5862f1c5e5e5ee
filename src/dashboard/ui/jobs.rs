//! The jobs view (`J`), drawn over the panes like the audit pane: the bulk
//! runs whose audit record is still `running`, newest first, each with its
//! life (live, presumed dead, unknown: its heartbeat), action, size, where
//! it was started from, by whom and when; and, after Enter, the prompt that
//! resumes the selected one (a reason first when it must be forced).

use super::audit::first_shown;
use super::theme::Theme;
use super::theme::{bold, clock, more_hint};
use crate::dashboard::app::App;
use crate::dashboard::jobs::{resume_word, ResumePrompt};
use crate::dashboard::keymap::Op;
use crate::protocol::jobs::JobLife;
use crate::protocol::time::human_age;
use crate::protocol::trail::Record;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Draws the view over `area`.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let j = &app.jobs;
    let width = area.width.saturating_sub(4).min(120);
    let height = area.height.saturating_sub(4).max(6);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let jobs = j.list.value().map_or(&[][..], Vec::as_slice);
    // The question may take two lines.
    let prompt_h = if j.prompt.is_some() { 5 } else { 1 };
    let rows = usize::from(height.saturating_sub(2 + prompt_h)).max(2);
    let offset = first_shown(&vec![2; jobs.len()], j.cursor, rows);
    let shown = (rows / 2).min(jobs.len().saturating_sub(offset));
    let mut title = format!(" jobs: {} unfinished bulk run(s) ", jobs.len());
    for kind in ["live", "presumed dead", "unknown"] {
        let n = j.lives.iter().filter(|l| l.kind() == kind).count();
        if n > 0 {
            title.push_str(&format!("· {n} {kind} "));
        }
    }
    if j.list.is_loading() {
        title.push_str("· reading… ");
    }
    title.push_str(&more_hint(offset, shown, jobs.len()));
    let inner = super::theme::draw_overlay(frame, rect, &app.theme, title);
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
            .flat_map(|(i, r)| {
                let life = j.lives.get(i).copied().unwrap_or(JobLife::Unknown);
                job_lines(app, r, life, i == j.cursor)
            })
            .collect(),
    };
    frame.render_widget(Paragraph::new(lines), body);
    frame.render_widget(Paragraph::new(prompt(app)).wrap(Wrap { trim: false }), keys);
}

/// The colour of a job's life: live is healthy, left alone; presumed dead
/// wants the operator; unknown is unknown.
fn life_style(theme: &Theme, life: JobLife) -> Style {
    let colour = match life {
        JobLife::Live { .. } => theme.good,
        JobLife::PresumedDead { .. } => theme.warn,
        JobLife::Unknown => theme.odd,
    };
    Style::new().fg(colour)
}

/// One job in two lines: its life, what and how big, then who and when.
fn job_lines(app: &App, r: &Record, life: JobLife, selected: bool) -> [Line<'static>; 2] {
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
        Line::from(vec![
            Span::raw(mark),
            Span::styled(format!("{} · ", life.short()), life_style(&app.theme, life)),
            Span::styled(head, style),
        ]),
        Line::styled(who, app.theme.dim_text()),
    ]
}

/// The keys, or the resume prompt with what was typed.
fn prompt(app: &App) -> Vec<Line<'static>> {
    let Some(p) = &app.jobs.prompt else {
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
    let life = app.jobs.selected_life();
    let (ask, what, typed) = match p {
        ResumePrompt::Reason(typed) => (
            format!(
                "job {run} is {life}: a resume would run its transactions a second time \
                 (fenced: no step applied twice). Force it only if its process is gone."
            ),
            "reason to force it, then Enter: ".to_string(),
            typed,
        ),
        ResumePrompt::Confirm { typed, forced_with } => (
            match forced_with {
                Some(why) => format!("resume {run} FORCED ({}): \"{why}\"?", life.short()),
                None => format!("resume {run} from its record ({})?", life.short()),
            },
            format!("type {} then Enter: ", resume_word(app)),
            typed,
        ),
    };
    vec![
        Line::styled(ask, Style::new().fg(app.theme.warn)),
        Line::from(vec![
            Span::styled(what, bold()),
            Span::styled(
                format!("{typed}▏"),
                Style::new().add_modifier(Modifier::UNDERLINED),
            ),
        ]),
        Line::styled("Esc back", app.theme.dim_text()),
    ]
}
