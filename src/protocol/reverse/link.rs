//! The two link fields between a finished transfer and its reversal, and
//! the one id a reversal can have: what a transaction document says about
//! reversals, readable without the reversal procedure.

use serde_json::{Map, Value};

/// The field on a reversal naming the transaction it reverses.
pub const REVERSES: &str = "reverses";
/// The field on a reversed transaction naming its reversal.
pub const REVERSED_BY: &str = "reversed_by";

/// The one id the reversal of `original` can have, so retries and lost
/// responses find the same document instead of making a second one.
pub fn reversal_id(original: &str) -> String {
    format!("{original}-reversal")
}

/// A link field's value (`None` when absent, null, empty or not a string).
pub fn link_of(src: &Map<String, Value>, field: &str) -> Option<String> {
    src.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}
