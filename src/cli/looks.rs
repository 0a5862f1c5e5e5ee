//! The dashboard's looks from the config file, beside the profiles:
//!
//! ```toml
//! theme = "light"          # dark, light, high-contrast, colour-blind
//! ascii = true             # ASCII borders and marks
//!
//! [keys]                   # main screen: action = key or [keys]
//! rollback = "Z"
//!
//! [dialog_keys]            # the confirmation dialog
//! force = "F"
//! ```
//!
//! A profile may say `theme = "..."` too. Precedence, highest first:
//! `--theme`/`ESTX_THEME`, the profile's theme, the file's, `dark`.
//! `--ascii`/`ESTX_ASCII` turn ASCII on whatever the file says.

use super::global::DashboardArgs;
use crate::dashboard::keymap::{KeyConfigError, KeyOverride, Keymap};
use crate::dashboard::look::ThemeName;
use serde::Deserialize;
use std::collections::BTreeMap;

/// An action's keys as the file writes them: one name or a list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum KeyNames {
    /// `rollback = "Z"`.
    One(String),
    /// `down = ["Down", "n"]`.
    Many(Vec<String>),
}

/// A `[keys]` or `[dialog_keys]` table, each value with where it is.
pub type KeyTable = BTreeMap<String, toml::Spanned<KeyNames>>;

/// What the config file says of the dashboard's looks: its top-level
/// `theme`, `ascii`, `[keys]` and `[dialog_keys]`
/// ([`ConfigFile::looks`](super::profile::ConfigFile::looks)).
#[derive(Debug, Clone, Copy)]
pub struct FileLooks<'a> {
    /// The theme (a profile's or `--theme` wins).
    pub theme: Option<ThemeName>,
    /// Draw in ASCII.
    pub ascii: Option<bool>,
    /// Main-screen key rebindings.
    pub keys: &'a KeyTable,
    /// Confirmation-dialog key rebindings.
    pub dialog_keys: &'a KeyTable,
}

/// Applies the file's looks (`text` is the file, for line numbers) to
/// what the command line and the profile left unset; a rebinding it
/// cannot make is named with its line.
pub fn apply(
    dashboard: &mut DashboardArgs,
    looks: FileLooks<'_>,
    text: &str,
) -> Result<(), KeyConfigError> {
    dashboard.theme = dashboard.theme.or(looks.theme);
    dashboard.ascii |= looks.ascii.unwrap_or(false);
    let main = overrides(looks.keys, text);
    let dialog = overrides(looks.dialog_keys, text);
    dashboard.keys = Keymap::with_overrides(&main, &dialog)?;
    Ok(())
}

fn overrides(table: &KeyTable, text: &str) -> Vec<KeyOverride> {
    let mut out: Vec<KeyOverride> = table
        .iter()
        .map(|(action, keys)| KeyOverride {
            action: action.clone(),
            keys: match keys.get_ref() {
                KeyNames::One(k) => vec![k.clone()],
                KeyNames::Many(ks) => ks.clone(),
            },
            line: line_of(text, keys.span().start),
        })
        .collect();
    // In the file's order, so the first mistake is the one named.
    out.sort_by_key(|o| o.line);
    out
}

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).unwrap_or(text).matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn lines_count_from_one() {
        let text = "a = 1\nb = 2\n\nc = 3\n";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 4), 1);
        assert_eq!(line_of(text, 6), 2);
        assert_eq!(line_of(text, text.find('c').unwrap()), 4);
    }
}
