//! `audit`: conservation of money and agreement between accounts,
//! transactions and locks, as text or JSON; `--repair` fixes what is safe;
//! `--receipts` verifies the balance writes the audit trail's records keep
//! (`protocol::trail::receipts`).

use crate::cli::act::{self, ReasonArgs};
use crate::cli::output::{fail, out, plural, print_json, Table};
use crate::cli::values::{parse_since, Since};
use crate::protocol::audit::{AuditReport, Finding, FindingKind};
use crate::protocol::intervene::AuditRepair;
use crate::protocol::read::Coverage;
use crate::protocol::trail::receipts::{verify_since, Verification};
use crate::protocol::Protocol;
use serde::Serialize;

/// `audit`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The total balance all accounts should add up to.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub expect_total: Option<i64>,
    /// Repair what can be repaired safely.
    #[arg(long, conflicts_with = "receipts")]
    pub repair: bool,
    /// Verify the receipts of the audit trail's records instead: every
    /// balance write adds up, each transaction moved no money once ended,
    /// each account's writes chain.
    #[arg(long, conflicts_with = "expect_total")]
    pub receipts: bool,
    /// With --receipts: the records started since (a duration back from
    /// now, `24h`, `7d`, or an RFC 3339 time); every record without it.
    #[arg(long, requires = "receipts", value_parser = parse_since, value_name = "WHEN")]
    pub since: Option<Since>,
    /// Audit (and repair) even when some shards failed to answer.
    #[arg(long)]
    pub allow_partial: bool,
    /// Why (recorded in the audit trail with --repair).
    #[command(flatten)]
    pub why: ReasonArgs,
}

/// `audit --json`.
#[derive(Debug, Serialize)]
pub struct AuditJson<'a> {
    /// Sum of every balance.
    pub total_balance: i64,
    /// What half-applied transfers contribute to it.
    pub in_flight_delta: i64,
    /// Whether total and scan came from one point-in-time view (otherwise
    /// the total is approximate while transfers run).
    pub consistent_view: bool,
    /// Shards behind the audit's searches.
    pub coverage: Coverage,
    /// What was found.
    pub findings: Vec<FindingJson<'a>>,
    /// What `--repair` did.
    pub repairs: &'a [String],
}

/// One finding in `audit --json`.
#[derive(Debug, Serialize)]
pub struct FindingJson<'a> {
    /// Machine-readable kind (its snake_case name).
    pub kind: FindingKind,
    /// The document it is about.
    pub id: &'a str,
    /// In words.
    pub detail: &'a str,
}

impl<'a> From<&'a Finding> for FindingJson<'a> {
    fn from(f: &'a Finding) -> Self {
        FindingJson {
            kind: f.kind,
            id: &f.id,
            detail: &f.detail,
        }
    }
}

/// The JSON shape of a report.
pub fn audit_json(r: &AuditReport) -> AuditJson<'_> {
    AuditJson {
        total_balance: r.total_balance,
        in_flight_delta: r.in_flight_delta,
        consistent_view: r.consistent_view,
        coverage: r.coverage,
        findings: r.findings.iter().map(FindingJson::from).collect(),
        repairs: &r.repairs,
    }
}

/// The human text of an audit report.
pub fn audit_lines(r: &AuditReport, expect_total: Option<i64>) -> Vec<String> {
    let mut lines = vec![format!("{:<16} {}", "total balance", r.total_balance)];
    if !r.consistent_view {
        lines.push(format!(
            "{:<16} approximate while transfers run (this cluster offers no point-in-time view)",
            ""
        ));
    }
    if let Some(p) = r.coverage.describe() {
        lines.push(format!("{:<16} {p}: findings may be missing", "PARTIAL"));
    }
    if r.in_flight_delta != 0 {
        lines.push(format!(
            "{:<16} {:+} (transfers half applied; {} once they complete or are undone)",
            "in flight",
            r.in_flight_delta,
            r.total_balance - r.in_flight_delta
        ));
    }
    if let Some(n) = expect_total {
        lines.push(format!("{:<16} {n}", "expected total"));
    }
    if !r.repairs.is_empty() {
        lines.push(String::new());
        lines.push(format!("{}:", plural(r.repairs.len(), "repair")));
        lines.extend(r.repairs.iter().map(|x| format!("  {x}")));
    }
    lines.push(String::new());
    if r.findings.is_empty() {
        lines.push("no findings".into());
    } else {
        let mut t = Table::new(["KIND", "ID", "DETAIL"]);
        for f in &r.findings {
            t.row([f.kind.to_string(), f.id.clone(), f.detail.clone()]);
        }
        lines.extend(t.render());
        lines.push(String::new());
        lines.push(plural(r.findings.len(), "finding"));
    }
    lines
}

/// `audit`: exit 0 when clean, 1 when findings remain. `--repair` is an
/// act ([`crate::protocol::intervene`]), recorded in the audit trail.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    if a.receipts {
        return receipts(&p, a).await;
    }
    if !a.repair {
        let result = p.audit_with(a.expect_total, false, a.allow_partial).await;
        return audit_result(&result, a);
    }
    let act = AuditRepair {
        account: None,
        expect_total: a.expect_total,
        allow_partial: a.allow_partial,
    };
    let started = match act::start(&p, act, false, &a.why).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    let index = started.index().to_string();
    let done = started.run(&p).await;
    let code = audit_result(&done.value, a);
    act::recorded(&done, &index, code)
}

