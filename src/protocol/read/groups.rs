//! The stuck transactions grouped by cause, counted by the cluster in one
//! `_msearch` of aggregations over the stuck query (the one rule,
//! [`super::rules::urgency_count_queries`]): by state × age bucket, by
//! account (source and destination: the hot accounts), by band of
//! modification times (the outage window), and by the process holding
//! their locks. A grouping the mapping cannot aggregate (no exact field,
//! dates it cannot compare) is left out and named in
//! [`Groups::unavailable`]. Each group carries the [`TableFilter`] that
//! lists exactly its transactions, so opening it is the table's filter.
//! Each group is then judged by the cause verdict ([`Groups::judge`],
//! [`super::verdict::cause`]): its cause and safe act, the actionable
//! groups first.

use super::discovery::Fields;
use super::index_info::ResolvedField;
use super::queries::MISSING_STATE_KEY;
use super::table::{AgeRange, TableFilter};
use super::verdict::cause::{
    by_application, by_locks, Cause, CauseEvidence, Refusal, UnknownCause,
};
use super::verdict::HOT_ACCOUNT;
use crate::protocol::transaction::TxnState;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;

/// How a group was formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// One state, one age bucket.
    StateAge,
    /// One process holding their locks.
    Process,
    /// One account, as source or destination.
    Account,
    /// One band of modification times.
    Band,
}

impl GroupKind {
    /// The heading the view lists the groups of this kind under.
    pub fn heading(self) -> &'static str {
        match self {
            GroupKind::StateAge => "by state × age",
            GroupKind::Process => "by lock holder (process)",
            GroupKind::Account => "by account (hot accounts)",
            GroupKind::Band => "by modification time (outage window)",
        }
    }
}

/// One group of stuck transactions.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// How it was formed.
    pub kind: GroupKind,
    /// What it is ("pending · 1h–6h", "acct-7", "11:40–11:50", "worker-3").
    pub label: String,
    /// Stuck transactions in it (for a process: the locks it holds).
    pub count: u64,
    /// The table's filter listing its transactions.
    pub filter: TableFilter,
    /// Why its transactions are stuck (`None` until judged:
    /// [`Groups::judge`]).
    pub cause: Option<Cause>,
}

/// The groups, with what could not be grouped and why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Groups {
    /// Stuck transactions in all.
    pub stuck: u64,
    /// The groups, kind by kind, largest first within a kind (bands in
    /// time order).
    pub groups: Vec<Group>,
    /// Groupings the mapping does not allow, in words.
    pub unavailable: Vec<String>,
}

/// The cause of a by-cause group: refused when the mappings would reject
/// the protocol's writes; a lock holder's group by its locks'
/// holder; an account's with at least [`HOT_ACCOUNT`] stuck is hot; any
/// other by the application's state, else unknown (an undated group says
/// so).
fn judge_group(g: &Group, e: &CauseEvidence) -> Cause {
    if let Some(r) = e.writes {
        return Cause::Refused(Refusal::Writes(r.clone()));
    }
    if g.kind == GroupKind::Process {
        let held = e
            .locks
            .iter()
            .filter(|l| l.info.holder_id() == Some(g.label.as_str()))
            .map(|l| (l, true));
        match by_locks(held) {
            Ok(c) => return c,
            Err(Some(u)) => return by_application(e.healing).unwrap_or(Cause::Unknown(u)),
            Err(None) => {}
        }
    }
    if let Some(c) = by_application(e.healing) {
        return c;
    }
    if g.kind == GroupKind::Account && g.count >= HOT_ACCOUNT {
        return Cause::HotAccount {
            account: g.label.clone(),
            stuck: g.count,
        };
    }
    Cause::Unknown(if g.filter.undated {
        UnknownCause::Undated
    } else {
        UnknownCause::NoEvidence
    })
}

