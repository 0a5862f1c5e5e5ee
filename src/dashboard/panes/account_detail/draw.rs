//! Drawing the account drill-down (`Enter` in the accounts pane) in the
//! detail pane: its text ([`super::text`]), scrolled like the transaction
//! detail; `Esc` goes back to the accounts.

use super::text::lines;
use super::view::AccountDetail;
use crate::dashboard::app::{App, Pane};
use crate::dashboard::ui::theme::{more_hint, pane_block, wrapped_rows};
use ratatui::layout::Rect;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Draws the drill-down, scrolled by `app.selection.detail_scroll` (bounded to its text).
pub fn render(frame: &mut Frame, app: &App, a: &AccountDetail, area: Rect) {
    let th = &app.theme;
    let body = lines(th, a);
    let inner_w = usize::from(area.width.saturating_sub(2)).max(1);
    let total = wrapped_rows(&body, inner_w);
    let height = usize::from(area.height.saturating_sub(2));
    let scroll = app
        .selection
        .detail_scroll
        .min(total.saturating_sub(height));
    let title = format!(
        " account: {} {}",
        a.id,
        more_hint(scroll, height.min(total), total)
    );
    frame.render_widget(
        Paragraph::new(body)
            .wrap(Wrap { trim: false })
            .scroll((scroll.min(usize::from(u16::MAX)) as u16, 0))
            .block(pane_block(th, title, app.focus == Pane::Detail)),
        area,
    );
}
