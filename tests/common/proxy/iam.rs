//! Making the [`FaultProxy`] refuse requests as an Amazon OpenSearch Service
//! domain's IAM policies do, before OpenSearch sees them: 403 with AWS's
//! `{"Message": "User: <principal> is not authorized to perform:
//! es:ESHttp<Method> because no identity-based policy allows the
//! es:ESHttp<Method> action"}` (the IAM action is `es:ESHttp` and the HTTP
//! method: https://docs.aws.amazon.com/opensearch-service/latest/developerguide/ac.html;
//! the body as in https://repost.aws/knowledge-center/anonymous-not-authorized-opensearch).
//! E.g. a policy that allows only `es:ESHttpGet` and `es:ESHttpHead`
//! refuses every `PUT`, `POST` and `DELETE`.

use super::{lock, rewrite::Canned, FaultProxy, Request, Shared};
use serde_json::json;
use std::sync::atomic::Ordering;

/// Whom IAM refuses, and which HTTP methods.
#[derive(Debug, Clone)]
pub(super) struct Denial {
    principal: String,
    methods: Vec<String>,
}

impl FaultProxy {
    /// From now on, requests with one of `methods` are refused as IAM
    /// refuses `principal` an `es:ESHttp<Method>` its policies do not allow.
    pub fn iam_denies(&self, principal: &str, methods: &[&str]) {
        *lock(&self.shared.iam) = Some(Denial {
            principal: principal.into(),
            methods: methods.iter().map(|m| m.to_ascii_uppercase()).collect(),
        });
    }
}

/// The 403 IAM answers instead of forwarding, if it refuses the request.
pub(super) fn gate(shared: &Shared, request: &Request) -> Option<Vec<u8>> {
    let denial = lock(&shared.iam).clone()?;
    if !denial
        .methods
        .contains(&request.method.to_ascii_uppercase())
    {
        return None;
    }
    let action = es_action(&request.method);
    let message = format!(
        "User: {} is not authorized to perform: {action} because no identity-based policy \
         allows the {action} action",
        denial.principal
    );
    shared.canned.fetch_add(1, Ordering::SeqCst);
    lock(&shared.log).push(format!(
        "{} {} -> 403 (iam: {action})",
        request.method, request.target
    ));
    let canned = Canned::json(403, json!({ "Message": message }));
    Some(canned.bytes(shared.date_shift.load(Ordering::SeqCst)))
}

/// The IAM action of an HTTP method: `es:ESHttp` and the method
/// (`es:ESHttpGet`, `es:ESHttpPost`, ...).
pub(super) fn es_action(method: &str) -> String {
    let mut method = method.to_ascii_lowercase();
    if let Some(first) = method.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    format!("es:ESHttp{method}")
}
