//! Typing a transaction id to look up (`#`): Enter selects it (read by id,
//! pinned as the keys' target), Esc cancels.

use super::{hint, Effect, Hint, Outcome};
use crate::dashboard::log::LogLevel;
use crossterm::event::{KeyCode, KeyEvent};

/// The id typed so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LookUp {
    /// What was typed.
    pub typed: String,
}

impl LookUp {
    /// A key while typing.
    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Enter => {
                let id = self.typed.trim().to_string();
                if id.is_empty() {
                    return Outcome::close();
                }
                Outcome::with(Effect::Log(LogLevel::Info, format!("looking up {id}")))
                    .then(Effect::ShowTransaction { id, pinned: true })
                    .closing()
            }
            KeyCode::Esc => Outcome::close(),
            KeyCode::Backspace => {
                self.typed.pop();
                Outcome::stay()
            }
            KeyCode::Char(c) => {
                self.typed.push(c);
                Outcome::stay()
            }
            _ => Outcome::stay(),
        }
    }

    /// The key bar while typing: what was typed, and the keys.
    pub fn hints(&self) -> Vec<Hint> {
        vec![
            (0, "look up #".into(), format!("{}█", self.typed)),
            hint(0, "Enter", "look it up"),
            hint(0, "Esc", "cancel"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn enter_shows_the_trimmed_id_pinned_and_a_blank_one_only_closes() {
        let mut l = LookUp::default();
        for c in " t-1 ".chars() {
            let out = l.key(key(KeyCode::Char(c)));
            assert!(!out.close && out.effects.is_empty());
        }
        let out = l.key(key(KeyCode::Enter));
        assert!(out.close);
        assert!(
            matches!(
                out.effects.last(),
                Some(Effect::ShowTransaction { id, pinned: true }) if id == "t-1"
            ),
            "{out:?}"
        );
        let out = LookUp::default().key(key(KeyCode::Enter));
        assert!(out.close && out.effects.is_empty());
    }
}
