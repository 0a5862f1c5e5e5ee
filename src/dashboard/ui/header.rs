//! The header line (title, cluster, health, freshness with the refresh lag,
//! where the clock comes from, poll cost, polling state, `READ-ONLY`), the alert line under it (stale
//! data, auth failure, missing indices — or a one-line summary of what needs
//! attention: partial results, caps with totals, discovery's warnings), and
//! the big message shown in place of the panes before the first snapshot.

use super::theme::{bold, clock, fit_segments, grouped, short_id, wrapped_rows, Segment, Theme};
use crate::cluster::{ClockStatus, SKEW_WARNING_MS};
use crate::dashboard::app::App;
use crate::dashboard::event::PollFailure;
use crate::dashboard::keymap::Op;
use crate::protocol::read::poll::Snapshot;
use crate::protocol::read::verdict::{Healing, Unknown};
use crate::protocol::read::Refresh;
use crate::protocol::time::human_age;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

/// Data older than this while polls fail turns the stale line from yellow to red.
const STALE_RED_SECS: i64 = 60;

/// Draws the header and alert lines.
pub fn render(frame: &mut Frame, app: &App, header: Rect, alert: Rect) {
    // The trends take the right end, only the room the text leaves: every
    // segment of it (health, freshness, the clock's source, the poll's cost)
    // comes before any sparkline (issue 28, item 6).
    let segs = header_segments(app);
    let essential = segs.iter().map(|s| s.width() + 2).sum::<usize>();
    let (shown, used) = super::trends::fit(app, header.width, essential as u16);
    let [header, trends] = header.layout(&ratatui::layout::Layout::horizontal([
        Constraint::Min(0),
        Constraint::Length(used),
    ]));
    frame.render_widget(
        Paragraph::new(fit_segments(segs, "  ", header.width)),
        header,
    );
    super::trends::render(frame, app, &shown, trends);
    frame.render_widget(Paragraph::new(alert_line(app, alert.width)), alert);
}

/// The header's segments, most important first by priority.
fn header_segments(app: &App) -> Vec<Segment<'static>> {
    let th = &app.theme;
    let mut segs = vec![Segment::new(
        0,
        vec![Span::styled(
            " estx-tui ",
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )],
    )];
    // Which cluster this is stays on screen at any width: the profile,
    // or (without one) the URL, shortened in the middle when long.
    if let Some(name) = &app.settings.profile {
        segs.push(Segment::new(
            0,
            vec![Span::styled(format!("[{name}]"), bold())],
        ));
    }
    let url_prio = if app.settings.profile.is_some() { 3 } else { 0 };
    segs.push(Segment::new(
        url_prio,
        vec![Span::raw(short_url(&app.settings.url))],
    ));
    if let Some(snap) = &app.snapshot {
        segs.extend(snapshot_segments(app, snap));
    }
    let polling = if app.poll.paused {
        Span::styled(
            "paused",
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        )
    } else if app.poll.running {
        Span::raw("polling…")
    } else {
        Span::raw(format!("every {}s", app.poll.interval.as_secs()))
    };
    segs.push(Segment::new(1, vec![polling]));
    if let Some(r) = &app.running {
        let forced = if r.forced { " (forced)" } else { "" };
        segs.push(Segment::new(
            1,
            vec![Span::styled(
                format!(
                    "running: {}{forced}",
                    crate::dashboard::event::titled(&r.act)
                ),
                bold(),
            )],
        ));
    }
    if app.settings.read_only {
        segs.push(Segment::new(
            0,
            vec![Span::styled(" READ-ONLY ", th.alert(th.warn))],
        ));
    }
    segs
}

