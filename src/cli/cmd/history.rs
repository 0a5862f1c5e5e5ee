//! `history ID`: the recorded operator interventions on one transaction
//! (the audit trail), oldest first, as text or JSON; a record that was
//! never completed (the process died part-way) is marked UNFINISHED.
//! `history --since WHEN`: every intervention in the window, newest first
//! (the timeline, [`timeline`]); `history ID --since WHEN` keeps ID's
//! interventions started in the window.

use crate::cli::exit;
use crate::cli::output::{err, fail, out, print_json, Table};
use crate::cli::values::{parse_since, Since};
use crate::protocol::time::format_timestamp;
use crate::protocol::trail::{history, timeline, Entry, Record, RecordStatus};
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};

/// `history ID`.
#[derive(Debug, Clone, clap::Args)]
#[command(group = clap::ArgGroup::new("what").args(["id", "since"]).required(true).multiple(true))]
pub struct Args {
    /// Transaction id (optional with --since).
    pub id: Option<String>,
    /// Interventions started since: a duration back from now (`24h`, `7d`)
    /// or an RFC 3339 time. Without ID, every intervention in the window,
    /// newest first; with ID, ID's interventions in the window.
    #[arg(long, value_parser = parse_since, value_name = "WHEN")]
    pub since: Option<Since>,
    /// Print JSON (the stored records) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Lists the interventions; exit 0 (also when there are none), 1 when the
/// id names neither a transaction nor anything recorded, 3 when the trail
/// cannot be read.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let since = match a.since {
        Some(s) => Some(s.at(p.now().await)),
        None => None,
    };
    let Some(id) = &a.id else {
        let since = since.unwrap_or_default();
        return match timeline(&p, since).await {
            Ok(entries) => print_timeline(&entries, since, a.json),
            Err(e) => fail(&e),
        };
    };
    let records = match history(&p, id).await {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let records: Vec<Record> = records
        .into_iter()
        .filter(|r| since.is_none_or(|s| r.started_at >= s))
        .collect();
    // No record and no such transaction: the id names nothing (a typo,
    // another index), which is not "no interventions".
    if records.is_empty() {
        match p.read_transaction(id).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                let index = &p.config().indices.transactions;
                if a.json {
                    print_json(&serde_json::json!([]));
                }
                err(format_args!(
                    "transaction `{id}` not found in `{index}`, and no recorded intervention \
                     names it (is the id, or --transactions-index, right?)"
                ));
                return exit::REFUSED;
            }
            Err(e) => return fail(&e),
        }
    }
    if a.json {
        match serde_json::to_value(&records) {
            Ok(v) => print_json(&v),
            Err(e) => return fail(&crate::Error::Invalid(e.to_string())),
        }
    } else if records.is_empty() {
        out(format_args!(
            "no recorded interventions on transaction `{id}`"
        ));
    } else {
        for (n, r) in records.iter().enumerate() {
            if n > 0 {
                out("");
            }
            for l in record_lines(r, id) {
                out(l);
            }
        }
    }
    0
}

/// The timeline as text (a block per intervention) or JSON (an array of
/// [`Entry`]); exit 0, also when empty.
fn print_timeline(entries: &[Entry], since: DateTime<Utc>, json: bool) -> i32 {
    if json {
        return match serde_json::to_value(entries) {
            Ok(v) => {
                print_json(&v);
                exit::DONE
            }
            Err(e) => fail(&crate::Error::Invalid(e.to_string())),
        };
    }
    if entries.is_empty() {
        out(format_args!(
            "no recorded interventions since {}",
            format_timestamp(since)
        ));
    }
    for (n, e) in entries.iter().enumerate() {
        if n > 0 {
            out("");
        }
        for l in entry_lines(e) {
            out(l);
        }
    }
    exit::DONE
}

/// The text of one timeline entry: when, what, who (line one), on what,
/// how it ended, why.
pub fn entry_lines(e: &Entry) -> Vec<String> {
    let forced = if e.forced { " (forced)" } else { "" };
    let bulk = if e.bulk { " (bulk)" } else { "" };
    vec![
        format!(
            "{}  {}{forced}{bulk}  by {}  via {}  [{}]",
            format_timestamp(e.started_at),
            e.action,
            e.operator,
            e.interface,
            e.record_id
        ),
        format!("  what:    {}", e.what()),
        format!("  outcome: {}", e.outcome_text()),
        format!(
            "  reason:  {}",
            e.reason.as_deref().unwrap_or("(none given)")
        ),
    ]
}

/// The text of one record, with the steps that concern transaction `txn`
/// (a bulk record holds every transaction's steps).
pub fn record_lines(r: &Record, txn: &str) -> Vec<String> {
    let forced = if r.forced { " (forced)" } else { "" };
    let bulk = if r.bulk { " (bulk)" } else { "" };
    let mut lines = vec![format!(
        "{}  {}{forced}{bulk}  by {}  via {}  [{}]",
        format_timestamp(r.started_at),
        r.action,
        r.operator,
        r.interface,
        r.record_id
    )];
    lines.push(format!(
        "  reason:  {}",
        r.reason.as_deref().unwrap_or("(none given)")
    ));
    if !r.targets.is_empty() {
        lines.push(format!("  targets: {}", r.targets.join(", ")));
    }
    // A bulk record's plan has one entry per transaction, `ID: steps`.
    let prefix = format!("{txn}: ");
    let plan = match r.plan.iter().find_map(|p| p.strip_prefix(&prefix)) {
        Some(own) => own.to_string(),
        None if r.plan.is_empty() => "(nothing to do when previewed)".to_string(),
        None => r.plan.join("; "),
    };
    lines.push(format!("  plan:    {plan}"));
    match (r.status, r.outcome, r.finished_at) {
        (RecordStatus::Finished, Some(o), Some(end)) => {
            let said = r.summary.as_deref().unwrap_or_default();
            // A bulk run is headlined by its counts, never by the worst
            // outcome alone; a verdict's summary already starts with its
            // outcome.
            let text = match &r.counts {
                Some(counts) => counts.brief(),
                None if said.starts_with(&o.to_string()) => said.to_string(),
                None => format!("{o}: {said}"),
            };
            lines.push(format!(
                "  outcome: {text} (ended {}, tool {})",
                format_timestamp(end),
                r.tool_version
            ));
            if r.counts.is_some() {
                lines.push(format!("  summary: {said}"));
            }
        }
        _ => lines.push(format!(
            "  outcome: UNFINISHED: no end was recorded (the process may have died part-way; \
             see `estx-tui show {}`) (tool {})",
            r.transactions.first().map_or("ID", String::as_str),
            r.tool_version
        )),
    }
    let others = r.transactions.iter().filter(|t| *t != txn).count();
    if others > 0 {
        lines.push(format!(
            "  also:    {others} other transaction(s) (see --json for all steps)"
        ));
    }
    let steps: Vec<_> = r
        .steps
        .iter()
        .filter(|s| s.txn.is_empty() || s.txn == txn)
        .collect();
    if !steps.is_empty() {
        let mut t = Table::new(["STEP", "TARGET", "RESULT", "DETAIL"]);
        for s in steps {
            t.row([
                s.label.clone(),
                s.target.clone(),
                s.result.clone(),
                s.detail.clone(),
            ]);
        }
        lines.extend(t.render().into_iter().map(|l| format!("    {l}")));
    }
    lines
}
