//! The operator's acts in a racing test as recorded interventions (issue
//! 31): each act planned, run and recorded with its audit record, as the
//! CLI and the dashboard run it (`intervene::run`), and counted. At the end
//! every record the test wrote has its receipts verified, by the library
//! call `audit --receipts` makes and by the binary itself, and the records
//! verified must be exactly the acts run: a check that verifies no record,
//! or fewer than were written, fails. Used by the racing tests
//! (`with_locks.rs`, `stress.rs`, `batch/fleet.rs`) and the application
//! beside the tool (`application/`).

use super::actors::Race;
use crate::fixture::Fx;
use estx::protocol::intervene::{
    self, BulkAct, BulkDone, Choices, Done, Intervention, Recover, ReleaseLock, Rollback, Runner,
};
use estx::protocol::locks::ReleaseOutcome;
use estx::protocol::trail::receipts::{verify_since, Verification};
use estx::protocol::trail::{records_since, Interface, RecordId};
use estx::protocol::{Procedure, ProcedureReport, Protocol, Verdict};
use serde_json::Value;
use std::collections::HashSet;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The reason every act of the test is recorded with.
const REASON: &str = "concurrency test: the operator beside racing workers";

/// The acts run through the trail, counted.
#[derive(Default)]
pub struct Recorded {
    /// Acts run (each left one record).
    acts: AtomicUsize,
    /// Balance writes whose receipts each act's own `Done` verified.
    writes: AtomicUsize,
    /// Every record the acts wrote.
    records: Mutex<Vec<RecordId>>,
    /// A record with a balance write, to edit (its steps inline: the acts
    /// here are small, far from a job's checkpoints): a one-transaction
    /// act's if any (`true`), so no write another transaction's folded
    /// with it can be ordered otherwise by the edit; else a bulk act's.
    with_writes: Mutex<Option<(bool, RecordId)>>,
}

impl Recorded {
    /// Counts for the world `p` acts on, whose audit index this creates.
    pub async fn new(p: &Protocol) -> Arc<Recorded> {
        p.ensure_indices().await.unwrap();
        Arc::default()
    }

    fn choices(force: bool) -> Choices {
        Choices::new(Interface::Cli, Some(REASON.into())).forced(force)
    }

    /// Counts `done`: its record completed, its own receipts verified.
    fn count<R: std::fmt::Debug>(&self, done: &Done<R>, single: bool) {
        assert!(
            done.record_error.is_none(),
            "record left unfinished: {done:#?}"
        );
        assert!(done.receipts.ok(), "{:#?}\n{done:#?}", done.receipts);
        self.acts.fetch_add(1, Ordering::SeqCst);
        self.writes
            .fetch_add(done.receipts.writes, Ordering::SeqCst);
        self.records.lock().unwrap().push(done.record.clone());
        let mut kept = self.with_writes.lock().unwrap();
        if done.receipts.writes > 0 && kept.as_ref().is_none_or(|(one, _)| single && !one) {
            *kept = Some((single, done.record.clone()));
        }
    }

    /// A one-transaction act's run, counted; the procedure's report.
    fn single(&self, done: Done<ProcedureReport>) -> ProcedureReport {
        self.count(&done, true);
        done.value
    }

    /// `rollback ID [--force]` on `p`.
    pub async fn rollback(&self, p: &Protocol, id: &str, force: bool) -> ProcedureReport {
        let i = Intervention::new(Rollback::new(id), Self::choices(force));
        let done = intervene::run(p, i)
            .await
            .unwrap_or_else(|e| panic!("rollback of {id} not started: {e}"));
        self.single(done)
    }

    /// `recover ID [--force]` on `p`.
    pub async fn recover(&self, p: &Protocol, id: &str, force: bool) -> ProcedureReport {
        let i = Intervention::new(Recover::new(id), Self::choices(force));
        let done = intervene::run(p, i)
            .await
            .unwrap_or_else(|e| panic!("recovery of {id} not started: {e}"));
        self.single(done)
    }

    /// `release-lock RESOURCE [--force]` on `p`: what the release did.
    pub async fn release_lock(&self, p: &Protocol, resource: &str, force: bool) -> ReleaseOutcome {
        let i = Intervention::new(ReleaseLock::new(resource), Self::choices(force));
        let done = intervene::run(p, i)
            .await
            .unwrap_or_else(|e| panic!("release of the lock on {resource} not started: {e}"));
        self.count(&done, false);
        let mut released = done.value.unwrap().released;
        assert_eq!(released.len(), 1, "{released:?}");
        released.remove(0).1
    }

    /// `recover --all-stuck` on `p` (its recovery window) run by `runner`,
    /// with its closing sweep of the locks stale on evidence. Panics when
    /// it did not start or failed part-way.
    pub async fn recover_all_stuck(&self, p: &Protocol, runner: Runner) -> BulkDone {
        self.try_recover_all_stuck(p, runner, false)
            .await
            .unwrap_or_else(|e| panic!("recover --all-stuck not started: {e}"))
    }

