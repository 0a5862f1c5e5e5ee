//! Answers without a `Date` header, as Elasticsearch before
//! elastic/elasticsearch#157382 and OpenSearch send them (neither's REST
//! layer adds one: only a fronting proxy does). osmem-server adds one; this
//! rule removes it from every answer, canned ones included.

use super::{FaultProxy, Shared};
use std::sync::atomic::Ordering;

impl FaultProxy {
    /// Removes the `Date` header from every answer from now on.
    pub fn strip_date(&self) {
        self.shared.no_date.store(true, Ordering::SeqCst);
    }
}

/// `response` without its `Date` header when [`FaultProxy::strip_date`] is on.
pub(super) fn apply(shared: &Shared, response: Vec<u8>) -> Vec<u8> {
    if !shared.no_date.load(Ordering::SeqCst) {
        return response;
    }
    let Some(head_end) = super::super::find(&response, b"\r\n\r\n") else {
        return response;
    };
    let head = String::from_utf8_lossy(&response[..head_end]).into_owned();
    let kept: Vec<&str> = head
        .split("\r\n")
        .filter(|line| {
            !line
                .split_once(':')
                .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("date"))
        })
        .collect();
    let mut bytes = kept.join("\r\n").into_bytes();
    bytes.extend_from_slice(&response[head_end..]);
    bytes
}
