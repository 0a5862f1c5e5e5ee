//! Drawing an `App` into a `TestBackend` buffer and reading it back: the
//! screen as text, where a string sits, whether a colour is red, and the
//! check that a destructive confirmation dialog is red with Cancel focused.

use estx::dashboard::app::App;
use estx::dashboard::ui::render;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;

/// Draws `app` as the dashboard would after `update`: with its view derived
/// for this size (fixtures set fields directly).
pub(crate) fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut app = app.clone();
    app.terminal.size = (w, h);
    app.refresh_view();
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| render(f, &app)).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer as text, one line per row, trailing blanks trimmed.
pub(crate) fn text(buf: &Buffer) -> String {
    let w = buf.area.width as usize;
    buf.content
        .chunks(w)
        .map(|row| {
            let mut line = String::new();
            let mut skip = 0usize;
            for c in row {
                if skip == 0 {
                    line.push_str(c.symbol());
                }
                skip = skip.max(unicode_width(c.symbol())).saturating_sub(1);
            }
            line.trim_end().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn unicode_width(s: &str) -> usize {
    ratatui::text::Span::raw(s).width()
}

pub(crate) fn screen(app: &App, w: u16, h: u16) -> String {
    text(&draw(app, w, h))
}

/// Position of the first cell where `needle` (one cell per char) starts.
pub(crate) fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let chars: Vec<String> = needle.chars().map(String::from).collect();
    let area = buf.area;
    for y in 0..area.height {
        for x in 0..area.width.saturating_sub(chars.len() as u16 - 1) {
            if chars
                .iter()
                .enumerate()
                .all(|(i, ch)| buf[(x + i as u16, y)].symbol() == ch)
            {
                return Some((x, y));
            }
        }
    }
    None
}

pub(crate) fn is_red(c: Color) -> bool {
    matches!(c, Color::Red | Color::LightRed)
}

/// Asserts the dialog titled `title` has a red border, a red Confirm button
/// and the focus on Cancel.
pub(crate) fn assert_danger_dialog(buf: &Buffer, title: &str) {
    let (tx, ty) =
        find(buf, title).unwrap_or_else(|| panic!("title {title:?} not found:\n{}", text(buf)));
    assert!(is_red(buf[(tx, ty)].fg), "title fg {:?}", buf[(tx, ty)].fg);
    let mut x = tx;
    while buf[(x, ty)].symbol() != "╔" {
        x = x.checked_sub(1).expect("dialog top-left corner");
    }
    for (cx, cy) in [(x, ty), (x + 1, ty), (x, ty + 1)] {
        let c = &buf[(cx, cy)];
        assert!(
            is_red(c.fg),
            "border cell ({cx},{cy}) {:?} has fg {:?}",
            c.symbol(),
            c.fg
        );
    }
    assert_eq!(buf[(x, ty + 1)].symbol(), "║");

    let (cx, cy) = find(buf, "[ Confirm (y) ]").expect("Confirm button");
    for i in 0..15 {
        let c = &buf[(cx + i, cy)];
        assert!(is_red(c.fg), "Confirm cell {i} fg {:?}", c.fg);
        assert!(
            !c.modifier.contains(Modifier::REVERSED),
            "Confirm must not start focused"
        );
    }
    let (kx, ky) = find(buf, "[ Cancel ]").expect("Cancel button");
    for i in 0..10 {
        assert!(
            buf[(kx + i, ky)].modifier.contains(Modifier::REVERSED),
            "Cancel starts focused"
        );
    }
}
