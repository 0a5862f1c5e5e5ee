//! Drawing the transaction table: mark, id, state, cause, source →
//! destination, amount, age. Stuck rows are yellow and marked `!`, rows
//! older than `investigate_after` red and `!!`, malformed or unknown-state
//! rows `?` (the problem is spelled out in the detail pane); a row's id
//! carries its signs (`✓` marked, `~` acknowledged, `@` held by another's
//! job) and a stuck row its cause in short words (green when an operator
//! can act on it: a dead holder), both from the view (`view::RowNote`). The title carries the
//! row count, sort key and direction, the text filter (with a cursor while
//! typing) and the state filter.

use super::view::RowNote;
use crate::dashboard::app::{App, Pane};
use crate::dashboard::layers::OverlayKind;
use crate::dashboard::ui::rows::{mark, severity, txn_age, txn_style};
use crate::dashboard::ui::theme::{
    amount_text, fit_segments, grouped, more_hint, pane_block, route, route_in, short_id,
    state_text, Segment,
};
use crate::protocol::read::poll::Snapshot;
use crate::protocol::transaction::{Transaction, TxnState};
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

/// Draws the table: only the rows on screen are built (the view holds the
/// filtered, sorted row list and the scroll offset).
pub fn render(frame: &mut Frame, app: &App, snap: &Snapshot, area: Rect) {
    let th = &app.theme;
    let v = &app.view.table;
    let height = usize::from(area.height.saturating_sub(3)).max(1);
    let rows: Vec<(&Transaction, &RowNote)> = v
        .rows
        .iter()
        .zip(&v.notes)
        .skip(v.offset)
        .take(height)
        .filter_map(|(&i, note)| snap.transactions.get(i).map(|t| (t, note)))
        .collect();
    let block = pane_block(
        th,
        title(
            app,
            snap,
            v.rows.len(),
            rows.len(),
            area.width.saturating_sub(2),
        ),
        app.focus == Pane::Transactions,
    );
    if rows.is_empty() {
        let text = empty_text(app, snap);
        frame.render_widget(
            Paragraph::new(text)
                .style(th.dim_text())
                .wrap(Wrap { trim: true })
                .block(block),
            area,
        );
        return;
    }
    let (texts, cols) = cells_text(app, &rows, area.width.saturating_sub(3));
    let right = |text: &str| Cell::from(Line::from(text.to_string()).alignment(Alignment::Right));
    let header = Row::new(cols.keep(
        ["", "id", "state", "cause", "src → dest", "amount", "age"].map(|h| {
            if h == "amount" || h == "age" {
                right(h)
            } else {
                Cell::from(h)
            }
        }),
    ))
    .style(Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    let body: Vec<Row> = rows
        .iter()
        .zip(texts)
        .map(|((t, note), [m, id, state, cause, route, amount, age])| {
            // A cause an operator can act on now stands out of its row.
            let cause = if note.actionable() {
                Cell::from(Span::styled(cause, Style::new().fg(th.good)))
            } else {
                Cell::from(cause)
            };
            let cells = [
                Cell::from(m),
                Cell::from(id),
                Cell::from(state),
                cause,
                Cell::from(route),
                right(&amount),
                right(&age),
            ];
            Row::new(cols.keep(cells)).style(txn_style(app, t))
        })
        .collect();
    let widths = cols.widths.clone();
    let table = Table::new(body, widths)
        .header(header)
        .block(block)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol(Text::from("▶"))
        .highlight_spacing(HighlightSpacing::Always);
    let selected = v
        .cursor
        .and_then(|c| c.checked_sub(v.offset))
        .filter(|c| *c < rows.len());
    let mut state = TableState::default().with_selected(selected);
    frame.render_stateful_widget(table, area, &mut state);
}

/// What the table says when no row shows: the index is missing, the
/// terminal state listed is loading or empty, the filter hides every row,
/// or nothing is in flight.
fn empty_text(app: &App, snap: &Snapshot) -> String {
    if snap
        .missing_indices
        .contains(&app.settings.transactions_index)
    {
        format!(
            "index `{}` does not exist — wrong cluster or name? (`estx-tui init` only for a new cluster)",
            app.settings.transactions_index
        )
    } else if app.view.table.page.is_none() {
        "loading the filter's matches… (polling now)".into()
    } else if app.view.table.page.as_ref().is_some_and(|p| p.total > 0) {
        "no listed transaction matches the filter (Esc clears the text, s cycles states)".into()
    } else if let Some(s) = app.state_filter().filter(|s| s.is_terminal()) {
        format!("no {s} transaction")
    } else if !app.query.text.is_empty()
        || app.query.group.is_some()
        || app.state_filter().is_some()
        || app.query.stuck_only
        || app.query.old_only
    {
        "no transaction matches the filter (Esc clears the text, s cycles states)".into()
    } else {
        "nothing in flight".into()
    }
}

/// The text of each row's cells (mark, id with its signs, state, cause,
/// route, amount, age), fitted to the columns the table's `inner` width
/// keeps.
fn cells_text(
    app: &App,
    rows: &[(&Transaction, &RowNote)],
    inner: u16,
) -> (Vec<[String; 7]>, Columns) {
    let texts: Vec<[String; 7]> = rows
        .iter()
        .map(|(t, note)| {
            let m = mark(severity(app, t)).to_string();
            let signs = note.signs();
            let id = if signs.is_empty() {
                t.id.clone()
            } else {
                format!("{signs} {}", t.id)
            };
            [
                m,
                id,
                table_state(t),
                note.cause_word().unwrap_or_default().to_string(),
                route(t),
                amount_text(t),
                txn_age(app, t),
            ]
        })
        .collect();
    let widest = |k: usize, min: usize, max: usize| {
        texts
            .iter()
            .map(|r| Span::raw(r[k].as_str()).width())
            .max()
            .unwrap_or(0)
            .clamp(min, max) as u16
    };
    let (state_w, amount_w, age_w) = (widest(2, 5, 11), widest(5, 6, 12), widest(6, 3, 6));
    // No stuck row on screen: no cause column.
    let cause_w = if texts.iter().all(|r| r[3].is_empty()) {
        0
    } else {
        widest(3, 5, 14)
    };
    // Ids are what the operator types into `/` and `--ids-from`: they get
    // their width first, beside the mark, state and age (the route and
    // then the amount give way); only a screen too narrow for that
    // shortens them, keeping their head and (distinguishing) tail.
    let room = inner.saturating_sub(2 + state_w + age_w + 3);
    let id_w = widest(1, 2, 32).min(room.max(12));
    let cols = columns(inner, id_w, state_w, age_w, (cause_w, amount_w));
    // What the route column gets: the rest, less the spaces between columns.
    let optional = |on: bool, w: u16| if on { w + 1 } else { 0 };
    let route_w = usize::from(inner.saturating_sub(
        2 + id_w
            + state_w
            + age_w
            + 4
            + optional(cols.amount, amount_w)
            + optional(cols.cause, cause_w),
    ));
    let texts: Vec<[String; 7]> = texts
        .into_iter()
        .zip(rows)
        .map(|(mut r, (t, _))| {
            r[1] = short_id(&r[1], usize::from(id_w));
            r[4] = route_in(t, route_w);
            r
        })
        .collect();
    (texts, cols)
}

/// The table's title in `width` columns: how many rows match (and the
/// page), the marks and the filters in force (the group opened by name,
/// shortened in its middle only when nothing else is left to give way);
/// the sort, the scroll hint and the "Esc closes" reminder give way first.
fn title(
    app: &App,
    snap: &Snapshot,
    matching: usize,
    on_screen: usize,
    width: u16,
) -> Line<'static> {
    let width_of = |segs: &[Segment]| segs.iter().map(Segment::width).sum::<usize>();
    let marks: Vec<Segment> = mark_spans(app)
        .into_iter()
        .map(|s| Segment::new(0, vec![s]))
        .collect();
    let filters = filter_spans(app);
    let label = app.query.group.as_ref().map_or(0, |g| {
        Span::raw(g.label.as_str()).width() + "· group  ".len()
    });
    let others = width_of(&marks) + width_of(&filters);
    // The pane's name, then the page, give way to the group's.
    let counts = [Counts::Named, Counts::Paged, Counts::Bare]
        .map(|c| counts_text(app, snap, matching, c))
        .into_iter()
        .reduce(|full, short| {
            if others + full.chars().count() + label > usize::from(width) {
                short
            } else {
                full
            }
        })
        .unwrap_or_default();
    let room =
        usize::from(width).saturating_sub(others + counts.chars().count() + "· group  ".len());
    let mut segs = vec![Segment::new(0, vec![Span::raw(counts)])];
    let scroll = more_hint(app.view.table.offset, on_screen, matching);
    if !scroll.is_empty() {
        segs.push(Segment::new(2, vec![Span::raw(scroll)]));
    }
    let sort = format!(
        "· sort {} ",
        app.query.sort.order_label(app.query.sort_desc)
    );
    segs.push(Segment::new(4, vec![Span::raw(sort)]));
    segs.extend(marks);
    // The state comes last, after the group.
    let state_at = filters.len() - usize::from(app.state_filter().is_some());
    let mut filters = filters.into_iter();
    segs.extend(filters.by_ref().take(state_at));
    segs.extend(group_segments(app, room));
    segs.extend(filters);
    fit_segments(segs, "", width)
}

