//! How the schema map in force fits the cluster: the proposal discovery
//! makes from the live mappings and the refusal when a field the procedures
//! need is absent under its name but mapped under another
//! ([`Discovery::schema_problems`]); and the map as `doctor` shows it: each
//! field's name in force and what
//! it resolved to in the live mapping, the state values in force and those
//! found on the cluster (a `terms` aggregation on the state field), and,
//! when the names in force do not fit, the proposed map as the TOML to paste
//! into the profile. Proposed only: nothing is applied.

use super::discovery::Discovery;
use super::index_info::{IndexInfo, ResolvedField};
use crate::cluster::Cluster;
use crate::protocol::schema::advice::profile_label;
use crate::protocol::schema::propose::propose;
use crate::protocol::schema::{DocKind, Proposal};
use crate::protocol::schema::{Field, STATES};
use serde::Serialize;
use serde_json::{json, Value};

/// One field of the map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaField {
    /// The article's name (the key in `[profiles.NAME.schema]`).
    pub canonical: &'static str,
    /// The application's name in force.
    pub name: String,
    /// What that name resolved to in the live mapping.
    pub resolved: String,
}

/// The map in force, what the cluster holds, and the proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaReport {
    /// Whether the article's names are in force (no map configured).
    pub default: bool,
    /// The profile in use, if any (its table is the one to paste into).
    pub profile: Option<String>,
    /// Each field.
    pub fields: Vec<SchemaField>,
    /// Each protocol state and the value written for it.
    pub states: Vec<(String, String)>,
    /// The state values found on the cluster (up to 100).
    pub seen_states: Vec<String>,
    /// Values found that the map in force does not name (shown as unknown,
    /// never acted on).
    pub unknown_states: Vec<String>,
    /// The proposed map as TOML, when it differs from the one in force.
    pub proposal: Option<String>,
    /// Values found that the proposal could not match to a state either.
    pub unmatched_states: Vec<String>,
}

/// How the map in force fits the cluster discovery read.
impl Discovery {
    /// The index holding `field`'s documents.
    pub fn index_of(&self, field: Field) -> &IndexInfo {
        match field.kind() {
            DocKind::Transactions => &self.transactions,
            DocKind::Accounts => &self.accounts,
            DocKind::Locks => &self.locks,
        }
    }

    /// Whether the live mapping has `field` under `name` (for the source and
    /// destination under the article's names, either of its spellings).
    fn has(&self, field: Field, name: &str) -> bool {
        let article = name == field.canonical();
        match field {
            Field::Source if article => self.fields.src.iter().any(ResolvedField::is_mapped),
            Field::Destination if article => self.fields.dest.iter().any(ResolvedField::is_mapped),
            _ => self.index_of(field).field_mapping(name).is_some(),
        }
    }

    /// The map discovery proposes from the live mappings and the state
    /// values `seen_states` found on the cluster (see [`propose`]).
    pub fn proposal(&self, seen_states: &[String]) -> Proposal {
        propose(&self.fields.schema, |f, n| self.has(f, n), seen_states)
    }

    /// Why the map in force does not fit this cluster: a field the
    /// procedures read to move money (state, accounts, amount, times,
    /// balance, pending) is absent under its name while another spelling is
    /// mapped. The procedures refuse until a map is configured; `doctor`
    /// prints the one proposed.
    pub fn schema_problems(&self) -> Vec<String> {
        self.proposal(&[])
            .renamed
            .iter()
            .filter(|(f, _, _)| f.kind() != DocKind::Locks)
            .map(|(f, current, found)| {
                format!(
                    "the {} field is not `{current}` on this cluster but looks like `{found}`: \
                     the application uses other names; configure [profiles.NAME.schema] \
                     (`estx-tui doctor` prints the proposed map)",
                    f.canonical()
                )
            })
            .collect()
    }
}

/// The report for `d`, asking the cluster which state values exist;
/// `profile` is the profile in use (its name goes into the proposed TOML).
pub async fn report(cluster: &Cluster, d: &Discovery, profile: Option<&str>) -> SchemaReport {
    let schema = &d.fields.schema;
    let first = d.proposal(&[]);
    let seen = seen_states(cluster, d, first.schema.name(Field::State)).await;
    let proposal = d.proposal(&seen);
    let fields = Field::ALL
        .iter()
        .map(|f| {
            let name = schema.name(*f).to_string();
            SchemaField {
                canonical: f.canonical(),
                resolved: d.index_of(*f).resolve(&name).how(),
                name,
            }
        })
        .collect();
    SchemaReport {
        default: schema.is_default(),
        profile: profile.map(str::to_string),
        fields,
        states: schema
            .state_rows()
            .into_iter()
            .map(|(s, v)| (s.to_string(), v.to_string()))
            .collect(),
        unknown_states: seen
            .iter()
            .filter(|v| !STATES.iter().any(|s| schema.state_value(s) == v.as_str()))
            .cloned()
            .collect(),
        seen_states: seen,
        proposal: proposal
            .differs(schema)
            .then(|| proposal.schema.to_toml(profile_label(profile))),
        unmatched_states: proposal.unmatched_states,
    }
}

/// `doctor`'s warning when every field fits the names in force but state
/// values on the cluster are left unmapped (see
/// [`crate::protocol::schema::Schema::unmapped_states_warning`]).
pub fn unmapped_states_warning(d: &Discovery, r: &SchemaReport) -> Option<String> {
    if !d.schema_problems().is_empty() {
        return None;
    }
    d.fields
        .schema
        .unmapped_states_warning(&r.unknown_states, r.profile.as_deref())
}

/// The values of the state field `name` on the cluster (none when it cannot
/// be aggregated or the search fails).
async fn seen_states(cluster: &Cluster, d: &Discovery, name: &str) -> Vec<String> {
    let f = d.transactions.resolve(name);
    let mapped = f.is_mapped();
    let Some(exact) = f.exact.filter(|_| mapped) else {
        return Vec::new();
    };
    let body = json!({"size": 0, "aggs": {"states": {"terms": {"field": exact, "size": 100}}}});
    match cluster.search(&d.transactions.name, body).await {
        Ok(v) => v
            .pointer("/aggregations/states/buckets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| b.get("key").and_then(Value::as_str).map(str::to_string))
            .collect(),
        Err(e) => {
            tracing::info!(error = %e, "could not read the state values");
            Vec::new()
        }
    }
}
