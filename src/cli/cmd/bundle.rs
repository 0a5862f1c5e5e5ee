//! `bundle OUT.tar.gz`: one archive for the postmortem, gathered by the
//! same calls as the commands it stands for: `doctor` (text and JSON),
//! `audit` (text and JSON), the stuck list (CSV, the dashboard export's
//! columns), each listed transaction's `history`, the interventions
//! recorded since `--since`, the tool's log (with its rotated files) and
//! the config file. Every file goes through [`Secrets::redact`] before it
//! is archived. A part the cluster cannot give is an `.error.txt` in its
//! place (an incident is when the cluster half-answers), named in
//! `MANIFEST.txt`, and the exit code is then 3. The archive is written
//! private (0600) under a temporary name and renamed into place; an
//! existing OUT is refused (evidence is not overwritten).

pub mod archive;
pub mod redact;

use super::audit::{audit_json, audit_lines};
use super::history::record_lines;
use crate::cli::context::connect_options;
use crate::cli::exit;
use crate::cli::global::{GlobalArgs, LogTarget};
use crate::cli::output::{err, out};
use crate::cli::profile::config_path;
use crate::cli::values::{parse_since, Since};
use crate::local_files::KEPT;
use crate::protocol::read::row_notes;
use crate::protocol::read::verdict::Cause;
use crate::protocol::rows::{to_csv, TransactionRow};
use crate::protocol::time::format_timestamp;
use crate::protocol::trail::{history, records_since, Record};
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use redact::Secrets;

use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// `bundle`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The archive to write (gzip-compressed tar); refused if it exists.
    #[arg(value_name = "OUT.tar.gz")]
    pub out: PathBuf,
    /// Interventions recorded since: a duration back from now (`24h`,
    /// `7d`) or an RFC 3339 time.
    #[arg(long, default_value = "24h", value_parser = parse_since, value_name = "WHEN")]
    pub since: Since,
}

/// The archive's files, in order: path inside the archive, text.
#[derive(Debug, Default)]
struct Contents {
    files: Vec<(String, String)>,
    failed: Vec<String>,
}

impl Contents {
    fn add(&mut self, path: impl Into<String>, text: impl Into<String>) {
        self.files.push((path.into(), text.into()));
    }

    /// Adds the part, or its error in its place.
    fn part(&mut self, path: &str, got: Result<String, String>) {
        match got {
            Ok(text) => self.add(path, text),
            Err(e) => {
                self.failed.push(format!("{path}: {e}"));
                self.add(format!("{path}.error.txt"), format!("{e}\n"));
            }
        }
    }
}

fn json<T: Serialize>(v: &T) -> Result<String, String> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| e.to_string())
}

fn lines(l: Vec<String>) -> String {
    l.into_iter().map(|l| l + "\n").collect()
}

