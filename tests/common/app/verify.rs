//! The end state against the invariants: every transaction terminal,
//! nothing pending on any account, each balance equal to its initial one
//! plus its finished transfers (so money is conserved), every time the
//! transactions carry in a format the application writes, and, for an
//! application with names of its own, no field under the article's name.

use super::names::State;
use super::World;
use estx::cluster::hits;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};

/// The end state, counted, and what breaks the invariants.
#[derive(Debug, Default)]
pub struct EndState {
    pub by_state: BTreeMap<String, usize>,
    pub total: i64,
    pub expected_total: i64,
    /// `modification_time` values in neither of the application's formats.
    pub foreign_times: Vec<String>,
    /// Fields under an article's name the application does not use
    /// (`index/id: name`): written by someone else, the tool.
    pub article_fields: Vec<String>,
    pub problems: Vec<String>,
}

impl std::fmt::Display for EndState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "end state: transactions")?;
        for (state, n) in &self.by_state {
            write!(f, " {state} {n}")?;
        }
        write!(
            f,
            "; total {} (expected {}); {} times in a foreign format; {} fields under the article's names; {} problems",
            self.total,
            self.expected_total,
            self.foreign_times.len(),
            self.article_fields.len(),
            self.problems.len()
        )
    }
}

async fn all(w: &World, index: &str) -> Vec<(String, Map<String, Value>)> {
    let body = json!({"size": 10000, "query": {"match_all": {}}});
    let answer = w.cluster.search(index, body).await.unwrap();
    let hits = hits(&answer).unwrap();
    assert!(
        hits.len() < 10000,
        "{index}: too many documents to verify by one search"
    );
    hits.into_iter().map(|h| (h.id, h.source)).collect()
}

/// Whether `t` is written as the application writes times: the scripts'
/// `yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'` or the pipeline's ISO form.
fn app_format(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 27
        && b[10] == b'T'
        && b[19] == b'.'
        && b[26] == b'Z'
        && b[20..26].iter().all(u8::is_ascii_digit)
}

impl World {
    /// Every field of the application's documents (transactions, accounts,
    /// locks) that carries an article's name this application does not use.
    async fn article_fields(&self) -> Vec<String> {
        let unused = self.names.article_names_unused();
        let mut out = Vec::new();
        for index in [&self.ix.transactions, &self.ix.accounts, &self.ix.locks] {
            for (id, src) in all(self, index).await {
                for name in unused.iter().filter(|n| src.contains_key(**n)) {
                    out.push(format!("{index}/{id}: {name}"));
                }
            }
        }
        out
    }

    /// Reads everything (after a refresh) and checks the invariants.
    pub async fn end_state(&self) -> EndState {
        let n = self.names;
        self.refresh().await;
        let mut out = EndState::default();
        let mut expected: HashMap<String, i64> = self
            .account_ids()
            .into_iter()
            .map(|a| (a, self.cfg.initial_balance))
            .collect();
        out.expected_total = expected.values().sum();
        for (id, t) in all(self, &self.ix.transactions).await {
            let text = |f: &str| t.get(f).and_then(Value::as_str).unwrap_or("").to_string();
            let state = n.parse_state(&text(n.state));
            *out.by_state.entry(text(n.state)).or_default() += 1;
            if !matches!(state, Some(State::Finished | State::RolledBack)) {
                out.problems.push(format!("{id} left {:?}", text(n.state)));
            }
            if !app_format(&text(n.modification_time)) {
                out.foreign_times
                    .push(format!("{id}: {}", text(n.modification_time)));
            }
            if state == Some(State::Finished) {
                let amount = t.get(n.amount).and_then(Value::as_i64).unwrap_or(0);
                *expected.entry(text(n.src)).or_default() -= amount;
                *expected.entry(text(n.dest)).or_default() += amount;
            }
        }
        for (id, a) in all(self, &self.ix.accounts).await {
            let balance = a.get(n.balance).and_then(Value::as_i64).unwrap_or(i64::MIN);
            out.total += balance;
            let want = expected.get(&id).copied().unwrap_or(i64::MIN);
            if balance != want {
                out.problems.push(format!(
                    "{id}: balance {balance}, initial plus its finished transfers {want}"
                ));
            }
            match a.get(n.pending) {
                Some(Value::Array(p)) if p.is_empty() => {}
                other => out.problems.push(format!("{id}: still pending {other:?}")),
            }
        }
        out.article_fields = self.article_fields().await;
        if out.total != out.expected_total {
            out.problems
                .push(format!("total {} != {}", out.total, out.expected_total));
        }
        out
    }
}