impl Groups {
    /// Judges each group's cause on `e`, then puts the actionable groups
    /// (their safe act recovers or releases) first: the groupings with one
    /// before the others, and within a grouping, before the rest (each in
    /// the order it had).
    pub fn judge(&mut self, e: &CauseEvidence) {
        for g in &mut self.groups {
            g.cause = Some(judge_group(g, e));
        }
        let actionable = |g: &Group| {
            g.cause
                .as_ref()
                .is_some_and(|c| c.safe_act().is_actionable())
        };
        let mut kinds: Vec<(GroupKind, bool)> = Vec::new();
        for g in &self.groups {
            match kinds.iter_mut().find(|(k, _)| *k == g.kind) {
                Some((_, any)) => *any |= actionable(g),
                None => kinds.push((g.kind, actionable(g))),
            }
        }
        let rank = |g: &Group| {
            let pos = kinds.iter().position(|(k, _)| *k == g.kind).unwrap_or(0);
            (!kinds[pos].1, pos, !actionable(g))
        };
        self.groups.sort_by_key(rank);
    }
}

/// The age buckets of the state × age histogram: at least `.0`, younger
/// than `.1` (seconds), and their label.
pub const AGE_BUCKETS: [(Option<u64>, Option<u64>, &str); 4] = [
    (None, Some(3_600), "under 1h"),
    (Some(3_600), Some(6 * 3_600), "1h–6h"),
    (Some(6 * 3_600), Some(86_400), "6h–1d"),
    (Some(86_400), None, "over 1d"),
];

/// The width of a band of modification times.
pub const BAND: Duration = Duration::from_secs(600);

/// Most groups of one kind listed.
pub(crate) const TOP: usize = 10;

/// The exact field of `f`, or why `what` cannot be grouped.
pub(crate) fn exact(
    f: &ResolvedField,
    what: &str,
    unavailable: &mut Vec<String>,
) -> Option<String> {
    if f.exact.is_none() {
        unavailable.push(format!(
            "{what}: `{}` has no exact (keyword) field to aggregate",
            f.name
        ));
    }
    f.exact.clone()
}

/// The aggregations over the stuck transactions the mapping allows.
pub(crate) fn transaction_aggs(f: &Fields, unavailable: &mut Vec<String>) -> Value {
    let mut aggs = json!({});
    let dates = f.ages_queryable().then(|| f.modification_time.query_name());
    if let Some(state) = exact(&f.state, "states", unavailable) {
        let mut states =
            json!({"terms": {"field": state, "size": 20, "missing": MISSING_STATE_KEY}});
        if let Some(mt) = &dates {
            let ranges: Vec<Value> = AGE_BUCKETS
                .iter()
                .map(|(min, max, label)| {
                    let mut r = json!({"key": label});
                    if let Some(max) = max {
                        r["from"] = json!(format!("now-{max}s"));
                    }
                    if let Some(min) = min {
                        r["to"] = json!(format!("now-{min}s"));
                    }
                    r
                })
                .collect();
            states["aggs"] = json!({"ages": {"date_range": {"field": mt, "ranges": ranges}}});
        }
        aggs["states"] = states;
    }
    for (side, fields) in [("src", &f.src), ("dest", &f.dest)] {
        if let Some(field) = fields
            .first()
            .and_then(|x| exact(x, "accounts", unavailable))
        {
            aggs[side] = json!({"terms": {"field": field, "size": TOP}});
        }
    }
    if let Some(mt) = &dates {
        aggs["bands"] = json!({"date_histogram": {"field": mt,
            "fixed_interval": format!("{}s", BAND.as_secs()), "min_doc_count": 1}});
    }
    aggs
}

/// The buckets of a `terms` (or histogram) aggregation.
fn buckets(agg: &Value) -> &[Value] {
    agg["buckets"].as_array().map_or(&[], Vec::as_slice)
}

fn count(b: &Value) -> u64 {
    b["doc_count"].as_u64().unwrap_or(0)
}