/// What the header says of the last snapshot: cluster health, how old the
/// data is (refresh lag included), the clock in use, the poll's cost.
fn snapshot_segments(app: &App, snap: &Snapshot) -> Vec<Segment<'static>> {
    let th = &app.theme;
    let mut out = Vec::new();
    // No all-clear while the indices the tool reads are missing.
    let missing = !snap.missing_indices.is_empty();
    let (text, colour) = match snap.health.as_deref() {
        Some("green") if missing => ("indices missing", th.warn),
        Some("green") => ("green", th.good),
        Some("yellow") => ("yellow", th.warn),
        Some("red") => ("red", th.danger),
        Some(other) => (other, th.odd),
        None => ("health ?", th.dim),
    };
    // Health that is not green stays at any width; green may give way.
    let all_clear = text == "green";
    out.push(Segment::new(
        if all_clear { 2 } else { 0 },
        vec![Span::styled(format!("● {text}"), Style::new().fg(colour))],
    ));
    out.extend(healing_segment(th, &snap.healing));
    let ago = (app.now - snap.taken_at).num_seconds();
    let style = if app.poll.error.is_some() {
        Style::new().fg(th.warn).add_modifier(Modifier::BOLD)
    } else {
        Style::new()
    };
    // Searches lag writes by up to one refresh interval (read from the
    // index settings): the data's age includes it.
    let lag = match snap.read.refresh {
        Some(Refresh::Never) => " · refresh off: new writes unseen".to_string(),
        Some(Refresh::Every(d)) => format!(" + ≤{}s refresh", d.as_secs_f64()),
        Some(r @ Refresh::ServerlessDefault) => {
            format!(
                " + ≤{}s refresh, serverless",
                r.interval().unwrap_or_default().as_secs()
            )
        }
        None => String::new(),
    };
    out.push(Segment::new(
        1,
        vec![Span::styled(
            format!(
                "as of {} ({} ago{lag})",
                clock(snap.taken_at),
                human_age(ago)
            ),
            style,
        )],
    ));
    if let Some(c) = &snap.read.clock {
        out.push(clock_segment(th, c));
    }
    out.push(Segment::new(
        4,
        vec![Span::styled(
            format!(
                "poll {}ms · {} req",
                snap.duration.as_millis(),
                snap.requests
            ),
            th.dim_text(),
        )],
    ));

    out
}

/// The healing verdict on the application's own recovery: an alarm
/// (stalled, not running) stays at any width in danger colour; healing in
/// good colour, idle and unknown dim and first to give way; nothing before
/// the first judged poll.
fn healing_segment(th: &Theme, h: &Healing) -> Option<Segment<'static>> {
    let (text, style, prio) = match h {
        Healing::Unknown(Unknown::NotRead) => return None,
        Healing::Stalled { since, .. } => (
            format!("recovery stalled since {}", clock(*since)),
            Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
            0,
        ),
        Healing::NotRunning { .. } => (
            "recovery not running".to_string(),
            Style::new().fg(th.danger).add_modifier(Modifier::BOLD),
            0,
        ),
        Healing::Healing { .. } => ("recovery healing".into(), Style::new().fg(th.good), 2),
        Healing::Idle | Healing::Unknown(_) => (format!("recovery {}", h.word()), th.dim_text(), 4),
    };
    Some(Segment::new(prio, vec![Span::styled(text, style)]))
}

/// Where the tool's clock comes from: dim when it is the cluster's and
/// the local clock agrees within a second, in warning colour (and kept on
/// narrow screens) when the cluster told no time or the local clock is off.
fn clock_segment(th: &Theme, c: &ClockStatus) -> Segment<'static> {
    let off = c.offset.num_milliseconds().abs() > SKEW_WARNING_MS;
    if c.is_from_cluster() && !off {
        Segment::new(5, vec![Span::styled(c.short(), th.dim_text())])
    } else {
        let style = Style::new().fg(th.warn).add_modifier(Modifier::BOLD);
        Segment::new(1, vec![Span::styled(c.short(), style)])
    }
}

/// Longest URL shown whole in the header.
const URL_WIDTH: usize = 40;

/// The URL as the header shows it: whole when short, else without its
/// scheme and shortened in the middle (its host's head and tail stay).
fn short_url(url: &str) -> String {
    if url.chars().count() <= URL_WIDTH {
        return url.to_string();
    }
    let bare = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or(url);
    short_id(bare, URL_WIDTH)
}

