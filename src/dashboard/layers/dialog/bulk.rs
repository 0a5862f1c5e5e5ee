//! The bulk dialog's text (how many of the marked rows would do what, by
//! state, with every id it touches or leaves out, the marks it does not
//! include because the table does not show them, the balance effect of the
//! ones that run, in words where it completes or undoes a debit already
//! made, and every lock the run releases).

use super::Bulk;
use crate::dashboard::event::OnMarks;
use crate::dashboard::load::Load;
use crate::dashboard::ui::theme::{bold, signed, Theme};
use crate::protocol::intervene::Verdicts;
use crate::protocol::transaction::TxnState;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

/// What the bulk dialog says, from the re-read: how many would do what,
/// by state; every id it would touch and every id left out (and why);
/// the marks not included because the table does not show them; the
/// balance effect per account. The dialog scrolls (j/k) when it is long.
pub fn dialog_lines(th: &Theme, b: &Bulk) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled(
        format!(
            "{} marked row(s) of the table, re-read just now:",
            b.ids.len()
        ),
        bold(),
    )];
    out.extend(hidden_lines(th, b));
    match &b.preview {
        Load::Idle | Load::Loading | Load::Reloading(_) => {
            out.push(Line::styled("re-reading documents…", th.dim_text()));
            return out;
        }
        Load::Failed(e) => {
            out.push(Line::styled(e.clone(), Style::new().fg(th.danger)));
            out.push(Line::from("nothing was changed."));
            return out;
        }
        Load::Loaded(_) => {}
    }
    let Some(p) = &b.plan else {
        return out;
    };
    let verdicts = b.preview.value().map(|plan| plan.verdicts());
    let states: Vec<String> = p
        .by_state
        .iter()
        .map(|(s, n)| format!("{n} {}", s.as_ref().map_or("no state", TxnState::as_str)))
        .collect();
    let by_state = if states.is_empty() {
        String::new()
    } else {
        format!(" ({})", states.join(", "))
    };
    out.push(Line::styled(
        format!(" {} {}{by_state}:", p.runs.len(), b.on.verb()),
        Style::new().add_modifier(Modifier::BOLD),
    ));
    out.extend(p.runs.iter().map(|r| id_line(&r.subject().to_string())));
    for (why, ids) in &p.left_out {
        out.push(Line::styled(
            format!(" {} {why}:", ids.len()),
            Style::new().fg(th.warn),
        ));
        out.extend(ids.iter().map(|id| id_line(id)));
    }
    let one_act = matches!(b.on, OnMarks::Procedure(_));
    if one_act && !p.runs.is_empty() {
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
    if let Some(v) = verdicts {
        out.extend(in_words_lines(&v));
    }
    let how = if one_act {
        "runs unforced as one recorded intervention; force refused ones one by one"
    } else {
        "each runs unforced as its own recorded intervention, re-read first"
    };
    out.push(Line::styled(how, th.dim_text()));
    out
}

/// What the runs do in words: each balance change that completes or
/// undoes a debit already made, and every lock the run releases (the
/// protocol's [`Verdicts`], what the dry run lists too).
fn in_words_lines(v: &Verdicts) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = v
        .in_words
        .iter()
        .map(|(id, words)| Line::from(format!(" {id}: {words}")))
        .collect();
    if !v.lock_releases.is_empty() {
        out.push(Line::styled(
            format!(
                "releases {} lock(s) as the transactions end:",
                v.lock_releases.len()
            ),
            bold(),
        ));
        out.push(Line::from(format!(" {}", v.lock_releases.join(", "))));
    }
    out
}

/// The marks the dialog leaves out because the table does not show them.
fn hidden_lines(th: &Theme, b: &Bulk) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (ids, why) in [
        (&b.filtered, "hidden by the filter"),
        (&b.unlisted, "no longer listed"),
    ] {
        if ids.is_empty() {
            continue;
        }
        out.push(Line::styled(
            format!(" not included: {} marked, {why}:", ids.len()),
            Style::new().fg(th.warn).add_modifier(Modifier::BOLD),
        ));
        out.extend(ids.iter().map(|id| id_line(id)));
    }
    out
}

fn id_line(id: &str) -> Line<'static> {
    Line::from(format!("   {id}"))
}
