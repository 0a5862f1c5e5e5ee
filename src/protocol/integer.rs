//! Reading the integers the protocol computes with (balances, amounts, lock
//! counts) exactly from an application's JSON, or saying why not.
//!
//! serde_json is built with `arbitrary_precision`, so a stored number keeps
//! the text the application wrote (a whole-`_source` rewrite writes every
//! field the tool does not change back byte for byte). A field the tool does
//! change must be a whole number that fits in 64 bits: anything else (a
//! value beyond `i64`, a decimal with a fraction) would be rounded by the
//! write, and money is never rounded, so the document is refused instead.
//! The text is read digit by digit, never through `f64` (which silently
//! rounds `4503599627370497.5` to a whole number).

use serde_json::{Number, Value};
use std::fmt;

/// The largest amount one transaction may move (10^15 units). With it, no
/// sum of a few amounts can overflow, and a balance change is checked anyway.
pub const MAX_AMOUNT: i64 = 1_000_000_000_000_000;

/// Why a stored value is not an integer the tool can compute with exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotExact {
    /// Beyond the signed 64-bit range.
    BeyondI64,
    /// A number with a non-zero fraction.
    Fraction,
    /// Not a number (nor a numeric string).
    NotANumber,
}

impl fmt::Display for NotExact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NotExact::BeyondI64 => {
                "beyond the 64-bit integer range the tool computes in: a write would round it"
            }
            NotExact::Fraction => {
                "it has a fraction: the tool moves whole units only and never rounds money"
            }
            NotExact::NotANumber => "not a number",
        })
    }
}

/// Reads an integer the way Elasticsearch coerces a `long` (numbers with no
/// fraction and numeric strings are accepted), exactly.
pub(crate) fn exact_integer(value: &Value) -> Result<i64, NotExact> {
    match value {
        Value::Number(n) => number_integer(n),
        Value::String(s) => parse_exact(s.trim()),
        _ => Err(NotExact::NotANumber),
    }
}

/// [`exact_integer`], without the reason.
pub(crate) fn read_integer(value: &Value) -> Option<i64> {
    exact_integer(value).ok()
}

fn number_integer(n: &Number) -> Result<i64, NotExact> {
    match n.as_i64() {
        Some(i) => Ok(i),
        // The number's own text (kept by `arbitrary_precision`).
        None => parse_exact(&n.to_string()),
    }
}

/// Parses a JSON-style decimal (`-12.50e1`) into an `i64` without rounding.
fn parse_exact(text: &str) -> Result<i64, NotExact> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
        None => (unsigned, "0"),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits_ok(whole) || !digits_ok(fraction) {
        return Err(NotExact::NotANumber);
    }
    let exponent: i64 = exponent.parse().map_err(|_| NotExact::NotANumber)?;
    let digits: String = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    // value = digits × 10^scale
    let scale = exponent.saturating_sub(fraction.len() as i64);
    let integral = if scale >= 0 {
        if scale > 19 {
            return Err(NotExact::BeyondI64);
        }
        format!("{digits}{}", "0".repeat(scale as usize))
    } else {
        let cut = usize::try_from(scale.unsigned_abs()).unwrap_or(usize::MAX);
        if cut >= digits.len() {
            return Err(NotExact::Fraction);
        }
        let (kept, dropped) = digits.split_at(digits.len() - cut);
        if dropped.bytes().any(|b| b != b'0') {
            return Err(NotExact::Fraction);
        }
        kept.to_string()
    };
    if integral.len() > 19 {
        return Err(NotExact::BeyondI64);
    }
    let magnitude: i128 = integral.parse().map_err(|_| NotExact::NotANumber)?;
    i64::try_from(if negative { -magnitude } else { magnitude }).map_err(|_| NotExact::BeyondI64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<i64, NotExact> {
        exact_integer(&serde_json::from_str::<Value>(text).unwrap())
    }

    #[test]
    fn whole_numbers_in_any_spelling_are_read_exactly() {
        assert_eq!(read("42"), Ok(42));
        assert_eq!(read("-42"), Ok(-42));
        assert_eq!(read("100.0"), Ok(100));
        assert_eq!(read("1e3"), Ok(1000));
        assert_eq!(read("1.5e1"), Ok(15));
        assert_eq!(read("-0.0"), Ok(0));
        assert_eq!(read("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(read("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(read("9223372036854775807.000"), Ok(i64::MAX));
        assert_eq!(read(r#"" 77 ""#), Ok(77));
    }

    #[test]
    fn values_a_write_would_round_are_refused_with_the_reason() {
        assert_eq!(read("9223372036854775808"), Err(NotExact::BeyondI64));
        assert_eq!(
            read("123456789012345678901234567890"),
            Err(NotExact::BeyondI64)
        );
        assert_eq!(read("1e30"), Err(NotExact::BeyondI64));
        assert_eq!(read("1e400"), Err(NotExact::BeyondI64));
        assert_eq!(read("100.5"), Err(NotExact::Fraction));
        // f64 would round this to a whole number.
        assert_eq!(read("4503599627370497.5"), Err(NotExact::Fraction));
        assert_eq!(read("1e-400"), Err(NotExact::Fraction));
        assert_eq!(read(r#""12.5""#), Err(NotExact::Fraction));
        assert_eq!(exact_integer(&json!(true)), Err(NotExact::NotANumber));
        assert_eq!(exact_integer(&json!("abc")), Err(NotExact::NotANumber));
        assert_eq!(exact_integer(&json!("")), Err(NotExact::NotANumber));
    }

    #[test]
    fn numbers_the_tool_does_not_change_keep_their_text() {
        let text = r#"{"limit":123456789012345678901234567890,"rate":0.12345678901234567890123}"#;
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), text);
    }
}