/// `audit --receipts`: exit 0 when every record read verifies, 1 on any
/// mismatch (each named by record, transaction and account).
async fn receipts(p: &Protocol, a: &Args) -> i32 {
    let since = match a.since {
        Some(s) => Some(s.at(p.now().await)),
        None => None,
    };
    let v = match verify_since(p, since).await {
        Ok(v) => v,
        Err(e) => return fail(&e),
    };
    tracing::info!(
        records = v.records,
        mismatches = v.mismatches.len(),
        "audit --receipts"
    );
    if a.json {
        match serde_json::to_value(ReceiptsJson::from(&v)) {
            Ok(j) => print_json(&j),
            Err(e) => out(format_args!("{{\"error\": \"{e}\"}}")),
        }
    } else {
        for l in receipt_lines(&v) {
            out(l);
        }
    }
    i32::from(!v.ok())
}

/// `audit --receipts --json`.
#[derive(Debug, Serialize)]
pub struct ReceiptsJson<'a> {
    /// Records read.
    pub records: usize,
    /// Records whose receipts all verify.
    pub verified: usize,
    /// Records with balance writes and no receipts (older records).
    pub no_receipts: usize,
    /// Balance writes checked.
    pub writes: usize,
    /// What does not verify.
    pub mismatches: Vec<MismatchJson<'a>>,
}

/// One mismatch in `audit --receipts --json`.
#[derive(Debug, Serialize)]
pub struct MismatchJson<'a> {
    /// The record's id.
    pub record: &'a str,
    /// The transaction.
    pub transaction: &'a str,
    /// The account written.
    pub account: &'a str,
    /// Machine-readable kind (`arithmetic`, `amounts`, `chain`...).
    pub kind: &'static str,
    /// In words.
    pub detail: String,
}

impl<'a> From<&'a Verification> for ReceiptsJson<'a> {
    fn from(v: &'a Verification) -> Self {
        ReceiptsJson {
            records: v.records,
            verified: v.verified,
            no_receipts: v.no_receipts,
            writes: v.writes,
            mismatches: v
                .mismatches
                .iter()
                .map(|m| MismatchJson {
                    record: &m.record,
                    transaction: &m.txn,
                    account: &m.account,
                    kind: m.problem.kind(),
                    detail: m.problem.to_string(),
                })
                .collect(),
        }
    }
}

/// The human text of a verification.
pub fn receipt_lines(v: &Verification) -> Vec<String> {
    let mut lines = vec![
        format!("{:<16} {}", "records", v.records),
        format!("{:<16} {}", "verified", v.verified),
        format!(
            "{:<16} {} (written before receipts)",
            "no receipts", v.no_receipts
        ),
        format!("{:<16} {}", "balance writes", v.writes),
        String::new(),
    ];
    if v.mismatches.is_empty() {
        lines.push("every receipt verifies".into());
        return lines;
    }
    let mut t = Table::new(["RECORD", "TRANSACTION", "ACCOUNT", "MISMATCH"]);
    for m in &v.mismatches {
        t.row([
            m.record.clone(),
            m.txn.clone(),
            m.account.clone(),
            m.problem.to_string(),
        ]);
    }
    lines.extend(t.render());
    lines.push(String::new());
    lines.push(match v.mismatches.len() {
        1 => "1 mismatch".to_string(),
        n => format!("{n} mismatches"),
    });
    lines
}

/// Prints the audit (or its error); returns the exit code.
fn audit_result(result: &crate::error::Result<AuditReport>, a: &Args) -> i32 {
    let report = match result {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    tracing::info!(
        findings = report.findings.len(),
        repairs = report.repairs.len(),
        "audit"
    );
    if a.json {
        match serde_json::to_value(audit_json(report)) {
            Ok(v) => print_json(&v),
            Err(e) => out(format_args!("{{\"error\": \"{e}\"}}")),
        }
    } else {
        for l in audit_lines(report, a.expect_total) {
            out(l);
        }
    }
    i32::from(!report.findings.is_empty())
}

#[cfg(test)]
mod tests {
    use crate::cli::cmd::audit::*;

    #[test]
    fn clean_and_dirty_reports() {
        let mut r = AuditReport {
            total_balance: 1000,
            in_flight_delta: 0,
            findings: vec![],
            repairs: vec![],
            repair_steps: vec![],
            consistent_view: true,
            repair_effect: Vec::new(),
            coverage: Coverage::default(),
        };
        assert_eq!(
            audit_lines(&r, None).last().map(String::as_str),
            Some("no findings")
        );
        r.findings.push(Finding {
            kind: FindingKind::StaleLock,
            id: "A".into(),
            detail: "held by txn t".into(),
        });
        r.in_flight_delta = -100;
        let lines = audit_lines(&r, Some(1000));
        assert!(lines[1].contains("-100"), "{lines:?}");
        assert!(
            lines.iter().any(|l| l.starts_with("stale_lock  A")),
            "{lines:?}"
        );
        assert_eq!(lines.last().map(String::as_str), Some("1 finding"));
    }
}
