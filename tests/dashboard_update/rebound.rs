//! Keys rebound in the config file: the rebound key triggers the action,
//! the old one no longer does, and the help and the key bar name the new
//! key (they read the same table the handler dispatches through).

use crate::{app, key, rollback};
use estx::dashboard::event::IoRequest;
use estx::dashboard::keymap::{KeyOverride, Keymap};
use estx::dashboard::update::update;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

fn rebound(action: &str, keys: &[&str], line: usize) -> KeyOverride {
    KeyOverride {
        action: action.into(),
        keys: keys.iter().map(|k| k.to_string()).collect(),
        line,
    }
}

fn screen(app: &estx::dashboard::app::App) -> String {
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal
        .draw(|f| estx::dashboard::ui::render(f, app))
        .unwrap();
    let buf = terminal.backend().buffer().clone();
    buf.content.iter().map(|c| c.symbol()).collect()
}

#[test]
fn a_rebound_key_triggers_its_action_and_the_help_shows_it() {
    let mut app = app(false);
    // Wide enough for the help's two columns.
    update(&mut app, estx::dashboard::event::Event::Resize(100, 30));
    app.keys = Keymap::with_overrides(
        &[rebound("rollback", &["Z"], 3), rebound("help", &["F1"], 4)],
        &[rebound("force", &["X"], 6)],
    )
    .unwrap();
    assert!(
        update(&mut app, key('R')).is_empty(),
        "R is no longer bound"
    );
    assert!(app.overlays.dialog().is_none());
    assert_eq!(
        update(&mut app, key('Z')),
        vec![IoRequest::LoadPreview(rollback("t-old"))]
    );
    assert_eq!(app.keys.force_hint(), "the force key X");
    update(&mut app, crate::code(crossterm::event::KeyCode::Esc));
    assert!(app.overlays.dialog().is_none());
    let bar = screen(&app);
    assert!(bar.contains("Z rollback"), "key bar: {bar}");
    assert!(bar.contains("F1 help"), "key bar: {bar}");
    update(&mut app, crate::code(crossterm::event::KeyCode::F(1)));
    let help = screen(&app);
    assert!(help.contains("Z          roll back"), "help: {help}");
    assert!(
        help.contains("X          force past a refusal"),
        "help: {help}"
    );
    assert!(!help.contains("R          roll back"), "help: {help}");
}

#[test]
fn a_key_bound_twice_is_refused_naming_the_line() {
    let e = Keymap::with_overrides(&[rebound("quit", &["j"], 12)], &[]).unwrap_err();
    assert_eq!(e.line, 12);
    assert!(
        e.to_string().contains("`j` is bound to both down and quit"),
        "{e}"
    );
}
