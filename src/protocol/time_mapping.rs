//! What a time field's mapping accepts (`date`/`date_nanos` formats, a
//! number type, a string type), and the choice of the format the tool
//! writes it in: the documents' own when accepted, else the mapping's first
//! that the tool writes and reads back ([`choose`]).

use super::time_format::{TimeFormat, DEFAULT_FORMAT};
use serde::Serialize;
use serde_json::{Map, Value};

/// One of the formats a `date` mapping accepts (`format: a||b||c`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum DateOption {
    /// An ISO 8601 / RFC 3339 family format.
    Iso {
        /// `strict_date_time_no_millis`: no fraction allowed.
        no_fraction: bool,
    },
    /// `epoch_millis`.
    EpochMillis,
    /// `epoch_second`.
    EpochSecond,
    /// A custom pattern the tool translates.
    Pattern(TimeFormat),
    /// A named format or pattern the tool cannot write.
    Unsupported(String),
}

fn date_option(name: &str) -> DateOption {
    let name = name.trim();
    match name {
        "strict_date_optional_time"
        | "date_optional_time"
        | "strict_date_optional_time_nanos"
        | "strict_date_time"
        | "date_time"
        | "iso8601" => DateOption::Iso { no_fraction: false },
        "strict_date_time_no_millis" | "date_time_no_millis" => {
            DateOption::Iso { no_fraction: true }
        }
        "epoch_millis" => DateOption::EpochMillis,
        "epoch_second" => DateOption::EpochSecond,
        _ => match java_to_chrono(name) {
            Some(chrono) => DateOption::Pattern(TimeFormat::Pattern {
                java: name.to_string(),
                chrono,
            }),
            None => DateOption::Unsupported(name.to_string()),
        },
    }
}

/// Translates the Java date pattern letters the tool supports (`yyyy`,
/// `uuuu`, `MM`, `dd`, `HH`, `mm`, `ss`, `SSS`, quoted literals and
/// punctuation) into `chrono`'s; `None` for anything else.
fn java_to_chrono(java: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = java;
    while let Some(c) = rest.chars().next() {
        if c == '\'' {
            let end = rest[1..].find('\'')? + 1;
            out.push_str(&rest[1..end].replace('%', "%%"));
            rest = &rest[end + 1..];
            continue;
        }
        let run = rest.chars().take_while(|x| *x == c).count();
        let piece = match (c, run) {
            ('y' | 'u', 4) => "%Y",
            ('M', 2) => "%m",
            ('d', 2) => "%d",
            ('H', 2) => "%H",
            ('m', 2) => "%M",
            ('s', 2) => "%S",
            ('S', 3) => "%3f",
            (c, _) if c.is_ascii_alphabetic() => return None,
            ('%', _) => "%%",
            _ => "",
        };
        if piece.is_empty() {
            out.push_str(&rest[..run]);
        } else {
            out.push_str(piece);
        }
        rest = &rest[run..];
    }
    Some(out)
}

/// How a time field is mapped, as far as writing it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappedTime {
    /// Not mapped yet (dynamic mapping takes an RFC 3339 string as a `date`)
    /// or mapped as a string type (`keyword`, `text`): any shape is stored.
    Free,
    /// `date` / `date_nanos` with the `format` given (or the default).
    Date {
        /// `date` or `date_nanos`.
        ty: String,
        /// The mapping's `format` as written (`None`: the default).
        format: Option<String>,
    },
    /// A number type (`long`, ...): epoch values only.
    Number(String),
    /// Anything else (`boolean`, an object ...): no time can be written.
    Other(String),
}

impl MappedTime {
    /// Reads the field's mapping (`None`: unmapped).
    pub fn of(mapping: Option<&Map<String, Value>>) -> MappedTime {
        let Some(m) = mapping else {
            return MappedTime::Free;
        };
        let ty = m.get("type").and_then(Value::as_str).unwrap_or("object");
        match ty {
            "date" | "date_nanos" => MappedTime::Date {
                ty: ty.into(),
                format: m.get("format").and_then(Value::as_str).map(str::to_string),
            },
            "long" | "integer" | "unsigned_long" | "double" | "float" | "scaled_float" => {
                MappedTime::Number(ty.into())
            }
            "keyword" | "text" | "wildcard" | "match_only_text" => MappedTime::Free,
            other => MappedTime::Other(other.into()),
        }
    }

