//! The progress bar a bulk run shows in place of the key bar.

use crate::dashboard::app::App;
use crate::dashboard::progress::BulkProgress;
use crate::protocol::time::human_age;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Gauge;
use ratatui::Frame;

/// The progress bar of a bulk run.
pub fn progress(app: &App, frame: &mut Frame, b: &BulkProgress, area: Rect) {
    let th = &app.theme;
    let ratio = if b.total == 0 {
        1.0
    } else {
        b.done as f64 / b.total as f64
    };
    let tail = if b.stopping && b.quit_when_stopped {
        "stopping, then quitting: started items reach their next state".to_string()
    } else if b.stopping {
        "stopping: started items reach their next state".to_string()
    } else if b.paused {
        format!("PAUSED · {}", crate::dashboard::stop::bar_keys(app, true))
    } else {
        crate::dashboard::stop::bar_keys(app, false)
    };
    let rate = match b.per_minute {
        0 => String::new(),
        n if n >= 120 => format!(" · {}/s", n / 60),
        n => format!(" · {n}/min"),
    };
    let eta = match b.eta {
        Some(d) if b.done < b.total => format!(" · ETA {}", human_age(d.as_secs() as i64)),
        _ => String::new(),
    };
    let c = &b.counts;
    let mut counts: Vec<String> = [
        (c.refused, "refused"),
        (c.failed, "failed"),
        (c.stopped, "stopped"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if counts.is_empty() {
        counts.push("0 failed".into());
    }
    let head = format!(
        "bulk {} {}/{} · {}{rate}{eta}",
        b.on.verb(),
        b.done,
        b.total,
        counts.join(", ")
    );
    let mut label = format!("{head} · {tail}");
    // Narrow screens keep the keys whole, never cut mid-word.
    if label.chars().count() > usize::from(area.width) {
        label = format!("{head} · {}", tail.replace(" (asks)", ""));
    }
    let colour = match (b.failed > 0, b.paused) {
        (true, _) => th.danger,
        (false, true) => th.warn,
        (false, false) => th.good,
    };
    frame.render_widget(
        Gauge::default()
            .gauge_style(Style::new().fg(colour).bg(th.dim))
            .ratio(ratio.clamp(0.0, 1.0))
            .label(label),
        area,
    );
}
