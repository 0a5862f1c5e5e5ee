//! The dashboard table's filter as the read side runs it: the text (a whole
//! transaction id, part of an account, or a state's name), the state, the
//! stuck / needs-investigation toggles, an age range and a page, turned
//! into one query over every document (built by [`Queries`], the urgency
//! rules' queries from [`super::rules`]), so the table pages through all
//! matches with their total instead of filtering the rows a poll loaded.
//! The poll sends the page's search in its one `_msearch`; an export scans
//! every match with the same query.

use super::discovery::Fields;
use super::queries::Queries;
use crate::protocol::transaction::{Transaction, TxnState};
use crate::protocol::ProtocolConfig;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;

/// The deepest row `from`/`size` paging reaches (`index.max_result_window`'s
/// default on every product): pages past it are refused, not faked.
pub const MAX_WINDOW: usize = 10_000;

/// An age range: last modified between `min` and `max` ago (either open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AgeRange {
    /// At least this old.
    pub min: Option<Duration>,
    /// Younger than this.
    pub max: Option<Duration>,
}

/// What the table shows, as a query: every field empty is the default
/// listing (every transaction in flight, oldest first).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TableFilter {
    /// A whole id, part of an account, or a state's name (case-insensitive
    /// for accounts); empty: no text condition.
    pub text: String,
    /// Only this state (a terminal one lists its newest first).
    pub state: Option<TxnState>,
    /// Only stuck transactions (the one rule, [`super::rules::urgency`]).
    pub stuck_only: bool,
    /// Only transactions needing investigation.
    pub old_only: bool,
    /// Only this age range.
    pub age: Option<AgeRange>,
    /// Only these transaction ids (a group of lock holders, say).
    pub ids: Option<Vec<String>>,
    /// Only transactions naming this account (source or destination).
    pub account: Option<String>,
    /// Only transactions last modified in `[start, end)` (a band).
    pub modified: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// Only transactions with no usable modification time.
    pub undated: bool,
    /// Which page (0 first).
    pub page: usize,
}

impl TableFilter {
    /// The same filter on its first page.
    pub fn first_page(&self) -> TableFilter {
        TableFilter {
            page: 0,
            ..self.clone()
        }
    }

    /// Whether `other` asks for the same rows, whatever the page.
    pub fn same_rows(&self, other: &TableFilter) -> bool {
        self.first_page() == other.first_page()
    }

    /// Whether no condition narrows the in-flight listing (documents in
    /// unknown states are then listed after the page, as they are found).
    pub fn is_unfiltered(&self) -> bool {
        self.first_page() == TableFilter::default()
    }

    /// The query over every transaction: the state (in flight when none),
    /// the text, the urgency toggles and the age range. Where the mapping
    /// cannot compare dates the age conditions are left to [`Self::keeps`].
    pub fn query(&self, q: &Queries, fields: &Fields, config: &ProtocolConfig) -> Value {
        let mut filter = vec![match &self.state {
            Some(s) => q.state_in(&[s.as_str()]),
            None => q.in_flight(),
        }];
        let text = self.text.trim();
        if !text.is_empty() {
            filter.push(self.text_query(q, text));
        }
        if let Some(ids) = &self.ids {
            filter.push(json!({"ids": {"values": ids}}));
        }
        if let Some(a) = &self.account {
            filter.push(q.naming_accounts(std::slice::from_ref(a)));
        }
        if let Some((start, end)) = self.modified {
            filter.push(q.modified_in(start, end));
        }
        if self.undated {
            filter.push(q.undated());
        }
        if let Some([stuck, investigate]) = super::rules::urgency_count_queries(q, fields, config) {
            if self.stuck_only {
                filter.push(stuck);
            }
            if self.old_only {
                filter.push(investigate);
            }
        }
        if let Some(age) = &self.age {
            filter.extend(q.modified_between(age.min, age.max));
        }
        json!({"bool": {"filter": filter}})
    }

    /// A whole id, an account containing the text, or the state it names.
    fn text_query(&self, q: &Queries, text: &str) -> Value {
        let mut should = vec![json!({"ids": {"values": [text]}})];
        should.extend(q.accounts_containing(text));
        let state = TxnState::parse(&text.to_lowercase());
        if TxnState::KNOWN.contains(&state) {
            should.push(q.state_in(&[state.as_str()]));
        }
        json!({"bool": {"should": should, "minimum_should_match": 1}})
    }

    /// The order of the pages: a terminal state newest first (the latest
    /// outcomes are the ones an operator confirms), else oldest first.
    pub fn sort(&self, q: &Queries) -> Vec<Value> {
        if self.state.as_ref().is_some_and(TxnState::is_terminal) {
            q.newest_first()
        } else {
            q.oldest_first()
        }
    }

    /// The search body of this filter's page of `page_size` rows.
    pub fn page_search(
        &self,
        q: &Queries,
        fields: &Fields,
        config: &ProtocolConfig,
        page_size: usize,
    ) -> Value {
        let from = self.from(page_size);
        let size = page_size.min(MAX_WINDOW - from);
        let mut body = json!({"from": from, "size": size,
            "track_total_hits": true, "query": self.query(q, fields, config)});
        let sort = self.sort(q);
        if !sort.is_empty() {
            body["sort"] = json!(sort);
        }
        body
    }