/// The group opened, its label in `room` columns (at least 8), and the
/// reminder that Esc closes it (the first to give way).
fn group_segments(app: &App, room: usize) -> Vec<Segment<'static>> {
    let Some(g) = &app.query.group else {
        return vec![];
    };
    let style = Style::new().fg(app.theme.warn).add_modifier(Modifier::BOLD);
    let label = format!("· group {} ", short_id(&g.label, room.max(8)));
    vec![
        Segment::new(0, vec![Span::styled(label, style)]),
        Segment::new(3, vec![Span::styled("(Esc closes) ", style)]),
    ]
}

/// How much [`counts_text`] says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Counts {
    /// The pane's name, the counts and the page.
    Named,
    /// The counts and the page.
    Paged,
    /// The counts.
    Bare,
}

/// How many rows match, of how many in all, and the page shown (the
/// loaded rows while the cluster's page is not known yet), after the
/// pane's name, as `how` says.
fn counts_text(app: &App, snap: &Snapshot, matching: usize, how: Counts) -> String {
    let name = if how == Counts::Named {
        " transactions "
    } else {
        " "
    };
    match &app.view.table.page {
        Some(p) if how == Counts::Bare => format!(" {matching} of {} ", grouped(p.total)),
        Some(p) => {
            let reach = if p.beyond_reach() { "+" } else { "" };
            format!(
                "{name}{matching} of {} · page {}/{}{reach} ",
                grouped(p.total),
                p.filter.page + 1,
                p.pages()
            )
        }
        None => format!("{name}{matching}/{} · loading… ", snap.transactions.len()),
    }
}

