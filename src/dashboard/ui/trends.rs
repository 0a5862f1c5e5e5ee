//! The header's trends: a sparkline per series ([`Series`]) with its
//! latest value and a rising/falling marker (↑ ↓ →), coloured by what a
//! rise means (more stuck is bad news, more finishes good). They take the
//! header's right end, as many as fit after the text the header must keep
//! (title, profile or URL, READ-ONLY, freshness, polling state): four at
//! 160 columns, all five from about 180; at 80, stuck alone when a profile
//! names the cluster, none beside a URL. Drawn from [`crate::dashboard::trends::Trends`],
//! recorded when each snapshot arrived.

use crate::dashboard::app::App;
use crate::dashboard::trends::{Direction, Outlook, Series};
use crate::protocol::time::human_age;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};
use ratatui::Frame;

/// Columns the header's text keeps at least, and from 140 columns 45 %
/// of the width (the cluster's health and the poll's cost too).
pub const TEXT_MIN: u16 = 62;
/// Columns of one sparkline (its last samples).
const SPARK: u16 = 6;
/// Blank columns before each trend.
const GAP: u16 = 2;

fn label(s: Series) -> &'static str {
    match s {
        Series::InFlight => "in flight",
        Series::Stuck => "stuck",
        Series::Investigate => "!!",
        Series::OldestAge => "oldest",
        Series::FinishesPerMinute => "fin/min",
    }
}

fn value(app: &App, s: Series) -> String {
    let v = app.trends.latest(s).unwrap_or(0);
    match s {
        Series::OldestAge => human_age(v as i64),
        _ => v.to_string(),
    }
}

fn width_of(app: &App, s: Series) -> u16 {
    let text = label(s).chars().count() + value(app, s).chars().count();
    GAP + text as u16 + 1 + SPARK + 1
}

/// The series shown in a header `width` columns wide whose text must keep
/// `essential` columns (in header order), and the columns they take.
pub fn fit(app: &App, width: u16, essential: u16) -> (Vec<Series>, u16) {
    let keep = TEXT_MIN.max(essential).max(width * 9 / 20);
    let mut room = width.saturating_sub(keep);
    let mut shown = Vec::new();
    for s in Series::BY_PRIORITY {
        let w = width_of(app, s);
        if app.trends.has_trend(s) && w <= room {
            room -= w;
            shown.push(s);
        }
    }
    shown.sort_by_key(|s| Series::ALL.iter().position(|a| a == s));
    let used = shown.iter().map(|&s| width_of(app, s)).sum();
    (shown, used)
}

/// The marker of `s` and its colour.
fn marker(app: &App, s: Series) -> Span<'static> {
    let d = app.trends.direction(s);
    let (symbol, good) = match d {
        Direction::Rising => ("↑", s.rise_is() == Outlook::Good),
        Direction::Falling => ("↓", s.rise_is() == Outlook::Bad),
        Direction::Steady => ("→", true),
    };
    let style = match (d, s.rise_is(), good) {
        (Direction::Steady, _, _) | (_, Outlook::Neutral, _) => app.theme.dim_text(),
        (_, _, true) => Style::new().fg(app.theme.good),
        (Direction::Rising, _, false) => Style::new()
            .fg(app.theme.danger)
            .add_modifier(Modifier::BOLD),
        (_, _, false) => Style::new().fg(app.theme.warn).add_modifier(Modifier::BOLD),
    };
    Span::styled(symbol, style)
}

/// Draws `shown` into `area` (one header row).
pub fn render(frame: &mut Frame, app: &App, shown: &[Series], area: Rect) {
    let widths: Vec<Constraint> = shown
        .iter()
        .map(|&s| Constraint::Length(width_of(app, s)))
        .collect();
    let cells = area.layout_vec(&Layout::horizontal(widths));
    for (&s, cell) in shown.iter().zip(cells) {
        let name_w = GAP + label(s).chars().count() as u16 + 1;
        let [name, spark, rest] = cell.layout(&Layout::horizontal([
            Constraint::Length(name_w),
            Constraint::Length(SPARK),
            Constraint::Min(0),
        ]));
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!("  {} ", label(s)),
                app.theme.dim_text(),
            )),
            name,
        );
        let samples = app.trends.samples(s);
        let last: Vec<u64> = samples
            .iter()
            .skip(samples.len().saturating_sub(usize::from(SPARK)))
            .copied()
            .collect();
        let max = last.iter().copied().max().unwrap_or(0).max(1);
        frame.render_widget(Sparkline::default().data(&last).max(max), spark);
        frame.render_widget(
            Paragraph::new(Line::from(vec![marker(app, s), Span::raw(value(app, s))])),
            rest,
        );
    }
}
