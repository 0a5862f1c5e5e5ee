//! The schema map as `doctor` shows it: each field's name in force and what
//! it resolved to in the live mapping, the state values in force and those
//! found on the cluster (a `terms` aggregation on the state field), and,
//! when the names in force do not fit, the proposed map as the TOML to paste
//! into the profile. Proposed only: nothing is applied.

use super::discovery::Discovery;
use crate::cluster::Cluster;
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

/// The report for `d`, asking the cluster which state values exist.
pub async fn report(cluster: &Cluster, d: &Discovery) -> SchemaReport {
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
            .then(|| proposal.schema.to_toml("NAME")),
        unmatched_states: proposal.unmatched_states,
    }
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
