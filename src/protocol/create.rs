//! Creating a transaction: `op_type=create` so a retried or duplicated
//! submission can never overwrite one that was already accepted, with both
//! accounts checked first.

use super::account::AccountState;
use super::executor::Created;
use super::steps::{self, ProcedureRefusal, Step};
use super::transaction::{amount_problem, Transfer};
use super::Protocol;
use crate::error::{Error, Result};
use chrono::Utc;
use serde_json::{json, Map, Value};

/// A transfer to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTransfer {
    /// Transaction id; generated when `None`.
    pub id: Option<String>,
    /// Source account id.
    pub src: String,
    /// Destination account id.
    pub dest: String,
    /// Units to move; must be positive.
    pub amount: i64,
}

impl Protocol {
    /// Creates a transaction in state `created` with `op_type=create`.
    ///
    /// Refuses a non-positive amount, identical accounts, and accounts that
    /// do not exist or are malformed. Returns `Ok(Err(ProcedureRefusal::AlreadyExists))`
    /// when the id is taken: the article says not to run it then.
    pub async fn create_transaction(
        &self,
        req: &NewTransfer,
    ) -> Result<std::result::Result<String, ProcedureRefusal>> {
        if let Some(problem) = request_problem(req) {
            return Err(Error::Invalid(problem));
        }
        let accounts = self.check_accounts(&req.src, &req.dest).await?;
        let id = req.id.clone().unwrap_or_else(new_transaction_id);
        if id.is_empty() {
            return Err(Error::Invalid("transaction id must not be empty".into()));
        }
        // Before any write: a reused id, or applies that cannot fit.
        let t = Transfer {
            id: id.clone(),
            src: req.src.clone(),
            dest: req.dest.clone(),
            amount: req.amount,
        };
        let checked = steps::check_fresh_id(&t, (&accounts.0, &accounts.1)).and_then(|()| {
            let applies = [Step::ApplySource, Step::ApplyDestination];
            steps::preflight(
                &t,
                &applies,
                (&accounts.0, &accounts.1),
                self.config.fencing,
            )
        });
        if let Err(refusal) = checked {
            return Ok(Err(refusal));
        }
        let (times, now) = (self.time_fields().await?, self.now().await);
        if let Some(c) = times.creation_conflict() {
            return Err(crate::error::Error::Invalid(format!(
                "refused before the first write: {c}"
            )));
        }
        let doc: Map<String, Value> = json!({
            "src_acct": req.src,
            "dest_acct": req.dest,
            "amount": req.amount,
            "transaction_state": "created",
            "creation_time": times.creation.stamp(now),
            "modification_time": times.modification.stamp(now),
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        let index = &self.config.indices.transactions;
        let answer = self.exec.create(index, &id, &doc).await;
        creation_answer(answer, id, &doc)
    }

    /// Both accounts must exist and be readable before any step runs, so a
    /// transaction naming a missing or malformed account is refused whole
    /// instead of being half applied. Returns them as read.
    pub(crate) async fn check_accounts(
        &self,
        src: &str,
        dest: &str,
    ) -> Result<(AccountState, AccountState)> {
        let ids = [src.to_string(), dest.to_string()];
        let docs = self
            .cluster()
            .mget(&self.config.indices.accounts, &ids)
            .await?;
        let mut states = Vec::with_capacity(2);
        for (id, doc) in ids.iter().zip(docs) {
            let doc = doc.ok_or_else(|| Error::NotFound {
                kind: "account",
                index: self.config.indices.accounts.clone(),
                id: id.clone(),
            })?;
            states.push(self.parse_account(id, &doc.source)?);
        }
        match <[AccountState; 2]>::try_from(states) {
            Ok([s, d]) => Ok((s, d)),
            Err(_) => Err(Error::Decode(
                "mget answered the wrong number of documents".into(),
            )),
        }
    }
}

/// The fields a transaction never changes after its create: a stored
/// document with these values is the one this process created, whatever
/// state it has reached since.
const IMMUTABLE_FIELDS: [&str; 4] = ["src_acct", "dest_acct", "amount", "creation_time"];

/// Whether `stored` is the document `created` (compared on the fields that
/// never change).
fn same_creation(stored: &Map<String, Value>, created: &Map<String, Value>) -> bool {
    IMMUTABLE_FIELDS
        .iter()
        .all(|f| created.get(*f).is_some() && stored.get(*f) == created.get(*f))
}

/// A fresh transaction id: time-ordered and unique enough to never collide.
pub fn new_transaction_id() -> String {
    format!(
        "txn-{}-{:08x}",
        Utc::now().format("%Y%m%d%H%M%S"),
        rand::random::<u32>()
    )
}

/// The request's own problems, found before anything is read: an amount
/// that cannot move, or a transfer from an account to itself.
fn request_problem(req: &NewTransfer) -> Option<String> {
    if let Some(problem) = amount_problem(req.amount) {
        return Some(problem.to_string());
    }
    (req.src == req.dest).then(|| format!("source and destination are both `{}`", req.src))
}

/// What the create of transaction `id` (as `doc`) answered, for the caller.
fn creation_answer(
    answer: Result<Created>,
    id: String,
    doc: &Map<String, Value>,
) -> Result<std::result::Result<String, ProcedureRefusal>> {
    match answer {
        Ok(Created::Created) => Ok(Ok(id)),
        // After a lost answer the document may be ours, and may have
        // moved on since (another process recovering it): recognised by
        // the fields that never change.
        Ok(Created::Exists {
            doc: existing,
            after_lost_answer: true,
        }) if same_creation(&existing.source, doc) => Ok(Ok(id)),
        Ok(Created::Exists { .. }) => Ok(Err(ProcedureRefusal::AlreadyExists(id))),
        Err(Error::GaveUp {
            index,
            id,
            attempts,
            last,
        }) => Err(Error::GaveUp {
            index,
            id,
            attempts,
            last: format!("{last}; the transaction may exist in `created` (recovery will run it)"),
        }),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_document_recognised_after_it_moved_on() {
        let created = json!({"src_acct":"A","dest_acct":"B","amount":5,"transaction_state":"created",
            "creation_time":"2026-01-01T00:00:00.000Z","modification_time":"2026-01-01T00:00:00.000Z"});
        let created = created.as_object().unwrap();
        let mut moved = created.clone();
        moved.insert("transaction_state".into(), json!("finished"));
        moved.insert(
            "modification_time".into(),
            json!("2026-01-01T00:00:01.000Z"),
        );
        assert!(same_creation(&moved, created));
        let mut other = created.clone();
        other.insert("creation_time".into(), json!("2025-12-31T00:00:00.000Z"));
        assert!(!same_creation(&other, created));
        other = created.clone();
        other.insert("amount".into(), json!(6));
        assert!(!same_creation(&other, created));
    }
}
