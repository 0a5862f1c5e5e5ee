//! Rebinding keys from the config file: `[keys]` (main screen) and
//! `[dialog_keys]` (the confirmation dialog) map an action's name to the
//! keys that trigger it instead of its defaults:
//!
//! ```toml
//! [keys]
//! rollback = "Z"
//! down = ["Down", "n"]
//! ```
//!
//! A rebinding replaces every default key of that action; the help and the
//! key bar show the new keys. An unknown action or key name, an action
//! left without a key, and a key bound to two actions of one table are
//! refused, naming the line.

use super::table::Named;
use super::{Binding, Keymap};
use crossterm::event::KeyCode;
use std::borrow::Cow;

/// One line of `[keys]` or `[dialog_keys]`: an action's name, its keys by
/// name, and the config file's line (for the errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOverride {
    /// The action's name (`rollback`).
    pub action: String,
    /// The keys by name (`Z`, `Down`, `Space`, `F5`).
    pub keys: Vec<String>,
    /// The line of the config file that says it.
    pub line: usize,
}

/// Why the config file's key bindings were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct KeyConfigError {
    /// The line of the config file at fault.
    pub line: usize,
    /// What is wrong there.
    pub message: String,
}

impl Keymap {
    /// The default table with `main` (`[keys]`) and `dialog`
    /// (`[dialog_keys]`) rebindings applied.
    pub fn with_overrides(
        main: &[KeyOverride],
        dialog: &[KeyOverride],
    ) -> Result<Keymap, KeyConfigError> {
        let mut keys = Keymap::default();
        rebind(&mut keys.main, "keys", main)?;
        rebind(&mut keys.dialog, "dialog_keys", dialog)?;
        Ok(keys)
    }
}

/// Applies `overrides` (the `[section]` of the file) to `table`.
fn rebind<O: Named>(
    table: &mut [Binding<O>],
    section: &str,
    overrides: &[KeyOverride],
) -> Result<(), KeyConfigError> {
    let mut lines = vec![0; table.len()];
    for o in overrides {
        let err = |message: String| KeyConfigError {
            line: o.line,
            message: format!("[{section}] {}: {message}", o.action),
        };
        let Some(at) = table.iter().position(|b| b.op.name() == o.action) else {
            let known: Vec<&str> = table.iter().map(|b| b.op.name()).collect();
            return Err(err(format!(
                "no such action (actions: {})",
                known.join(", ")
            )));
        };
        if o.keys.is_empty() {
            return Err(err("binds no key; name at least one".into()));
        }
        let keys = o
            .keys
            .iter()
            .map(|k| parse_key(k).ok_or_else(|| err(format!("unknown key `{k}` ({KEY_NAMES})"))))
            .collect::<Result<Vec<_>, _>>()?;
        table[at].label = Cow::Owned(
            o.keys
                .iter()
                .map(|k| key_label(k))
                .collect::<Vec<_>>()
                .join(" "),
        );
        table[at].keys = Cow::Owned(keys);
        lines[at] = o.line;
    }
    if let Some((key, a, b)) = first_clash(table) {
        // Name a rebinding's line: the later one when both are rebound.
        let line = lines[a].max(lines[b]);
        let (first, second) = (table[a].op.name(), table[b].op.name());
        return Err(KeyConfigError {
            line,
            message: format!(
                "[{section}]: key `{}` is bound to both {first} and {second}; \
                 rebind one of them",
                key_name(key)
            ),
        });
    }
    Ok(())
}

/// The first key bound twice in `table`, with the two bindings' positions
/// (the same twice when one binding lists a key twice).
pub(super) fn first_clash<O>(table: &[Binding<O>]) -> Option<(KeyCode, usize, usize)> {
    let mut seen: Vec<(KeyCode, usize)> = Vec::new();
    for (i, b) in table.iter().enumerate() {
        for k in b.keys.iter() {
            if let Some(&(_, j)) = seen.iter().find(|(s, _)| s == k) {
                return Some((*k, j, i));
            }
            seen.push((*k, i));
        }
    }
    None
}

/// The key names the config file accepts, for the errors.
const KEY_NAMES: &str = "a single character, Space, Enter, Esc, Tab, BackTab, Backspace, \
                         Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12";

/// A key by the name the config file gives it.
fn parse_key(name: &str) -> Option<KeyCode> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return (!c.is_control() && c != ' ').then_some(KeyCode::Char(c));
    }
    let key = match name.to_ascii_lowercase().as_str() {
        "space" => KeyCode::Char(' '),
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "backtab" | "s-tab" | "shift-tab" => KeyCode::BackTab,
        "backspace" => KeyCode::Backspace,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" => KeyCode::PageDown,
        "insert" | "ins" => KeyCode::Insert,
        "delete" | "del" => KeyCode::Delete,
        f => match f.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            Some(n @ 1..=12) => KeyCode::F(n),
            _ => return None,
        },
    };
    Some(key)
}

/// How the help shows a key named `name` in the config file.
fn key_label(name: &str) -> String {
    parse_key(name).map_or_else(|| name.to_string(), key_name)
}

/// How the help and the errors name `key`.
fn key_name(key: KeyCode) -> String {
    match key {
        KeyCode::Char(' ') => "Space".into(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::BackTab => "S-Tab".into(),
        KeyCode::Up => "↑".into(),
        KeyCode::Down => "↓".into(),
        KeyCode::Left => "←".into(),
        KeyCode::Right => "→".into(),
        KeyCode::PageUp => "PgUp".into(),
        KeyCode::PageDown => "PgDn".into(),
        KeyCode::F(n) => format!("F{n}"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::keymap::Op;

    fn o(action: &str, keys: &[&str], line: usize) -> KeyOverride {
        KeyOverride {
            action: action.into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            line,
        }
    }

    #[test]
    fn a_rebound_action_takes_its_new_keys_only() {
        let keys = Keymap::with_overrides(&[o("rollback", &["Z"], 3)], &[]).unwrap();
        assert_eq!(keys.main_op(KeyCode::Char('Z')), Some(Op::Rollback));
        assert_eq!(keys.main_op(KeyCode::Char('R')), None);
        assert_eq!(keys.write_keys(), "Z F L V K");
    }

    #[test]
    fn a_key_bound_twice_names_the_line() {
        let e = Keymap::with_overrides(&[o("rollback", &["r"], 7)], &[]).unwrap_err();
        assert_eq!(e.line, 7);
        assert!(
            e.message
                .contains("`r` is bound to both refresh and rollback"),
            "{e}"
        );
        // Moving the other one away too is fine.
        let ok = [o("rollback", &["r"], 7), o("refresh", &["F5"], 8)];
        assert!(Keymap::with_overrides(&ok, &[]).is_ok());
        let e = Keymap::with_overrides(&[], &[o("force", &["y"], 9)]).unwrap_err();
        assert!(e.to_string().starts_with("line 9: [dialog_keys]"), "{e}");
    }

    #[test]
    fn unknown_names_are_refused() {
        let e = Keymap::with_overrides(&[o("rolback", &["Z"], 2)], &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("line 2: [keys] rolback: no such action"),
            "{e}"
        );
        let e = Keymap::with_overrides(&[o("rollback", &["Ctrl-Z"], 4)], &[]).unwrap_err();
        assert!(e.to_string().contains("unknown key `Ctrl-Z`"), "{e}");
        assert!(Keymap::with_overrides(&[o("quit", &[], 5)], &[]).is_err());
    }
}
