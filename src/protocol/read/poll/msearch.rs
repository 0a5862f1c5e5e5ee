//! The poll's one `_msearch`: the searches it asks, in order, and the
//! answers read back in that order (a missing index is noted, every
//! answer's shard coverage added). The healing evidence's searches come
//! after the counts, then the other operators' three ([`OthersSearch`]),
//! and the acks' search is the last, each read by its own type
//! ([`AcksSearch`]).

use super::acks::AcksSearch;
use super::others::OthersSearch;

use super::{Answers, Poll, LOCKS_CAP, ODD_CAP, PENDING_ACCOUNTS_CAP};
use crate::error::{Error, Result};
use crate::protocol::read::coverage::Coverage;
use crate::protocol::read::scan::total_hits;
use crate::protocol::read::state_counts::AttentionCounts;
use crate::protocol::read::verdict::HealingSearch;
use crate::protocol::transaction::TxnState;
use serde_json::{json, Value};

impl Poll<'_> {
    /// The searches of the poll's one `_msearch`, in the order
    /// [`Self::answers`] reads them.
    pub(super) fn searches(
        &self,
        page: Value,
        urgency: Option<&[Value; 2]>,
        healing: &[(HealingSearch, String, Value)],
        others: &OthersSearch,
        acks: &AcksSearch,
    ) -> Vec<(String, Value)> {
        let (ix, q) = (self.ix, &self.q);
        let count = |query: Value| json!({"size": 0, "track_total_hits": true, "query": query});
        let mut in_flight_body = count(q.in_flight());
        if self.aggregate {
            in_flight_body["aggs"] = q.by_state_aggregation();
        }
        let mut searches = vec![
            (ix.transactions.clone(), in_flight_body),
            (ix.transactions.clone(), page),
            (ix.transactions.clone(), count(q.state_in(&["finished"]))),
            (ix.transactions.clone(), count(q.state_in(&["rolled-back"]))),
            (
                ix.transactions.clone(),
                json!({"size": 0, "track_total_hits": true}),
            ),
            (
                ix.transactions.clone(),
                count(json!({"bool": {"filter": [q.in_flight(), q.undated()]}})),
            ),
            (
                ix.accounts.clone(),
                json!({"size": PENDING_ACCOUNTS_CAP, "track_total_hits": true,
                    "query": q.accounts_with_pending()}),
            ),
            (
                ix.locks.clone(),
                json!({"size": LOCKS_CAP, "track_total_hits": true, "sort": q.locks_sort()}),
            ),
        ];
        // Documents in unknown states or with no state: counted, and the
        // first of them read (with their states counted) in the same search,
        // so a poll that finds some costs no request more.
        let mut odd = json!({"size": ODD_CAP, "track_total_hits": true, "query": q.odd_states()});
        if self.aggregate {
            odd["aggs"] = q.by_state_aggregation();
        }
        searches.push((ix.transactions.clone(), odd));
        for query in urgency.into_iter().flatten() {
            searches.push((ix.transactions.clone(), count(query.clone())));
        }
        if !self.aggregate {
            // No exact state field: one count per in-flight state instead.
            for s in TxnState::NON_TERMINAL_NAMES {
                searches.push((ix.transactions.clone(), count(q.state_in(&[s]))));
            }
        }
        // The healing verdict's evidence, last: each named, each read on
        // its own (none fails the poll).
        searches.extend(healing.iter().map(|(_, i, b)| (i.clone(), b.clone())));
        searches.extend(others.searches());
        searches.push(acks.search(ix));
        searches
    }

    /// Reads the `_msearch` answers in the order [`Self::searches`] asked
    /// (`urgent`: how many urgency counts were asked; `healing`: the
    /// healing evidence's searches, then the acks' search, last).
    pub(super) fn answers(
        &mut self,
        mut answers: Vec<Result<Value>>,
        urgent: usize,
        healing: &[HealingSearch],
        others_search: OthersSearch,
        acks_search: &AcksSearch,
    ) -> Result<Answers> {
        let acks = match acks_search.read(answers.pop(), &mut self.coverage) {
            Ok(acks) => acks,
            Err(e) => {
                tracing::warn!(error = %e, "acknowledgements unreadable");
                self.warnings
                    .push(format!("the acknowledgements could not be read ({e})"));
                Default::default()
            }
        };
        let others_answers = answers.split_off(answers.len().saturating_sub(others_search.asked()));
        let others = match others_search.read(others_answers, &mut self.coverage) {
            Ok(others) => others,
            Err(e) => {
                tracing::warn!(error = %e, "other operators' jobs and acts unreadable");
                self.warnings.push(format!(
                    "other operators' jobs and acts could not be read ({e})"
                ));
                Default::default()
            }
        };
        let mut answers = answers.into_iter();
        let (coverage, missing) = (&mut self.coverage, &mut self.missing);
        let mut next = || -> Result<Option<Value>> {
            match answers.next() {
                Some(Ok(v)) => {
                    coverage.add(Coverage::of(&v));
                    Ok(Some(v))
                }
                Some(Err(Error::IndexMissing(i))) => {
                    missing.insert(i);
                    Ok(None)
                }
                Some(Err(e)) => Err(e),
                None => Err(Error::Decode(
                    "msearch returned fewer answers than asked".into(),
                )),
            }
        };
        let in_flight = next()?;
        let page = next()?;
        let finished = next()?;
        let rolled_back = next()?;
        let total = next()?;
        let undated = next()?;
        let pending_accounts = next()?;
        let locks = next()?;
        let odd = next()?;
        let mut urgent_counts = Vec::new();
        for _ in 0..urgent {
            urgent_counts.push(next()?.as_ref().map(total_hits));
        }
        let attention = odd.as_ref().map(|v| AttentionCounts {
            odd: total_hits(v),
            stuck: urgent_counts.first().copied().flatten(),
            needs_investigation: urgent_counts.get(1).copied().flatten(),
        });
        let mut per_state = Vec::new();
        if !self.aggregate {
            for s in TxnState::NON_TERMINAL_NAMES {
                if let Some(v) = next()? {
                    per_state.push((TxnState::parse(s), total_hits(&v)));
                }
            }
        }
        let healing = healing
            .iter()
            .map(|s| {
                let answer = answers.next().unwrap_or_else(|| {
                    Err(Error::Decode(
                        "msearch returned fewer answers than asked".into(),
                    ))
                });
                if let Ok(v) = &answer {
                    coverage.add(Coverage::of(v));
                }
                (*s, answer)
            })
            .collect();
        Ok(Answers {
            in_flight,
            page,
            finished,
            rolled_back,
            total,
            undated,
            pending_accounts,
            locks,
            attention,
            odd,
            per_state,
            healing,
            acks,
            others,
        })
    }
}
