//! The document operations the protocol needs, by id: realtime GET and
//! multi-GET (a miss confirmed as `routed` says), conditional partial update
//! and delete (with the routing value a document was read with),
//! `op_type=create`, and whole-document indexing for seeding and for the
//! applications tests emulate. A 409 is a typed conflict, not an error.

use super::response::{check, versioned, Answer};
use super::{dotted, Changes, Cluster, CreateOutcome, DeleteOutcome, VersionedDoc, WriteOutcome};
use crate::error::Result;
use elasticsearch::params::OpType;
use elasticsearch::{CreateParts, DeleteParts, GetParts, IndexParts, UpdateParts};
use serde_json::{json, Map, Value};

impl Cluster {
    /// Realtime GET by id: the latest write, refreshed or not. A miss is
    /// confirmed by an `ids` search before it is called absent: a document
    /// indexed with custom routing is found there and read with its routing
    /// value (see `routed`); not on an index known to have one primary
    /// shard, where a miss is final (see `shards`).
    pub async fn get(&self, index: &str, id: &str) -> Result<Option<VersionedDoc>> {
        let doc = match self.get_untranslated(index, id).await? {
            Some(d) => Some(d),
            None => self
                .found_elsewhere(index, &[id.to_string()])
                .await?
                .remove(id),
        };
        Ok(doc.map(|d| self.read_doc(index, d)))
    }

    async fn get_untranslated(&self, index: &str, id: &str) -> Result<Option<VersionedDoc>> {
        if dotted::needs_body(id) {
            return self.get_by_body(index, id).await;
        }
        let resp = self
            .send_read(|| {
                self.client
                    .get(GetParts::IndexId(index, id))
                    .realtime(true)
                    .send()
            })
            .await?;
        let answer = Answer::read(resp).await?;
        if answer.status == 404 && answer.json.get("found") == Some(&Value::Bool(false)) {
            return Ok(None);
        }
        let body = answer.into_json(index)?;
        Ok(Some(versioned(id, body)?))
    }

