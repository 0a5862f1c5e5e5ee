//! Every search body the tool sends, built in one place from the fields
//! discovery resolved: the exact (`keyword`) name where there is one, a
//! phrase match on the analysed field where there is not (slower, and
//! counted by search instead of aggregated), and age filters that also
//! surface documents with no usable `modification_time` instead of silently
//! dropping them.

use super::discovery::Fields;
use super::index_info::ResolvedField;
use crate::protocol::schema::Schema;
use crate::protocol::transaction::TxnState;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use std::time::Duration;

/// Query builder over resolved fields.
#[derive(Debug, Clone, Copy)]
pub struct Queries<'a> {
    fields: &'a Fields,
}

impl<'a> Queries<'a> {
    /// Queries over `fields`.
    pub fn new(fields: &'a Fields) -> Queries<'a> {
        Queries { fields }
    }

    /// The map that names the fields and states.
    pub fn schema(&self) -> &'a Schema {
        &self.fields.schema
    }

    /// Whether per-state counts can come from one `terms` aggregation.
    pub fn states_aggregatable(&self) -> bool {
        self.fields.state.exact.is_some()
    }

    /// Documents whose state is one of `states` (canonical names, written
    /// as the application writes them).
    pub fn state_in<S: AsRef<str>>(&self, states: &[S]) -> Value {
        let f = &self.fields.state;
        let values: Vec<String> = states
            .iter()
            .map(|s| self.schema().state_to_app(s.as_ref()))
            .collect();
        match &f.exact {
            Some(exact) => json!({"terms": {exact: values}}),
            None => json!({"bool": {"should": values.iter()
                .map(|s| json!({"match_phrase": {f.name.clone(): s}}))
                .collect::<Vec<_>>(), "minimum_should_match": 1}}),
        }
    }

    /// Transactions not yet finished or rolled back.
    pub fn in_flight(&self) -> Value {
        self.state_in(&TxnState::NON_TERMINAL_NAMES)
    }

    /// Everything not finished or rolled back (unknown and missing states
    /// included): `list`'s default.
    pub fn not_terminal(&self) -> Value {
        json!({"bool": {"must_not": [self.state_in(&["finished", "rolled-back"])]}})
    }

    /// Transactions in none of the six protocol states (unknown or none).
    pub fn odd_states(&self) -> Value {
        let names: Vec<&str> = TxnState::KNOWN.iter().map(TxnState::as_str).collect();
        json!({"bool": {"must_not": [self.state_in(&names)]}})
    }

    /// Documents without a `modification_time` (or with one the cluster
    /// could not index): they have no age, so they are reported, not hidden.
    pub fn undated(&self) -> Value {
        json!({"bool": {"must_not": [{"exists": {"field": self.fields.modification_time.name}}]}})
    }

    /// Last modified at least `d` ago, or with no usable modification time.
    /// `None` when the mapping cannot compare dates (the caller filters).
    pub fn older_than(&self, d: Duration) -> Option<Value> {
        if !self.fields.ages_queryable() {
            return None;
        }
        Some(json!({"bool": {"should": [
            {"range": {self.fields.modification_time.query_name():
                {"lte": format!("now-{}s", d.as_secs())}}},
            self.undated(),
        ], "minimum_should_match": 1}}))
    }

    /// Last modified at least `min` ago (undated too, as [`Self::older_than`])
    /// and less than `max` ago (undated not: a band has no room for an
    /// unknown age). `None` when the mapping cannot compare dates.
    pub fn modified_between(&self, min: Option<Duration>, max: Option<Duration>) -> Option<Value> {
        if !self.fields.ages_queryable() {
            return None;
        }
        let Some(max) = max else {
            return min.and_then(|m| self.older_than(m));
        };
        let mut range = json!({"gt": format!("now-{}s", max.as_secs())});
        if let Some(min) = min {
            range["lte"] = json!(format!("now-{}s", min.as_secs()));
        }
        Some(json!({"range": {self.fields.modification_time.query_name(): range}}))
    }

    /// Last modified at or after `start` and before `end` (epoch
    /// milliseconds, so whatever format the mapping gives the dates).
    pub fn modified_in(&self, start: DateTime<Utc>, end: DateTime<Utc>) -> Value {
        json!({"range": {self.fields.modification_time.query_name(): {
            "gte": start.timestamp_millis(), "lt": end.timestamp_millis(),
            "format": "epoch_millis"}}})
    }