fn stuck_filter() -> TableFilter {
    TableFilter {
        stuck_only: true,
        ..TableFilter::default()
    }
}

pub(crate) fn state_age_groups(
    states: &Value,
    schema: &crate::protocol::schema::Schema,
) -> Vec<Group> {
    let mut out = Vec::new();
    for s in buckets(states) {
        let key = s["key"].as_str().unwrap_or_default();
        if key == MISSING_STATE_KEY {
            continue;
        }
        let state = TxnState::parse(&schema.state_from_app(key));
        let with = |label: String, count: u64, age: Option<AgeRange>| Group {
            kind: GroupKind::StateAge,
            label,
            count,
            cause: None,
            filter: TableFilter {
                state: Some(state.clone()),
                age,
                ..stuck_filter()
            },
        };
        let ages = buckets(&s["ages"]);
        if ages.is_empty() {
            out.push(with(state.as_str().to_string(), count(s), None));
        }
        // No bucket holds those with no modification time: their own group.
        let bucketed: u64 = ages.iter().map(count).sum();
        if !ages.is_empty() && count(s) > bucketed {
            let mut g = with(
                format!("{} · undated", state.as_str()),
                count(s) - bucketed,
                None,
            );
            g.filter.undated = true;
            out.push(g);
        }
        // Range buckets come sorted by their bounds, not as asked: by key.
        for (min, max, label) in AGE_BUCKETS {
            let Some(b) = ages.iter().find(|b| b["key"].as_str() == Some(label)) else {
                continue;
            };
            if count(b) > 0 {
                let age = AgeRange {
                    min: min.map(Duration::from_secs),
                    max: max.map(Duration::from_secs),
                };
                out.push(with(
                    format!("{} · {label}", state.as_str()),
                    count(b),
                    Some(age),
                ));
            }
        }
    }
    out
}

pub(crate) fn locks_groups(locks: Option<Value>) -> Vec<Group> {
    let Some(v) = locks else {
        return Vec::new();
    };
    buckets(&v["aggregations"]["process"])
        .iter()
        .map(|p| {
            let owners: Vec<String> = buckets(&p["owners"])
                .iter()
                .filter_map(|o| o["key"].as_str().map(String::from))
                .collect();
            Group {
                kind: GroupKind::Process,
                label: p["key"].as_str().unwrap_or_default().to_string(),
                count: count(p),
                cause: None,
                filter: TableFilter {
                    ids: Some(owners),
                    ..stuck_filter()
                },
            }
        })
        .collect()
}

pub(crate) fn account_groups(aggs: &Value) -> Vec<Group> {
    let mut by: Vec<(String, u64)> = Vec::new();
    for side in ["src", "dest"] {
        for b in buckets(&aggs[side]) {
            let Some(key) = b["key"].as_str() else {
                continue;
            };
            match by.iter_mut().find(|(k, _)| k == key) {
                Some((_, n)) => *n += count(b),
                None => by.push((key.to_string(), count(b))),
            }
        }
    }
    by.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    by.into_iter()
        .take(TOP)
        .map(|(account, n)| Group {
            kind: GroupKind::Account,
            label: account.clone(),
            count: n,
            cause: None,
            filter: TableFilter {
                account: Some(account),
                ..stuck_filter()
            },
        })
        .collect()
}

