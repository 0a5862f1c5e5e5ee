//! Acknowledgements: an operator's word that a transaction is known and
//! looked after ("finance is investigating these 5"), kept in the tool's
//! own index ([`crate::protocol::Indices::acks`], created by `init` as the
//! audit index is; the application's indices are never written), one
//! document per acknowledged transaction under the transaction's id: who,
//! why, the ticket, since and until when. Every operator, `check`, the
//! exporter and the bulk selections read the same documents.
//!
//! An ack expires on its own: every read ignores one whose `until` has
//! passed ([`Ack::live_at`]), so nothing sweeps them. Acking and unacking
//! are acts (`intervene::acts::ack`), each recorded in the audit trail;
//! here are the document, the reads (by id, realtime, for a selection and
//! `check`; by search, for the poll) and the two writes.

use super::Protocol;
use crate::cluster::{Changes, CreateOutcome, DeleteOutcome, WriteOutcome};
use crate::error::{Error, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Most live acks one poll lists (the header counts them all).
pub const ACKS_CAP: usize = 1000;

/// Most times a write re-reads an ack another operator changed meanwhile.
const TRIES: usize = 5;

/// One transaction acknowledged: by whom, why, until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ack {
    /// The acknowledged transaction's id (the document's id).
    pub txn: String,
    /// Who acknowledged it (the audit trail's operator).
    pub by: String,
    /// Why, in the operator's words.
    pub reason: String,
    /// Where the work on it is tracked (a ticket's URL), if given.
    pub ticket: Option<String>,
    /// When it was acknowledged (the cluster's clock).
    pub since: DateTime<Utc>,
    /// When the acknowledgement lapses on its own.
    pub until: DateTime<Utc>,
}

impl Ack {
    /// The ack stored as `src` under `id`; `None` when it carries no
    /// readable `until` (it cannot be judged live: read as no ack).
    pub fn from_source(id: &str, src: &Map<String, Value>) -> Option<Ack> {
        let text = |k: &str| src.get(k).and_then(Value::as_str).map(str::to_string);
        let time = |k: &str| {
            text(k)
                .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
                .map(|t| t.with_timezone(&Utc))
        };
        let until = time("until")?;
        Some(Ack {
            txn: id.to_string(),
            by: text("by").unwrap_or_else(|| "unknown".into()),
            reason: text("reason").unwrap_or_default(),
            ticket: text("ticket"),
            since: time("since").unwrap_or(until),
            until,
        })
    }

    /// The document stored for it (every field, `ticket` null when none:
    /// a renewal without one clears the old one).
    pub fn source(&self) -> Map<String, Value> {
        let at = |t: &DateTime<Utc>| Value::String(t.to_rfc3339_opts(SecondsFormat::Millis, true));
        let mut m = Map::new();
        m.insert("txn".into(), Value::String(self.txn.clone()));
        m.insert("by".into(), Value::String(self.by.clone()));
        m.insert("reason".into(), Value::String(self.reason.clone()));
        m.insert(
            "ticket".into(),
            self.ticket.clone().map_or(Value::Null, Value::String),
        );
        m.insert("since".into(), at(&self.since));
        m.insert("until".into(), at(&self.until));
        m
    }

    /// Whether it still holds at `now` (an expired ack is no ack).
    pub fn live_at(&self, now: DateTime<Utc>) -> bool {
        self.until > now
    }
}

impl fmt::Display for Ack {
    /// `acknowledged by ana until 2026-11-28 16:00 UTC: finance (TICKET)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "acknowledged by {} until {}: {}",
            self.by,
            self.until.format("%Y-%m-%d %H:%M UTC"),
            self.reason
        )?;
        if let Some(t) = &self.ticket {
            write!(f, " ({t})")?;
        }
        Ok(())
    }
}

/// The live acks read, by transaction id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Acks {
    by_txn: BTreeMap<String, Ack>,
    /// Live acks in all (the poll lists at most [`ACKS_CAP`]).
    pub total: u64,
}

impl Acks {
    /// The live ones of `acks` at `now`.
    pub fn live(acks: impl IntoIterator<Item = Ack>, now: DateTime<Utc>) -> Acks {
        let by_txn: BTreeMap<String, Ack> = acks
            .into_iter()
            .filter(|a| a.live_at(now))
            .map(|a| (a.txn.clone(), a))
            .collect();
        Acks {
            total: by_txn.len() as u64,
            by_txn,
        }
    }

    /// The live acks of a search answer ([`live_search`]) at `now`.
    pub fn from_answer(answer: &Value, now: DateTime<Utc>) -> Result<Acks> {
        let hits = crate::cluster::hit_refs(answer)?;
        let listed = hits.len() as u64;
        let mut acks = Acks::live(
            hits.iter().filter_map(|h| Ack::from_source(h.id, h.source)),
            now,
        );
        // Beyond the listed ones, the search's total (by `until` too) is
        // the best count there is.
        acks.total += super::read::scan::total_hits(answer).saturating_sub(listed);
        Ok(acks)
    }

    /// The ack on `txn`, if it is live.
    pub fn get(&self, txn: &str) -> Option<&Ack> {
        self.by_txn.get(txn)
    }

    /// Whether none is live.
    pub fn is_empty(&self) -> bool {
        self.by_txn.is_empty()
    }

    /// How many are listed.
    pub fn len(&self) -> usize {
        self.by_txn.len()
    }

    /// The listed ones, by transaction id.
    pub fn iter(&self) -> impl Iterator<Item = &Ack> {
        self.by_txn.values()
    }
}

