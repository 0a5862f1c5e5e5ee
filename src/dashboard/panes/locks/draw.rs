//! Drawing the locks pane: resource, holder, owner state, age and whether the lock
//! is stale (yellow), live or of unknown holder. Panes of usual width show
//! one line per lock (the owner state only when there is room); narrow ones
//! two (holder and owner state on the second).
//! The selected row (by resource) is highlighted; `L` releases that lock.
//! The view keeps it on screen; the title says what is above and below.

use crate::dashboard::app::{App, Pane};
use crate::dashboard::layout::{lock_rows_that_fit, LOCK_WIDE};
use crate::dashboard::ui::theme::{bold, more_hint, pane_block, short_id, Theme};
use crate::protocol::locks::LockView;
use crate::protocol::locks::Staleness;
use crate::protocol::read::poll::Snapshot;
use crate::protocol::time::human_age;
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState};
use ratatui::Frame;

/// Inner width from which the owner's state gets a column.
const WIDER: u16 = 64;

/// Draws the locks pane.
pub fn render(frame: &mut Frame, app: &App, snap: &Snapshot, area: Rect) {
    let th = &app.theme;
    let v = &app.view.locks;
    let skip = v.offset;
    let height = lock_rows_that_fit(area);
    let shown = snap.locks.len().saturating_sub(skip).min(height);
    let stale = snap.locks.iter().filter(|l| l.staleness.is_stale()).count();
    let title = format!(
        " locks {} ({stale} stale) {}",
        snap.locks.len(),
        more_hint(skip, shown, snap.locks.len())
    );
    let block = pane_block(th, title, app.focus == Pane::Locks);
    if snap.locks.is_empty() {
        // A deployment without a locks index takes no locks: not an error.
        let text = match snap.locks_absent {
            true => "no locks index: this deployment takes no locks",
            false => "no locks held",
        };
        frame.render_widget(
            Paragraph::new(text)
                .wrap(ratatui::widgets::Wrap { trim: true })
                .style(th.dim_text())
                .block(block),
            area,
        );
        return;
    }
    let inner = area.width.saturating_sub(2);
    let wide = inner >= LOCK_WIDE;
    let owner_col = inner >= WIDER;
    let w = column_widths(snap, inner, wide, owner_col);
    let rows: Vec<Row> = snap
        .locks
        .iter()
        .enumerate()
        .skip(skip)
        .take(height)
        .map(|(_, l)| row(app, l, wide, owner_col, &w))
        .collect();
    let table = if wide {
        let mut header = vec![Cell::from("resource"), Cell::from("holder")];
        let mut widths = vec![Constraint::Length(w.id as u16), Constraint::Fill(1)];
        if owner_col {
            header.push(Cell::from("owner state"));
            widths.push(Constraint::Length(11));
        }
        if w.age {
            header.push(Cell::from(Line::from("age").alignment(Alignment::Right)));
            widths.push(Constraint::Length(6));
        }
        header.push(Cell::from("status"));
        widths.push(Constraint::Length(7));
        let header = Row::new(header).style(bold().add_modifier(Modifier::UNDERLINED));
        Table::new(rows, widths).header(header)
    } else {
        let widths = [
            Constraint::Fill(1),
            Constraint::Length(7),
            Constraint::Length(6),
        ];
        Table::new(rows, widths)
    };
    let table = table
        .block(block)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶")
        .highlight_spacing(HighlightSpacing::Always);
    let mut state = TableState::default().with_selected(v.cursor.and_then(|c| c.checked_sub(skip)));
    frame.render_stateful_widget(table, area, &mut state);
}

/// Smallest width of the holder column before the age gives way to the
/// resource id (`txn ` and an owner id shortened to 10).
const HOLDER_MIN: usize = 14;

/// How the locks pane's columns are cut.
struct Widths {
    /// The resource column.
    id: usize,
    /// The holder column.
    holder: usize,
    /// Whether the holder names the process beside its owner.
    process: bool,
    /// Whether the age has a column (one-line rows).
    age: bool,
}

