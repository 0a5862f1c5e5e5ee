//! The one reader of a JSON array of strings in the cluster's answers
//! (an alias's indices, a `_source` filter's patterns, an account's roles).

use serde_json::Value;

/// The strings of the array `v` (none when `v` is absent or no array;
/// elements that are not strings are skipped).
pub(crate) fn string_array(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_strings_and_skips_the_rest() {
        let v = json!(["a", 1, "b", null]);
        assert_eq!(string_array(Some(&v)), ["a", "b"]);
        assert!(string_array(Some(&json!("a"))).is_empty());
        assert!(string_array(None).is_empty());
    }
}