/// The search for the acks live at `now` (one search of the poll's
/// `_msearch`: the ack index's name beside it).
pub fn live_search(now: DateTime<Utc>) -> Value {
    let now = now.to_rfc3339_opts(SecondsFormat::Millis, true);
    json!({
        "size": ACKS_CAP,
        "track_total_hits": true,
        "query": {"range": {"until": {"gt": now}}},
    })
}

/// The live acks on `ids`, read by id (realtime: an ack written a moment
/// ago counts), at the cluster's `now`. No acks index: none.
pub async fn acks_on(p: &Protocol, ids: &[String], now: DateTime<Utc>) -> Result<Acks> {
    let index = &p.config().indices.acks;
    let mut found = Vec::new();
    for chunk in ids.chunks(1000) {
        match p.cluster().mget(index, chunk).await {
            Ok(docs) => found.extend(
                chunk
                    .iter()
                    .zip(docs)
                    .filter_map(|(id, d)| d.and_then(|d| Ack::from_source(id, &d.source))),
            ),
            Err(Error::IndexMissing(_)) => return Ok(Acks::default()),
            Err(e) => return Err(e),
        }
    }
    Ok(Acks::live(found, now))
}

/// Every live ack (by search: what `check` lists and the exporter
/// counts); no acks index: none.
pub async fn live_acks(p: &Protocol) -> Result<Acks> {
    let now = p.now().await;
    match p
        .cluster()
        .search(&p.config().indices.acks, live_search(now))
        .await
    {
        Ok(answer) => Acks::from_answer(&answer, now),
        Err(Error::IndexMissing(_)) => Ok(Acks::default()),
        Err(e) => Err(e),
    }
}

/// What writing an ack did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckWrite {
    /// The transaction was not acknowledged (or its ack had lapsed
    /// and was replaced): a new ack.
    Acked,
    /// A live ack was replaced (a new reason, ticket or end).
    Renewed,
}

/// What removing an ack did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckRemoval {
    /// The ack was removed (as it stood then).
    Removed(Box<Ack>),
    /// There was none (or it had lapsed: removed too).
    NotAcked,
}

/// Writes `ack`: created whole when the transaction has none
/// (`op_type=create`), else its fields updated conditional on the version
/// read, re-read when another operator wrote first.
pub async fn put_ack(p: &Protocol, ack: &Ack) -> Result<AckWrite> {
    let index = &p.config().indices.acks;
    let cluster = p.cluster();
    for _ in 0..TRIES {
        match cluster.get(index, &ack.txn).await? {
            None => match cluster.create(index, &ack.txn, &ack.source()).await? {
                CreateOutcome::Created => return Ok(AckWrite::Acked),
                CreateOutcome::AlreadyExists => continue,
            },
            Some(doc) => {
                let was_live =
                    Ack::from_source(&doc.id, &doc.source).is_some_and(|a| a.live_at(ack.since));
                let changes = ack
                    .source()
                    .into_iter()
                    .fold(Changes::new(), |c, (k, v)| c.set(&k, v));
                let at = (doc.seq_no, doc.primary_term);
                match cluster
                    .update_if_routed(index, &ack.txn, &changes, at, doc.routing.as_deref())
                    .await?
                {
                    WriteOutcome::Conflict => continue,
                    _ if was_live => return Ok(AckWrite::Renewed),
                    _ => return Ok(AckWrite::Acked),
                }
            }
        }
    }
    Err(Error::Invalid(format!(
        "the ack on `{}` kept changing under this write ({TRIES} tries)",
        ack.txn
    )))
}

/// Removes the ack on `txn` (conditional on the version read); a lapsed
/// one is removed too, and said to be no ack.
pub async fn remove_ack(p: &Protocol, txn: &str, now: DateTime<Utc>) -> Result<AckRemoval> {
    let index = &p.config().indices.acks;
    let cluster = p.cluster();
    for _ in 0..TRIES {
        let Some(doc) = cluster.get(index, txn).await? else {
            return Ok(AckRemoval::NotAcked);
        };
        let at = (doc.seq_no, doc.primary_term);
        match cluster
            .delete_if_routed(index, txn, at, doc.routing.as_deref())
            .await?
        {
            DeleteOutcome::Conflict => continue,
            DeleteOutcome::NotFound => return Ok(AckRemoval::NotAcked),
            DeleteOutcome::Deleted => {
                return Ok(match Ack::from_source(txn, &doc.source) {
                    Some(a) if a.live_at(now) => AckRemoval::Removed(Box::new(a)),
                    _ => AckRemoval::NotAcked,
                })
            }
        }
    }
    Err(Error::Invalid(format!(
        "the ack on `{txn}` kept changing under this removal ({TRIES} tries)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// An ack read back is the ack written; a lapsed one is no ack.
    #[test]
    fn an_ack_round_trips_and_lapses_on_its_own() {
        let ack = Ack {
            txn: "t-1".into(),
            by: "ana".into(),
            reason: "finance is on it".into(),
            ticket: Some("https://t/1".into()),
            since: at("2026-11-28T10:00:00Z"),
            until: at("2026-11-28T12:00:00Z"),
        };
        assert_eq!(Ack::from_source("t-1", &ack.source()), Some(ack.clone()));
        let live = Acks::live([ack.clone()], at("2026-11-28T11:59:59Z"));
        assert_eq!(live.get("t-1"), Some(&ack));
        assert!(Acks::live([ack.clone()], at("2026-11-28T12:00:00Z")).is_empty());
        assert_eq!(
            ack.to_string(),
            "acknowledged by ana until 2026-11-28 12:00 UTC: finance is on it (https://t/1)"
        );
    }
}
