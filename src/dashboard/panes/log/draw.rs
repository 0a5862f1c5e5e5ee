//! Drawing the event log: newest line at the bottom, `HH:MM:SS` and the text,
//! coloured by level (updated green, no-op gray, error red, info plain).
//! It follows the newest line until scrolled (k/↑ go to older lines, j/↓ to
//! newer, G back to following); the view bounds the scroll. Long lines
//! wrap (never cut at the edge).

use crate::dashboard::app::{App, LogEntry, LogLevel, Pane};
use crate::dashboard::ui::theme::{clock, more_hint, pane_block, Theme};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// The line an entry is drawn as.
fn entry_line<'a>(th: &Theme, e: &'a LogEntry) -> Line<'a> {
    let style = match e.level {
        LogLevel::Info => Style::new(),
        LogLevel::Updated => Style::new().fg(th.good),
        LogLevel::Noop => Style::new().fg(th.muted),
        LogLevel::Error => Style::new().fg(th.danger),
    };
    Line::from(vec![
        Span::styled(format!("{} ", clock(e.at)), th.dim_text()),
        Span::styled(e.text.as_str(), style),
    ])
}

/// Draws the log pane. Following the newest, the newest entries sit at the
/// bottom and an older one that does not fit whole is cut at the top (as a
/// terminal scrolls); scrolled, entries start at the view's first one and
/// the pane is cut at the bottom.
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let th = &app.theme;
    let len = app.log.len();
    let rows = usize::from(area.height.saturating_sub(2)).max(1);
    let width = usize::from(area.width.saturating_sub(2)).max(1);
    // Only the entries that can show are measured, not the whole log.
    let height = |i: usize| crate::dashboard::layout::log_entry_rows(&app.log[i].text, width);
    let (start, end, skip_rows) = match app.selection.log_top {
        None => {
            let mut start = len;
            let mut used = 0;
            while start > 0 && used < rows {
                start -= 1;
                used += height(start);
            }
            (start, len, used.saturating_sub(rows))
        }
        Some(_) => {
            let start = app.view.log.top.min(len);
            let mut end = start;
            let mut used = 0;
            while end < len && (end == start || used + height(end) <= rows) {
                used += height(end);
                end += 1;
            }
            (start, end, 0)
        }
    };
    // Entries wholly above and below what shows.
    let above = if skip_rows > 0 { start + 1 } else { start };
    let mut title = String::from(" log ");
    title.push_str(&more_hint(above, end - above, len));
    if app.selection.log_top.is_some() {
        title.push_str("(scrolled; G follows) ");
    }
    let lines: Vec<Line> = app
        .log
        .iter()
        .skip(start)
        .take(end - start)
        .map(|e| entry_line(th, e))
        .collect();
    let body = if lines.is_empty() {
        vec![Line::styled("nothing yet", th.dim_text())]
    } else {
        lines
    };
    frame.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .scroll((skip_rows.min(usize::from(u16::MAX)) as u16, 0))
            .block(pane_block(th, title, app.focus == Pane::Log)),
        area,
    );
}
