//! The reversal links in the detail pane (both ways); the reverse dialog's
//! body is the dialog layer's (`layers::dialog::reverse`).

use super::theme::{bold, Theme};
use crate::protocol::transaction::Transaction;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The detail pane's lines naming the reversal links of `t`.
pub fn link_lines(th: &Theme, t: &Transaction) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if let Some(by) = &t.reversed_by {
        out.push(Line::from(vec![
            Span::styled("↩ reversed by ", Style::new().fg(th.warn)),
            Span::styled(by.clone(), bold()),
            Span::styled(" (its compensating transfer)", th.dim_text()),
        ]));
    }
    if let Some(of) = &t.reverses {
        out.push(Line::from(vec![
            Span::styled("↩ reverses ", Style::new().fg(th.warn)),
            Span::styled(of.clone(), bold()),
            Span::styled(" (this is its compensating transfer)", th.dim_text()),
        ]));
    }
    out
}
