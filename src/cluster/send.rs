//! Sending requests: every answer feeds the cluster clock, and idempotent
//! reads are retried when the cluster or a proxy says it is busy (429, 502,
//! 503, 504) or does not answer at all (a timeout, a reset connection),
//! waiting as `backoff` says (honouring `Retry-After`) within the handle's
//! budget. A circuit breaker tripped for good is never retried. Writes are
//! never retried here: their outcome is unknown and only the executor's
//! re-read can tell.

use super::backoff::{Backoff, WaitCause};
use super::response::{no_listener, retry_after, transport, Answer};
use super::Cluster;
use crate::error::{is_transient_status, Error, Result};
use elasticsearch::http::headers::DATE;
use elasticsearch::http::response::Response;
use elasticsearch::http::Method;
use serde_json::Value;
use std::future::Future;
use std::time::Duration;

impl Cluster {
    /// Sends one request and records the answer's `Date` on the cluster clock.
    pub(super) async fn send<F>(&self, request: F) -> Result<Response>
    where
        F: Future<Output = std::result::Result<Response, elasticsearch::Error>>,
    {
        self.send_telling(request).await.map_err(|(e, _)| e)
    }

    /// [`Self::send`], telling a request that found nothing listening at the
    /// address (`true`: a refused connection, never sent, so no wait brings
    /// an answer sooner than a fix of `--url`) from every other failure.
    async fn send_telling<F>(&self, request: F) -> std::result::Result<Response, (Error, bool)>
    where
        F: Future<Output = std::result::Result<Response, elasticsearch::Error>>,
    {
        let sent = self.clock.local_now();
        if let Some(meter) = &self.meter {
            meter.count_one();
        }
        let resp = request.await.map_err(|e| {
            let refused = no_listener(&e);
            (transport(e), refused)
        })?;
        if let Some(date) = resp.headers().get(DATE).and_then(|d| d.to_str().ok()) {
            self.clock.observe(date, sent, self.clock.local_now());
        }
        // A `HEAD` answer has no body to read the reason from: its caller
        // asks again with `GET` (see `index_exists`), which lands here.
        if resp.status_code().as_u16() == 401 && resp.method() != Method::Head {
            return Err((self.refused(resp).await, false));
        }
        Ok(resp)
    }

    /// A 401 as an [`Error::Auth`] that says which credential to check (the
    /// kind this handle presents), never showing it.
    async fn refused(&self, resp: Response) -> Error {
        let error = match Answer::read(resp).await {
            Ok(answer) => answer.into_error(""),
            Err(e) => return e,
        };
        match error {
            Error::Auth { status, reason } => Error::Auth {
                status,
                reason: format!(
                    "{reason}; credential in use: {}: {}",
                    self.credential,
                    self.credential.check()
                ),
            },
            other => other,
        }
    }

    /// Sends an idempotent read built by `make`, again after a busy answer
    /// or none, within the handle's retry budget. A busy answer it gives up
    /// on is returned as its typed error (its `Retry-After` kept); a
    /// PERMANENT circuit breaker is [`Error::Breaker`] at once.
    pub(super) async fn send_read<M, F>(&self, make: M) -> Result<Response>
    where
        M: Fn() -> F,
        F: Future<Output = std::result::Result<Response, elasticsearch::Error>>,
    {
        self.send_read_within(make, self.read_budget).await
    }

    /// [`Self::send_read`] with a budget of its own (a scan page's is longer).
    pub(super) async fn send_read_within<M, F>(&self, make: M, budget: Duration) -> Result<Response>
    where
        M: Fn() -> F,
        F: Future<Output = std::result::Result<Response, elasticsearch::Error>>,
    {
        let mut backoff = Backoff::new(budget);
        loop {
            let (cause, error, asked) = match self.send_telling(make()).await {
                Ok(resp) if is_transient_status(resp.status_code().as_u16()) => {
                    let status = resp.status_code().as_u16();
                    let asked = retry_after(resp.headers());
                    let error = Answer::read(resp).await?.into_error("");
                    (WaitCause::Status(status), error, asked)
                }
                // A timeout or a reset: the cluster may answer the next one.
                Err((e @ Error::Unreachable(_), false)) => (WaitCause::NoAnswer, e, None),
                outcome => {
                    self.waits.answered();
                    return outcome.map_err(|(e, _)| e);
                }
            };
            if !error.is_transient() {
                self.waits.answered();
                return Err(error);
            }
            let Some(wait) = backoff.next(asked) else {
                self.waits.answered();
                return Err(error);
            };
            tracing::warn!(
                %cause,
                attempt = backoff.attempts(),
                wait_ms = wait.as_millis() as u64,
                error = %error,
                "cluster busy or silent; retrying read"
            );
            self.waits.waiting(cause);
            tokio::time::sleep(wait).await;
        }
    }
}

impl Cluster {
    /// Asks for `n` items of a multi-request (`_mget`, `_msearch`) with
    /// `ask` (given the positions to ask for, answering one value each, in
    /// order), then again, item by item, for those answered `busy` (a
    /// per-item 429 inside a 200), waiting as a read does within the read
    /// budget. An item still busy when the budget is spent keeps its last
    /// answer, for the caller to type as an error.
    pub(super) async fn per_item<A, F>(
        &self,
        n: usize,
        busy: impl Fn(&Value) -> bool,
        ask: A,
    ) -> Result<Vec<Value>>
    where
        A: Fn(Vec<usize>) -> F,
        F: Future<Output = Result<Vec<Value>>>,
    {
        let mut out = vec![Value::Null; n];
        let mut pending: Vec<usize> = (0..n).collect();
        let mut backoff = Backoff::new(self.read_budget);
        while !pending.is_empty() {
            let answers = ask(pending.clone()).await?;
            if answers.len() != pending.len() {
                return Err(Error::Decode(format!(
                    "asked for {} items, answered {}",
                    pending.len(),
                    answers.len()
                )));
            }
            let mut again = Vec::new();
            for (&at, answer) in pending.iter().zip(answers) {
                if busy(&answer) {
                    again.push(at);
                }
                out[at] = answer;
            }
            let wait = if again.is_empty() {
                None
            } else {
                backoff.next(None)
            };
            let Some(wait) = wait else {
                self.waits.answered();
                break;
            };
            tracing::warn!(
                items = again.len(),
                attempt = backoff.attempts(),
                wait_ms = wait.as_millis() as u64,
                "items answered busy; asking for them again"
            );
            self.waits.waiting(WaitCause::Status(429));
            tokio::time::sleep(wait).await;
            pending = again;
        }
        Ok(out)
    }
}
