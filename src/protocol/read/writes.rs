//! Writes checked before step 1: the live mappings must accept every field
//! the protocol writes (the shipped `assets/mappings/*.json` are the source of
//! truth), so that no procedure ever stops half-way on a mapping rejection
//! (a `dynamic: strict` accounts index refusing the fencing records at step
//! 5). What is missing is stated as the exact mapping change to apply, which
//! `init --upgrade-mappings` applies (idempotent, only adds).

use super::discovery::Discovery;
use super::index_info::{IndexBlock, IndexInfo};
use crate::cluster::Cluster;
use crate::error::{Error, Result, WriteRefusal};
use crate::protocol::setup::index_bodies;
use crate::protocol::Indices;
use elasticsearch::http::Method;
use serde_json::{json, Map, Value};

/// What one index lacks for the protocol's writes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MappingGap {
    /// The index (as configured).
    pub index: String,
    /// The concrete indices the change applies to.
    pub concrete: Vec<String>,
    /// Properties to add (nested as in a `PUT _mapping` body); shipped
    /// fields the live mapping does not have.
    pub add: Map<String, Value>,
    /// Whether documents with the missing fields are rejected today
    /// (`dynamic: strict` where they would go).
    pub rejects_writes: bool,
    /// Fields mapped in a way the protocol's documents cannot be written
    /// into (an object where a value is written, or the reverse).
    pub conflicts: Vec<String>,
}

impl MappingGap {
    /// Nothing to add and no conflict.
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.conflicts.is_empty()
    }

    /// The `PUT <index>/_mapping` body that closes the gap.
    pub fn body(&self) -> Value {
        json!({"properties": self.add})
    }

    /// The exact request, for messages and `doctor`.
    pub fn request(&self) -> String {
        format!("PUT {}/_mapping {}", self.target(), self.body())
    }

    fn target(&self) -> String {
        if self.concrete.is_empty() {
            self.index.clone()
        } else {
            self.concrete.join(",")
        }
    }
}

/// Compares shipped `properties` with live ones under `dynamic`; adds to
/// `gap` what is missing, at `prefix`.
fn compare(
    shipped: &Map<String, Value>,
    live: Option<&Map<String, Value>>,
    dynamic: &str,
    prefix: &str,
    gap: &mut MappingGap,
) -> Map<String, Value> {
    let mut add = Map::new();
    for (name, def) in shipped {
        let path = format!("{prefix}{name}");
        let live_def = live.and_then(|l| l.get(name)).and_then(Value::as_object);
        let Some(live_def) = live_def else {
            if dynamic == "strict" {
                gap.rejects_writes = true;
            }
            add.insert(name.clone(), def.clone());
            continue;
        };
        if let Some(c) = def
            .as_object()
            .and_then(|d| super::value_types::conflict(&path, d, live_def))
        {
            gap.conflicts.push(c);
            continue;
        }
        let shipped_object = def.get("properties").is_some()
            || def.get("type").and_then(Value::as_str) == Some("object");
        let live_type = live_def.get("type").and_then(Value::as_str);
        let live_object = live_def.get("properties").is_some()
            || matches!(live_type, None | Some("object") | Some("nested"));
        if shipped_object != live_object {
            gap.conflicts.push(format!(
                "`{path}` is mapped as `{}` but the protocol writes {}",
                live_type.unwrap_or("object"),
                if shipped_object {
                    "an object"
                } else {
                    "a value"
                }
            ));
            continue;
        }
        if let Some(sub) = def.get("properties").and_then(Value::as_object) {
            let sub_dynamic = match live_def.get("dynamic") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                _ => dynamic.to_string(),
            };
            let live_sub = live_def.get("properties").and_then(Value::as_object);
            let sub_add = compare(sub, live_sub, &sub_dynamic, &format!("{path}."), gap);
            if !sub_add.is_empty() {
                add.insert(name.clone(), json!({"properties": sub_add}));
            }
        }
    }
    add
}