/// A file name for a transaction id: characters other than letters,
/// digits, `.`, `_` and `-` become `_` (no path can be smuggled in), made
/// unique by a suffix.
fn file_name(id: &str, taken: &mut BTreeSet<String>) -> String {
    let mut base: String = id
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    if base.is_empty() || base.starts_with('.') {
        base.insert(0, '_');
    }
    let mut name = base.clone();
    let mut n = 1;
    while !taken.insert(name.clone()) {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

fn records_text(records: &[Record], txn: Option<&str>) -> String {
    let mut text = String::new();
    for r in records {
        for l in record_lines(r, txn.unwrap_or_default()) {
            text.push_str(&l);
            text.push('\n');
        }
        text.push('\n');
    }
    text
}

/// `doctor` and `audit`, text and JSON.
async fn health(p: &Protocol, c: &mut Contents) {
    match p.doctor().await {
        Ok(r) => {
            c.add("doctor.txt", lines(super::doctor::lines(&r)));
            c.part("doctor.json", json(&r));
        }
        Err(e) => c.part("doctor.txt", Err(e.to_string())),
    }
    match p.audit(None, false).await {
        Ok(r) => {
            c.add("audit.txt", lines(audit_lines(&r, None)));
            c.part("audit.json", json(&audit_json(&r)));
        }
        Err(e) => c.part("audit.txt", Err(e.to_string())),
    }
}

/// The stuck list and each one's history.
async fn stuck(p: &Protocol, now: DateTime<Utc>, c: &mut Contents) {
    let stuck = match p.stuck_transactions().await {
        Ok(s) => s,
        Err(e) => return c.part("stuck.csv", Err(e.to_string())),
    };
    // Each row with its cause and the live job holding it, as `list`'s CSV.
    let (notes, unread) = row_notes(p, now).await;
    for u in unread {
        tracing::warn!(error = %u, "stuck.csv: a column left empty");
    }
    let rows: Vec<(TransactionRow, Option<Cause>)> = stuck
        .iter()
        .map(|t| (TransactionRow::of(t, now, p.config()), notes.cause(t)))
        .collect();
    let beside = rows
        .iter()
        .map(|(row, cause)| (row, notes.beside(&row.id, cause.as_ref())));
    c.add("stuck.csv", to_csv(beside, now));
    let mut taken = BTreeSet::new();
    for t in &stuck {
        let name = file_name(&t.id, &mut taken);
        match history(p, &t.id).await {
            Ok(records) => {
                c.add(
                    format!("history/{name}.txt"),
                    format!(
                        "transaction {}\n\n{}",
                        t.id,
                        records_text(&records, Some(&t.id))
                    ),
                );
                c.part(&format!("history/{name}.json"), json(&records));
            }
            Err(e) => c.part(&format!("history/{name}.txt"), Err(e.to_string())),
        }
    }
}

/// The interventions recorded since `since`.
async fn interventions(p: &Protocol, since: DateTime<Utc>, c: &mut Contents) {
    match records_since(p, since).await {
        Ok(records) => {
            c.add(
                "interventions.txt",
                format!(
                    "interventions recorded since {}\n\n{}",
                    format_timestamp(since),
                    records_text(&records, None)
                ),
            );
            c.part("interventions.json", json(&records));
        }
        Err(e) => c.part("interventions.txt", Err(e.to_string())),
    }
}

/// The log file and its rotated predecessors, and the config file.
fn local_files(g: &GlobalArgs, c: &mut Contents) {
    if let LogTarget::File(log) = g.log_target() {
        let mut candidates = vec![log.clone()];
        candidates.extend((1..=KEPT).map(|n| {
            let mut p = log.clone().into_os_string();
            p.push(format!(".{n}"));
            PathBuf::from(p)
        }));
        for path in candidates.iter().filter(|p| p.exists()) {
            let name = path.file_name().map(|n| n.to_string_lossy().to_string());
            c.part(
                &format!("log/{}", name.unwrap_or_default()),
                read_text(path),
            );
        }
    }
    if let Some(config) = config_path().filter(|p| p.exists()) {
        c.part("config.toml", read_text(&config));
    }
}

fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn manifest(g: &GlobalArgs, c: &Contents, now: DateTime<Utc>, since: DateTime<Utc>) -> String {
    let mut m = format!(
        "estx-tui postmortem bundle\nmade     {}\nby       estx-tui {}\ncluster  {}\nsince    {} (interventions)\n\nfiles:\n",
        format_timestamp(now),
        crate::VERSION,
        g.url,
        format_timestamp(since),
    );
    for (path, text) in &c.files {
        m.push_str(&format!("  {path} ({} bytes)\n", text.len()));
    }
    if !c.failed.is_empty() {
        m.push_str("\nparts the cluster did not give (see the .error.txt files):\n");
        for f in &c.failed {
            m.push_str(&format!("  {f}\n"));
        }
    }
    m.push_str("\nSecrets are redacted: the password and API key in force, URL userinfo, Authorization values, values of secret-named keys.\n");
    m
}

/// Runs `bundle`; exit 0, 3 when some part could not be read, 1 when the
/// archive could not be written.
pub async fn run(p: Protocol, g: &GlobalArgs, a: &Args) -> i32 {
    let p = &p;
    if a.out.exists() {
        err(format_args!(
            "refused: {} exists (a bundle never overwrites one)",
            a.out.display()
        ));
        return exit::REFUSED;
    }
    let now = p.now().await;
    let since = a.since.at(now);
    let mut c = Contents::default();
    health(p, &mut c).await;
    stuck(p, now, &mut c).await;
    interventions(p, since, &mut c).await;
    local_files(g, &mut c);
    let manifest = manifest(g, &c, now, since);
    c.files.insert(0, ("MANIFEST.txt".into(), manifest));
    // The connection was built from the same options, so this cannot fail
    // here; if it did, the secrets to redact would be unknown: write nothing.
    let secrets = match connect_options(g) {
        Ok(o) => Secrets::of(&o),
        Err(e) => {
            err(format_args!(
                "refused: cannot tell which secrets to redact: {e}"
            ));
            return exit::REFUSED;
        }
    };
    let top = format!("estx-bundle-{}", now.format("%Y%m%dT%H%M%SZ"));
    let files: Vec<(String, String)> = c
        .files
        .iter()
        .map(|(path, text)| (format!("{top}/{path}"), secrets.redact(text)))
        .collect();
    if let Err(e) = archive::write(&a.out, &files, now) {
        err(format_args!("cannot write {}: {e}", a.out.display()));
        return exit::REFUSED;
    }
    tracing::info!(path = %a.out.display(), files = files.len(), failed = c.failed.len(), "bundle written");
    out(format_args!(
        "wrote {} ({} files)",
        a.out.display(),
        files.len()
    ));
    for f in &c.failed {
        err(format_args!("missing from the bundle: {f}"));
    }
    if c.failed.is_empty() {
        exit::DONE
    } else {
        exit::CLUSTER
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::cmd::bundle::*;

    #[test]
    fn ids_become_safe_unique_file_names() {
        let mut taken = BTreeSet::new();
        assert_eq!(file_name("t-1", &mut taken), "t-1");
        assert_eq!(file_name("../etc/passwd", &mut taken), "_.._etc_passwd");
        assert_eq!(file_name("a/b", &mut taken), "a_b");
        assert_eq!(file_name("a_b", &mut taken), "a_b-2");
        assert_eq!(file_name("", &mut taken), "_");
    }

    #[test]
    fn since_takes_a_duration_or_a_time() {
        let now = DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z")
            .unwrap_or_else(|_| unreachable!())
            .with_timezone(&Utc);
        let ago = parse_since("2h").map(|s| s.at(now));
        assert_eq!(
            ago.map(format_timestamp),
            Ok("2026-03-01T10:00:00.000Z".into())
        );
        let at = parse_since("2026-02-01T00:00:00Z").map(|s| s.at(now));
        assert_eq!(
            at.map(format_timestamp),
            Ok("2026-02-01T00:00:00.000Z".into())
        );
        assert!(parse_since("yesterday").is_err());
    }
}