    fn options(&self) -> Vec<DateOption> {
        match self {
            MappedTime::Date {
                format: Some(f), ..
            } => f.split("||").map(date_option).collect(),
            MappedTime::Date { .. } => vec![
                DateOption::Iso { no_fraction: false },
                DateOption::EpochMillis,
            ],
            _ => Vec::new(),
        }
    }

    /// Whether a value in `format` is accepted.
    pub fn accepts(&self, format: &TimeFormat) -> bool {
        match self {
            MappedTime::Free => true,
            MappedTime::Number(_) => {
                matches!(format, TimeFormat::EpochMillis | TimeFormat::EpochSeconds)
            }
            MappedTime::Other(_) => false,
            MappedTime::Date { .. } => self.options().iter().any(|o| match (o, format) {
                (DateOption::Iso { no_fraction }, TimeFormat::Iso { digits }) => {
                    !*no_fraction || *digits == 0
                }
                (DateOption::Iso { no_fraction }, TimeFormat::PaddedMillis) => !*no_fraction,
                (DateOption::EpochMillis, TimeFormat::EpochMillis) => true,
                (DateOption::EpochSecond, TimeFormat::EpochSeconds) => true,
                (DateOption::Pattern(p), f) => p == f,
                _ => false,
            }),
        }
    }

    /// The mapping in words, for refusals: ``date` with format `epoch_second``.
    pub fn describe(&self) -> String {
        match self {
            MappedTime::Free => "unmapped or a string".into(),
            MappedTime::Date {
                ty,
                format: Some(f),
            } => format!("`{ty}` with format `{f}`"),
            MappedTime::Date { ty, format: None } => format!("`{ty}`"),
            MappedTime::Number(t) | MappedTime::Other(t) => format!("`{t}`"),
        }
    }
}

/// A time field the tool cannot write in a format its mapping accepts and
/// the tool reads back: the field, its mapping, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeConflict {
    /// The field, e.g. `modification_time`.
    pub field: String,
    /// Its mapping in words.
    pub mapping: String,
    /// Why no format fits.
    pub why: String,
}

