//! Value types: whether a live mapping accepts the *values* the protocol
//! writes into a field, not only whether the field exists. A `locks` index
//! whose `process_id` was mapped `long` by the definitive guide's document
//! locks (`{"process_id": 123}`) rejects the tool's `estx-tui:<pid>@<host>`,
//! a `transaction_state` mapped as a number rejects `pending`. Time fields
//! are judged by their format instead ([`super::times`]).

use serde_json::{Map, Value};

/// What the protocol writes into a field of the shipped mappings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    /// Text (states, ids, the holder's name): needs a string type.
    Text,
    /// Whole numbers (balances, amounts, counts): needs a number or string type.
    Integer,
    /// A time: judged by its format elsewhere.
    Time,
    /// An object or anything else: judged by shape elsewhere.
    Other,
}

fn written(shipped: &Map<String, Value>) -> Written {
    match shipped.get("type").and_then(Value::as_str) {
        Some("keyword") => Written::Text,
        Some("long") => Written::Integer,
        Some("date" | "date_nanos") => Written::Time,
        _ => Written::Other,
    }
}

/// String types: store any text (and numbers, as text).
fn is_string_type(ty: &str) -> bool {
    matches!(
        ty,
        "keyword" | "text" | "wildcard" | "match_only_text" | "constant_keyword" | "flattened"
    )
}

/// Number types that take whole numbers of any size the protocol writes
/// (the narrower `integer`, `short`, `byte` reject large balances).
fn is_wide_number_type(ty: &str) -> bool {
    matches!(ty, "long" | "unsigned_long" | "double" | "scaled_float")
}

/// Why `live` (a field's live mapping) rejects what the protocol writes
/// where `shipped` maps it, if it does: the exact conflict, for refusals
/// and `doctor`.
pub fn conflict(
    path: &str,
    shipped: &Map<String, Value>,
    live: &Map<String, Value>,
) -> Option<String> {
    let ty = live.get("type").and_then(Value::as_str)?;
    match written(shipped) {
        Written::Text if !is_string_type(ty) => Some(format!(
            "`{path}` is mapped `{ty}` but the protocol writes text there (e.g. \
             `estx-tui:<pid>@<host>`, `pending`): the cluster rejects it (HTTP 400)"
        )),
        Written::Integer if !(is_string_type(ty) || is_wide_number_type(ty)) => Some(format!(
            "`{path}` is mapped `{ty}` but the protocol writes 64-bit integers there: \
             the cluster rejects or truncates them"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn a_number_where_text_is_written_is_a_conflict() {
        let keyword = m(json!({"type": "keyword"}));
        let c = conflict("process_id", &keyword, &m(json!({"type": "long"}))).unwrap();
        assert!(c.starts_with("`process_id` is mapped `long`"), "{c}");
        assert_eq!(
            conflict("owner", &keyword, &m(json!({"type": "text"}))),
            None
        );
        let long = m(json!({"type": "long"}));
        assert!(conflict("balance", &long, &m(json!({"type": "integer"}))).is_some());
        assert!(conflict("balance", &long, &m(json!({"type": "boolean"}))).is_some());
        assert_eq!(
            conflict("balance", &long, &m(json!({"type": "long"}))),
            None
        );
        let date = m(json!({"type": "date"}));
        assert_eq!(
            conflict("created_at", &date, &m(json!({"type": "long"}))),
            None
        );
    }
}
