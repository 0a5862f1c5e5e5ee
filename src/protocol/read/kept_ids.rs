//! What a poller's searches leave out of their answers because an earlier
//! poll read it and the poller keeps it (a running job's list, a finished
//! operator record's marks, an act finished lately:
//! [`super::poll::PollMemory`]), the clause written once for the three
//! searches that leave something out ([`leave_out`]). Left out by time
//! what is older than all the poller has read whole, a minute past the
//! refresh lag ([`ReadThrough`]), and by id the rest, at most
//! [`KEPT_IDS_CAP`] of them, so that every poll's request stays small
//! without losing a record that becomes searchable late.

use crate::protocol::time::format_timestamp;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

/// Most ids one search leaves out by id (about 40 KB of record ids).
///
/// An `ids` query has no count limit of its own: Elasticsearch turns it
/// into one terms-in-set query on `_id` (`IdsQueryBuilder::doToQuery`
/// calls the id field's `termsQuery`,
/// `server/src/main/java/org/elasticsearch/index/query/IdsQueryBuilder.java`;
/// OpenSearch's is the same), so neither `index.max_terms_count` (65 536
/// by default, checked by `TermsQueryBuilder::doToQuery`, the `terms`
/// query only) nor `indices.query.bool.max_clause_count` (one clause,
/// whatever its count) refuses it. What a long list meets is the limit on
/// the request body, sent every poll: nginx answers 413 past
/// `client_max_body_size` (1 MiB by default,
/// <https://nginx.org/en/docs/http/ngx_http_core_module.html#client_max_body_size>),
/// Amazon OpenSearch Service past 10 MiB on small instance types
/// (<https://docs.aws.amazon.com/opensearch-service/latest/developerguide/limits.html#network-limits>),
/// and the three searches that leave ids out ride in the same `_msearch`.
/// A thousand ids keep the three under 100 KB whatever the audit index
/// holds.
pub const KEPT_IDS_CAP: usize = 1_000;

/// How long after its time (`finished_at`, written on the cluster's clock
/// as its writer estimates it) a record may still become searchable: the
/// index's refresh interval (1 s by default; 30 s is a common setting),
/// the write's own time and its retries, and the error of the writer's
/// and the poller's estimates of the cluster's clock (each within a
/// second or two once synchronised). A record later than this is lost to
/// the time bound ([`ReadThrough`]) as it is to the lookbacks already.
pub const SEARCHABLE_WITHIN: chrono::Duration = chrono::Duration::minutes(1);

/// The `must_not` clauses that leave out of a search the records `kept`
/// (each id with its time, `None` for one without) and, when `older` is
/// given (a time field and a time), every record whose field is before
/// that time: by id those of `kept` at or after it (or without a time),
/// the newest [`KEPT_IDS_CAP`] of them (those without a time last), the
/// others being read again (a kept record read again is the same record:
/// the poller's maps replace it).
pub fn leave_out<'a>(
    kept: impl IntoIterator<Item = (&'a str, Option<DateTime<Utc>>)>,
    older: Option<(&str, DateTime<Utc>)>,
) -> Vec<Value> {
    let through = older.map(|(_, t)| t);
    let mut by_id: Vec<(Option<DateTime<Utc>>, &str)> = kept
        .into_iter()
        .filter(|(_, t)| match (t, through) {
            (Some(t), Some(through)) => *t >= through,
            _ => true,
        })
        .map(|(id, t)| (t, id))
        .collect();
    if by_id.len() > KEPT_IDS_CAP {
        by_id.sort_unstable_by(|a, b| b.cmp(a));
        by_id.truncate(KEPT_IDS_CAP);
    }
    let mut clauses = Vec::new();
    if let Some((field, t)) = older {
        clauses.push(json!({"range": {field: {"lt": format_timestamp(t)}}}));
    }
    if !by_id.is_empty() {
        let ids: Vec<&str> = by_id.into_iter().map(|(_, id)| id).collect();
        clauses.push(json!({"ids": {"values": ids}}));
    }
    clauses
}

