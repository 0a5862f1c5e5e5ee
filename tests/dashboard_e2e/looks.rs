//! Looks in the real binary: `--ascii --theme colour-blind` and a config
//! file rebinding the help key reach the dashboard the operator sees.

use crate::world::{quit, World};
use std::time::Instant;

/// The screen is ASCII only (the focused table's border `#=`), a stuck row
/// is drawn in the colour-blind palette's warning colour (xterm-256 220),
/// and `F1`, bound to the help in the config file, opens the help listing
/// it. Under `NO_COLOR` no cell is coloured and alerts are reversed.
#[test]
fn ascii_the_colour_blind_theme_and_a_rebound_key_reach_the_screen() {
    let started = Instant::now();
    let w = World::new();
    let stuck = w.stage("stuck", 2, false, Some(300));
    w.refresh();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("estx-tui")).unwrap();
    std::fs::write(
        dir.path().join("estx-tui/config.toml"),
        "[keys]\nhelp = \"F1\"\n",
    )
    .unwrap();
    let config = dir.path().display().to_string();
    let tui = w.dashboard_with_env(
        "looks",
        &["--ascii", "--theme", "colour-blind"],
        &[("XDG_CONFIG_HOME", config.as_str())],
    );
    let screen = tui.wait_for_all(&[&stuck.id, "# transactions 1 of 1"]);
    assert!(screen.is_ascii(), "{screen}");
    let styled = tui.screen_styled();
    assert!(
        styled.contains("38;5;220"),
        "the stuck row in the colour-blind warning colour:\n{styled:?}"
    );
    assert!(
        screen.contains("F1 help"),
        "the key bar names F1:\n{screen}"
    );
    tui.keys(&["F1"]);
    tui.wait_for_all(&["F1         this help"]);
    tui.keys(&["Escape", "q"]);
    assert_eq!(tui.wait_exit(), 0);

    // NO_COLOR: not one colour sequence; the READ-ONLY banner reversed.
    let tui = w.dashboard_with_env("no-color", &["--read-only"], &[("NO_COLOR", "1")]);
    tui.wait_for_all(&[&stuck.id, "READ-ONLY"]);
    let styled = tui.screen_styled();
    let coloured = styled.split('\x1b').skip(1).any(|seq| {
        let params = seq.trim_start_matches('[');
        let params = &params[..params.find('m').unwrap_or(0)];
        params.split(';').any(|p| {
            matches!(
                p.parse::<u16>(),
                Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
            )
        })
    });
    assert!(!coloured, "a colour under NO_COLOR:\n{styled:?}");
    let banner = styled.find("READ-ONLY").unwrap();
    let sgr = styled[..banner].rsplit('\x1b').next().unwrap_or_default();
    let params = sgr.trim().trim_start_matches('[').trim_end_matches('m');
    assert!(
        params.split(';').any(|p| p == "7"),
        "READ-ONLY not reversed: {sgr:?} in\n{styled:?}"
    );
    quit(
        &tui,
        "ascii_the_colour_blind_theme_and_a_rebound_key_reach_the_screen",
        started,
    );
}