    /// Transactions whose source or destination account contains `text`
    /// (case-insensitively where the field has an exact form, by phrase
    /// where it has not): `should` clauses.
    pub fn accounts_containing(&self, text: &str) -> Vec<Value> {
        let escaped: String = text
            .chars()
            .flat_map(|c| match c {
                '*' | '?' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        self.fields
            .src
            .iter()
            .chain(&self.fields.dest)
            .map(|f| match &f.exact {
                Some(exact) => json!({"wildcard": {exact.clone(): {
                    "value": format!("*{escaped}*"), "case_insensitive": true}}}),
                None => phrase(&f.name, text),
            })
            .collect()
    }

    /// Oldest modification first (undated first of all, where the mapping
    /// allows `missing: _first`), when sortable.
    pub fn oldest_first(&self) -> Vec<Value> {
        match &self.fields.modification_time.exact {
            Some(f) if self.fields.ages_queryable() => {
                let mut sort = json!({"order": "asc", "unmapped_type": "date"});
                if self.missing_first_is_safe() {
                    sort["missing"] = json!("_first");
                }
                vec![json!({f.clone(): sort})]
            }
            _ => vec![],
        }
    }

    /// Whether a sort on `modification_time` may say `missing: _first`: not
    /// on `date_nanos` (elastic/elasticsearch#81960) nor on a date with a
    /// format of its own (opensearch-project/OpenSearch#10253), where the
    /// missing value's sort key fails to format and the search fails. There
    /// undated documents sort last (the default).
    fn missing_first_is_safe(&self) -> bool {
        let f = &self.fields.modification_time;
        f.format.is_none() && f.mapped_type.as_deref() != Some("date_nanos")
    }

    /// Newest modification first, undated last (the default `missing`,
    /// never spelt out: see [`Self::missing_first_is_safe`]) — the terminal
    /// states' listing: the latest outcomes are the ones an operator confirms.
    pub fn newest_first(&self) -> Vec<Value> {
        match &self.fields.modification_time.exact {
            Some(f) if self.fields.ages_queryable() => vec![json!({f.clone(): {
                "order": "desc", "unmapped_type": "date"}})],
            _ => vec![],
        }
    }

    /// The stuck query (the article's): in flight and untouched for the
    /// recovery window, plus in-flight documents with no modification time.
    pub fn stuck(&self, window: Duration) -> Value {
        let mut filter = vec![self.in_flight()];
        filter.extend(self.older_than(window));
        json!({"bool": {"filter": filter}})
    }

    /// `list`: by state (all when empty) and age.
    pub fn list(&self, states: &[String], older_than: Option<Duration>) -> Value {
        let mut filter = Vec::new();
        if !states.is_empty() {
            filter.push(self.state_in(states));
        }
        if let Some(d) = older_than {
            filter.extend(self.older_than(d));
        }
        json!({"bool": {"filter": filter}})
    }

    /// Per-state counts with the oldest modification time of each; only
    /// valid when [`Self::states_aggregatable`].
    pub fn by_state_aggregation(&self) -> Value {
        let mut states = json!({"terms": {
            "field": self.fields.state.query_name(), "size": 100, "missing": MISSING_STATE_KEY}});
        if self.fields.ages_queryable() {
            states["aggs"] =
                json!({"oldest": {"min": {"field": self.fields.modification_time.query_name()}}});
        }
        json!({"states": states})
    }

    /// Locks owned by any of `owners` (possibly more: the caller checks
    /// each hit's `owner`, see [`any_of`]).
    pub fn locks_owned_by(&self, owners: &[String]) -> Value {
        json!({"bool": {"should": any_of(&self.fields.owner, owners), "minimum_should_match": 1}})
    }

    /// Locks, oldest first.
    pub fn locks_sort(&self) -> Vec<Value> {
        match &self.fields.lock_created_at.exact {
            Some(f) => vec![json!({f.clone(): {"order": "asc", "unmapped_type": "date"}})],
            None => vec![],
        }
    }

    /// Transactions naming any of `accounts` as source or destination
    /// (either field name the mappings use; possibly more: the caller
    /// checks each hit's accounts, see [`any_of`]).
    pub fn naming_accounts(&self, accounts: &[String]) -> Value {
        let should: Vec<Value> = self
            .fields
            .src
            .iter()
            .chain(&self.fields.dest)
            .flat_map(|f| any_of(f, accounts))
            .collect();
        json!({"bool": {"should": should, "minimum_should_match": 1}})
    }

    /// Accounts with at least one pending entry.
    pub fn accounts_with_pending(&self) -> Value {
        json!({"exists": {"field": self.fields.pending.name}})
    }
}

/// `should` clauses matching documents whose `f` is one of `values`, for
/// callers that check the value of every hit: a `terms` on the exact field;
/// a value it does not index (longer than its `ignore_above`: ids and
/// accounts of an auto-created index's `.keyword`, 256 characters) by a
/// phrase on the analysed field, or, when the field has no analysed form,
/// by no condition at all (every document, filtered by the caller), since
/// no query can find it; a field with no exact form by phrase.
fn any_of(f: &ResolvedField, values: &[String]) -> Vec<Value> {
    let Some(exact) = &f.exact else {
        return values.iter().map(|v| phrase(&f.name, v)).collect();
    };
    let (indexed, long): (Vec<&String>, Vec<&String>) =
        values.iter().partition(|v| f.indexes_whole(v));
    let mut should = Vec::new();
    if !indexed.is_empty() {
        should.push(json!({"terms": {exact.clone(): indexed}}));
    }
    if !long.is_empty() {
        if *exact == f.name {
            should.push(json!({"match_all": {}}));
        } else {
            should.extend(long.iter().map(|v| phrase(&f.name, v)));
        }
    }
    should
}

fn phrase(field: &str, value: &str) -> Value {
    json!({"match_phrase": {field: value}})
}

/// Key the aggregation gives documents without a state.
pub const MISSING_STATE_KEY: &str = "\u{0}missing";

#[cfg(test)]
pub(super) mod tests {
    use super::super::discovery::{resolve_fields, IndexInfo, Refresh, Target};
    use super::*;

    /// The fields resolved from one index mapped with `props` (every
    /// role on it), for tests of queries built from a mapping.
    pub(in crate::protocol::read) fn fields(props: Value) -> Fields {
        let i = IndexInfo {
            name: "t".into(),
            target: Target::Index,
            concrete: vec!["t".into()],
            dynamic: "true".into(),
            refresh: Refresh::Never,
            properties: props.as_object().cloned().unwrap_or_default(),
            mixed: Vec::new(),
            routing_required: false,
            source_loss: None,
            blocks: Vec::new(),
        };
        resolve_fields(&Schema::default(), &i, &i, &i)
    }

    #[test]
    fn sorts_never_spell_missing_where_products_fail_to_format_it() {
        let f = fields(json!({"modification_time": {"type": "date"}}));
        let plain = Queries::new(&f);
        assert_eq!(
            plain.oldest_first()[0]["modification_time"]["missing"],
            "_first"
        );
        assert!(plain.newest_first()[0]["modification_time"]
            .get("missing")
            .is_none());
        for mapping in [
            json!({"type": "date_nanos"}),
            json!({"type": "date", "format": "yyyy-MM-dd HH:mm:ss"}),
        ] {
            let f = fields(json!({"modification_time": mapping}));
            let q = Queries::new(&f);
            let sort = &q.oldest_first()[0]["modification_time"];
            assert!(sort.get("missing").is_none(), "{mapping}: {sort}");
            assert_eq!(sort["order"], "asc");
        }
    }

    #[test]
    fn auto_created_index_queries_the_keyword_sub_field() {
        let f = fields(json!({"transaction_state": {"type": "text",
            "fields": {"keyword": {"type": "keyword"}}}, "modification_time": {"type": "date"}}));
        let q = Queries::new(&f);
        assert_eq!(
            q.in_flight()["terms"]["transaction_state.keyword"][0],
            "created"
        );
        assert!(q.states_aggregatable());
        let stuck = q.stuck(Duration::from_secs(60)).to_string();
        assert!(
            stuck.contains("now-60s") && stuck.contains("must_not"),
            "{stuck}"
        );
    }

    #[test]
    fn text_without_keyword_degrades_to_phrases() {
        let f = fields(json!({"transaction_state": {"type": "text"}}));
        let q = Queries::new(&f);
        assert!(!q.states_aggregatable());
        assert_eq!(
            q.state_in(&["rolled-back"])["bool"]["should"][0]["match_phrase"]["transaction_state"],
            "rolled-back"
        );
    }

    #[test]
    fn values_longer_than_ignore_above_are_searched_where_they_are_indexed() {
        let long = "a".repeat(257);
        let owners = ["t1".to_string(), long.clone()];
        let sub = fields(json!({"owner": {"type": "text",
            "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}}));
        assert_eq!(
            Queries::new(&sub).locks_owned_by(&owners)["bool"]["should"],
            json!([{"terms": {"owner.keyword": ["t1"]}}, {"match_phrase": {"owner": long}}])
        );
        let bare = fields(json!({"owner": {"type": "keyword", "ignore_above": 256}}));
        assert_eq!(
            Queries::new(&bare).locks_owned_by(&owners)["bool"]["should"],
            json!([{"terms": {"owner": ["t1"]}}, {"match_all": {}}])
        );
        let short = ["t1".to_string(), "a".repeat(256)];
        assert_eq!(
            Queries::new(&bare).locks_owned_by(&short)["bool"]["should"],
            json!([{"terms": {"owner": short}}])
        );
    }
}
