//! Drawing the detail of the selected transaction (derived in the view:
//! from the last snapshot, or read by id once it left the list, saying
//! what became of it — "now finished"): its text ([`super::text`]), most
//! important first. The pane scrolls (j/k when focused) with "+N more" in
//! its title.

use super::text::lines;
use crate::dashboard::app::{App, Pane};
use crate::dashboard::ui::theme::{more_hint, pane_block, wrapped_rows};
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Draws the detail pane, scrolled by `app.selection.detail_scroll` (bounded to its text).
pub fn render(frame: &mut Frame, app: &App, area: Rect) {
    let th = &app.theme;
    let focused = app.focus == Pane::Detail;
    let Some(d) = &app.view.detail else {
        let text = match &app.selection.txn {
            None => "no transaction selected".to_string(),
            Some(id) => match &app.reads.looked_up {
                Some((l, Ok(None))) if l == id => format!("{id}: no such transaction"),
                Some((l, Err(e))) if l == id => format!("{id}: could not read it: {e}"),
                _ => format!("{id}: reading it by id…"),
            },
        };
        frame.render_widget(
            Paragraph::new(text)
                .style(th.dim_text())
                .wrap(Wrap { trim: true })
                .block(pane_block(th, " detail ", focused)),
            area,
        );
        return;
    };
    let body = lines(app, d);
    let inner_w = usize::from(area.width.saturating_sub(2)).max(1);
    let total = wrapped_rows(&body, inner_w);
    let height = usize::from(area.height.saturating_sub(2));
    let scroll = app
        .selection
        .detail_scroll
        .min(total.saturating_sub(height));
    let mut title = format!(" detail: {} ", d.txn.id);
    title.push_str(&more_hint(scroll, height.min(total), total));
    frame.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .scroll((scroll.min(usize::from(u16::MAX)) as u16, 0))
            .block(pane_block(th, title, focused)),
        area,
    );
}