/// The gap between the shipped mapping `body` and `live`.
pub fn gap(shipped: &Value, live: &IndexInfo) -> MappingGap {
    let mut g = MappingGap {
        index: live.name.clone(),
        concrete: live.concrete.clone(),
        ..MappingGap::default()
    };
    let empty = Map::new();
    let props = shipped
        .pointer("/mappings/properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    g.add = compare(props, Some(&live.properties), &live.dynamic, "", &mut g);
    g
}

/// Shipped fields that not every procedure writes: `settled_transactions`
/// is only read (older versions wrote it; documents that carry it are
/// already mapped), and the reverse links are written by `reverse` alone. A
/// strict index without them must not refuse a recovery mid-incident; the
/// procedures that do write them name them in [`check`].
pub const OPTIONAL_FIELDS: [&str; 3] = ["settled_transactions", "reverses", "reversed_by"];

/// The gaps of the three indices (existing ones only), over every shipped
/// field (what `init --upgrade-mappings` adds and `doctor` shows).
pub fn gaps(ix: &Indices, d: &Discovery) -> Result<Vec<MappingGap>> {
    gaps_needed(ix, d, &OPTIONAL_FIELDS)
}

/// The gaps over the fields every procedure writes plus the optional ones in
/// `needed`.
fn gaps_needed(ix: &Indices, d: &Discovery, needed: &[&str]) -> Result<Vec<MappingGap>> {
    let mut bodies = index_bodies(ix, &d.fields.schema)?;
    for (_, body) in bodies.iter_mut() {
        if let Some(props) = body
            .pointer_mut("/mappings/properties")
            .and_then(Value::as_object_mut)
        {
            props.retain(|name, _| {
                !OPTIONAL_FIELDS.contains(&name.as_str()) || needed.contains(&name.as_str())
            });
        }
    }
    Ok(bodies
        .iter()
        .zip(d.indices())
        .filter(|(_, info)| info.exists())
        .map(|((_, body), info)| gap(body, info))
        .filter(|g| !g.is_empty())
        .collect())
}

/// The write check's refusal on `d` (`None`: the protocol's writes would
/// be accepted): what the cause verdict calls refused for every stuck
/// transaction, judged on discovery alone (no request).
pub fn refusal(ix: &Indices, d: &Discovery) -> Option<WriteRefusal> {
    match check(ix, d, &[]) {
        Err(Error::WritesRefused(r)) => Some(r),
        _ => None,
    }
}

/// `Ok` when a procedure can write all it writes (the fields every procedure
/// writes, plus the optional ones it names in `needed`); otherwise the
/// refusal, with the exact change to apply.
pub fn check(ix: &Indices, d: &Discovery, needed: &[&str]) -> Result<()> {
    let mut problems = Vec::new();
    // An absent locks index is a deployment without locks, not a mistake:
    // only `transfer --locks` needs it (`check_locks`).
    for info in d.indices().into_iter().filter(|i| !i.is_absent()) {
        if !info.exists() {
            problems.push(format!(
                "index `{}` does not exist (on a new cluster `estx-tui init` creates it; \
                 otherwise check --url and the index names: `estx-tui doctor`)",
                info.name
            ));
        } else if let Some(p) = info.id_problem() {
            problems.push(p);
        }
    }
    // Lock documents are written only by `transfer --locks` (`check_locks`).
    for info in [&d.transactions, &d.accounts] {
        problems.extend(info.source_loss.as_ref().map(|l| l.problem(&info.name)));
        problems.extend(info.blocks.iter().map(IndexBlock::problem));
    }
    problems.extend(d.schema_problems());
    problems.extend(d.times.conflict().map(|c| c.to_string()));
    for g in gaps_needed(ix, d, needed)? {
        // Lock documents are written only by `transfer --locks`: their
        // conflicts refuse that alone (see `check_locks`), never a recovery.
        if g.index != ix.locks {
            problems.extend(g.conflicts.iter().cloned());
        }
        if g.rejects_writes {
            problems.push(format!(
                "`{}` is `dynamic: strict` and does not map fields the protocol writes; \
                 apply `{}` or run `estx-tui init --upgrade-mappings`",
                g.index,
                g.request()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::WritesRefused(WriteRefusal::BeforeFirstWrite(
            problems,
        )))
    }
}

/// `Ok` when lock documents can be written as the tool writes them (the
/// locks index exists: a lock written to an absent one would create it
/// with the cluster's defaults; every value type the locks mapping
/// accepts, the lock times in a writable format); otherwise the refusal,
/// before anything is written.
pub fn check_locks(ix: &Indices, d: &Discovery) -> Result<()> {
    if !d.locks.exists() {
        return Err(Error::WritesRefused(WriteRefusal::LocksIndexMissing {
            index: d.locks.name.clone(),
        }));
    }
    let mut problems: Vec<String> = gaps_needed(ix, d, &[])?
        .into_iter()
        .filter(|g| g.index == ix.locks)
        .flat_map(|g| g.conflicts)
        .collect();
    problems.extend(d.times.lock_conflicts().iter().map(|c| c.to_string()));
    problems.extend(d.locks.blocks.iter().map(IndexBlock::problem));
    problems.extend(
        d.locks
            .source_loss
            .as_ref()
            .map(|l| l.problem(&d.locks.name)),
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::WritesRefused(WriteRefusal::BeforeTakingLock(
            problems,
        )))
    }
}

/// Short warnings for the dashboard's header: indices that would refuse a
/// procedure's writes today.
pub fn short_warnings(ix: &Indices, d: &Discovery) -> Vec<String> {
    gaps_needed(ix, d, &[])
        .unwrap_or_default()
        .into_iter()
        .filter(|g| g.rejects_writes || !g.conflicts.is_empty())
        .map(|g| {
            format!(
                "`{}` rejects the protocol's writes: run init --upgrade-mappings",
                g.index
            )
        })
        .collect()
}

/// Applies every gap's additions (`init --upgrade-mappings`); returns what
/// it applied, as requests. Conflicts are left for an operator.
pub async fn upgrade(cluster: &Cluster, ix: &Indices, d: &Discovery) -> Result<Vec<String>> {
    let mut done = Vec::new();
    for g in gaps(ix, d)? {
        if g.add.is_empty() {
            continue;
        }
        cluster
            .send_json(
                Method::Put,
                &format!("/{}/_mapping", g.target()),
                g.body(),
                &g.index,
            )
            .await?;
        done.push(g.request());
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::super::discovery::{Refresh, Target};
    use super::*;
    use crate::protocol::setup::ACCOUNTS_MAPPING;

    fn live(dynamic: &str, props: Value) -> IndexInfo {
        IndexInfo {
            name: "accounts".into(),
            target: Target::Index,
            concrete: vec!["accounts".into()],
            dynamic: dynamic.into(),
            refresh: Refresh::Never,
            properties: props.as_object().cloned().unwrap_or_default(),
            mixed: Vec::new(),
            routing_required: false,
            source_loss: None,
            blocks: Vec::new(),
        }
    }

    #[test]
    fn strict_accounts_without_fencing_records_reject_writes() {
        let shipped: Value = serde_json::from_str(ACCOUNTS_MAPPING).unwrap();
        let g = gap(
            &shipped,
            &live(
                "strict",
                json!({"balance": {"type": "long"}, "pending_transactions": {"type": "keyword"}}),
            ),
        );
        assert!(g.rejects_writes);
        assert!(g.add.contains_key("settled_transactions"));
        assert!(!g.add.contains_key("balance"));
        assert!(g.request().starts_with("PUT accounts/_mapping"));
        let same = gap(
            &shipped,
            &live("strict", shipped["mappings"]["properties"].clone()),
        );
        assert!(same.is_empty(), "{same:?}");
    }

    #[test]
    fn dynamic_indices_accept_writes_and_conflicts_are_named() {
        let shipped: Value = serde_json::from_str(ACCOUNTS_MAPPING).unwrap();
        let g = gap(
            &shipped,
            &live("true", json!({"balance": {"type": "long"}})),
        );
        assert!(!g.rejects_writes && !g.add.is_empty());
        let c = gap(
            &shipped,
            &live("true", json!({"settled_transactions": {"type": "keyword"}})),
        );
        assert!(c.conflicts[0].contains("settled_transactions"), "{c:?}");
    }
}
