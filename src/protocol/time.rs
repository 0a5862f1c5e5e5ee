//! Timestamps as deployments write them: RFC 3339 with any fraction (the
//! article's ingest pipeline writes nanoseconds, its script microseconds),
//! plain dates, or epoch milliseconds. We always write RFC 3339 with
//! milliseconds, which every Elasticsearch/OpenSearch `date` mapping accepts.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde_json::Value;
use std::time::Duration;

/// Parses a timestamp field value as stored in a document.
///
/// Accepts RFC 3339 (any fraction length, `Z` or offset), a date-time without
/// zone (taken as UTC, as Elasticsearch does), a bare date, and epoch millis
/// as a number or a numeric string. Returns `None` for anything else.
pub fn parse_timestamp(value: &Value) -> Option<DateTime<Utc>> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .and_then(|ms| Utc.timestamp_millis_opt(ms).single()),
        Value::String(s) => parse_timestamp_str(s),
        _ => None,
    }
}

fn parse_timestamp_str(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(t) = NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f") {
        return Some(Utc.from_utc_datetime(&t));
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return d.and_hms_opt(0, 0, 0).map(|t| Utc.from_utc_datetime(&t));
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<i64>()
            .ok()
            .and_then(|ms| Utc.timestamp_millis_opt(ms).single());
    }
    None
}

/// Formats a timestamp the way this tool writes it (RFC 3339, millis, `Z`).
pub fn format_timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Parses a human duration such as `90s`, `2m`, `1h`, `24h`, `1d`, `500ms`.
/// A bare number means seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid duration `{s}` (expected e.g. 90s, 2m, 1h, 1d)"))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" | "secs" => n,
        "ms" => return Ok(Duration::from_millis(n)),
        "m" | "min" | "mins" => n * 60,
        "h" | "hour" | "hours" => n * 3600,
        "d" | "day" | "days" => n * 86_400,
        other => {
            return Err(format!(
                "invalid duration unit `{other}` in `{s}` (use ms, s, m, h or d)"
            ))
        }
    };
    Ok(Duration::from_secs(secs))
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
    fn durations() {
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("2 weeks").is_err());
        assert!(parse_duration("m").is_err());
        assert_eq!(human_age(3725), "1h02m");
        assert_eq!(human_age(59), "59s");
    }
}
