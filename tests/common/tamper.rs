//! Hand edits of what the tool stored, for the tests that prove they are
//! caught (`audit --receipts` from the CLI and the library alike).

use serde_json::Value;

/// The first receipt in `v` (a packed step's array of numbers, or
/// `$before,after,...` in steps stored as one string), made to say its
/// balance before was `by` more; whether there was one.
pub fn edit_first_receipt(v: &mut Value, by: i64) -> bool {
    match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_i64) => {
            items[0] = Value::from(items[0].as_i64().unwrap() + by);
            true
        }
        // Steps stored as one string: a receipt is `$before,after,...`.
        Value::String(text) => {
            let Some(at) = text.find('$') else {
                return false;
            };
            let end = text[at..].find(',').map_or(text.len(), |e| at + e);
            let before: i64 = text[at + 1..end].parse().unwrap();
            text.replace_range(at + 1..end, &(before + by).to_string());
            true
        }
        Value::Array(items) => items.iter_mut().any(|i| edit_first_receipt(i, by)),
        Value::Object(m) => m.values_mut().any(|i| edit_first_receipt(i, by)),
        _ => false,
    }
}
