//! Reversing from the dashboard, the I/O side (action tasks; the UI never
//! awaits them): the dialog's re-read (the original with its balances, and
//! whatever sits under the reversal's id, judged by the protocol's one
//! admission rule), and the confirmed run through `Protocol::reverse` as a
//! recorded intervention (reason required, the plan as previewed, each
//! step's outcome).

use super::event::{Checked, Reread, Run};
use super::reverse::{planned, ReverseCheck};
use crate::error::Error;
use crate::protocol::reverse::{reversal_id, ReverseOptions, ReverseReport, ReverseVerdict};
use crate::protocol::trail::{
    ActionKind, Interface, Intervention, Outcome, RecordId, Trail, TrailStep,
};
use crate::protocol::Protocol;

/// Re-reads the original and its reversal's id for the dialog; `refusal` is
/// set when finishing a committed original would be refused unforced (the
/// recovery window: only the force key acts).
pub async fn check(proto: &Protocol, id: &str) -> Result<Checked, String> {
    let original = match proto.transaction_detail(id).await {
        Ok(Some(d)) => d,
        Ok(None) => return Err(format!("transaction `{id}` no longer exists")),
        Err(e) => return Err(e.to_string()),
    };
    let existing = proto
        .read_transaction(&reversal_id(id))
        .await
        .map_err(|e| e.to_string())?
        .map(|(t, _)| t);
    let c = ReverseCheck::new(original, existing, proto.now().await);
    let refusal = match &c.admitted {
        Ok(a) if a.finish_first => proto
            .check_actionable(&c.original.txn, false)
            .err()
            .map(|r| format!("finishing it first: {r}")),
        _ => None,
    };
    Ok(Checked {
        reread: Reread::Reverse(Box::new(c)),
        refusal,
    })
}

/// Runs a confirmed reversal as a recorded intervention: the summary line,
/// whether it reversed, and its audit record (with the error completing
/// it, if any).
pub async fn execute(
    proto: &Protocol,
    trail: &Trail,
    run: &Run,
) -> Result<(String, bool, (RecordId, Option<Error>)), String> {
    let id = run.target.as_str();
    let rev = reversal_id(id);
    let mut i = Intervention::new(
        ActionKind::Reverse,
        vec![id.to_string(), rev.clone()],
        Interface::Dashboard,
    );
    i.forced = run.force;
    i.reason = run.reason.clone();
    if let Some(why) = i.missing_reason() {
        return Err(why);
    }
    // The plan as the dialog previewed it, from the documents as they are.
    if let Ok(Checked {
        reread: Reread::Reverse(c),
        ..
    }) = check(proto, id).await
    {
        if let Ok(a) = &c.admitted {
            i.targets = vec![a.transfer.src.clone(), a.transfer.dest.clone()];
        }
        i.plan = planned(&c);
    }
    let record = trail.begin(&i).await.map_err(|e| e.to_string())?;
    let opts = ReverseOptions {
        finish_committed: true,
        force: run.force,
        ..ReverseOptions::default()
    };
    let report = proto.reverse(id, opts).await;
    let outcome = Outcome::from(&report.verdict);
    let steps = report.steps.iter().map(TrailStep::from).collect();
    let verdict = report.verdict.to_string();
    let err = trail.finish(&record, outcome, &verdict, steps).await.err();
    let ok = matches!(report.verdict, ReverseVerdict::Reversed);
    Ok((summary(&report), ok, (record, err)))
}

/// One line for the log: what the reversal did, or why not.
fn summary(r: &ReverseReport) -> String {
    match &r.verdict {
        ReverseVerdict::Reversed => r.reversed_by(),
        v @ ReverseVerdict::Refused(_) => v.to_string(),
        v => format!("{v}; pressing V again carries on with the same reversal"),
    }
}
