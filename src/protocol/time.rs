//! Timestamps as deployments write them: RFC 3339 with any fraction (the
//! article's ingest pipeline writes micro- or nanoseconds; its painless
//! scripts' `SimpleDateFormat` `SSSSSS` writes milliseconds zero-padded to
//! six digits), date-times without zone, `/`-separated dates, and epoch
//! seconds or milliseconds. Which format the tool *writes* depends on the
//! mapping and the documents (`time_format`).

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde_json::Value;
use std::time::Duration;

/// Epoch numbers below this (in absolute value) are seconds, above it
/// milliseconds: 10^11 ms is March 1973, before any transaction, and 10^11 s
/// is the year 5138. So an `epoch_second` value never reads as 1970.
pub const EPOCH_SECONDS_BELOW: f64 = 1e11;

/// Parses a timestamp field value as stored in a document.
///
/// Accepts RFC 3339 (any fraction length, `Z` or offset), a date-time
/// without zone (`T` or a space, `-` or `/` between date parts; taken as
/// UTC, as Elasticsearch does), a bare date, and epoch seconds or
/// milliseconds ([`EPOCH_SECONDS_BELOW`]) as a number or a numeric string.
///
/// A fraction of exactly six digits that begins with `000` is Java's
/// `SimpleDateFormat` `SSSSSS`: *milliseconds* zero-padded (`.000123` is
/// 123 ms), which is what the article's scripts write. It is ambiguous only
/// with a genuine microsecond stamp in the first millisecond of its second
/// (1 in 1000 of a writer's stamps); that one reads at most 999 ms late,
/// so a transaction can look younger, never older, than it is.
/// Returns `None` for anything else.
pub fn parse_timestamp(value: &Value) -> Option<DateTime<Utc>> {
    match value {
        Value::Number(n) => epoch(n.as_f64()?),
        Value::String(s) => parse_timestamp_str(s),
        _ => None,
    }
}

fn epoch(x: f64) -> Option<DateTime<Utc>> {
    if !x.is_finite() {
        return None;
    }
    let ms = if x.abs() < EPOCH_SECONDS_BELOW {
        x * 1000.0
    } else {
        x
    };
    Utc.timestamp_millis_opt(ms.round() as i64).single()
}

fn parse_timestamp_str(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(&padded_millis(s)) {
        return Some(t.with_timezone(&Utc));
    }
    for pattern in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y/%m/%d %H:%M:%S%.f",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, pattern) {
            return Some(Utc.from_utc_datetime(&t));
        }
    }
    for pattern in ["%Y-%m-%d", "%Y/%m/%d"] {
        if let Ok(d) = NaiveDate::parse_from_str(s, pattern) {
            return d.and_hms_opt(0, 0, 0).map(|t| Utc.from_utc_datetime(&t));
        }
    }
    let numeric = !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && s.bytes().filter(|b| *b == b'.').count() <= 1;
    if numeric {
        return epoch(s.parse::<f64>().ok()?);
    }
    None
}

/// `…:05.000123Z` (`SimpleDateFormat` `SSSSSS`, 123 ms) as `…:05.123Z`;
/// anything else unchanged.
fn padded_millis(s: &str) -> std::borrow::Cow<'_, str> {
    let Some(dot) = s.rfind('.') else {
        return s.into();
    };
    let fraction = &s[dot + 1..];
    let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 6 && fraction.starts_with("000") && s[..dot].contains('T') {
        format!("{}.{}{}", &s[..dot], &fraction[3..6], &fraction[6..]).into()
    } else {
        s.into()
    }
}

/// Formats a timestamp the way this tool writes it (RFC 3339, millis, `Z`).
pub fn format_timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Parses a human duration: one or more `<number><unit>` parts such as
/// `90s`, `2m`, `1h30m`, `1m30s`, `500ms`, `1.5s`, `1d`, each number
/// possibly with a fraction, units `ms`, `s`, `m`, `h`, `d` (or their long
/// forms). A bare number means seconds. Precision is kept to the nanosecond.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    const EXPECTED: &str = "expected e.g. 500ms, 90s, 2m, 1h30m, 1d";
    let text = s.trim();
    let invalid = |why: String| format!("invalid duration `{text}`: {why} ({EXPECTED})");
    if text.is_empty() {
        return Err(invalid("empty".into()));
    }
    let mut rest = text;
    let mut total_nanos: u128 = 0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(num_len);
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let unit = unit.trim();
        if num.is_empty() {
            return Err(invalid(format!("`{unit}` has no number before it")));
        }
        if unit.is_empty() && rest.len() != text.len() {
            return Err(invalid(format!("`{num}` has no unit")));
        }
        let unit_nanos: u128 = match unit {
            // A bare number (only as the whole value, see above) is seconds.
            "" | "s" | "sec" | "secs" | "second" | "seconds" => 1_000_000_000,
            "ms" | "msec" | "millis" => 1_000_000,
            "m" | "min" | "mins" | "minute" | "minutes" => 60_000_000_000,
            "h" | "hour" | "hours" => 3_600_000_000_000,
            "d" | "day" | "days" => 86_400_000_000_000,
            other => return Err(invalid(format!("unknown unit `{other}`"))),
        };
        let (whole, fraction) = num.split_once('.').unwrap_or((num, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return Err(invalid(format!("`{num}` is not a number")));
        }
        let whole: u128 = if whole.is_empty() {
            0
        } else {
            whole
                .parse()
                .map_err(|_| invalid(format!("`{num}` is too large")))?
        };
        // The fraction, in units of 10^-digits, scaled exactly (extra digits
        // beyond the nanosecond are dropped).
        let digits = fraction.len().min(18) as u32;
        let frac: u128 = if digits == 0 {
            0
        } else {
            fraction[..digits as usize]
                .parse()
                .map_err(|_| invalid(format!("`{num}` is not a number")))?
        };
        let part = whole
            .checked_mul(unit_nanos)
            .and_then(|w| w.checked_add(frac * unit_nanos / 10u128.pow(digits)))
            .ok_or_else(|| invalid("too large".into()))?;
        total_nanos = total_nanos
            .checked_add(part)
            .ok_or_else(|| invalid("too large".into()))?;
        rest = next.trim_start();
    }
    let secs =
        u64::try_from(total_nanos / 1_000_000_000).map_err(|_| invalid("too large".into()))?;
    Ok(Duration::new(secs, (total_nanos % 1_000_000_000) as u32))
}

