//! The audit of invariants: what fencing would have prevented, and what an
//! operator must look at.
//!
//! Findings: pending entries whose transaction is finished, rolled-back or
//! missing (a late apply; `--repair` undoes it where that is unambiguous);
//! transactions naming accounts that do not exist; unknown states, malformed
//! documents and in-flight transactions without a modification time; stale
//! locks; and the sum of balances, checked against an expected total when one
//! is given (corrected for transfers in flight).
//!
//! Right under live traffic: every query comes from the read side (resolved
//! fields); the total, the accounts scan and the correction for transfers
//! in flight ([`view`]: which accounts had applied each transfer)
//! come from one point-in-time view where the server has one (otherwise the
//! report says the total is approximate); and a finding is reported only after the documents involved
//! were re-read by id (realtime), in an order that cannot mistake a transfer
//! in progress for a dangling entry: the transaction first (terminal states
//! are final), then the account again.
//!
//! The audit in one module: this file holds its facade (the one
//! `impl Protocol` of the concern: `audit`, `audit_with`, `audit_measured`),
//! the exact total and the order of the parts: the accounts' pending entries
//! and their repairs ([`accounts`]), then the transactions and locks
//! ([`documents`]), each a free function taking the `Protocol`. The report's
//! types are [`report`]'s; how often the audit may run in the background is
//! [`pace`].

mod accounts;
mod documents;
pub mod pace;
mod report;
mod view;

pub use report::{AuditReport, Finding, FindingKind, RepairEffect};

use super::integer::read_integer;
use super::read::{Queries, Scan, ScanSummary};
use super::Protocol;
use crate::cluster::Hit;
use crate::error::{Error, Result};
use accounts::audit_pending_entries;
use documents::{audit_locks, audit_transactions};
use pace::{process_cpu, AuditCost};
use report::{finding, Found};
use serde_json::{json, Value};
use std::time::Instant;

impl Protocol {
    /// Runs the audit, refusing a partial view (see [`Self::audit_with`]).
    pub async fn audit(&self, expect_total: Option<i64>, repair: bool) -> Result<AuditReport> {
        self.audit_with(expect_total, repair, false).await
    }

    /// Runs the audit; with `repair`, undoes dangling applies whose repair is
    /// unambiguous (rolled-back transaction, or a finished one the account had
    /// already settled) and reports the rest for an operator. Refuses when
    /// some shards failed, unless `allow_partial`.
    pub async fn audit_with(
        &self,
        expect_total: Option<i64>,
        repair: bool,
        allow_partial: bool,
    ) -> Result<AuditReport> {
        let ix = &self.config.indices;
        let d = self.discovery().await?;
        // Findings are confirmed by reads by id, which need one index each.
        if let Some(p) = d.indices().iter().find_map(|i| i.id_problem()) {
            return Err(Error::Unreadable(format!("cannot audit: {p}")));
        }
        let q = Queries::new(&d.fields);
        let mut found = Found::default();

        let view_at = self.now().await;
        let (accounts, exact, scanned) = self.scan_accounts().await?;
        found.coverage.add(scanned.coverage);
        let scanned_view = scanned.point_in_time;
        let mut total_balance = i64::try_from(exact).map_err(|_| {
            Error::Decode(format!("sum of balances {exact} does not fit in 64 bits"))
        })?;
        found.coverage.require_complete(allow_partial, "audit")?;

        // The accounts' pending entries, then the other documents.
        let pending = audit_pending_entries(self, &accounts, view_at, repair, &mut found).await?;
        let in_flight_delta = pending.in_flight_delta;
        total_balance += pending.repaired;
        audit_transactions(self, &q, allow_partial, &mut found).await?;
        audit_locks(self, &mut found).await?;

        if let Some(expected) = expect_total {
            let settled_total = total_balance - in_flight_delta;
            if settled_total != expected {
                found.findings.push(finding(
                    FindingKind::TotalMismatch,
                    &ix.accounts,
                    format!(
                        "sum of balances is {total_balance} ({settled_total} with transfers in flight completed or undone), expected {expected}: {:+}",
                        settled_total - expected
                    ),
                ));
            }
        }
        let Found {
            mut findings,
            repairs,
            repair_steps,
            repair_effect,
            coverage,
        } = found;
        findings.sort_by(|a, b| (&a.kind, &a.id).cmp(&(&b.kind, &b.id)));
        for f in &mut findings {
            f.detail = self.config.schema.localize(&f.detail);
        }
        Ok(AuditReport {
            total_balance,
            in_flight_delta,
            findings,
            repairs,
            repair_steps,
            repair_effect,
            consistent_view: scanned_view,
            coverage,
        })
    }

    /// Every account from one view: the sum of balances, summed exactly in
    /// integers as the pages go by (a `sum` aggregation is a double and
    /// rounds), keeping only the accounts that carry pending entries or are
    /// malformed. Repairs then adjust the total by exactly what they change
    /// (a search may not see them yet).
    async fn scan_accounts(&self) -> Result<(Vec<Hit>, i128, ScanSummary)> {
        let ix = &self.config.indices;
        let mut accounts = Vec::new();
        let mut exact: i128 = 0;
        let scanned = super::read::scan::scan(
            self.cluster(),
            &ix.accounts,
            Scan {
                query: json!({"match_all": {}}),
                sort: vec![],
                aggs: None,
                complete_only: false,
            },
            |page| {
                for hit in page {
                    let balance = hit.source.get("balance").and_then(read_integer);
                    exact += balance.map(i128::from).unwrap_or(0);
                    let carries = hit
                        .source
                        .get("pending_transactions")
                        .is_some_and(|p| !matches!(p, Value::Null) && p != &json!([]));
                    if balance.is_none() || carries {
                        accounts.push(hit);
                    }
                }
                true
            },
        )
        .await?;
        Ok((accounts, exact, scanned))
    }

    /// Runs the audit (read-only, refusing a partial view) and measures
    /// what it cost, whether it answered or failed.
    pub async fn audit_measured(
        &self,
        expect_total: Option<i64>,
    ) -> (Result<AuditReport>, AuditCost) {
        let (metered, meter) = self.metered();
        let (cpu, started) = (process_cpu(), Instant::now());
        let report = metered.audit(expect_total, false).await;
        let cost = AuditCost {
            requests: meter.requests(),
            cpu: process_cpu().saturating_sub(cpu),
            elapsed: started.elapsed(),
        };
        (report, cost)
    }
}
