//! Times written in the format the mapping and the application use.
//!
//! An application's time fields are not always RFC 3339 strings: a `date`
//! mapped with `format: epoch_second`, `epoch_millis` or a custom pattern
//! (`yyyy/MM/dd HH:mm:ss`), a plain `long`, a `date_nanos`, or the article's
//! painless scripts' `SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")`
//! (milliseconds zero-padded to six digits). A write in another format is
//! rejected by the mapping, or read wrongly by the application. So each time
//! field the tool writes gets a [`TimeFormat`]: the existing documents'
//! format when the mapping accepts it, else the first of the mapping's
//! formats the tool can write *and read back* (`choose`, in
//! `time_mapping`); when there is
//! none, the procedure is refused before step 1 with the field and format
//! (`time_mapping::TimeConflict`).
//!
//! Every format is written rounded *up* to its precision: a time written
//! in whole seconds reads at most one second later, never earlier, so a
//! transaction never looks older (closer to recovery) than it is.

use super::time::parse_timestamp;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde::Serialize;
use serde_json::Value;

/// The shape of a time value in documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeFormat {
    /// RFC 3339 in UTC with `Z` and this many fraction digits (0, 3, 6, 9).
    Iso {
        /// Fraction digits.
        digits: u8,
    },
    /// Java `SimpleDateFormat` `…ss.SSSSSS'Z'`: milliseconds zero-padded to
    /// six digits (`.000123` is 123 ms), as the article's scripts write.
    PaddedMillis,
    /// Epoch milliseconds, a JSON number.
    EpochMillis,
    /// Epoch seconds, a JSON number.
    EpochSeconds,
    /// A custom pattern of the mapping (Java syntax, e.g. `yyyy/MM/dd HH:mm:ss`).
    Pattern {
        /// The mapping's pattern.
        java: String,
        /// The same as a `chrono` format string.
        #[serde(skip)]
        chrono: String,
    },
}

/// The tool's own format (and the default): RFC 3339 with milliseconds.
pub const DEFAULT_FORMAT: TimeFormat = TimeFormat::Iso { digits: 3 };

impl std::fmt::Display for TimeFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeFormat::Iso { digits: 0 } => f.write_str("RFC 3339 (seconds)"),
            TimeFormat::Iso { digits } => write!(f, "RFC 3339 ({digits} fraction digits)"),
            TimeFormat::PaddedMillis => {
                f.write_str("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z' (milliseconds)")
            }
            TimeFormat::EpochMillis => f.write_str("epoch_millis"),
            TimeFormat::EpochSeconds => f.write_str("epoch_second"),
            TimeFormat::Pattern { java, .. } => write!(f, "`{java}`"),
        }
    }
}

impl TimeFormat {
    /// The value to write for `t`, rounded up to the format's precision.
    pub fn write(&self, t: DateTime<Utc>) -> Value {
        let up = |unit: TimeDelta| t.duration_round_up(unit).unwrap_or(t);
        let ms = TimeDelta::milliseconds(1);
        let s = TimeDelta::seconds(1);
        match self {
            TimeFormat::Iso { digits: 0 } => iso(up(s), ""),
            TimeFormat::Iso { digits: 6 } => iso(up(TimeDelta::microseconds(1)), "%.6f"),
            TimeFormat::Iso { digits: 9 } => iso(t, "%.9f"),
            TimeFormat::Iso { .. } => iso(up(ms), "%.3f"),
            TimeFormat::PaddedMillis => {
                let t = up(ms);
                let millis = t.timestamp_subsec_millis();
                Value::String(format!("{}.{millis:06}Z", t.format("%Y-%m-%dT%H:%M:%S")))
            }
            TimeFormat::EpochMillis => Value::from(up(ms).timestamp_millis()),
            TimeFormat::EpochSeconds => Value::from(up(s).timestamp()),
            TimeFormat::Pattern { chrono, .. } => {
                let unit = if chrono.contains("%.") || chrono.contains("%3f") {
                    ms
                } else {
                    s
                };
                Value::String(up(unit).format(chrono).to_string())
            }
        }
    }

    /// The format a stored value was written in, as far as its shape tells.
    pub fn of_value(v: &Value) -> Option<TimeFormat> {
        match v {
            Value::Number(n) => {
                let x = n.as_f64()?;
                Some(if x.abs() < super::time::EPOCH_SECONDS_BELOW {
                    TimeFormat::EpochSeconds
                } else {
                    TimeFormat::EpochMillis
                })
            }
            Value::String(s) => {
                let (_, rest) = s.split_once('T')?;
                if !(s.ends_with('Z') && parse_timestamp(v).is_some()) {
                    return None;
                }
                let fraction = rest
                    .split_once('.')
                    .map(|(_, f)| f.trim_end_matches('Z'))
                    .unwrap_or("");
                Some(match fraction.len() {
                    0 => TimeFormat::Iso { digits: 0 },
                    6 if fraction.starts_with("000") => TimeFormat::PaddedMillis,
                    1..=3 => TimeFormat::Iso { digits: 3 },
                    4..=6 => TimeFormat::Iso { digits: 6 },
                    _ => TimeFormat::Iso { digits: 9 },
                })
            }
            _ => None,
        }
    }

    /// Whether the tool reads back what it writes in this format, to the
    /// second at least (checked on a sample time).
    pub(crate) fn reads_back(&self) -> bool {
        let t = DateTime::from_timestamp(1_795_540_850, 987_654_321).unwrap_or_default();
        let written = self.write(t);
        parse_timestamp(&written).is_some_and(|r| r >= t && r - t <= TimeDelta::seconds(1))
    }
}

fn iso(t: DateTime<Utc>, fraction: &str) -> Value {
    Value::String(
        t.format(&format!("%Y-%m-%dT%H:%M:%S{fraction}Z"))
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> DateTime<Utc> {
        parse_timestamp(&json!(s)).unwrap()
    }

    #[test]
    fn each_format_writes_rounded_up_and_reads_back() {
        let t = at("2026-11-24T17:19:21.147123456Z");
        let cases = [
            (DEFAULT_FORMAT, json!("2026-11-24T17:19:21.148Z")),
            (TimeFormat::Iso { digits: 0 }, json!("2026-11-24T17:19:22Z")),
            (
                TimeFormat::PaddedMillis,
                json!("2026-11-24T17:19:21.000148Z"),
            ),
            (TimeFormat::EpochMillis, json!(1_795_540_761_148i64)),
            (TimeFormat::EpochSeconds, json!(1_795_540_762i64)),
        ];
        for (f, expected) in cases {
            let v = f.write(t);
            assert_eq!(v, expected, "{f}");
            let back = parse_timestamp(&v).unwrap();
            assert!(
                back >= t && back - t <= TimeDelta::seconds(1),
                "{f}: {back}"
            );
            assert_eq!(TimeFormat::of_value(&v), Some(f.clone()), "{v}");
        }
        let custom = TimeFormat::Pattern {
            java: "yyyy/MM/dd HH:mm:ss".into(),
            chrono: "%Y/%m/%d %H:%M:%S".into(),
        };
        assert_eq!(custom.write(t), json!("2026/11/24 17:19:22"));
        assert!(custom.reads_back());
    }
}
