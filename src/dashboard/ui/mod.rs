//! Rendering: a pure function of [`App`] — the screen's clock is `app.now`,
//! nothing here reads the wall clock or does I/O, so every screen is tested
//! with `TestBackend` snapshots.
//!
//! Screen from top to bottom ([`super::layout`]): header line, alert/summary line,
//! state overview, then the transaction table (left, ~55%) beside the
//! detail (right), accounts and locks side by side (under the detail from
//! [`super::layout::WIDE_LAYOUT`] columns, else in a full-width strip under both, where
//! they have room to be read), then the event log and the key hint bar. Help and the confirmation dialog are
//! drawn over everything. Below [`super::layout::MIN_SIZE`] only a message is drawn.
//!
//! Here are the screen's frame (header, alert line, overview, trends, key
//! bar, the profile's frame, the ASCII fallback) and the helpers every
//! drawing shares (`theme`, `rows`); each pane draws itself
//! (`panes/NAME/draw.rs`) and each layer too (`layers/NAME/draw.rs`).

mod ascii;
mod bulk;
mod header;
mod keys;
mod overview;
mod profile_frame;
pub(crate) mod reverse;
pub(crate) mod rows;
pub mod theme;
mod trends;

use super::app::App;
use super::keymap::Op;
use super::layout::{fits, layout_for, MIN_SIZE};
use super::panes::{account_detail, accounts, detail, locks, log, transactions};
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Draws the whole screen from the state (in ASCII with `--ascii`).
pub fn render(frame: &mut Frame, app: &App) {
    draw(frame, app);
    if app.theme.ascii {
        ascii::transliterate(frame.buffer_mut());
    }
}

fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if !fits(area) {
        too_small(frame, app, area);
        return;
    }
    let area = match &app.settings.mark {
        Some(mark) => profile_frame::render(frame, &app.theme, mark, area),
        None => area,
    };
    let a = layout_for(area, app.focus);
    header::render(frame, app, a.header, a.alert);
    match &app.snapshot {
        None => header::render_no_data(frame, app, a.body()),
        Some(snap) => {
            overview::render(frame, app, snap, a.overview);
            if !a.transactions.is_empty() {
                transactions::draw::render(frame, app, snap, a.transactions);
            }
            if !a.detail.is_empty() {
                match &app.view.account {
                    Some(acct) => account_detail::draw::render(frame, app, acct, a.detail),
                    None => detail::draw::render(frame, app, a.detail),
                }
            }
            accounts::draw::render(frame, app, snap, a.accounts);
            locks::draw::render(frame, app, snap, a.locks);
        }
    }
    log::draw::render(frame, app, a.log);
    match &app.bulk {
        Some(b) => bulk::progress(app, frame, b, a.keys),
        None => keys::render(frame, app, a.keys),
    }
    // The overlays bottom first, so the one taking the keys is on top.
    let cx = app.draw_cx();
    for o in app.overlays.iter() {
        o.draw(frame, &cx, area);
    }
}

/// What a screen below [`MIN_SIZE`] shows: that it is too small, and that
/// its keys are ignored (quit aside; during a bulk run even quit waits for
/// a screen that can ask first).
fn too_small(frame: &mut Frame, app: &App, area: Rect) {
    let size = format!(
        "estx-tui needs at least {}×{} (now {}×{})",
        MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
    );
    let keys = match &app.bulk {
        Some(b) => format!(
            "a bulk {} is running ({}/{}): enlarge the terminal to stop it or to quit; \
             keys are ignored",
            b.on.verb(),
            b.done,
            b.total
        ),
        None => format!(
            "keys are ignored until it is larger; {} quits",
            app.keys.key(Op::Quit)
        ),
    };
    let lines = vec![Line::from(size), Line::from(keys)];
    let rows = (super::layout::wrapped_rows(&lines, usize::from(area.width)) as u16)
        .clamp(1, area.height.max(1));
    let target = area.centered_vertically(Constraint::Length(rows));
    frame.render_widget(
        Paragraph::new(lines).centered().wrap(Wrap { trim: true }),
        target,
    );
}