/// The marks: how many, and those no row shows.
fn mark_spans(app: &App) -> Vec<Span<'static>> {
    let th = &app.theme;
    let mut spans = Vec::new();
    if !app.selection.marks.is_empty() {
        spans.push(Span::styled(
            format!("· {} marked ", app.selection.marks.len()),
            Style::new().fg(th.focus).add_modifier(Modifier::BOLD),
        ));
    }
    // Marks no row shows are said, so the count never names unseen rows
    // silently (a bulk act leaves them out: see the bulk dialog).
    let m = &app.view.table.marks;
    for (n, what) in [
        (m.filtered.len(), "hidden by the filter"),
        (m.unlisted.len(), "no longer listed"),
    ] {
        if n > 0 {
            spans.push(Span::styled(
                format!("({n} {what}) "),
                Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
            ));
        }
    }
    spans
}

/// The filters in force other than the group: the text (with a cursor
/// while typed), stuck or old only, the state (last).
fn filter_spans(app: &App) -> Vec<Segment<'static>> {
    let th = &app.theme;
    let mut segs = Vec::new();
    if app.overlays.is_open(OverlayKind::Filter) {
        segs.push(Span::styled(
            format!("· /{}█ ", app.query.text),
            Style::new().fg(th.focus).add_modifier(Modifier::BOLD),
        ));
    } else if !app.query.text.is_empty() {
        segs.push(Span::styled(
            format!("· /{} ", app.query.text),
            Style::new().fg(th.focus),
        ));
    }
    let old = format!(
        "over {} only",
        crate::protocol::time::human_duration(app.settings.investigate_after)
    );
    let warn = Style::new().fg(th.warn).add_modifier(Modifier::BOLD);
    for (on, what) in [
        (app.query.stuck_only, "stuck only"),
        (app.query.old_only, old.as_str()),
    ] {
        if on {
            segs.push(Span::styled(format!("· {what} "), warn));
        }
    }
    if let Some(s) = app.state_filter() {
        // A terminal state's pages run newest first.
        let text = if s.is_terminal() {
            format!("· state {s} (newest first) ")
        } else {
            format!("· state {s} ")
        };
        segs.push(Span::styled(text, warn));
    }
    // What hides rows is never left out for the sort or a hint.
    segs.into_iter().map(|s| Segment::new(0, vec![s])).collect()
}

