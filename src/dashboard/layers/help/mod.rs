//! Help (`?`): the key table, scrolled when it does not fit; any key but
//! the scrolling ones closes it.

pub mod draw;

use super::{hint, Context, Hint, Outcome};
use crate::dashboard::keymap::{Keymap, Op};
use crossterm::event::KeyEvent;

/// Lines the help is scrolled down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Help {
    /// Lines scrolled down.
    pub scroll: usize,
}

impl Help {
    /// A key while help is open: scroll it (no further than its last
    /// line, [`Context::help_rows`]), or close it (any other key).
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        let (rows, shown) = cx.help_rows;
        let max = rows.saturating_sub(shown);
        match cx.keys.main_op(key.code) {
            Some(Op::Down) => self.scroll = (self.scroll + 1).min(max),
            Some(Op::Up) => self.scroll = self.scroll.saturating_sub(1),
            Some(Op::PageDown) => self.scroll = (self.scroll + 10).min(max),
            Some(Op::PageUp) => self.scroll = self.scroll.saturating_sub(10),
            _ => return Outcome::close(),
        }
        Outcome::stay()
    }

    /// The key bar while help is open.
    pub fn hints(keys: &Keymap) -> Vec<Hint> {
        vec![
            (
                0,
                format!("{} {}", keys.label(Op::Down), keys.label(Op::Up)),
                "scroll".into(),
            ),
            hint(0, "any other key", "closes help"),
        ]
    }
}
