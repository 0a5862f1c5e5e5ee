//! The bulk dialog's text (how many of the marked transactions would do
//! what, the balance effect of the ones that run) and the progress bar a
//! bulk run shows in place of the key bar.

use super::theme::{bold, dim, signed, DANGER, WARN};
use crate::dashboard::bulk::{plan, verb, Bulk, BulkProgress};
use crate::dashboard::event::Action;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Gauge;
use ratatui::Frame;

/// What the bulk dialog says, from the re-read.
pub fn dialog_lines(action: Action, b: &Bulk) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled(
        format!("{} marked transaction(s), re-read just now:", b.ids.len()),
        bold(),
    )];
    match &b.items {
        None => {
            out.push(Line::styled("re-reading documents…", dim()));
            return out;
        }
        Some(Err(e)) => {
            out.push(Line::styled(e.clone(), Style::new().fg(DANGER)));
            out.push(Line::from("nothing was changed."));
            return out;
        }
        Some(Ok(_)) => {}
    }
    let Some(p) = plan(action, b) else {
        return out;
    };
    let runs = Style::new().add_modifier(Modifier::BOLD);
    out.push(Line::styled(
        format!(" {} {}", p.runs.len(), verb(action)),
        runs,
    ));
    for (why, n) in &p.left_out {
        out.push(Line::styled(format!(" {n} {why}"), Style::new().fg(WARN)));
    }
    if matches!(action, Action::Rollback | Action::Recover) && !p.runs.is_empty() {
        let net: i64 = p.effect.values().sum();
        out.push(Line::styled(
            format!(
                "balance effect of the {} (net {}):",
                p.runs.len(),
                signed(net)
            ),
            bold(),
        ));
        for (acct, delta) in p.effect.iter().filter(|(_, d)| **d != 0) {
            out.push(Line::from(format!(" {acct}: {}", signed(*delta))));
        }
    }
    out.push(Line::styled(
        "each runs unforced as its own recorded intervention, re-read first",
        dim(),
    ));
    out
}

/// The progress bar of a bulk run.
pub fn progress(frame: &mut Frame, b: &BulkProgress, area: Rect) {
    let ratio = if b.total == 0 {
        1.0
    } else {
        b.done as f64 / b.total as f64
    };
    let tail = if b.stopping {
        "stopping: started items finish".to_string()
    } else {
        "Esc stops starting new ones".to_string()
    };
    let label = format!(
        "bulk {} {}/{} · {} failed · {tail}",
        verb(b.action),
        b.done,
        b.total,
        b.failed
    );
    let colour = if b.failed > 0 { DANGER } else { Color::Green };
    frame.render_widget(
        Gauge::default()
            .gauge_style(Style::new().fg(colour).bg(Color::DarkGray))
            .ratio(ratio.clamp(0.0, 1.0))
            .label(label),
        area,
    );
}
