//! Looks: each theme's colours on the same screen (a snapshot per theme of
//! the cells' styles, the rollback dialog open over the panes), the
//! dangerous dialogs' colour in every theme, `NO_COLOR` (no colour, the
//! danger said in words and by reverse video) and `--ascii` (nothing but
//! ASCII on screen, focused borders still told apart).

use crate::drawing::{draw, find, screen};
use crate::fixtures::{app, open_dialog, recover, release_locks_of, rollback};
use estx::dashboard::app::{App, Theme};
use estx::dashboard::look::ThemeName;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

fn themed(name: ThemeName) -> App {
    let mut a = app();
    a.theme = Theme::new(name);
    a
}

/// Every styled run of the screen, `x,y: fg bg modifiers text`.
fn styles(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    let mut out = String::new();
    for (y, row) in buf.content.chunks(w).enumerate() {
        let mut x = 0;
        while x < row.len() {
            let key = |c: &ratatui::buffer::Cell| (c.fg, c.bg, c.modifier);
            let start = x;
            while x < row.len() && key(&row[x]) == key(&row[start]) {
                x += 1;
            }
            let c = &row[start];
            if (c.fg, c.bg, c.modifier) != (Color::Reset, Color::Reset, Modifier::empty()) {
                let text: String = row[start..x].iter().map(|c| c.symbol()).collect();
                out.push_str(&format!(
                    "{start},{y}: {:?} {:?} {:?} {:?}\n",
                    c.fg,
                    c.bg,
                    c.modifier,
                    text.trim()
                ));
            }
        }
    }
    out
}

#[test]
fn a_snapshot_per_theme() {
    for name in ThemeName::ALL {
        let mut a = themed(name);
        open_dialog(&mut a, rollback, "t-pend-1", true);
        let buf = draw(&a, 100, 30);
        assert_snapshot!(format!("theme_{}", name.as_str()), styles(&buf));
    }
}

/// The rollback, lock-release and reverse dialogs take each theme's danger
/// colour, and force recovery its warning colour: never the same.
#[test]
fn dangerous_dialogs_take_the_themes_danger_colour() {
    for name in ThemeName::ALL {
        let t = Theme::new(name);
        assert_ne!(t.danger, t.warn, "{name:?}");
        for (action, title) in [
            (rollback as fn(&str) -> _, "Roll back t-pend-1?"),
            (release_locks_of, "Release the locks of t-pend-1?"),
        ] {
            let mut a = themed(name);
            // Only the stale lock, so `y` may release it (a live one needs force).
            let snap = a.snapshot.as_mut().unwrap();
            snap.locks.retain(|l| l.info.resource != "bob");
            open_dialog(&mut a, action, "t-pend-1", true);
            let buf = draw(&a, 100, 30);
            let (x, y) = find(&buf, &format!("DESTRUCTIVE: {title}")).unwrap();
            assert_eq!(buf[(x, y)].fg, t.danger, "{name:?} {title}");
            let (cx, cy) = find(&buf, "[ Confirm (y) ]").unwrap();
            assert_eq!(buf[(cx, cy)].fg, t.danger, "{name:?} {title} Confirm");
        }
        let mut a = themed(name);
        open_dialog(&mut a, recover, "t-pend-1", true);
        let buf = draw(&a, 100, 30);
        let (x, y) = find(&buf, "Recover t-pend-1?").unwrap();
        assert_eq!(buf[(x, y)].fg, t.warn, "{name:?} recover");
        assert!(find(&buf, "DESTRUCTIVE").is_none(), "{name:?} recover");
    }
}

/// The colour-blind palette never puts red against green: danger is
/// vermillion and good is blue.
#[test]
fn the_colour_blind_theme_has_no_red_green_pair() {
    let t = Theme::new(ThemeName::ColourBlind);
    assert!(!matches!(t.danger, Color::Red | Color::LightRed));
    assert!(!matches!(t.good, Color::Green | Color::LightGreen));
}

/// `NO_COLOR`: not one cell coloured; the dialog says DESTRUCTIVE and the
/// read-only banner is reversed.
#[test]
fn without_colour_the_danger_is_in_words() {
    let mut a = app();
    a.theme = Theme::new(ThemeName::Dark).with_mono(true);
    a.settings.read_only = true;
    open_dialog(&mut a, rollback, "t-pend-1", true);
    let buf = draw(&a, 100, 30);
    assert!(buf
        .content
        .iter()
        .all(|c| c.fg == Color::Reset && c.bg == Color::Reset));
    assert!(find(&buf, "DESTRUCTIVE: Roll back t-pend-1?").is_some());
    let (x, y) = find(&buf, "READ-ONLY").unwrap();
    assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn ascii_draws_nothing_but_ascii() {
    let mut a = app();
    a.theme = Theme::default().with_ascii(true);
    let main = screen(&a, 100, 30);
    assert!(main.is_ascii(), "{main}");
    // The focused table's thick border, apart from the plain ones.
    assert!(main.contains("\n# transactions"), "{main}");
    assert!(main.contains("======#\n"), "{main}");
    assert_snapshot!("ascii_main", main);
    open_dialog(&mut a, rollback, "t-pend-1", true);
    let dialog = screen(&a, 100, 30);
    assert!(dialog.is_ascii(), "{dialog}");
    assert_snapshot!("ascii_dialog", dialog);
}

/// The detail's action lines and the dialog name the keys as rebound in
/// the config.
#[test]
fn the_detail_names_rebound_keys() {
    use estx::dashboard::keymap::{KeyOverride, Keymap};
    let mut a = app();
    let before = screen(&a, 140, 40);
    assert!(before.contains("R rollback "), "{before}");
    let rebound = KeyOverride {
        action: "rollback".into(),
        keys: vec!["Z".into()],
        line: 1,
    };
    let confirm = KeyOverride {
        action: "confirm".into(),
        keys: vec!["c".into()],
        line: 2,
    };
    a.keys = Keymap::with_overrides(&[rebound], &[confirm]).unwrap();
    let after = screen(&a, 140, 40);
    assert!(after.contains("Z rollback "), "{after}");
    assert!(!after.contains("R rollback"), "{after}");
    // The dialog's reason prompt and key bar name the rebound confirm key.
    open_dialog(&mut a, rollback, "t-pend-1", true);
    let dialog = screen(&a, 140, 40);
    assert!(dialog.contains("(asked after c / !)"), "{dialog}");
    assert!(dialog.contains("c confirm"), "{dialog}");
}