impl std::fmt::Display for TimeConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` is mapped {}: {}",
            self.field, self.mapping, self.why
        )
    }
}

/// The format to write `field` in: `seen` (the existing documents' format)
/// when the mapping accepts it, else the first of the mapping's formats the
/// tool writes and reads back to the second, else the conflict.
pub fn choose(
    field: &str,
    mapped: &MappedTime,
    seen: Option<&TimeFormat>,
) -> Result<TimeFormat, TimeConflict> {
    if let Some(f) = seen.filter(|f| mapped.accepts(f) && f.reads_back()) {
        return Ok(f.clone());
    }
    let conflict = |why: String| TimeConflict {
        field: field.into(),
        mapping: mapped.describe(),
        why,
    };
    match mapped {
        MappedTime::Free => Ok(DEFAULT_FORMAT),
        MappedTime::Number(_) => Ok(TimeFormat::EpochMillis),
        MappedTime::Other(_) => Err(conflict("no time value can be written there".into())),
        MappedTime::Date { .. } => {
            let options = mapped.options();
            let usable = options.iter().find_map(|o| match o {
                DateOption::Iso { no_fraction: true } => Some(TimeFormat::Iso { digits: 0 }),
                DateOption::Iso { .. } => Some(DEFAULT_FORMAT),
                DateOption::EpochMillis => Some(TimeFormat::EpochMillis),
                DateOption::EpochSecond => Some(TimeFormat::EpochSeconds),
                DateOption::Pattern(p) => p.reads_back().then(|| p.clone()),
                DateOption::Unsupported(_) => None,
            });
            usable.ok_or_else(|| {
                conflict(
                    "the tool can neither write a time in that format nor read one back \
                     to the second (supported: ISO 8601/RFC 3339, epoch_millis, epoch_second, \
                     patterns of yyyy MM dd HH mm ss SSS); refused before the first write"
                        .into(),
                )
            })
        }
    }
}

/// The format most of `values` (sampled existing documents) are in.
pub fn dominant<'a>(
    values: impl IntoIterator<Item = &'a Value>,
    mapped: &MappedTime,
) -> Option<TimeFormat> {
    let mut counts: Vec<(TimeFormat, usize)> = Vec::new();
    for v in values {
        let format = TimeFormat::of_value(v).or_else(|| {
            // A custom pattern of the mapping the value matches.
            mapped.options().into_iter().find_map(|o| match o {
                DateOption::Pattern(p) if p.write_str_matches(v) => Some(p),
                _ => None,
            })
        });
        if let Some(f) = format {
            match counts.iter_mut().find(|(g, _)| *g == f) {
                Some((_, n)) => *n += 1,
                None => counts.push((f, 1)),
            }
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(f, _)| f)
}

impl TimeFormat {
    /// Whether `v` is a string in this custom pattern.
    fn write_str_matches(&self, v: &Value) -> bool {
        let (TimeFormat::Pattern { chrono, .. }, Some(s)) = (self, v.as_str()) else {
            return false;
        };
        chrono::NaiveDateTime::parse_from_str(s, chrono).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn date(format: &str) -> MappedTime {
        MappedTime::of(json!({"type": "date", "format": format}).as_object())
    }

    #[test]
    fn the_mapping_and_the_documents_choose_the_format() {
        let f = "modification_time";
        let seconds = date("epoch_second");
        assert_eq!(choose(f, &seconds, None), Ok(TimeFormat::EpochSeconds));
        // The documents' format wins when the mapping accepts it ...
        let both = date("strict_date_optional_time||epoch_millis");
        let padded = TimeFormat::PaddedMillis;
        assert_eq!(choose(f, &both, Some(&padded)), Ok(padded));
        assert_eq!(
            choose(f, &both, Some(&TimeFormat::EpochMillis)),
            Ok(TimeFormat::EpochMillis)
        );
        // ... and not when it does not.
        assert_eq!(
            choose(f, &seconds, Some(&TimeFormat::EpochMillis)),
            Ok(TimeFormat::EpochSeconds)
        );
        let long = MappedTime::of(json!({"type": "long"}).as_object());
        assert_eq!(choose(f, &long, None), Ok(TimeFormat::EpochMillis));
        assert_eq!(
            choose(f, &long, Some(&TimeFormat::EpochSeconds)),
            Ok(TimeFormat::EpochSeconds)
        );
        assert_eq!(choose(f, &MappedTime::Free, None), Ok(DEFAULT_FORMAT));
        let nanos = MappedTime::of(json!({"type": "date_nanos"}).as_object());
        assert_eq!(choose(f, &nanos, None), Ok(DEFAULT_FORMAT));
        // Minutes cannot be read back to the second: refused, named.
        let minutes = date("dd.MM.yyyy HH:mm");
        let c = choose(f, &minutes, None).unwrap_err();
        assert!(
            c.to_string()
                .starts_with("`modification_time` is mapped `date` with format `dd.MM.yyyy HH:mm`"),
            "{c}"
        );
        let boolean = MappedTime::of(json!({"type": "boolean"}).as_object());
        assert!(choose(f, &boolean, None).is_err());
    }

    #[test]
    fn the_dominant_format_of_sampled_documents() {
        let values = [
            json!("2019-12-05T10:00:00.000123Z"),
            json!("2019-12-05T10:00:01.000456Z"),
            json!("2019-12-05T10:00:00.123456Z"),
        ];
        assert_eq!(
            dominant(&values, &MappedTime::Free),
            Some(TimeFormat::PaddedMillis)
        );
        let custom = date("yyyy/MM/dd HH:mm:ss");
        let found = dominant(&[json!("2026/11/24 17:19:22")], &custom).unwrap();
        assert!(matches!(found, TimeFormat::Pattern { .. }), "{found:?}");
        assert_eq!(dominant(&[json!(true)], &MappedTime::Free), None);
    }
}
