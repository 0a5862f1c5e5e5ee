//! The one key table: every key of the main screen and of the
//! confirmation dialog, what it does, how the help and the key bar name it.
//! `update` dispatches through the [`Keymap`] the state holds, the help
//! lists it and the key bar shows its short labels, so the three cannot
//! disagree. The defaults are in [`table`]; the config file rebinds actions
//! on top of them ([`overrides`]).

mod overrides;
mod table;

pub use overrides::{KeyConfigError, KeyOverride};
pub use table::{DialogOp, Op, DIALOG, MAIN};

use crossterm::event::KeyCode;
use std::borrow::Cow;

/// Where a binding is listed in the help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Moving around.
    Navigate,
    /// Filters, sort, look-up, polling.
    Look,
    /// The repairs.
    Act,
    /// The keys of a bulk run in progress.
    Run,
}

/// One key binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding<O: 'static> {
    /// What it does.
    pub op: O,
    /// The keys that trigger it.
    pub keys: Cow<'static, [KeyCode]>,
    /// How the help names the keys.
    pub label: Cow<'static, str>,
    /// What the help says it does.
    pub help: &'static str,
    /// Key bar: priority (0 kept first when space is short) and word; `None`
    /// keeps it out of the bar.
    pub bar: Option<(u8, &'static str)>,
    /// Help section.
    pub group: Group,
}

/// The key table in force: the defaults with the config file's rebindings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    /// The main screen's keys, in help order.
    pub main: Vec<Binding<Op>>,
    /// The confirmation dialog's keys, in help order.
    pub dialog: Vec<Binding<DialogOp>>,
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap {
            main: MAIN.to_vec(),
            dialog: DIALOG.to_vec(),
        }
    }
}

impl Keymap {
    /// What `key` does on the main screen.
    pub fn main_op(&self, key: KeyCode) -> Option<Op> {
        lookup(&self.main, key)
    }

    /// What `key` does in the confirmation dialog.
    pub fn dialog_op(&self, key: KeyCode) -> Option<DialogOp> {
        lookup(&self.dialog, key)
    }

    /// How the help names the keys of `op` (`R`).
    pub fn label(&self, op: Op) -> &str {
        self.main
            .iter()
            .find(|b| b.op == op)
            .map_or("?", |b| &b.label)
    }

    /// The one key a short hint names for `op` (`j` for down): its first
    /// letter key, else its label.
    pub fn key(&self, op: Op) -> String {
        short(&self.main, op)
    }

    /// [`Keymap::key`] in the confirmation dialog (`y`, `!`).
    pub fn dialog_key(&self, op: DialogOp) -> String {
        short(&self.dialog, op)
    }

    /// The keys that write: `R F L V`.
    pub fn write_keys(&self) -> String {
        self.writing()
            .map(|b| b.label.as_ref())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The repairs in words: `R rollback, F recover, L release, V reverse`
    /// (what read-only mode says it disables).
    pub fn write_actions(&self) -> String {
        self.writing()
            .map(|b| match b.bar {
                Some((_, word)) => format!("{} {word}", b.label),
                None => b.label.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn writing(&self) -> impl Iterator<Item = &Binding<Op>> {
        self.main.iter().filter(|b| b.op.writes())
    }

    /// How the dashboard says its way past a refusal: the dialog's force
    /// key (the command line's is `--force`).
    pub fn force_hint(&self) -> String {
        let key = self
            .dialog
            .iter()
            .find(|b| b.op == DialogOp::Force)
            .map_or("!", |b| &b.label);
        format!("the force key {key}")
    }
}

fn short<O: PartialEq>(table: &[Binding<O>], op: O) -> String {
    let Some(b) = table.iter().find(|b| b.op == op) else {
        return "?".into();
    };
    b.keys
        .iter()
        .find_map(|k| match k {
            KeyCode::Char(' ') => None,
            KeyCode::Char(c) => Some(c.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| b.label.to_string())
}

fn lookup<O: Copy>(table: &[Binding<O>], key: KeyCode) -> Option<O> {
    table.iter().find(|b| b.keys.contains(&key)).map(|b| b.op)
}

#[cfg(test)]
mod tests {
    use crate::dashboard::keymap::*;

    #[test]
    fn the_write_keys_come_from_the_table() {
        let keys = Keymap::default();
        assert_eq!(keys.write_keys(), "R F L V K");
        assert_eq!(
            keys.write_actions(),
            "R rollback, F recover, L release, V reverse, K ack"
        );
        assert_eq!(keys.force_hint(), "the force key !");
        assert_eq!(
            (keys.key(Op::Down), keys.key(Op::Back)),
            ("j".into(), "Esc".into())
        );
    }

    #[test]
    fn no_key_is_bound_twice() {
        let keys = Keymap::default();
        assert_eq!(overrides::first_clash(&keys.main), None);
        assert_eq!(overrides::first_clash(&keys.dialog), None);
    }
}
