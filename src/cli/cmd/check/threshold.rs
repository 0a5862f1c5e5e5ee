//! Threshold ranges as the Monitoring Plugins development guidelines define
//! them ("Threshold and ranges",
//! <https://www.monitoring-plugins.org/doc/guidelines.html#THRESHOLDFORMAT>),
//! so `check -w`/`-c` read as every Nagios/Icinga plugin does:
//!
//! - `[@]start:end`, inclusive at both ends; `start` and the `:` may be left
//!   out when `start` is 0 (`10` is `0:10`); an empty `end` is +∞ (`10:`);
//!   `~` as `start` is −∞ (`~:10`).
//! - An alert is raised when the value is **outside** the range, or, with a
//!   leading `@`, **inside** it (`@10:20` alerts on 10 ≤ x ≤ 20).
//!
//! So `-c 0` is critical as soon as the value is above 0, `-w 10:` warns
//! below 10. `start` must not exceed `end`.

use std::fmt;

/// One threshold range (see the module docs for the syntax).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Lower bound; `None` is −∞ (`~`).
    start: Option<f64>,
    /// Upper bound; `None` is +∞ (empty after `:`).
    end: Option<f64>,
    /// `@`: alert inside the range instead of outside.
    inside: bool,
}

/// Why a range could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RangeError {
    /// A bound is not a number.
    #[error("{0:?} is not a number (ranges are [@]start:end, e.g. 10, 10:, ~:10, 10:20, @10:20)")]
    NotANumber(String),
    /// `start` is above `end`.
    #[error("the start of {0:?} is above its end")]
    Reversed(String),
}

impl Range {
    /// `0:end`: alerts when the value is above `end` (or below 0); what a
    /// bare number means.
    pub const fn at_most(end: f64) -> Range {
        Range {
            start: Some(0.0),
            end: Some(end),
            inside: false,
        }
    }

    /// Whether `value` raises an alert against this range.
    pub fn alerts(&self, value: f64) -> bool {
        let within = self.start.is_none_or(|s| value >= s) && self.end.is_none_or(|e| value <= e);
        within == self.inside
    }
}

fn number(s: &str, whole: &str) -> Result<f64, RangeError> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .ok_or_else(|| RangeError::NotANumber(whole.to_string()))
}

impl std::str::FromStr for Range {
    type Err = RangeError;

    fn from_str(text: &str) -> Result<Range, RangeError> {
        let (inside, body) = match text.strip_prefix('@') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (start, end) = match body.split_once(':') {
            None => (Some(0.0), body),
            Some(("~", end)) => (None, end),
            // `:10` reads as `0:10`, as the reference C implementation does.
            Some(("", end)) => (Some(0.0), end),
            Some((start, end)) => (Some(number(start, text)?), end),
        };
        let end = match end {
            "" if body.contains(':') => None,
            e => Some(number(e, text)?),
        };
        if let (Some(s), Some(e)) = (start, end) {
            if s > e {
                return Err(RangeError::Reversed(text.to_string()));
            }
        }
        Ok(Range { start, end, inside })
    }
}

/// The range in the guidelines' syntax, shortest form (as in perfdata).
impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inside {
            f.write_str("@")?;
        }
        match (self.start, self.end) {
            (Some(0.0), Some(e)) => write!(f, "{e}"),
            (start, end) => {
                match start {
                    Some(s) => write!(f, "{s}:")?,
                    None => f.write_str("~:")?,
                }
                match end {
                    Some(e) => write!(f, "{e}"),
                    None => Ok(()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::cmd::check::threshold::*;

    fn r(s: &str) -> Range {
        s.parse().unwrap()
    }

    /// The guidelines' table, value by value.
    #[test]
    fn the_guidelines_examples() {
        let alerts = |range: &str, values: &[f64]| -> Vec<bool> {
            values.iter().map(|v| r(range).alerts(*v)).collect()
        };
        // 10: alert if < 0 or > 10.
        assert_eq!(
            alerts("10", &[-1.0, 0.0, 10.0, 11.0]),
            [true, false, false, true]
        );
        // 10: alert if < 10.
        assert_eq!(alerts("10:", &[9.0, 10.0, 1e9]), [true, false, false]);
        // ~:10 alert if > 10.
        assert_eq!(alerts("~:10", &[-1e9, 10.0, 11.0]), [false, false, true]);
        // 10:20 alert if < 10 or > 20.
        assert_eq!(
            alerts("10:20", &[9.0, 10.0, 20.0, 21.0]),
            [true, false, false, true]
        );
        // @10:20 alert if 10 ≤ x ≤ 20.
        assert_eq!(
            alerts("@10:20", &[9.0, 10.0, 20.0, 21.0]),
            [false, true, true, false]
        );
        // -c 0: critical as soon as the value is above 0.
        assert_eq!(alerts("0", &[0.0, 1.0]), [false, true]);
        assert_eq!(alerts("2.5", &[2.5, 2.6]), [false, true]);
    }

    #[test]
    fn printed_in_the_shortest_form() {
        for s in [
            "10", "10:", "~:10", "10:20", "@10:20", "@0:5", "~:", "-5:-1", "0",
        ] {
            let shown = r(s).to_string();
            let expected = if s == "@0:5" { "@5" } else { s };
            assert_eq!(shown, expected);
            assert_eq!(r(&shown), r(s));
        }
        assert_eq!(r(":10").to_string(), "10");
    }

    #[test]
    fn bad_ranges_are_refused() {
        for s in ["", "ten", "20:10", "1:x", "@", "~", "nan", "inf"] {
            assert!(s.parse::<Range>().is_err(), "{s:?}");
        }
    }
}