/// The columns that fit: mark, id, state and age always; the route, the
/// cause (when a row on screen is stuck) and the amount as room allows,
/// given in that order (so the amount is dropped first, then the cause,
/// then the route, as the table narrows).
struct Columns {
    widths: Vec<Constraint>,
    cause: bool,
    route: bool,
    amount: bool,
}

impl Columns {
    fn keep<T>(&self, cells: [T; 7]) -> Vec<T> {
        let [mark, id, state, cause, route, amount, age] = cells;
        let mut out = vec![mark, id, state];
        if self.cause {
            out.push(cause);
        }
        if self.route {
            out.push(route);
        }
        if self.amount {
            out.push(amount);
        }
        out.push(age);
        out
    }
}

/// Smallest useful width of the route column.
const ROUTE_MIN: u16 = 10;

/// The columns of a table `inner` wide: mark, id, state and age of these
/// widths; the optional `cause` (0: no stuck row) and `amount` widths.
fn columns(inner: u16, id: u16, state: u16, age: u16, (cause, amount): (u16, u16)) -> Columns {
    // Mark, id, state, age and the spaces between them.
    let base = 2 + id + state + age + 3;
    let rest = inner.saturating_sub(base);
    let route = rest > ROUTE_MIN;
    // What is left once the route has its least, each optional column
    // taking its width and a space.
    let mut left = rest.saturating_sub(ROUTE_MIN + 1);
    let mut take = |w: u16| {
        let fits = route && w > 0 && left > w + 1;
        if fits {
            left -= w + 1;
        }
        fits
    };
    // In order: a column that does not fit leaves out those after it.
    let cause_shown = take(cause);
    let amount_shown = (cause_shown || cause == 0) && take(amount);
    // The id takes the slack when there is no route to take it.
    let id_width = if route {
        Constraint::Length(id)
    } else {
        Constraint::Fill(1)
    };
    let mut widths = vec![Constraint::Length(2), id_width, Constraint::Length(state)];
    if cause_shown {
        widths.push(Constraint::Length(cause));
    }
    if route {
        widths.push(Constraint::Fill(1));
    }
    if amount_shown {
        widths.push(Constraint::Length(amount));
    }
    widths.push(Constraint::Length(age));
    Columns {
        widths,
        cause: cause_shown,
        route,
        amount: amount_shown,
    }
}

/// The state column: unknown states verbatim (the row is marked `?` and the
/// detail says it is unknown), so they fit the column.
fn table_state(t: &Transaction) -> String {
    match &t.state {
        Some(TxnState::Unknown(s)) => s.clone(),
        _ => state_text(t),
    }
}

#[cfg(test)]
mod tests {
    use super::columns;

    /// The columns kept at `inner` for ids of 12, states of 11, ages of
    /// 6, causes of `cause` (0: no stuck row) and amounts of 6.
    fn kept(inner: u16, cause: u16) -> Vec<&'static str> {
        let cols = columns(inner, 12, 11, 6, (cause, 6));
        cols.keep(["", "id", "state", "cause", "route", "amount", "age"])
    }

    #[test]
    fn as_the_table_narrows_the_amount_goes_then_the_cause_then_the_route() {
        let all = ["", "id", "state", "cause", "route", "amount", "age"];
        assert_eq!(kept(65, 11), all);
        assert_eq!(kept(64, 11), ["", "id", "state", "cause", "route", "age"]);
        assert_eq!(kept(58, 11), ["", "id", "state", "cause", "route", "age"]);
        assert_eq!(kept(57, 11), ["", "id", "state", "route", "age"]);
        assert_eq!(kept(45, 11), ["", "id", "state", "route", "age"]);
        assert_eq!(kept(44, 11), ["", "id", "state", "age"]);
        // No stuck row on screen: no cause column, the amount as before.
        assert_eq!(kept(53, 0), ["", "id", "state", "route", "amount", "age"]);
        assert_eq!(kept(52, 0), ["", "id", "state", "route", "age"]);
    }
}
