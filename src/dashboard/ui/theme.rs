//! The shared look of every pane: the [`Theme`] in force (its colours), the
//! pane border (thick when focused) and small text helpers (times, ages, signed amounts, segments that fit).

pub use crate::dashboard::layout::wrapped_rows;
pub use crate::dashboard::look::Theme;
use crate::protocol::transaction::Transaction;
use chrono::{DateTime, Datelike, Timelike, Utc};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType};

/// Bold text.
pub fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

/// The bordered block of a pane; focused panes get a thick border in the
/// focus colour (the thickness says it without colour).
pub fn pane_block<'a>(t: &Theme, title: impl Into<Line<'a>>, focused: bool) -> Block<'a> {
    let block = Block::bordered().title(title);
    if focused {
        block
            .border_type(BorderType::Thick)
            .border_style(Style::new().fg(t.focus))
            .title_style(Style::new().fg(t.focus).add_modifier(Modifier::BOLD))
    } else {
        block.border_style(t.dim_text())
    }
}

/// The frame of an overlay (help, audit, groups, jobs): rounded, in the
/// focus colour, its title centred, a column of padding inside.
fn overlay_block(th: &Theme, title: String) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::new().fg(th.focus))
        .title(Line::from(title).centered())
        .title_style(bold().fg(th.focus))
        .padding(ratatui::widgets::Padding::horizontal(1))
}

/// Draws an overlay's frame ([`overlay_block`] titled `title`) over
/// `rect`, clearing what is under it; returns the area inside.
pub fn draw_overlay(
    frame: &mut ratatui::Frame,
    rect: ratatui::layout::Rect,
    th: &Theme,
    title: String,
) -> ratatui::layout::Rect {
    let block = overlay_block(th, title);
    let inner = block.inner(rect);
    frame.render_widget(ratatui::widgets::Clear, rect);
    frame.render_widget(block, rect);
    inner
}

/// `HH:MM:SS` (UTC). Written field by field: chrono's `format` parses its
/// pattern at every call, and clocks are drawn at every frame.
pub fn clock(t: DateTime<Utc>) -> String {
    format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())
}

/// `txn-2026…8c484f44`: an id (or any text) too wide for `width`, shortened
/// in the middle so its head and its distinguishing tail stay. Every pane
/// shortens ids with this one function, so a row can be matched across
/// panes; the detail and the dialogs show ids whole.
pub fn short_id(text: &str, width: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= width || width < 5 {
        return text.to_string();
    }
    let tail = (width - 1) / 2;
    let head = width - 1 - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// `" (+N above, +M more)"`-style hints for a pane showing `shown` of `len`
/// rows from `offset`; empty when everything is on screen.
pub fn more_hint(offset: usize, shown: usize, len: usize) -> String {
    let below = len.saturating_sub(offset + shown);
    match (offset, below) {
        (0, 0) => String::new(),
        (0, b) => format!("(+{b} more) "),
        (a, 0) => format!("(+{a} above) "),
        (a, b) => format!("(+{a} above, +{b} more) "),
    }
}

/// `YYYY-MM-DD HH:MM:SS` (UTC), field by field as [`clock`].
pub fn datetime(t: DateTime<Utc>) -> String {
    format!(
        "{:04}-{:02}-{:02} {}",
        t.year(),
        t.month(),
        t.day(),
        clock(t)
    )
}

/// A balance change: `+100`, `-100`, `±0`.
pub fn signed(n: i64) -> String {
    if n == 0 {
        "±0".into()
    } else {
        format!("{n:+}")
    }
}

/// `src → dest` with `?` for what the document does not say.
pub fn route(t: &Transaction) -> String {
    format!(
        "{} → {}",
        t.src.as_deref().unwrap_or("?"),
        t.dest.as_deref().unwrap_or("?")
    )
}

/// [`route`] in at most `width` columns: each account id shortened by
/// [`short_id`] to its share.
pub fn route_in(t: &Transaction, width: usize) -> String {
    let full = route(t);
    if full.chars().count() <= width {
        return full;
    }
    let each = width.saturating_sub(3) / 2;
    format!(
        "{} → {}",
        short_id(t.src.as_deref().unwrap_or("?"), each),
        short_id(t.dest.as_deref().unwrap_or("?"), each)
    )
}

/// The state as shown (`unknown(x)`, or `(no state)` when the field is missing).
pub fn state_text(t: &Transaction) -> String {
    t.state
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| "(no state)".into())
}

/// The amount as shown (`?` when unreadable).
pub fn amount_text(t: &Transaction) -> String {
    t.amount
        .map(|a| a.to_string())
        .unwrap_or_else(|| "?".into())
}

/// One piece of a line that may be left out when space is short.
pub struct Segment<'a> {
    /// Lower is more important; kept first.
    pub priority: u8,
    /// The text.
    pub spans: Vec<Span<'a>>,
}

impl<'a> Segment<'a> {
    /// A segment.
    pub fn new(priority: u8, spans: Vec<Span<'a>>) -> Segment<'a> {
        Segment { priority, spans }
    }

    /// Its width in columns.
    pub fn width(&self) -> usize {
        self.spans.iter().map(Span::width).sum()
    }
}

/// Keeps the most important segments that fit in `width` (joined by `sep`),
/// in their original order.
pub fn fit_segments<'a>(segments: Vec<Segment<'a>>, sep: &'a str, width: u16) -> Line<'a> {
    let mut order: Vec<usize> = (0..segments.len()).collect();
    order.sort_by_key(|&i| segments[i].priority);
    let sep_w = Span::raw(sep).width();
    let mut keep = vec![false; segments.len()];
    let mut used = 0usize;
    for i in order {
        let w = segments[i].width() + if used == 0 { 0 } else { sep_w };
        if used + w <= width as usize {
            used += w;
            keep[i] = true;
        }
    }
    let mut spans = Vec::new();
    for (seg, _) in segments.into_iter().zip(&keep).filter(|(_, k)| **k) {
        if !spans.is_empty() {
            spans.push(Span::raw(sep));
        }
        spans.extend(seg.spans);
    }
    Line::from(spans)
}

/// `5912` as `5,912`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{clock, datetime, more_hint, short_id};
    use chrono::{TimeZone, Utc};

    #[test]
    fn times_read_as_chrono_formats_them() {
        for t in [
            Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
            Utc.with_ymd_and_hms(999, 12, 31, 23, 59, 59).unwrap(),
        ] {
            assert_eq!(clock(t), t.format("%H:%M:%S").to_string());
            assert_eq!(datetime(t), t.format("%Y-%m-%d %H:%M:%S").to_string());
        }
    }

    #[test]
    fn long_ids_keep_head_and_tail() {
        assert_eq!(
            short_id("txn-20261121004318-8c484f44", 15),
            "txn-202…c484f44"
        );
        assert_eq!(short_id("short", 15), "short");
    }

    #[test]
    fn hints_say_what_is_off_screen() {
        assert_eq!(more_hint(0, 5, 5), "");
        assert_eq!(more_hint(0, 5, 7), "(+2 more) ");
        assert_eq!(more_hint(2, 5, 7), "(+2 above) ");
        assert_eq!(more_hint(1, 5, 9), "(+1 above, +3 more) ");
    }
}
