//! What a 403 says is missing, and where to grant it, for the two refusals
//! whose bodies name both the permission and the principal:
//!
//! - **The OpenSearch security plugin** (Amazon OpenSearch Service's
//!   fine-grained access control is that plugin): `security_exception`
//!   "no permissions for [indices:data/read/msearch] and User
//!   [name=arn:aws:iam::123456789012:role/x, backend_roles=[...],
//!   requestedTenant=null]" (opensearch-project/security `SecurityFilter`:
//!   "no permissions for %s and %s", the missing actions and
//!   `User.toString()`). The action is granted by a role, and a role reaches
//!   a user through a role mapping, by user name or backend role (on AWS an
//!   IAM ARN): https://repost.aws/knowledge-center/opensearch-fgac-errors.
//! - **AWS IAM**, before the request reaches OpenSearch:
//!   `{"Message":"User: arn:aws:iam::123456789012:user/x is not authorized
//!   to perform: es:ESHttpGet"}` (optionally "because no identity-based
//!   policy allows ..."), "User: anonymous ..." for an unsigned request
//!   (https://repost.aws/knowledge-center/anonymous-not-authorized-opensearch;
//!   https://docs.aws.amazon.com/opensearch-service/latest/developerguide/ac.html:
//!   the domain's resource-based access policy and the principal's
//!   identity-based policies grant `es:ESHttp*`).

use serde_json::Value;

/// The sentence that tells the operator what to grant and where, if the
/// refusal is one of the above.
pub(super) fn hint(body: &Value, reason: &str) -> Option<String> {
    opensearch_security(reason).or_else(|| iam(aws_message(body)?))
}

/// AWS's own `Message` (or `message`) of a refusal, if the body is one.
pub(super) fn aws_message(body: &Value) -> Option<&str> {
    body.get("Message")
        .or_else(|| body.get("message"))
        .and_then(Value::as_str)
}

fn opensearch_security(reason: &str) -> Option<String> {
    let rest = &reason[reason.find("no permissions for [")? + "no permissions for [".len()..];
    let (actions, rest) = rest.split_once("] and User [name=")?;
    let (name, rest) = rest.split_once(", backend_roles=[")?;
    let roles = rest.split_once(']').map_or("", |(r, _)| r);
    let roles = if roles.trim().is_empty() {
        String::new()
    } else {
        format!(" or one of its backend roles ({roles})")
    };
    Some(format!(
        "OpenSearch security (fine-grained access control on Amazon OpenSearch Service) \
         grants `{name}` no role with {actions}: add {actions} to a role (cluster \
         permissions for `cluster:*` and the composite actions `indices:data/read/mget`, \
         `indices:data/read/msearch`, `indices:data/read/scroll`, `indices:data/write/bulk`; \
         index permissions otherwise) and map that role to the user{roles} \
         (`PUT _plugins/_security/api/rolesmapping/<role>`, or OpenSearch Dashboards > \
         Security > Roles > Mapped users); docs/src/connecting.md lists the tool's role"
    ))
}

fn iam(message: &str) -> Option<String> {
    let rest = message.strip_prefix("User: ")?;
    let (principal, rest) = rest.split_once(" is not authorized to perform: ")?;
    let action = rest.split_whitespace().next()?;
    if principal == "anonymous" {
        return Some(format!(
            "AWS refused `{action}` to an unsigned request before it reached OpenSearch: \
             connect with --aws-sigv4 (and credentials in the AWS_* variables), or allow the \
             source address in the domain's access policy"
        ));
    }
    Some(format!(
        "AWS IAM refused `{action}` to `{principal}` before the request reached OpenSearch: \
         allow `{action}` on the domain (`arn:aws:es:<region>:<account>:domain/<name>/*`) in \
         the domain's access policy or in an identity-based policy of `{principal}`; this is \
         IAM, not a fine-grained access control role mapping"
    ))
}

#[cfg(test)]
mod tests {
    use crate::cluster::denial::*;
    use serde_json::json;

    #[test]
    fn an_opensearch_security_refusal_names_the_action_and_the_mapping() {
        let reason = "no permissions for [indices:data/read/msearch] and User \
            [name=arn:aws:iam::123456789012:role/estx, backend_roles=[arn:aws:iam::123456789012:role/ops], \
            requestedTenant=null]";
        let h = hint(&json!({}), reason).unwrap();
        for part in [
            "`arn:aws:iam::123456789012:role/estx`",
            "indices:data/read/msearch",
            "backend roles (arn:aws:iam::123456789012:role/ops)",
            "rolesmapping",
        ] {
            assert!(h.contains(part), "{part}: {h}");
        }
        let none = "no permissions for [cluster:monitor/health] and User [name=estx, \
            backend_roles=[], requestedTenant=null]";
        assert!(!hint(&json!({}), none).unwrap().contains("backend roles"));
    }

    #[test]
    fn an_iam_refusal_names_the_action_and_the_policy() {
        let body = json!({"Message": "User: arn:aws:sts::111122223333:assumed-role/r/s is not \
            authorized to perform: es:ESHttpPut because no identity-based policy allows the \
            es:ESHttpPut action"});
        let h = hint(&body, "").unwrap();
        assert!(h.contains("`es:ESHttpPut`"), "{h}");
        assert!(h.contains("access policy"), "{h}");
        assert!(
            h.contains("`arn:aws:sts::111122223333:assumed-role/r/s`"),
            "{h}"
        );
        let anonymous =
            json!({"Message": "User: anonymous is not authorized to perform: es:ESHttpGet"});
        assert!(hint(&anonymous, "").unwrap().contains("--aws-sigv4"));
        assert_eq!(hint(&json!({"Message": "Forbidden"}), "forbidden"), None);
    }
}
