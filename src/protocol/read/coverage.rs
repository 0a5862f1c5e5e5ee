//! Partial results, never silent: how many shards answered a search. Every
//! search and msearch answer the read side gets is folded into a
//! [`Coverage`]; a red shard or a timed-out search makes the view partial,
//! and callers show it ("partial: 1 of 5 shards failed") or refuse to act
//! on it.

use serde::Serialize;
use serde_json::Value;

/// Shards behind a set of answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Shards asked, summed over the answers.
    pub total: u64,
    /// Shards that failed.
    pub failed: u64,
    /// Whether any answer timed out (its hits are what the shards had found so far).
    pub timed_out: bool,
}

impl Coverage {
    /// The coverage of one search answer (`_shards`, `timed_out`).
    pub fn of(answer: &Value) -> Coverage {
        let n = |k: &str| {
            answer
                .pointer(&format!("/_shards/{k}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Coverage {
            total: n("total"),
            failed: n("failed"),
            timed_out: answer.get("timed_out").and_then(Value::as_bool) == Some(true),
        }
    }

    /// Adds another answer's coverage.
    pub fn add(&mut self, other: Coverage) {
        self.total += other.total;
        self.failed += other.failed;
        self.timed_out |= other.timed_out;
    }

    /// Whether some documents may be missing from the view.
    pub fn is_partial(&self) -> bool {
        self.failed > 0 || self.timed_out
    }

    /// The operator's words for a partial view; `None` when complete.
    pub fn describe(&self) -> Option<String> {
        match (self.failed > 0, self.timed_out) {
            (false, false) => None,
            (true, false) => Some(format!(
                "partial: {} of {} shards failed",
                self.failed, self.total
            )),
            (false, true) => Some("partial: a search timed out".into()),
            (true, true) => Some(format!(
                "partial: {} of {} shards failed, a search timed out",
                self.failed, self.total
            )),
        }
    }

    /// `Err` with the refusal text when partial and not `allow_partial`.
    pub fn require_complete(&self, allow_partial: bool, what: &str) -> crate::Result<()> {
        match self.describe() {
            Some(d) if !allow_partial => Err(crate::Error::Invalid(format!(
                "refusing to {what} on a partial view ({d}); some documents may be missing. \
                 Retry when the shards are back, or pass --allow-partial"
            ))),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn failed_shards_and_timeouts_are_partial() {
        let mut c =
            Coverage::of(&json!({"_shards": {"total": 5, "failed": 1}, "timed_out": false}));
        assert_eq!(
            c.describe().as_deref(),
            Some("partial: 1 of 5 shards failed")
        );
        c.add(Coverage::of(
            &json!({"_shards": {"total": 1, "failed": 0}, "timed_out": true}),
        ));
        assert!(c.is_partial());
        assert!(c.require_complete(false, "list").is_err());
        assert!(c.require_complete(true, "list").is_ok());
        assert!(!Coverage::of(&json!({"_shards": {"total": 1, "failed": 0}})).is_partial());
    }
}