/// Renders an age in seconds the way operators read them: `42s`, `3m10s`, `2h05m`, `3d04h`.
pub fn human_age(seconds: i64) -> String {
    let neg = seconds < 0;
    let s = seconds.unsigned_abs();
    let body = if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else if s < 86_400 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else {
        format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600)
    };
    if neg {
        format!("-{body}")
    } else {
        body
    }
}

/// Renders a duration exactly enough for an operator comparing two of them
/// (an age against a window): under a minute with a fraction (`0.25s`,
/// `1.2s`, `1.5s`, `42.5s`: hundredths under 10 s, tenths under a minute,
/// truncated so an age within a window never reads as the window), whole
/// units above in the style of [`human_age`] without zero tails (`5m03s`,
/// `1h`, `1h30m`, `2d`).
pub fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 {
        let whole = human_age(i64::try_from(secs).unwrap_or(i64::MAX));
        return match whole
            .strip_suffix("00s")
            .or_else(|| whole.strip_suffix("00m"))
        {
            Some(s) => s.to_string(),
            None => whole.strip_suffix("00h").unwrap_or(&whole).to_string(),
        };
    }
    let (scale, digits) = if secs < 10 { (100, 2) } else { (10, 1) };
    let units = u128::from(secs) * scale + d.subsec_nanos() as u128 * scale / 1_000_000_000;
    let text = format!(
        "{}.{:0digits$}",
        units / scale,
        units % scale,
        digits = digits
    );
    format!("{}s", text.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_shape_deployments_write() {
        let nanos = parse_timestamp(&json!("2019-12-05T10:00:00.123456789Z")).unwrap();
        let micros = parse_timestamp(&json!("2019-12-05T10:00:00.123456Z")).unwrap();
        let millis = parse_timestamp(&json!(1575540000123i64)).unwrap();
        assert_eq!(nanos.timestamp_millis(), 1575540000123);
        assert_eq!(micros.timestamp_millis(), 1575540000123);
        assert_eq!(millis.timestamp_millis(), 1575540000123);
        // SimpleDateFormat's SSSSSS: 123 ms zero-padded to six digits.
        let padded = parse_timestamp(&json!("2019-12-05T10:00:00.000123Z")).unwrap();
        assert_eq!(padded.timestamp_millis(), 1575540000123);
        // epoch_second, as a number, a string, with a fraction.
        for v in [
            json!(1575540000),
            json!("1575540000"),
            json!(1575540000.123),
        ] {
            let t = parse_timestamp(&v).unwrap();
            assert_eq!(t.timestamp(), 1575540000, "{v}");
        }
        let slashed = parse_timestamp(&json!("2019/12/05 10:00:00")).unwrap();
        assert_eq!(slashed.timestamp(), 1575540000);
        assert!(parse_timestamp(&json!("2019-12-05T11:00:00+01:00")).is_some());
        assert!(parse_timestamp(&json!("2019-12-05T10:00:00")).is_some());
        assert!(parse_timestamp(&json!("1575540000123")).is_some());
        assert!(parse_timestamp(&json!("yesterday")).is_none());
        assert!(parse_timestamp(&json!(true)).is_none());
    }

    #[test]
    fn written_format_round_trips() {
        let t = parse_timestamp(&json!("2026-01-02T03:04:05.678Z")).unwrap();
        assert_eq!(format_timestamp(t), "2026-01-02T03:04:05.678Z");
    }

    #[test]
    fn durations_read_exactly_enough() {
        let ms = Duration::from_millis;
        assert_eq!(human_duration(ms(0)), "0s");
        assert_eq!(human_duration(ms(250)), "0.25s");
        assert_eq!(human_duration(ms(1_500)), "1.5s");
        assert_eq!(human_duration(ms(1_234)), "1.23s");
        assert_eq!(human_duration(ms(1_000)), "1s");
        assert_eq!(human_duration(ms(42_580)), "42.5s");
        assert_eq!(human_duration(ms(59_999)), "59.9s");
        assert_eq!(human_duration(ms(303_400)), "5m03s");
        assert_eq!(human_duration(ms(120_000)), "2m");
        assert_eq!(human_duration(ms(3_600_000)), "1h");
        assert_eq!(human_duration(ms(5_400_000)), "1h30m");
        assert_eq!(human_duration(ms(2 * 86_400_000)), "2d");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("2 weeks").is_err());
        assert!(parse_duration("m").is_err());
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(
            parse_duration("1m0.25s").unwrap(),
            Duration::from_millis(60_250)
        );
        assert_eq!(parse_duration("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1d2h").unwrap(), Duration::from_secs(93_600));
        for bad in [
            "",
            "h1",
            "1x",
            "1.2.3s",
            "30m1",
            ".s",
            "-1s",
            "99999999999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_duration("1x")
            .unwrap_err()
            .contains("unknown unit `x`"));
        assert_eq!(human_age(3725), "1h02m");
        assert_eq!(human_age(59), "59s");
    }
}
