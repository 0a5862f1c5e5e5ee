//! A job's own writes, recognised on evidence: the transactions a job (a
//! bulk run) last wrote itself, so that its way back (`--resume RUN_ID`, or
//! `--ids-from` the file of a run it stopped) does not refuse them as
//! someone else's live work under the recovery window.
//!
//! The evidence is the job's record: a step there says the run moved
//! transaction T to state S (`TrailStep::wrote_state`), written down by a
//! time B (a checkpoint page's `at`, or the finished record's
//! `finished_at`). T is the job's own last write when its document is now
//! in S and was last modified no later than B: anyone who touched it after
//! (moving it on, or rewriting it unchanged) left a later
//! `modification_time` or another state, and it is refused as before. A
//! transaction the record says nothing of (in flight when the job died) is
//! judged by the window as any other.

use crate::protocol::trail::TrailStep;
use crate::protocol::transaction::Transaction;
use chrono::{DateTime, Utc};
use std::collections::HashMap;

/// The last transaction-document write a job recorded, per transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnWrites {
    last: HashMap<String, Own>,
}

/// One recorded write: the state written, and a time it was written by.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Own {
    state: String,
    by: DateTime<Utc>,
}

impl OwnWrites {
    /// Adds the steps of one page of the job's record, written down by
    /// `by` (none: the page does not say when, so it is no evidence).
    /// Pages are added in the record's order: a later write replaces an
    /// earlier one.
    pub fn add(&mut self, steps: &[TrailStep], by: Option<DateTime<Utc>>) {
        let Some(by) = by else { return };
        for s in steps {
            if let (Some(state), true) = (&s.wrote_state, s.result == "updated") {
                let own = Own {
                    state: state.clone(),
                    by,
                };
                self.last.insert(s.txn.clone(), own);
            }
        }
    }

    /// Whether `t`, as read now, was last written by the job: in the state
    /// the job's last recorded write left, modified no later than that
    /// write was written down.
    pub fn recognises(&self, t: &Transaction) -> bool {
        let Some(own) = self.last.get(&t.id) else {
            return false;
        };
        let state = t.state.as_ref().map(|s| s.as_str());
        state == Some(own.state.as_str()) && t.modification_time.is_some_and(|m| m <= own.by)
    }

    /// How many transactions the job's record says it wrote.
    pub fn len(&self) -> usize {
        self.last.len()
    }

    /// Whether the record says the job wrote none.
    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(txn: &str, wrote: Option<&str>, result: &str) -> TrailStep {
        TrailStep {
            txn: txn.into(),
            label: "core 1".into(),
            target: format!("transactions/{txn}"),
            result: result.into(),
            detail: String::new(),
            wrote_state: wrote.map(str::to_string),
            receipt: None,
        }
    }

    fn txn(id: &str, state: &str, modified: &str) -> Transaction {
        let v = json!({"src_acct": "a", "dest_acct": "b", "amount": 1,
            "transaction_state": state, "modification_time": modified});
        Transaction::from_source(id, v.as_object().unwrap())
    }

    #[test]
    fn only_a_transaction_left_as_the_job_wrote_it_is_the_jobs_own() {
        let by: DateTime<Utc> = "2026-01-01T10:00:05Z".parse().unwrap();
        let mut own = OwnWrites::default();
        own.add(
            &[
                step("t-1", Some("pending"), "updated"),
                step("t-2", Some("pending"), "updated"),
                step("t-3", Some("pending"), "error"),
                step("t-4", None, "updated"),
            ],
            Some(by),
        );
        own.add(&[step("t-5", Some("pending"), "updated")], None);
        assert_eq!(own.len(), 2);
        // As the job left it.
        assert!(own.recognises(&txn("t-1", "pending", "2026-01-01T10:00:04Z")));
        // Moved on by someone else.
        assert!(!own.recognises(&txn("t-2", "committed", "2026-01-01T10:00:04Z")));
        // Rewritten after the job wrote it down.
        assert!(!own.recognises(&txn("t-1", "pending", "2026-01-01T10:00:06Z")));
        // No evidence: a failed write, no state written, no time.
        for t in ["t-3", "t-4", "t-5"] {
            assert!(!own.recognises(&txn(t, "pending", "2026-01-01T10:00:00Z")));
        }
        // A later page replaces the earlier write.
        let later: DateTime<Utc> = "2026-01-01T10:01:00Z".parse().unwrap();
        own.add(&[step("t-1", Some("committed"), "updated")], Some(later));
        assert!(!own.recognises(&txn("t-1", "pending", "2026-01-01T10:00:04Z")));
        assert!(own.recognises(&txn("t-1", "committed", "2026-01-01T10:00:30Z")));
    }
}