pub(crate) fn band_groups(bands: &Value) -> Vec<Group> {
    let mut out: Vec<Group> = buckets(bands)
        .iter()
        .filter_map(|b| {
            let start = DateTime::<Utc>::from_timestamp_millis(b["key"].as_i64()?)?;
            let end = start + chrono::Duration::from_std(BAND).ok()?;
            Some(Group {
                kind: GroupKind::Band,
                label: format!("{}–{}", start.format("%m-%d %H:%M"), end.format("%H:%M")),
                count: count(b),
                cause: None,
                filter: TableFilter {
                    modified: Some((start, end)),
                    ..stuck_filter()
                },
            })
        })
        .collect();
    // The busiest bands, in time order.
    let mut by_count: Vec<u64> = out.iter().map(|g| g.count).collect();
    by_count.sort_unstable_by(|a, b| b.cmp(a));
    let floor = by_count.get(TOP - 1).copied().unwrap_or(0);
    out.retain(|g| g.count >= floor);
    out.truncate(TOP);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::schema::Schema;

    /// Range buckets come back sorted by their bounds: each is matched by
    /// its key, never by its position.
    #[test]
    fn age_buckets_are_read_by_key_and_accounts_add_both_sides() {
        let states = json!({"buckets": [{"key": "pending", "doc_count": 4, "ages": {"buckets": [
            {"key": "over 1d", "doc_count": 0},
            {"key": "6h–1d", "doc_count": 0},
            {"key": "1h–6h", "doc_count": 3},
            {"key": "under 1h", "doc_count": 0}]}}]});
        let g = state_age_groups(&states, &Schema::default());
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].label.as_str(), g[0].count), ("pending · undated", 1));
        assert!(g[0].filter.undated);
        let g = &g[1..];
        assert_eq!((g[0].label.as_str(), g[0].count), ("pending · 1h–6h", 3));
        let age = g[0].filter.age.expect("age");
        assert_eq!(age.min, Some(Duration::from_secs(3_600)));
        assert!(g[0].filter.stuck_only);
        let aggs = json!({"src": {"buckets": [{"key": "hot", "doc_count": 5}]},
            "dest": {"buckets": [{"key": "hot", "doc_count": 2}, {"key": "b", "doc_count": 4}]}});
        let a = account_groups(&aggs);
        let got: Vec<(&str, u64)> = a.iter().map(|g| (g.label.as_str(), g.count)).collect();
        assert_eq!(got, vec![("hot", 7), ("b", 4)]);
        assert_eq!(a[0].filter.account.as_deref(), Some("hot"));
    }

    /// A holder's group is judged by its locks' holder, an account's by
    /// its count; the actionable groups sort first.
    #[test]
    fn groups_are_judged_and_the_actionable_sort_first() {
        use crate::protocol::read::verdict::cause::tests::{lock, STALLED};
        use crate::protocol::read::verdict::{CauseKind, SafeAct};
        use std::collections::BTreeMap;
        let g = |kind, label: &str, count| Group {
            kind,
            label: label.into(),
            count,
            filter: Default::default(),
            cause: None,
        };
        let by = BTreeMap::new();
        let locks = [
            lock("A", "t1", Some(5), false),
            lock("C", "t2", Some(600), false),
        ];
        let e = CauseEvidence {
            locks: &locks[..1],
            healing: &STALLED,
            stuck_by_account: &by,
            writes: None,
        };
        let c = judge_group(&g(GroupKind::Process, "worker-1", 1), &e);
        assert_eq!((c.word(), c.safe_act()), ("contention", SafeAct::Wait));
        let e = CauseEvidence {
            locks: &locks[1..],
            ..e
        };
        let c = judge_group(&g(GroupKind::Process, "worker-1", 1), &e);
        assert_eq!(c.safe_act(), SafeAct::Recover);
        let c = judge_group(&g(GroupKind::Account, "A", HOT_ACCOUNT), &e);
        assert_eq!(c.kind(), CauseKind::HotAccount);
        let c = judge_group(&g(GroupKind::Account, "A", 1), &e);
        assert_eq!(c.kind(), CauseKind::Unknown);

        let mut groups = Groups {
            stuck: 9,
            groups: vec![
                g(GroupKind::Account, "A", 6),
                g(GroupKind::Process, "other", 2),
                g(GroupKind::Process, "worker-1", 1),
            ],
            unavailable: vec![],
        };
        groups.judge(&e);
        let order: Vec<&str> = groups.groups.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(order, ["worker-1", "other", "A"]);
    }
}
