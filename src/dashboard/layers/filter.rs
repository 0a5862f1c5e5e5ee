//! Typing the text filter (`/`): the table narrows as it is typed,
//! starting at the top of its rows; Enter keeps the filter, Esc drops it.
//! The text itself is shared (`App::query`, the table's query),
//! so the layer says how it changes ([`Effect::Filter`], a [`FilterEdit`]).

use super::{hint, Effect, FilterEdit, Hint, Outcome};
use crossterm::event::{KeyCode, KeyEvent};

/// A key while typing the filter.
pub fn key(key: KeyEvent) -> Outcome {
    match key.code {
        KeyCode::Enter => Outcome::close(),
        KeyCode::Esc => Outcome::with(Effect::Filter(FilterEdit::Clear)).closing(),
        KeyCode::Backspace => Outcome::with(Effect::Filter(FilterEdit::Pop)),
        KeyCode::Char(c) => Outcome::with(Effect::Filter(FilterEdit::Push(c))),
        _ => Outcome::stay(),
    }
}

/// The key bar while typing.
pub fn hints() -> Vec<Hint> {
    vec![
        hint(0, "type", "to filter"),
        hint(0, "Enter", "keep"),
        hint(0, "Esc", "clear"),
        hint(1, "Backspace", "delete"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::layers::fixture::key as press;

    #[test]
    fn typing_edits_the_filter_enter_keeps_it_and_esc_drops_it() {
        let edit = |code| match key(press(code)).effects[..] {
            [Effect::Filter(e)] => Some(e),
            _ => None,
        };
        assert_eq!(edit(KeyCode::Char('z')), Some(FilterEdit::Push('z')));
        assert_eq!(edit(KeyCode::Backspace), Some(FilterEdit::Pop));
        assert_eq!(edit(KeyCode::Esc), Some(FilterEdit::Clear));
        assert!(key(press(KeyCode::Esc)).close);
        let kept = key(press(KeyCode::Enter));
        assert!(kept.close && kept.effects.is_empty());
    }
}