/// How the columns are cut for the locks pane's `inner` width. Resource
/// ids are what the operator types into `/` and `--ids-from`: they get
/// their width first, the holder what is left (its process dropped before
/// its owner id is shortened), and the age gives way to a whole resource
/// on one-line rows; only a pane too narrow for that shortens the
/// resource (in the middle).
fn column_widths(snap: &Snapshot, inner: u16, wide: bool, owner_col: bool) -> Widths {
    let longest =
        |f: &dyn Fn(&LockView) -> Option<usize>| snap.locks.iter().filter_map(f).max().unwrap_or(0);
    let resource = longest(&|l| Some(l.info.resource.chars().count())).max(8);
    let (id, holder, age) = if wide {
        // The symbol column, the status and the spaces between resource,
        // holder and status; the age's and the owner state's when shown.
        let fixed = 1 + 7 + 2 + if owner_col { 12 } else { 0 };
        let rest = usize::from(inner).saturating_sub(fixed);
        let age = rest >= 7 + resource + HOLDER_MIN;
        let rest = rest.saturating_sub(if age { 7 } else { 0 });
        let id = resource.min(rest.saturating_sub(HOLDER_MIN)).max(8);
        (id, rest.saturating_sub(id), age)
    } else {
        let w = usize::from(inner.saturating_sub(16)).max(6);
        (w, w, true)
    };
    // One width for every owner id of the column, so the same id is cut
    // the same way on every row (and as in the other panes): what the
    // holder column leaves after `txn ` (and ` (process)` when every
    // owner id fits whole beside it).
    let owner = longest(&|l| l.info.owner.as_ref().map(|o| o.chars().count()));
    let process = longest(&|l| {
        l.info.owner.as_ref()?;
        l.info.process_id.as_ref().map(|p| p.chars().count() + 3)
    });
    let process = 4 + owner + process <= holder;
    Widths {
        id,
        holder,
        process,
        age,
    }
}

fn status(th: &Theme, s: &Staleness) -> (&'static str, Style) {
    match s {
        Staleness::Live => ("live", Style::new().fg(th.good)),
        Staleness::Stale(_) => (
            "stale",
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        ),
        Staleness::Unknown(_) => ("unknown", Style::new().fg(th.odd)),
    }
}

/// One lock, its columns cut as `w` says (one width for each column).
fn row<'a>(app: &App, l: &'a LockView, wide: bool, owner_col: bool, w: &Widths) -> Row<'a> {
    let th = &app.theme;
    let resource = short_id(&l.info.resource, w.id);
    // The holder as the lock's shape names it (`txn X`, `instance X`, …),
    // its owner id shortened to what the words around it leave.
    let whole = l.info.holder_label_cut(&|o| o.to_string(), w.process);
    let owner_len = l.info.owner.as_ref().map_or(0, |o| o.chars().count());
    let around = whole.chars().count().saturating_sub(owner_len);
    let room = w.holder.saturating_sub(around).max(5);
    let holder = short_id(
        &l.info.holder_label_cut(&|o| short_id(o, room), w.process),
        w.holder,
    );
    let age = l
        .info
        .age_seconds(app.now)
        .map(human_age)
        .unwrap_or_else(|| "-".into());
    let owner_state = l
        .owner_state
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_else(|| "-".into());
    let (word, style) = status(th, &l.staleness);
    let row_style = if l.staleness.is_stale() {
        Style::new().fg(th.warn)
    } else {
        Style::new()
    };
    let age = Cell::from(Line::from(age).alignment(Alignment::Right));
    if wide {
        let mut cells = vec![Cell::from(resource), Cell::from(holder)];
        if owner_col {
            cells.push(Cell::from(owner_state));
        }
        if w.age {
            cells.push(age);
        }
        cells.push(Cell::from(Span::styled(word, style)));
        Row::new(cells).style(row_style)
    } else {
        let first = Text::from(vec![
            Line::from(resource),
            Line::styled(format!(" {holder} · {owner_state}"), th.dim_text()),
        ]);
        Row::new(vec![
            Cell::from(first),
            Cell::from(Span::styled(word, style)),
            age,
        ])
        .height(2)
        .style(row_style)
    }
}