    /// The first row of the page, for pages of `page_size` rows.
    pub fn from(&self, page_size: usize) -> usize {
        (self.page * page_size).min(MAX_WINDOW)
    }

    /// Whether `t` passes the conditions the cluster could not judge (ages,
    /// where the mapping cannot compare dates), at `now`.
    pub fn keeps(&self, t: &Transaction, now: DateTime<Utc>, config: &ProtocolConfig) -> bool {
        self.keeps_with(t, now, config.recovery_window, config.investigate_after)
    }

    /// Whether `t` passes every condition but the text, judged here on the
    /// document (with the two windows given directly): the rows already
    /// loaded are narrowed with it until the cluster's page arrives, and a
    /// row the cluster returns always passes it.
    pub fn keeps_with(
        &self,
        t: &Transaction,
        now: DateTime<Utc>,
        recovery_window: Duration,
        investigate_after: Duration,
    ) -> bool {
        let u = super::rules::urgency_with(t, now, recovery_window, investigate_after);
        let state_ok = match &self.state {
            Some(s) => t.state.as_ref() == Some(s),
            None => true,
        };
        let names = |a: &String| t.src.as_ref() == Some(a) || t.dest.as_ref() == Some(a);
        state_ok
            && self.ids.as_ref().is_none_or(|ids| ids.contains(&t.id))
            && self.account.as_ref().is_none_or(names)
            && self.modified.is_none_or(|(start, end)| {
                t.modification_time.is_some_and(|m| m >= start && m < end)
            })
            && (!self.undated || t.modification_time.is_none())
            && (!self.stuck_only || u.is_stuck())
            && (!self.old_only || u.needs_investigation())
            && self.age.is_none_or(|a| {
                a.min.is_none_or(|m| super::rules::is_older_than(t, now, m))
                    && a.max
                        .is_none_or(|m| !super::rules::is_older_than(t, now, m))
            })
    }
}

/// One page of the table as a poll loaded it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TablePage {
    /// The filter and page it answers.
    pub filter: TableFilter,
    /// Its rows: the first `listed` of the snapshot's transactions.
    pub listed: usize,
    /// Documents matching the filter in all.
    pub total: u64,
    /// Rows a page holds.
    pub page_size: usize,
}

impl TablePage {
    /// Pages in all (at least one), as far as paging reaches.
    pub fn pages(&self) -> usize {
        let reachable = (self.total as usize).min(MAX_WINDOW);
        reachable.div_ceil(self.page_size.max(1)).max(1)
    }

    /// Whether a page follows this one.
    pub fn has_next(&self) -> bool {
        self.filter.page + 1 < self.pages()
    }

    /// Whether matches lie past the deepest page paging reaches.
    pub fn beyond_reach(&self) -> bool {
        self.total as usize > MAX_WINDOW
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Fields {
        crate::protocol::read::queries::tests::fields(
            json!({"transaction_state": {"type": "keyword"},
            "src_acct": {"type": "keyword"}, "dest_acct": {"type": "keyword"},
            "modification_time": {"type": "date"}}),
        )
    }

    #[test]
    fn the_filter_is_one_query_over_every_document() {
        let f = fields();
        let q = Queries::new(&f);
        let c = ProtocolConfig::default();
        let filter = TableFilter {
            text: "acct-7".into(),
            stuck_only: true,
            page: 2,
            ..Default::default()
        };
        let body = filter.page_search(&q, &f, &c, 500);
        assert_eq!(
            (body["from"].as_u64(), body["size"].as_u64()),
            (Some(1000), Some(500))
        );
        let s = body["query"].to_string();
        assert!(s.contains(r#""ids":{"values":["acct-7"]}"#), "{s}");
        assert!(s.contains(r#""value":"*acct-7*""#), "{s}");
        assert!(s.contains("now-120s"), "the stuck rule's window: {s}");
        assert_eq!(body["sort"][0]["modification_time"]["order"], "asc");
    }

    #[test]
    fn a_terminal_state_pages_newest_first_and_paging_stops_at_the_window() {
        let f = fields();
        let q = Queries::new(&f);
        let done = TableFilter {
            state: Some(TxnState::Finished),
            ..Default::default()
        };
        assert_eq!(done.sort(&q)[0]["modification_time"]["order"], "desc");
        let page = TablePage {
            filter: TableFilter {
                page: 19,
                ..Default::default()
            },
            listed: 500,
            total: 25_000,
            page_size: 500,
        };
        assert_eq!(page.pages(), 20);
        assert!(!page.has_next() && page.beyond_reach());
        let small = TablePage {
            filter: TableFilter::default(),
            listed: 500,
            total: 6_000,
            page_size: 500,
        };
        assert_eq!(small.pages(), 12);
        assert!(small.has_next());
    }
}
