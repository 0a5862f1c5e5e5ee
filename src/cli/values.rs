//! Parsers for option values that have a range or a fixed set of values, so
//! that a value out of range is a usage error (exit 2, naming the option and
//! what it accepts) before anything runs, never a silent clamp or an empty
//! result. Durations are parsed by the one duration parser,
//! [`parse_duration`] (`500ms`, `90s`, `1h30m`).

use crate::protocol::time::parse_duration;
use crate::protocol::TxnState;
use std::time::Duration;

/// The dashboard refreshes at most once a second.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// A duration greater than zero (`--timeout`, `demo --for`).
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err(format!("`{s}` is zero; it must be longer than that"));
    }
    Ok(d)
}

/// The dashboard's poll interval: at least [`MIN_INTERVAL`].
pub fn interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < MIN_INTERVAL {
        return Err(format!("`{s}` is too short: at least 1s"));
    }
    Ok(d)
}

/// A cluster's base URL (`--url`, `ESTX_URL`): `http://` or `https://`
/// and a host. Without a scheme (`localhost:9200`) the URL parser reads the
/// host as the scheme and the request fails much later, far from the cause.
pub fn cluster_url(s: &str) -> Result<String, String> {
    let t = s.trim();
    if !t.contains("://") {
        return Err(format!(
            "`{s}` has no scheme: add http:// or https:// (e.g. http://{t})"
        ));
    }
    let url = url::Url::parse(t).map_err(|e| format!("`{s}` is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "`{s}` is not an http:// or https:// URL (scheme `{}`)",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{s}` names no host"));
    }
    Ok(t.to_string())
}

/// A share between 0 and 1 inclusive (`--crash-rate`).
pub fn rate(s: &str) -> Result<f64, String> {
    let r: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number (expected 0 to 1, e.g. 0.2)"))?;
    if !(0.0..=1.0).contains(&r) {
        return Err(format!("`{s}` is out of range: expected 0 to 1, e.g. 0.2"));
    }
    Ok(r)
}

/// A count of at least `min` (`--accounts`, `--workers`).
pub fn count_at_least(min: usize) -> impl Fn(&str) -> Result<usize, String> + Clone {
    move |s: &str| {
        let n: usize = s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a whole number (at least {min})"))?;
        if n < min {
            return Err(format!("{n} is too few: at least {min}"));
        }
        Ok(n)
    }
}

/// A transaction state by its stored name (`list --state`); anything else
/// is refused with the list of valid names.
pub fn state(s: &str) -> Result<String, String> {
    let names: Vec<&str> = TxnState::KNOWN.iter().map(TxnState::as_str).collect();
    let wanted = s.trim();
    if names.contains(&wanted) {
        return Ok(wanted.to_string());
    }
    Err(format!(
        "`{s}` is not a transaction state; valid states: {}",
        names.join(", ")
    ))
}

/// Where a time range of interventions starts (`bundle --since`,
/// `history --since`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Since {
    /// This long before now.
    Ago(std::time::Duration),
    /// This time.
    At(chrono::DateTime<chrono::Utc>),
}

/// `--since`: a duration back from now (`24h`, `7d`) or an RFC 3339 time.
pub fn parse_since(s: &str) -> Result<Since, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s.trim()) {
        return Ok(Since::At(t.with_timezone(&chrono::Utc)));
    }
    parse_duration(s)
        .map(Since::Ago)
        .map_err(|e| format!("{e} (or an RFC 3339 time)"))
}

impl Since {
    /// The time it names, `now` being now (the cluster's time).
    pub fn at(self, now: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
        match self {
            Since::At(t) => t,
            Since::Ago(d) => now - chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::values::*;

    #[test]
    fn a_cluster_url_needs_a_scheme_and_a_host() {
        assert_eq!(cluster_url("http://h:9200").unwrap(), "http://h:9200");
        assert!(cluster_url("https://h").is_ok());
        let e = cluster_url("localhost:9200").unwrap_err();
        assert!(e.contains("add http:// or https://"), "{e}");
        assert!(e.contains("http://localhost:9200"), "{e}");
        assert!(cluster_url("ftp://h").unwrap_err().contains("http://"));
        assert!(cluster_url("http://").is_err());
    }

    #[test]
    fn ranges_are_enforced() {
        assert_eq!(rate("0").unwrap(), 0.0);
        assert_eq!(rate("1").unwrap(), 1.0);
        assert!(rate("2").unwrap_err().contains("0 to 1"));
        assert!(rate("-0.1").is_err());
        assert!(rate("NaN").is_err());
        assert!(count_at_least(4)("3").unwrap_err().contains("at least 4"));
        assert_eq!(count_at_least(1)("2").unwrap(), 2);
        assert!(count_at_least(1)("-1").is_err());
        assert!(positive_duration("0s").is_err());
        assert_eq!(positive_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert!(interval("500ms").unwrap_err().contains("at least 1s"));
    }

    #[test]
    fn an_unknown_state_lists_the_valid_ones() {
        assert_eq!(state("rolled-back").unwrap(), "rolled-back");
        let e = state("pendng").unwrap_err();
        assert!(
            e.contains("created, pending, committed, terminating, finished, rolled-back"),
            "{e}"
        );
    }
}
