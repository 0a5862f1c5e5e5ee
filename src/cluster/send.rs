//! Sending requests: every answer feeds the cluster clock, and idempotent
//! reads are retried (bounded) when the cluster or a proxy says it is busy
//! (429, 502, 503, 504), honouring `Retry-After`. Writes are never retried
//! here: their outcome is unknown and only the executor's re-read can tell.

use super::response::{retry_after, transport, Answer};
use super::Cluster;
use crate::error::{is_transient_status, Error, Result};
use elasticsearch::http::headers::DATE;
use elasticsearch::http::response::Response;
use elasticsearch::http::Method;
use std::future::Future;
use std::time::Duration;

/// Attempts of one read before its busy answer is returned as an error.
pub const READ_ATTEMPTS: u32 = 3;
/// Longest wait between two attempts of a read; an answer asking for longer
/// (`Retry-After`) is returned at once, its wait in [`crate::Error::retry_after`].
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);
/// First wait when the answer names none; doubles per attempt.
const FIRST_WAIT: Duration = Duration::from_millis(200);

impl Cluster {
    /// Sends one request and records the answer's `Date` on the cluster clock.
    pub(super) async fn send<F>(&self, request: F) -> Result<Response>
    where
        F: Future<Output = std::result::Result<Response, elasticsearch::Error>>,
    {
        let sent = self.clock.local_now();
        if let Some(meter) = &self.meter {
            meter.count_one();
        }
        let resp = request.await.map_err(transport)?;
        if let Some(date) = resp.headers().get(DATE).and_then(|d| d.to_str().ok()) {
            self.clock.observe(date, sent, self.clock.local_now());
        }
        // A `HEAD` answer has no body to read the reason from: its caller
        // asks again with `GET` (see `index_exists`), which lands here.
        if resp.status_code().as_u16() == 401 && resp.method() != Method::Head {
            return Err(self.refused(resp).await);
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

    /// Sends an idempotent read built by `make`, again after a busy answer,
    /// at most [`READ_ATTEMPTS`] times. The last answer is returned as is
    /// (the caller turns it into a typed error).
    pub(super) async fn send_read<M, F>(&self, make: M) -> Result<Response>
    where
        M: Fn() -> F,
        F: Future<Output = std::result::Result<Response, elasticsearch::Error>>,
    {
        let mut attempt = 1;
        loop {
            let resp = self.send(make()).await?;
            let status = resp.status_code().as_u16();
            if !is_transient_status(status) || attempt >= READ_ATTEMPTS {
                return Ok(resp);
            }
            let wait = match retry_after(resp.headers()) {
                Some(asked) if asked > MAX_RETRY_WAIT => return Ok(resp),
                Some(asked) => asked,
                None => FIRST_WAIT * (1 << (attempt - 1)),
            };
            tracing::warn!(
                status,
                attempt,
                wait_ms = wait.as_millis() as u64,
                "cluster busy; retrying read"
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}