fn alert_line(app: &App, width: u16) -> Line<'static> {
    let th = &app.theme;
    // A banner leads with its cause, so a narrow screen cuts the age, not
    // the reason (issue 28, item 6).
    match (&app.poll.error, &app.snapshot) {
        (Some(failure), Some(_)) => {
            let age = human_age(app.stale_for().unwrap_or(0));
            match failure {
                PollFailure::Auth(m) => Line::styled(
                    format!(
                        " STALE: {m} — not retrying; fix credentials and press {} — data is {age} old",
                        app.keys.label(Op::Refresh)
                    ),
                    th.alert(th.danger),
                ),
                PollFailure::Transient(m) | PollFailure::Other(m) => {
                    let colour = if app.stale_for().unwrap_or(0) >= STALE_RED_SECS { th.danger } else { th.warn };
                    Line::styled(
                        format!(" STALE: {m} — retrying — data is {age} old"),
                        Style::new().fg(colour).add_modifier(Modifier::BOLD),
                    )
                }
            }
        }
        (Some(_), None) => Line::styled(" no data yet", th.dim_text()),
        (None, Some(snap)) if !snap.missing_indices.is_empty() => missing_line(th, snap),
        (None, Some(snap)) => summary_line(app, snap, width),
        (None, None) => Line::default(),
    }
}

fn missing_line(th: &Theme, snap: &Snapshot) -> Line<'static> {
    Line::styled(
        format!(
            " MISSING INDICES: {} — wrong cluster or index name, or a restore under way? \
             (`estx-tui init` only for a new cluster)",
            snap.missing_indices.join(", ")
        ),
        th.alert(th.danger),
    )
}

fn summary_line(app: &App, snap: &Snapshot, width: u16) -> Line<'static> {
    let th = &app.theme;
    // Counted over every document by the poll, as `check` counts them.
    let a = app.view.attention;
    let (stuck, investigate, odd) = (a.stuck, a.needs_investigation, a.odd);
    let stale_locks = snap.locks.iter().filter(|l| l.staleness.is_stale()).count() as u64;
    let (in_flight, in_flight_short) = match super::overview::capped(snap) {
        Some((total, listed)) => (
            super::overview::showing(total, listed),
            format!("{}/{}", grouped(listed), grouped(total)),
        ),
        None => (grouped(snap.in_flight_total), grouped(snap.in_flight_total)),
    };
    let findings = app.audit.findings().len() as u64;
    let key = app.keys.label(Op::Audit);
    let locks = if snap.read.locks_total > snap.locks.len() as u64 {
        format!("{} of {}", snap.locks.len(), snap.read.locks_total)
    } else {
        snap.locks.len().to_string()
    };
    // Every count stays on the line at any width (issue 28, item 6): in
    // words when they fit, else in the table's marks.
    let counts = |short: bool| -> Vec<Segment<'static>> {
        let words = |long: String, brief: String| if short { brief } else { long };
        // The marks are the table's own (`!!`, `!`, `?`), legend in help.
        let audit = match app.audit.report.last() {
            None => Segment::new(0, vec![Span::styled("audit …", th.dim_text())]),
            Some(Err(_)) => count_segment(th, 0, 1, format!("audit failed ({key})"), th.danger),
            Some(Ok(_)) => count_segment(
                th,
                0,
                findings,
                words(
                    format!("audit {findings} ({key})"),
                    format!("audit {findings}"),
                ),
                th.warn,
            ),
        };
        // A count behind the table's mark for it: `!! investigate 3`, or
        // `!! 3` where the words do not fit.
        let marked = |mark: &str, word: &str, n: u64, colour: Color| {
            let n_text = grouped(n);
            let text = words(
                format!("{mark} {word} {n_text}"),
                format!("{mark} {n_text}"),
            );
            count_segment(th, 0, n, text, colour)
        };
        // Acknowledged transactions (`ack`), said only when there are some.
        let acked = snap.acks.total;
        let acked = (acked > 0).then(|| marked("~", "acked", acked, th.good));
        let mut segs = vec![
            Segment::new(
                0,
                vec![Span::raw(words(
                    format!(" in flight: {in_flight}"),
                    format!(" {in_flight_short} in flight"),
                ))],
            ),
            marked("!!", "investigate", investigate, th.danger),
            marked("!", "stuck", stuck, th.warn),
        ];
        segs.extend(acked);
        segs.extend([
            marked("?", "odd", odd, th.odd),
            count_segment(
                th,
                0,
                stale_locks,
                format!("locks {locks} ({stale_locks} stale)"),
                th.warn,
            ),
            audit,
        ]);
        segs
    };
    let mut segs = Vec::new();
    if let Some(p) = snap.read.coverage.describe() {
        segs.push(Segment::new(
            0,
            vec![Span::styled(
                format!(" {}", p.to_uppercase()),
                th.alert(th.danger),
            )],
        ));
    }
    let sep = " · ".chars().count();
    let width_of =
        |c: &[Segment]| -> usize { segs.iter().chain(c).map(|s| s.width() + sep).sum::<usize>() };
    let full = counts(false);
    let fits = width_of(&full) <= width as usize + sep;
    segs.extend(if fits { full } else { counts(true) });
    segs.extend(read_segments(th, snap));
    fit_segments(segs, " · ", width)
}