/// How far back one search of finished records (the acts finished lately,
/// the operator records) has read every record it matches, so that what
/// is older is left out by time rather than by id.
///
/// The rule. The search asks oldest first ([`ReadThrough::oldest_first`]:
/// a record without the time first, which the poller does not keep and
/// reads every poll) and leaves out what is older than `through` by time
/// and the kept records at or after it by id ([`leave_out`]). After its
/// answer, `through` moves on to the earlier of:
/// - the time the search was asked less [`SEARCHABLE_WITHIN`]: a record
///   older than that was searchable when the search ran, so it was in the
///   answer or left out as read; and
/// - when the answer was full (as many hits as asked: more may match),
///   its last hit's time: every record older than that was in it (oldest
///   first), those at that very time may have been cut (`lt`, not `lte`).
///
/// A record is matched once it is finished, its last write, at its
/// `finished_at`; so every record left out by time was read, and one that
/// becomes searchable after newer ones were read (searches lag writes by
/// the refresh interval) is at or after `through` and is read by the next
/// poll. Losing one would credit the application with an operator's
/// recovery (the healing verdict) or hide another operator's act from the
/// log. `through` never moves back, and a poll that fails leaves the
/// poller nothing kept: the next reads its lookback again.
///
/// Newest first would not do: a full answer says nothing of the older
/// records, so `through` could not move while a burst is read, and the
/// ids to leave out would grow past the cap. Past the cap (more than
/// [`KEPT_IDS_CAP`] records finished within [`SEARCHABLE_WITHIN`] and a
/// poll), the oldest kept are read again, the answer within the search's
/// size, which may delay the newest until those pass the margin: delayed,
/// never lost.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadThrough {
    /// Every record matched with a time before this has been read.
    through: Option<DateTime<Utc>>,
    /// The search asked and not answered yet: its time less the margin.
    asked: Option<DateTime<Utc>>,
}

impl ReadThrough {
    /// The `must_not` clauses of the search asked at `now` on `field`,
    /// leaving out the records `kept` (each id with its time).
    pub fn leave_out<'a>(
        &mut self,
        field: &str,
        kept: impl IntoIterator<Item = (&'a str, DateTime<Utc>)>,
        now: DateTime<Utc>,
    ) -> Vec<Value> {
        self.asked = Some(now - SEARCHABLE_WITHIN);
        let kept = kept.into_iter().map(|(id, t)| (id, Some(t)));
        leave_out(kept, self.through.map(|t| (field, t)))
    }

    /// The search's sort: oldest first on `field`, those without it first.
    pub fn oldest_first(field: &str) -> Value {
        json!([{field: {"order": "asc", "missing": "_first", "unmapped_type": "date"}}])
    }

    /// Moves on after the answer to the search asked last, of `size` at
    /// most, whose hits had `times`, in the order answered.
    pub fn answered(&mut self, size: usize, times: &[Option<DateTime<Utc>>]) {
        let Some(mut to) = self.asked.take() else {
            return;
        };
        if times.len() >= size {
            match times.last().copied().flatten() {
                Some(last) => to = to.min(last),
                None => return,
            }
        }
        self.through = self.through.max(Some(to));
    }

    /// Every record matched with a time before this has been read.
    pub fn through(&self) -> Option<DateTime<Utc>> {
        self.through
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        "2026-01-01T10:00:00Z".parse::<DateTime<Utc>>().unwrap() + chrono::Duration::seconds(s)
    }

    /// Past the cap, the newest ids are left out by id; those older than
    /// `through` by time only.
    #[test]
    fn the_ids_left_out_are_the_newest_cap_past_the_time_bound() {
        let ids: Vec<String> = (0..KEPT_IDS_CAP + 10).map(|i| format!("r{i:05}")).collect();
        let kept = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), Some(at(i as i64))));
        let clauses = leave_out(kept.clone(), None);
        let listed = clauses[0]["ids"]["values"].as_array().unwrap();
        assert_eq!(listed.len(), KEPT_IDS_CAP);
        assert!(!listed.contains(&json!("r00009")) && listed.contains(&json!("r00010")));

        let clauses = leave_out(kept, Some(("finished_at", at(1_000))));
        assert_eq!(
            clauses[0],
            json!({"range": {"finished_at": {"lt": format_timestamp(at(1_000))}}})
        );
        assert_eq!(clauses[1]["ids"]["values"].as_array().unwrap().len(), 10);
    }

    /// `through` moves to the ask's time less the margin, or to the last
    /// hit of a full answer when earlier; never back; not without an ask.
    #[test]
    fn read_through_moves_only_over_what_was_read() {
        let mut r = ReadThrough::default();
        r.answered(2, &[]);
        assert_eq!(r.through(), None, "nothing asked");
        let now = at(600);
        r.leave_out("finished_at", [], now);
        r.answered(2, &[Some(at(10)), Some(at(20))]);
        assert_eq!(r.through(), Some(at(20)), "a full answer: its last hit");
        r.leave_out("finished_at", [], now);
        r.answered(2, &[Some(at(30))]);
        assert_eq!(r.through(), Some(now - SEARCHABLE_WITHIN), "all read");
        r.leave_out("finished_at", [], now);
        r.answered(1, &[Some(at(40))]);
        assert_eq!(r.through(), Some(now - SEARCHABLE_WITHIN), "never back");
        let mut r = ReadThrough::default();
        r.leave_out("finished_at", [], now);
        r.answered(1, &[None]);
        assert_eq!(r.through(), None, "a full answer of records without a time");
    }
}