    /// Realtime multi-GET; one entry per id, `None` where missing (the
    /// misses confirmed by one `ids` search, as [`Cluster::get`] does).
    pub async fn mget(&self, index: &str, ids: &[String]) -> Result<Vec<Option<VersionedDoc>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut docs = self.mget_body(index, json!({ "ids": ids })).await?;
        let missed: Vec<String> = ids
            .iter()
            .zip(&docs)
            .filter(|(_, d)| d.is_none())
            .map(|(id, _)| id.clone())
            .collect();
        let mut elsewhere = self.found_elsewhere(index, &missed).await?;
        for (id, d) in ids.iter().zip(docs.iter_mut()) {
            if d.is_none() {
                *d = elsewhere.remove(id);
            }
        }
        Ok(docs
            .into_iter()
            .map(|d| d.map(|d| self.read_doc(index, d)))
            .collect())
    }

    /// Indexes the whole `source` only if the document is still at
    /// `seq_no`/`primary_term`: how an application (the test harness's, the
    /// demo's) writes. The protocol never does — it writes only what a step
    /// sets, with [`Cluster::update_if_routed`].
    pub async fn put_if(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
        seq_no: i64,
        primary_term: i64,
    ) -> Result<WriteOutcome> {
        let source = &*self.write_source(index, source);
        if dotted::needs_body(id) {
            let action = dotted::Action::IndexIf(source, seq_no, primary_term);
            return self.index_by_body(index, id, action).await;
        }
        let resp = self
            .client
            .index(IndexParts::IndexId(index, id))
            .if_seq_no(seq_no)
            .if_primary_term(primary_term)
            .body(source)
            .send();
        let resp = self.send(resp).await?;
        if resp.status_code().as_u16() == 409 {
            return Ok(WriteOutcome::Conflict);
        }
        Ok(WriteOutcome::of_answer(&check(resp, index).await?))
    }

    /// Writes `changes` (only the fields a step sets) into the document,
    /// only if it is still at `at` (its `(_seq_no, _primary_term)`), with
    /// the custom routing value it was read with ([`VersionedDoc::routing`]):
    /// `POST /{index}/_update/{id}?if_seq_no&if_primary_term` with `{"doc":
    /// ...}` translated to the application's names, and `"detect_noop":
    /// false` when the write must advance the version even if it changes
    /// nothing ([`Changes::fence`]). A write that changes nothing otherwise
    /// answers `noop` at the same version, reported as written there. A role
    /// the product refuses partial updates to is
    /// [`Error::UpdateRefused`](crate::Error::UpdateRefused), nothing written.
    pub async fn update_if_routed(
        &self,
        index: &str,
        id: &str,
        changes: &Changes,
        at: (i64, i64),
        routing: Option<&str>,
    ) -> Result<WriteOutcome> {
        let body = self.update_body(index, changes);
        if dotted::needs_body(id) {
            let action = dotted::Action::UpdateIf(&body, at, routing);
            return self.index_by_body(index, id, action).await;
        }
        let (seq_no, primary_term) = at;
        let mut request = self
            .client
            .update(UpdateParts::IndexId(index, id))
            .if_seq_no(seq_no)
            .if_primary_term(primary_term);
        if let Some(r) = routing {
            request = request.routing(r);
        }
        let resp = self.send(request.body(body).send()).await?;
        if resp.status_code().as_u16() == 409 {
            return Ok(WriteOutcome::Conflict);
        }
        Ok(WriteOutcome::of_answer(&check(resp, index).await?))
    }

    /// Asks whether the product accepts a partial update of `id` in `index`
    /// from these credentials, writing nothing: `POST /{index}/_update/{id}`
    /// with an empty `doc` and `detect_noop` on, which the products answer
    /// `noop` (no write, the version kept: Elasticsearch's update API,
    /// "detect_noop … updates that don't change the source are ignored",
    /// and osmem-server alike), or `document_missing` (404) for an id with
    /// no document, where nothing is written either — unless they refuse
    /// the update itself, as they refuse a role with field or document
    /// level security on the index whatever it carries (Elasticsearch's
    /// x-pack `UpdateRequestInterceptor` fails every `UpdateRequest` before
    /// it runs; OpenSearch's `DlsFlsValveImpl` likewise): that is
    /// [`Error::UpdateRefused`](crate::Error::UpdateRefused). An id that
    /// cannot go in a path (or none yet) asks about a document that does
    /// not exist.
    pub async fn probe_partial_update(&self, index: &str, id: &str) -> Result<()> {
        let id = if dotted::needs_body(id) || id.is_empty() {
            "estx-partial-update-probe"
        } else {
            id
        };
        let body = json!({"doc": {}, "detect_noop": true});
        let resp = self
            .client
            .update(UpdateParts::IndexId(index, id))
            .body(body)
            .send();
        let resp = self.send(resp).await?;
        if resp.status_code().as_u16() == 404 {
            // No such document: nothing written, nothing refused. (A
            // missing index was refused before any probe.)
            return Ok(());
        }
        check(resp, index).await.map(|_| ())
    }

    /// The body of a partial update of `index`: `{"doc": ...}` in the
    /// application's names, with `"detect_noop": false` for a forced write.
    pub(super) fn update_body(&self, index: &str, changes: &Changes) -> Value {
        let doc = self.write_source(index, &changes.doc()).into_owned();
        let mut body = json!({ "doc": doc });
        if changes.is_forced() {
            body["detect_noop"] = Value::Bool(false);
        }
        body
    }

    /// Creates the document only if no document has this id (`op_type=create`).
    pub async fn create(
        &self,
        index: &str,
        id: &str,
        source: &Map<String, Value>,
    ) -> Result<CreateOutcome> {
        let source = &*self.write_source(index, source);
        if dotted::needs_body(id) {
            return self.create_by_body(index, id, source).await;
        }
        let resp = self
            .client
            .create(CreateParts::IndexId(index, id))
            .body(source)
            .send();
        let resp = self.send(resp).await?;
        if resp.status_code().as_u16() == 409 {
            return Ok(CreateOutcome::AlreadyExists);
        }
        check(resp, index).await?;
        Ok(CreateOutcome::Created)
    }

    /// Plain index (create or overwrite) with `op_type=index`; for seeding and tests.
    pub async fn put(&self, index: &str, id: &str, source: &Value) -> Result<()> {
        let translated = source
            .as_object()
            .map(|o| Value::Object(self.write_source(index, o).into_owned()));
        let source = translated.as_ref().unwrap_or(source);
        if dotted::needs_body(id) {
            let action = dotted::Action::Index(source);
            return self.index_by_body(index, id, action).await.map(|_| ());
        }
        let resp = self
            .client
            .index(IndexParts::IndexId(index, id))
            .op_type(OpType::Index)
            .body(source)
            .send();
        let resp = self.send(resp).await?;
        check(resp, index).await.map(|_| ())
    }

    /// Deletes the document only if it is still at `seq_no`/`primary_term`.
    pub async fn delete_if(
        &self,
        index: &str,
        id: &str,
        seq_no: i64,
        primary_term: i64,
    ) -> Result<DeleteOutcome> {
        self.delete_if_routed(index, id, (seq_no, primary_term), None)
            .await
    }

    /// [`Cluster::delete_if`] on a document read with a custom routing value
    /// ([`VersionedDoc::routing`]); `at` is its `(_seq_no, _primary_term)`.
    pub async fn delete_if_routed(
        &self,
        index: &str,
        id: &str,
        at: (i64, i64),
        routing: Option<&str>,
    ) -> Result<DeleteOutcome> {
        let (seq_no, primary_term) = at;
        if dotted::needs_body(id) {
            return self
                .delete_by_body(index, id, seq_no, primary_term, routing)
                .await;
        }
        let mut request = self
            .client
            .delete(DeleteParts::IndexId(index, id))
            .if_seq_no(seq_no)
            .if_primary_term(primary_term);
        if let Some(r) = routing {
            request = request.routing(r);
        }
        let resp = request.send();
        let resp = self.send(resp).await?;
        match resp.status_code().as_u16() {
            409 => Ok(DeleteOutcome::Conflict),
            404 => {
                let answer = Answer::read(resp).await?;
                if answer.json.get("result").and_then(Value::as_str) == Some("not_found") {
                    Ok(DeleteOutcome::NotFound)
                } else {
                    Err(answer.into_error(index))
                }
            }
            _ => {
                check(resp, index).await?;
                Ok(DeleteOutcome::Deleted)
            }
        }
    }
}