/// A count for the summary line: dim when zero, else bold in `colour`.
fn count_segment(th: &Theme, prio: u8, n: u64, text: String, colour: Color) -> Segment<'static> {
    let style = if n == 0 {
        th.dim_text()
    } else {
        Style::new().fg(colour).add_modifier(Modifier::BOLD)
    };
    Segment::new(prio, vec![Span::styled(text, style)])
}

/// What the summary line says of the read itself: accounts with pending
/// entries past the cap, undated transactions, the first read warning.
fn read_segments(th: &Theme, snap: &Snapshot) -> Vec<Segment<'static>> {
    let mut out = Vec::new();
    let cap = crate::protocol::read::poll::PENDING_ACCOUNTS_CAP as u64;
    if snap.read.pending_accounts_total > cap {
        out.push(count_segment(
            th,
            2,
            1,
            format!(
                "accounts with pending {cap} of {}",
                grouped(snap.read.pending_accounts_total)
            ),
            th.warn,
        ));
    }
    let undated = snap.read.undated_in_flight;
    if undated > 0 {
        out.push(count_segment(
            th,
            1,
            undated,
            format!("? no modification time {undated}"),
            th.odd,
        ));
    }
    if let Some(first) = snap.read.warnings.first() {
        let more = snap.read.warnings.len() - 1;
        let text = if more > 0 {
            format!("⚠ {first} (+{more}: estx-tui doctor)")
        } else {
            format!("⚠ {first}")
        };
        out.push(count_segment(th, 1, 1, text, th.warn));
    }
    out
}

/// The message in place of the panes before the first snapshot arrives.
pub fn render_no_data(frame: &mut Frame, app: &App, area: Rect) {
    let th = &app.theme;
    let url = &app.settings.url;
    let (lines, colour) = match &app.poll.error {
        None => (vec![Line::from(format!("connecting to {url}…"))], Color::Reset),
        Some(PollFailure::Auth(m)) => (
            vec![
                Line::styled(
                    format!(
                        "authentication failed at {url} — not retrying; fix credentials and press {}",
                        app.keys.label(Op::Refresh)
                    ),
                    bold(),
                ),
                Line::from(""),
                Line::from(m.to_string()),
            ],
            th.danger,
        ),
        Some(PollFailure::Transient(m)) => (
            vec![Line::styled(format!("cannot reach {url}: {m} — retrying"), bold())],
            th.danger,
        ),
        // The cluster answered, with an error: it is reached.
        Some(PollFailure::Other(m)) => (
            vec![Line::styled(
                format!("{url} answered with an error: {m} — retrying (estx-tui doctor)"),
                bold(),
            )],
            th.danger,
        ),
    };
    let width = area.width.saturating_sub(8).min(90);
    let rows = wrapped_rows(&lines, width.saturating_sub(4) as usize);
    let target = area.centered(
        Constraint::Length(width),
        Constraint::Length(rows as u16 + 2),
    );
    let block = Block::bordered()
        .border_style(Style::new().fg(colour))
        .title(" estx-tui ");
    frame.render_widget(
        Paragraph::new(lines)
            .style(Style::new().fg(colour))
            .centered()
            .wrap(Wrap { trim: true })
            .block(block.padding(ratatui::widgets::Padding::horizontal(1))),
        target,
    );
}
