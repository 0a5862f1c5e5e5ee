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

mod account_detail;
mod accounts;
mod ascii;
mod audit;
mod bulk;
mod detail;
mod dialog;
mod dialog_documents;
mod groups;
mod header;
mod help;
mod jobs;
mod keys;
mod locks;
mod log;
mod overview;
mod profile_frame;
mod reverse;
mod stop;
mod theme;
mod transactions;
mod trends;

use super::app::App;
use super::keymap::Op;
use super::layout::{fits, layout_for, MIN_SIZE};
use super::overlay::Overlay;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

/// Lines of the detail of `d` at `width` (so `update` bounds its scroll).
pub fn detail_line_count(app: &App, d: &crate::dashboard::view::DetailView, width: u16) -> usize {
    detail::line_count(app, d, width)
}

/// Lines of the account drill-down at `width` (so `update` bounds its scroll).
pub fn account_line_count(a: &crate::dashboard::view::AccountDetail, width: u16) -> usize {
    account_detail::line_count(a, width)
}

/// How far the open dialog's text can scroll on the current screen.
pub fn dialog_scroll_max(app: &App) -> usize {
    let s = app.screen();
    app.overlays
        .dialog()
        .map_or(0, |d| dialog::scroll_max(app, d, (s.width, s.height)))
}

/// How far the help overlay can scroll on the current screen.
pub fn help_scroll_max(app: &App) -> usize {
    help::rows(app).saturating_sub(help::visible_rows(app.screen().height))
}

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
                transactions::render(frame, app, snap, a.transactions);
            }
            if !a.detail.is_empty() {
                match &app.view.account {
                    Some(acct) => account_detail::render(frame, app, acct, a.detail),
                    None => detail::render(frame, app, a.detail),
                }
            }
            accounts::render(frame, app, snap, a.accounts);
            locks::render(frame, app, snap, a.locks);
        }
    }
    log::render(frame, app, a.log);
    match &app.bulk {
        Some(b) => bulk::progress(app, frame, b, a.keys),
        None => keys::render(frame, app, a.keys),
    }
    // The overlays bottom first, so the one taking the keys is on top.
    for o in app.overlays.iter() {
        match o {
            Overlay::Audit => audit::render(frame, app, area),
            Overlay::Groups => groups::render(frame, app, area),
            Overlay::Jobs => jobs::render(frame, app, area),
            Overlay::Help { .. } => help::render(frame, app, area),
            Overlay::Dialog(d) => dialog::render(frame, app, d, area),
            Overlay::StopRun(ask) => stop::render(frame, app, ask, area),
            // Typed into the table's title and the key bar.
            Overlay::Filter | Overlay::LookUp(_) => {}
        }
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
            b.action.bulk_verb(),
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
