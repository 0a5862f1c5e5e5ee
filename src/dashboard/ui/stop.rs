//! The question before a bulk run is stopped (the stop key) or before
//! quitting during one (`q`, Ctrl-C), centred over everything: what
//! stopping does, where the ids left go and the line that carries on
//! ([`crate::dashboard::stop::question`]), and two buttons, "keep running"
//! focused first.

use super::theme::{bold, wrapped_rows, Theme};
use crate::dashboard::app::App;
use crate::dashboard::keymap::DialogOp;
use crate::dashboard::stop::{question, StopAsk};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Padding, Paragraph, Wrap};
use ratatui::Frame;

/// Draws the question over `area`.
pub fn render(frame: &mut Frame, app: &App, ask: &StopAsk, area: Rect) {
    let th = &app.theme;
    let mut said = question(app).into_iter();
    let head = said.next().unwrap_or_default();
    let mut body = vec![Line::styled(head, bold())];
    body.extend(said.map(Line::from));
    let width = area.width.saturating_sub(4).min(84);
    let inner_w = usize::from(width.saturating_sub(4)).max(1);
    let height = (wrapped_rows(&body, inner_w) as u16 + 4).min(area.height.saturating_sub(2));
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    let title = if ask.quit {
        " Quit during a bulk run? "
    } else {
        " Stop the bulk run? "
    };
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::new().fg(th.warn).add_modifier(Modifier::BOLD))
        .title(Line::from(title).centered())
        .title_style(Style::new().fg(th.warn).add_modifier(Modifier::BOLD))
        .padding(Padding::horizontal(1));
    let inner = block.inner(rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(block, rect);
    let [text, _, buttons] = inner.layout(&Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ]));
    frame.render_widget(Paragraph::new(body).wrap(Wrap { trim: false }), text);
    frame.render_widget(
        Paragraph::new(buttons_line(app, th, ask)).centered(),
        buttons,
    );
}

fn buttons_line(app: &App, th: &Theme, ask: &StopAsk) -> Line<'static> {
    let focused = Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD);
    let (keep, stop) = if ask.confirm_focused {
        (Style::new(), th.alert(th.warn))
    } else {
        (
            focused,
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        )
    };
    let cancel = app.keys.dialog_key(DialogOp::Cancel);
    let confirm = app.keys.dialog_key(DialogOp::Confirm);
    let what = if ask.quit { "Stop and quit" } else { "Stop" };
    Line::from(vec![
        Span::styled(format!("[ Keep running ({cancel}) ]"), keep),
        Span::raw("    "),
        Span::styled(format!("[ {what} ({confirm}) ]"), stop),
    ])
}
