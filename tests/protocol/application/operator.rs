//! The operator beside the application: the tool's interventions, one at a
//! time in turn, each after a refresh (a real cluster refreshes every
//! second; osmem never does): `recover --all-stuck` (with its lock sweep),
//! a bulk rollback of what is stuck in created, pending or terminating,
//! `release-lock` without force on every lock listed, the dashboard's `R`
//! and `F` on the youngest rows (live workers' transfers: they must be
//! refused), and `audit`. Every act but the audit is a recorded
//! intervention (`concurrency::recorded`: the library's acts counted, the
//! binary's runs too), so `audit --receipts` has every one of them to
//! verify. Every lock the tool releases is checked against the ledger: its
//! holder must be dead.

use super::binary::Binary;
use crate::common::app::World;
use crate::concurrency::recorded::Recorded;
use estx::protocol::intervene::Runner;
use estx::protocol::{Protocol, TxnState, Verdict};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the operator did, counted.
#[derive(Debug, Default)]
pub struct Figures {
    pub rounds: usize,
    pub recovered: usize,
    /// Runs of the binary's `recover --all-stuck`, and what they did.
    pub cli_runs: usize,
    pub cli_recovered: usize,
    pub cli_swept: usize,
    pub rolled_back: usize,
    pub swept: usize,
    pub released: usize,
    pub release_refused: usize,
    pub dashboard_refused: usize,
    pub dashboard_acted: usize,
    pub audits: usize,
    /// Findings of the audits run during the run, by kind.
    pub findings: BTreeMap<String, usize>,
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "operator: {} interventions; recover --all-stuck finished/rolled back {} and swept {} locks; the binary's recover --all-stuck ({} runs) finished/rolled back {} and swept {} locks; bulk rollback rolled back {}; release-lock released {} and refused {}; dashboard R/F refused {} and acted on {}; {} audits, findings {:?}",
            self.rounds, self.recovered, self.swept, self.cli_runs, self.cli_recovered, self.cli_swept, self.rolled_back, self.released,
            self.release_refused, self.dashboard_refused, self.dashboard_acted, self.audits, self.findings
        )
    }
}

fn acted(verdict: &Verdict) -> bool {
    matches!(
        verdict,
        Verdict::Completed(_) | Verdict::Stopped(_) | Verdict::EndedElsewhere(_)
    )
}

/// The operator's tool and what it did.
pub struct Operator {
    pub proto: Protocol,
    /// The library's acts, recorded and counted.
    pub rec: Arc<Recorded>,
    pub bin: Binary,
    pub w: Arc<World>,
    pub figures: Figures,
}

impl Operator {
    /// The next intervention in turn.
    pub async fn round(&mut self) {
        self.w.refresh().await;
        match self.figures.rounds % 6 {
            0 => self.recover_all_stuck().await,
            1 => self.bulk_rollback().await,
            2 => self.release_every_lock().await,
            3 => self.dashboard_on_youngest().await,
            4 => self.cli_recover_all_stuck().await,
            _ => {
                self.audit().await;
            }
        }
        self.figures.rounds += 1;
    }

    /// `recover --all-stuck`.
    pub async fn recover_all_stuck(&mut self) {
        let r = self
            .rec
            .recover_all_stuck(&self.proto, Runner::OneByOne(2))
            .await;
        self.figures.recovered += r
            .reports
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Completed(_)))
            .count();
        for l in r.swept {
            if l.outcome.released() {
                self.figures.swept += 1;
                let owner = l.view.info.owner.clone().unwrap_or_default();
                self.w.ledger.released_by_other(
                    "recover --all-stuck",
                    &l.view.info.resource,
                    &owner,
                );
            }
        }
    }

    /// `estx-tui recover --all-stuck --json`, the binary.
    async fn cli_recover_all_stuck(&mut self) {
        let run = self.bin.run(&["recover", "--all-stuck", "--json"]).await;
        // 1: a transaction found stuck was resumed by the application's
        // recovery before the tool re-read it, and refused as too recent.
        assert!([0, 1, 5].contains(&run.code), "{run:?}");
        let out = run.json();
        for t in out["transactions"].as_array().unwrap() {
            if t["exit_code"] == 1 {
                assert_eq!(t["verdict"]["kind"], "refused", "{t}");
            }
        }
        self.figures.cli_runs += 1;
        let done = |t: &&serde_json::Value| t["verdict"]["kind"] == "completed";
        self.figures.cli_recovered += out["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(done)
            .count();
        for l in out["released_locks"].as_array().unwrap() {
            if l["result"] == "released" {
                self.figures.cli_swept += 1;
                let (resource, owner) = (
                    l["resource"].as_str().unwrap(),
                    l["owner"].as_str().unwrap_or(""),
                );
                self.w
                    .ledger
                    .released_by_other("estx-tui recover --all-stuck", resource, owner);
            }
        }
    }

    /// `rollback --state created,pending,terminating --older-than WINDOW`.
    async fn bulk_rollback(&mut self) {
        let states = ["created", "pending", "terminating"].map(String::from);
        let window = self.proto.config().recovery_window;
        let ids = self
            .proto
            .list_transactions(&states, Some(window))
            .await
            .unwrap();
        for t in ids {
            let r = self.rec.rollback(&self.proto, &t.id, false).await;
            if matches!(r.verdict, Verdict::Completed(TxnState::RolledBack)) {
                self.figures.rolled_back += 1;
            }
        }
    }

    /// `release-lock RESOURCE` (no force) on every lock `locks` lists.
    async fn release_every_lock(&mut self) {
        for view in self.proto.list_locks().await.unwrap() {
            let resource = &view.info.resource;
            let outcome = self.rec.release_lock(&self.proto, resource, false).await;
            if outcome.released() {
                self.figures.released += 1;
                let owner = view.info.owner.clone().unwrap_or_default();
                self.w
                    .ledger
                    .released_by_other("release-lock", resource, &owner);
            } else {
                self.figures.release_refused += 1;
            }
        }
    }

    /// The dashboard's `R` then `F` (unforced) on the three youngest
    /// transactions in flight, as its keys call the protocol.
    async fn dashboard_on_youngest(&mut self) {
        let mut rows = self.proto.list_transactions(&[], None).await.unwrap();
        rows.retain(|t| t.state.as_ref().is_some_and(TxnState::is_in_flight));
        for t in rows.iter().rev().take(3) {
            let _ = self.proto.transaction_detail(&t.id).await.unwrap();
            for r in [
                self.rec.rollback(&self.proto, &t.id, false).await,
                self.rec.recover(&self.proto, &t.id, false).await,
            ] {
                if acted(&r.verdict) {
                    self.figures.dashboard_acted += 1;
                } else {
                    self.figures.dashboard_refused += 1;
                }
            }
        }
    }

    /// `audit`.
    pub async fn audit(&mut self) -> usize {
        let report = self.proto.audit(None, false).await.unwrap();
        self.figures.audits += 1;
        for f in &report.findings {
            *self.figures.findings.entry(f.kind.to_string()).or_default() += 1;
        }
        report.findings.len()
    }
}