    /// [`Self::recover_all_stuck`], forced or not (forced, it takes the
    /// transactions other live jobs hold, and its record names them), or
    /// why it did not start (nothing written, nothing counted): a selection
    /// whose search lost its answer.
    pub async fn try_recover_all_stuck(
        &self,
        p: &Protocol,
        runner: Runner,
        force: bool,
    ) -> Result<BulkDone, intervene::NotStarted> {
        let act = BulkAct::all_stuck(Procedure::Recover, runner);
        let done = intervene::run(p, Intervention::new(act, Self::choices(force))).await?;
        self.count(&done, false);
        let done = done.value;
        assert!(
            done.failed.is_none(),
            "recover --all-stuck failed: {done:#?}"
        );
        Ok(done)
    }

    /// Finishes (or undoes) everything still in flight in `race`, by
    /// recorded forced recoveries, as an operator would after the run; the
    /// number it completed. Panics when something is still in flight after
    /// ten passes.
    pub async fn drain(&self, race: &Race) -> usize {
        let mut drained = 0;
        for _ in 0..10 {
            let left = race.in_flight().await;
            if left.is_empty() {
                return drained;
            }
            for id in left {
                let report = self.recover(&race.fx.proto, &id, true).await;
                if matches!(report.verdict, Verdict::Completed(_)) {
                    drained += 1;
                }
            }
        }
        panic!("transactions still in flight after draining");
    }

    /// Acts run so far.
    pub fn acts(&self) -> usize {
        self.acts.load(Ordering::SeqCst)
    }

    /// Verifies the receipts of every record in `p`'s audit index, as the
    /// library's `audit --receipts` does: one record per act run here and
    /// `others` more (acts run elsewhere, e.g. by the binary), each
    /// verified, none without receipts, every act's record among them,
    /// holding at least the balance writes the acts' own checks counted
    /// (exactly those when there are no others).
    pub async fn verify_records(&self, p: &Protocol, others: usize) -> Verification {
        let acts = self.acts();
        let writes = self.writes.load(Ordering::SeqCst);
        assert!(acts > 0, "no act was run");
        p.cluster()
            .refresh(&p.config().indices.audit)
            .await
            .unwrap();
        let v = verify_since(p, None).await.unwrap();
        assert_eq!(v.mismatches, vec![], "{v:#?}");
        let all = acts + others;
        assert_eq!(
            (v.records, v.verified, v.no_receipts),
            (all, all, 0),
            "records read, verified, without receipts vs acts run ({acts} here, {others} elsewhere)"
        );
        let read = records_since(p, chrono::DateTime::UNIX_EPOCH)
            .await
            .unwrap();
        let read: HashSet<&str> = read.iter().map(|r| r.record_id.as_str()).collect();
        for id in self.records.lock().unwrap().iter() {
            assert!(read.contains(id.0.as_str()), "record {id} not read back");
        }
        if others == 0 {
            assert_eq!(
                v.writes, writes,
                "balance writes in the records vs the acts'"
            );
        } else {
            assert!(
                v.writes >= writes,
                "{} writes read, the acts made {writes}",
                v.writes
            );
        }
        v
    }

    /// [`Self::verify_records`] of every record in `fx`'s audit index, all
    /// written by the acts counted here, at least one of them writing a
    /// balance; then the binary's `audit --receipts` exits 0 naming the
    /// same counts. Then one record's stored balance is edited by hand, and
    /// the binary exits 1 naming it. Returns the library's verification.
    pub async fn verify_every_record(&self, fx: &Fx) -> Verification {
        let v = self.verify_records(&fx.proto, 0).await;
        let (acts, writes) = (self.acts(), v.writes);
        assert!(writes > 0, "no act wrote a balance: nothing was proved");

        let (code, out) = audit_receipts(fx).await;
        assert_eq!(code, 0, "estx-tui audit --receipts: {out:#}");
        let counts = (&out["records"], &out["verified"], &out["writes"]);
        assert_eq!(
            counts,
            (&Value::from(acts), &Value::from(acts), &Value::from(writes)),
            "{out:#}"
        );

        let kept = self.with_writes.lock().unwrap().clone();
        let (_, RecordId(record)) = kept.expect("an act wrote a balance");
        let mut doc = Value::Object(fx.source(&fx.ix.audit, &record).await);
        assert!(
            crate::common::tamper::edit_first_receipt(&mut doc["st"], 7),
            "{doc:#}"
        );
        fx.put(&fx.ix.audit, &record, doc).await;
        fx.cluster().refresh(&fx.ix.audit).await.unwrap();
        let (code, out) = audit_receipts(fx).await;
        assert_eq!(code, 1, "the edited record {record} passed: {out:#}");
        assert_eq!(out["verified"], Value::from(acts - 1), "{out:#}");
        for m in out["mismatches"].as_array().unwrap() {
            assert_eq!(m["record"], Value::from(record.as_str()), "{out:#}");
        }
        v
    }
}

/// `estx-tui audit --receipts --json` on `fx`'s indices: its exit code and
/// its output.
async fn audit_receipts(fx: &Fx) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("estx-tui.log");
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_estx-tui"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("ESTX_")) {
        c.env_remove(k);
    }
    c.env("XDG_CONFIG_HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .args(crate::common::server::binary_args(
            &fx.url,
            &fx.ix.indices(),
            &log,
        ))
        .args(["audit", "--receipts", "--json"])
        .stdin(Stdio::null());
    let out = c.output().await.unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {stdout}\nstderr {stderr}"));
    (out.status.code().unwrap_or(-1), json)
}
