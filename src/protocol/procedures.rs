//! Procedures built from the steps: create, transfer (optionally under
//! locks), rollback and recovery. Each re-reads the transaction by id,
//! refuses what it must (with the reason), then follows its plan step by step
//! through the executor, reporting each step as it ends.

use super::create::NewTransfer;
use super::decide::{Decision, Fencing};
use super::executor::{ApplyGate, ClaimOn, Executed, StepOutcome};
use super::locks::acquire::lock_for_transfer;
use super::locks::release::{release_leftover_locks, release_transfer_locks};
use super::preflight::Preflight;
use super::problem::{Problem, Problems};
use super::read::rules::recovery_refusal;
use super::receipt::Receipt;
use super::report::{ProcedureReport, StepReport, StepResult, Verdict};
use super::steps::{self, next_after, plan, Next, Procedure, ProcedureRefusal, RunLimits, Step};
use super::transaction::{Transaction, Transfer, TxnState};
use super::Protocol;
use crate::error::{Error, Result};

use super::batch::BatchOptions;
use super::intervene::{BulkOptions, BulkRun};
use super::locks::LockView;
use crate::protocol::create::check_accounts;
use crate::protocol::create::creation_answer;
use crate::protocol::create::new_transaction_id;
use crate::protocol::create::request_problem;
use crate::protocol::reverse::{
    reversal_id, reverse_steps, ReverseOptions, ReverseReport, ReverseVerdict,
};
use crate::protocol::stuck::stuck_ids_to_recover;
use crate::protocol::stuck::Pace;
use crate::protocol::stuck::StuckRecovery;
use futures::stream::{self, StreamExt};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How many times a rollback may find the transaction elsewhere than planned.
const MAX_REPLANS: usize = 3;

impl Protocol {
    /// Holds every apply of this handle at `gate`, between its claim and its
    /// account write (tests that race a paused worker against other actors).
    pub fn with_apply_gate(mut self, gate: ApplyGate) -> Protocol {
        self.exec = self.exec.with_gate(gate);
        self
    }

    /// Creates a transaction and runs it to the end (core steps 1–7),
    /// optionally holding locks on both accounts (taken in a fixed order,
    /// released at the end).
    pub async fn transfer(
        &self,
        req: &NewTransfer,
        with_locks: bool,
        limits: RunLimits,
    ) -> ProcedureReport {
        let mut report = ProcedureReport::new(req.id.as_deref().unwrap_or(""));
        // Before step 1: the mappings must accept every write (read::writes).
        if let Err(e) = self.check_writable().await {
            report.verdict = Verdict::Failed(e);
            return report;
        }
        if with_locks {
            if let Err(e) = self.check_lockable().await {
                report.verdict = Verdict::Failed(e);
                return report;
            }
        }
        let planned = Transfer {
            id: req.id.clone().unwrap_or_default(),
            src: req.src.clone(),
            dest: req.dest.clone(),
            amount: req.amount,
        };
        if let Err(e) = self.check_partial_updates(&planned).await {
            report.verdict = Verdict::Failed(e);
            return report;
        }
        let id = match self.create_transaction(req).await {
            Ok(Ok(id)) => id,
            Ok(Err(refusal)) => {
                report.verdict = Verdict::Refused(refusal);
                return report;
            }
            Err(e) => {
                report.verdict = Verdict::Failed(e);
                return report;
            }
        };
        report.txn = id.clone();
        report.started_in = Some(TxnState::Created);
        let transfer = Transfer {
            id: id.clone(),
            src: req.src.clone(),
            dest: req.dest.clone(),
            amount: req.amount,
        };
        if with_locks {
            if let Err(verdict) = lock_for_transfer(self, &transfer, &mut report).await {
                report.verdict = verdict;
                return report;
            }
        }
        // `create_transaction` has just checked both accounts.
        self.follow_plan(
            &transfer,
            Procedure::Recover,
            TxnState::Created,
            false,
            limits,
            &mut report,
        )
        .await;
        report
    }

    /// Rolls a transaction back from wherever it is (see [`plan`]).
    pub async fn rollback(&self, id: &str, force: bool) -> ProcedureReport {
        self.run_procedure(id, Procedure::Rollback, force, RunLimits::default())
            .await
    }

    /// Moves a transaction forward from where it stopped (article's recovery).
    pub async fn recover(&self, id: &str, force: bool) -> ProcedureReport {
        self.run_procedure(id, Procedure::Recover, force, RunLimits::default())
            .await
    }

    /// Re-reads the transaction, checks it may be touched, and runs the
    /// procedure's plan. Without `force`, a transaction modified within the
    /// recovery window is refused: its worker may still be alive.
    pub async fn run_procedure(
        &self,
        id: &str,
        procedure: Procedure,
        force: bool,
        limits: RunLimits,
    ) -> ProcedureReport {
        self.run_procedure_after(id, procedure, force, limits, Preflight::Ask)
            .await
    }

    /// [`Protocol::run_procedure`] whose caller may already have asked the
    /// product the pre-flight's question on the same indices (a reversal
    /// asks it before its first write, then runs the reversal).
    pub(crate) async fn run_procedure_after(
        &self,
        id: &str,
        procedure: Procedure,
        force: bool,
        limits: RunLimits,
        preflight: Preflight,
    ) -> ProcedureReport {
        let mut report = ProcedureReport::new(id);
        let txn = match self.read_transaction(id).await {
            Ok(Some((t, _))) => t,
            Ok(None) => {
                report.verdict = Verdict::Failed(Error::NotFound {
                    kind: "transaction",
                    index: self.config.indices.transactions.clone(),
                    id: id.to_string(),
                });
                return report;
            }
            Err(e) => {
                report.verdict = Verdict::Failed(e);
                return report;
            }
        };
        report.started_in = txn.state.clone();
        // A document that does not read may be in names the map in force
        // does not give: say so rather than "malformed".
        if !txn.problems.is_empty() {
            if let Err(e) = self.check_schema().await {
                report.verdict = Verdict::Failed(e);
                return report;
            }
        }
        self.sync_clock().await;
        let (state, transfer) = match self.check_actionable(&txn, force) {
            Ok(Some(ok)) => ok,
            Ok(None) => {
                let state = txn.state.clone().unwrap_or(TxnState::Finished);
                report.verdict = Verdict::NothingToDo(state);
                // Whoever ended it may have died before releasing its locks.
                release_leftover_locks(self, &txn, &mut report).await;
                return report;
            }
            Err(refusal) => {
                report.verdict = Verdict::Refused(refusal);
                return report;
            }
        };
        // Before step 1: the mappings must accept every write (read::writes),
        // and the product the partial updates (preflight).
        if let Err(e) = self.check_writable().await {
            report.verdict = Verdict::Failed(e);
            return report;
        }
        if preflight == Preflight::Ask {
            if let Err(e) = self.check_partial_updates(&transfer).await {
                report.verdict = Verdict::Failed(e);
                return report;
            }
        }
        self.follow_plan(&transfer, procedure, state, true, limits, &mut report)
            .await;
        report
    }

    /// Whether `txn` may be acted on: `Ok(None)` when terminal, the state and
    /// transfer when it may, the refusal otherwise. Judged on the cluster's
    /// clock as last asked (callers [`Protocol::sync_clock`] first).
    pub fn check_actionable(
        &self,
        txn: &Transaction,
        force: bool,
    ) -> std::result::Result<Option<(TxnState, Transfer)>, ProcedureRefusal> {
        let state = match &txn.state {
            Some(TxnState::Unknown(s)) => return Err(ProcedureRefusal::UnknownState(s.clone())),
            Some(s) if s.is_terminal() => return Ok(None),
            Some(s) => s.clone(),
            None => return Err(ProcedureRefusal::Malformed(txn.problems.clone())),
        };
        let transfer = txn
            .transfer()
            .map_err(|_| ProcedureRefusal::Malformed(txn.problems.clone()))?;
        // A job's way back does not refuse the job's own last writes.
        let own = self.own.as_ref().is_some_and(|o| o.recognises(txn));
        if !force && !own {
            // Judged on the cluster's clock (the one `modification_time` is
            // written with), by the read side's one rule of "recent".
            let window = self.config.recovery_window;
            if let Some(refusal) = recovery_refusal(txn, self.cluster().now(), window) {
                return Err(refusal);
            }
        }
        Ok(Some((state, transfer)))
    }

    /// Follows the plan from `state`, re-planning (rollback only) when a
    /// transition finds the transaction elsewhere. Releases the transaction's
    /// locks once it is terminal. `check_accounts` is false only when the
    /// caller has just checked them (a transfer right after its create).
    async fn follow_plan(
        &self,
        t: &Transfer,
        procedure: Procedure,
        state: TxnState,
        check_accounts: bool,
        limits: RunLimits,
        report: &mut ProcedureReport,
    ) {
        let mut todo = match plan(procedure, &state) {
            Ok(steps) if steps.is_empty() => {
                report.verdict = Verdict::NothingToDo(state);
                return;
            }
            Ok(steps) => steps,
            Err(refusal) => {
                report.verdict = Verdict::Refused(refusal);
                return;
            }
        };
        if check_accounts {
            if let Err(verdict) = self.accounts_ready(t, &todo).await {
                report.verdict = verdict;
                return;
            }
        }
        let mut executed = 0usize;
        let mut replans = 0usize;
        let mut final_state = state;
        'plan: loop {
            for step in todo.clone() {
                if limits.max_steps == Some(executed) {
                    report.verdict =
                        Verdict::Stopped(format!("simulated crash after {executed} step(s)"));
                    return;
                }
                executed += 1;
                let Some(outcome) = self.run_recorded(t, step, report).await else {
                    return;
                };
                match next_after(procedure, step, &outcome) {
                    Next::Continue => {
                        if let Some((_, to)) = step.transition() {
                            final_state = to;
                        }
                    }
                    Next::Stop(why) => {
                        report.verdict = Verdict::Stopped(why);
                        self.settle_if_terminal(t, report).await;
                        return;
                    }
                    Next::Replan(found) => {
                        replans += 1;
                        match self.replan(t, procedure, found, replans, report).await {
                            Some(steps) => {
                                todo = steps;
                                continue 'plan;
                            }
                            None => return,
                        }
                    }
                }
            }
            break;
        }
        report.verdict = Verdict::Completed(final_state.clone());
        if final_state.is_terminal() {
            release_transfer_locks(self, t, report).await;
        }
    }

    /// Runs `step` of `t` and records it in `report`. On an error the
    /// report's verdict is the failure and `None` comes back.
    async fn run_recorded(
        &self,
        t: &Transfer,
        step: Step,
        report: &mut ProcedureReport,
    ) -> Option<StepOutcome> {
        let ran = self.run_step_receipted(t, step).await;
        let (result, receipt) = match &ran {
            Ok((ex, receipt)) => (StepResult::from(&ex.outcome), *receipt),
            Err(e) => (StepResult::Error(e.to_string()), None),
        };
        let r = StepReport {
            txn: t.id.clone(),
            step: Some(step),
            label: step.label().to_string(),
            target: self.target_of(t, step),
            result,
            receipt,
        };
        self.record_step(report, r);
        match ran {
            Ok((ex, _)) => Some(ex.outcome),
            Err(e) => {
                report.verdict = Verdict::Failed(e);
                None
            }
        }
    }

    /// The steps to follow now that a step found `t` in `found` (the
    /// `replans`-th time). `None`, with the report's verdict set, when it
    /// keeps changing, when another process ended it (its locks are then
    /// released), when its accounts are not ready, or when it is refused.
    async fn replan(
        &self,
        t: &Transfer,
        procedure: Procedure,
        found: TxnState,
        replans: usize,
        report: &mut ProcedureReport,
    ) -> Option<Vec<Step>> {
        match plan(procedure, &found) {
            _ if replans > MAX_REPLANS => {
                report.verdict = Verdict::Stopped(format!("state keeps changing (now {found})"));
                None
            }
            Ok(steps) if steps.is_empty() => {
                report.verdict = Verdict::EndedElsewhere(found);
                release_transfer_locks(self, t, report).await;
                None
            }
            Ok(steps) => {
                if let Err(verdict) = self.accounts_ready(t, &steps).await {
                    report.verdict = verdict;
                    return None;
                }
                Some(steps)
            }
            Err(refusal) => {
                report.verdict = Verdict::Refused(refusal);
                None
            }
        }
    }

    /// Refuses a plan with account steps when an account is missing or
    /// malformed (cancelling a created transaction touches no account), or
    /// when a step would overflow a balance or undo an amount other than the
    /// one applied ([`steps::preflight`]): all before the first write.
    async fn accounts_ready(
        &self,
        t: &Transfer,
        plan: &[Step],
    ) -> std::result::Result<(), Verdict> {
        if !plan.iter().any(|s| s.on_source().is_some()) {
            return Ok(());
        }
        let (src, dest) = check_accounts(self, &t.src, &t.dest).await.map_err(|e| {
            match Problem::of_error(&e) {
                Some(p) => Verdict::Refused(ProcedureRefusal::Malformed(Problems::one(p))),
                None => Verdict::Failed(e),
            }
        })?;
        steps::preflight(t, plan, (&src, &dest), self.config.fencing).map_err(Verdict::Refused)
    }

    /// After stopping because another process moved the transaction: reads
    /// where it is. If it is terminal, the report says so (done by another
    /// process) and the locks this transfer may hold are released (the
    /// process that ended it may have run before they were taken).
    async fn settle_if_terminal(&self, t: &Transfer, report: &mut ProcedureReport) {
        let Ok(Some((txn, _))) = self.read_transaction(&t.id).await else {
            return;
        };
        let Some(state) = txn.state else {
            return;
        };
        if report.reached.as_ref().map(|(s, _)| s) != Some(&state) {
            report.reached = Some((state.clone(), super::report::ReachedBy::AnotherProcess));
        }
        if state.is_terminal() {
            report.verdict = Verdict::EndedElsewhere(state);
            release_transfer_locks(self, t, report).await;
        }
    }

    /// Executes one step of `t` through the OCC executor.
    pub async fn run_step(&self, t: &Transfer, step: Step) -> Result<Executed> {
        Ok(self.run_step_receipted(t, step).await?.0)
    }

    /// [`Protocol::run_step`], with the receipt of the balance write it
    /// made (an apply or undo that changed the balance).
    async fn run_step_receipted(
        &self,
        t: &Transfer,
        step: Step,
    ) -> Result<(Executed, Option<Receipt>)> {
        if let Some((from, to)) = step.transition() {
            let stamp = self
                .time_fields()
                .await?
                .modification
                .stamp(self.now().await);
            let id = t.id.clone();
            let ex = self
                .exec
                .run(
                    "transaction",
                    &self.config.indices.transactions,
                    &t.id,
                    |src| steps::transition_doc(&id, src, &from, &to, &stamp),
                )
                .await?;
            return Ok((ex, None));
        }
        let on_source = step.on_source().ok_or_else(|| {
            Error::Invalid(format!("{step} is neither a state nor an account step"))
        })?;
        let acct = if on_source { &t.src } else { &t.dest };
        let fencing = self.config.fencing;
        let is_apply = matches!(step, Step::ApplySource | Step::ApplyDestination);
        let claim = (is_apply && fencing == Fencing::On).then_some(ClaimOn {
            index: &self.config.indices.transactions,
            id: &t.id,
            decide: steps::claim_doc,
        });
        // The balances of the last decision: the one the write that
        // landed was decided on (a write recognised after a lost answer
        // was decided last, before its re-read).
        let mut balances = None;
        let ex = self
            .exec
            .run_claimed(
                "account",
                &self.config.indices.accounts,
                acct,
                claim,
                |src| {
                    steps::account_doc(acct, src, |a| {
                        let d = steps::account_step(step, t, a, fencing);
                        balances = match &d {
                            Ok(Decision::Write(next, _)) => Some((a.balance, next.balance)),
                            _ => None,
                        };
                        d
                    })
                },
            )
            .await?;
        let receipt = match (&ex.outcome, ex.landing, balances) {
            (StepOutcome::Updated(e), Some(l), Some((before, after))) if e.moves_balance() => {
                Some(Receipt::new(before, after, l.on, l.at))
            }
            _ => None,
        };
        Ok((ex, receipt))
    }

    pub(crate) fn record(
        &self,
        report: &mut ProcedureReport,
        t: &Transfer,
        step: Option<Step>,
        label: &str,
        target: String,
        result: StepResult,
    ) {
        self.record_step(
            report,
            StepReport {
                txn: t.id.clone(),
                step,
                label: label.to_string(),
                target,
                result,
                receipt: None,
            },
        );
    }

    /// Tells the observer of `r` and adds it to `report`.
    pub(crate) fn record_step(&self, report: &mut ProcedureReport, r: StepReport) {
        self.notify(&r);
        report.push(r);
    }

    pub(crate) fn target_of(&self, t: &Transfer, step: Step) -> String {
        match step.on_source() {
            Some(true) => format!("{}/{}", self.config.indices.accounts, t.src),
            Some(false) => format!("{}/{}", self.config.indices.accounts, t.dest),
            None => format!("{}/{}", self.config.indices.transactions, t.id),
        }
    }

    /// Runs `procedure` on each of `ids`, `opts.concurrency` at a time,
    /// each as [`Protocol::run_procedure`] (unforced: the recovery window
    /// holds), calling `on_done` as each ends. Once `stop` is set no new
    /// transaction starts; those running finish their procedure.
    pub async fn run_many<F>(
        &self,
        ids: &[String],
        procedure: Procedure,
        opts: BulkOptions,
        stop: &AtomicBool,
        mut on_done: F,
    ) -> BulkRun
    where
        F: FnMut(&ProcedureReport),
    {
        let mut run = BulkRun::default();
        let mut items = stream::iter(ids.iter().cloned())
            .map(|id| async move {
                if stop.load(Ordering::SeqCst) {
                    return Err(id);
                }
                Ok(self.run_procedure(&id, procedure, false, opts.limits).await)
            })
            .buffer_unordered(opts.concurrency.max(1));
        while let Some(item) = items.next().await {
            match item {
                Ok(report) => {
                    on_done(&report);
                    run.reports.push(report);
                }
                Err(id) => run.not_started.push(id),
            }
        }
        run
    }

    /// Recovers `ids` in batches ([`Protocol::recover_batched`]),
    /// `opts.concurrency` batches at a time, calling `on_done` for each
    /// transaction as its batch ends. Once `stop` is set no new batch
    /// starts, and the running one stops before its next write (its
    /// transactions not at their end reported stopped). Refuses mappings that would reject the protocol's writes
    /// before anything is written.
    pub async fn recover_many_batched<F>(
        &self,
        ids: &[String],
        opts: BatchOptions,
        stop: &AtomicBool,
        mut on_done: F,
    ) -> Result<BulkRun>
    where
        F: FnMut(&ProcedureReport),
    {
        if !ids.is_empty() {
            self.check_writable().await?;
        }
        let one_batch = BatchOptions {
            concurrency: 1,
            ..opts
        };
        let mut run = BulkRun::default();
        // Owned chunks: a closure over borrowed slices is not general
        // enough for a task spawned by the dashboard.
        let chunks = ids.chunks(opts.batch_size.max(1)).map(<[String]>::to_vec);
        let mut batches = stream::iter(chunks)
            .map(|chunk: Vec<String>| async move {
                if stop.load(Ordering::SeqCst) {
                    return Err(chunk);
                }
                Ok(self.recover_batched_until(&chunk, one_batch, stop).await)
            })
            .buffer_unordered(opts.concurrency.max(1));
        while let Some(batch) = batches.next().await {
            match batch {
                Ok(reports) => {
                    for r in &reports {
                        on_done(r);
                    }
                    run.reports.extend(reports);
                }
                Err(ids) => run.not_started.extend(ids),
            }
        }
        Ok(run)
    }

    /// Creates a transaction in state `created` with `op_type=create`.
    ///
    /// Refuses a non-positive amount, identical accounts, and accounts that
    /// do not exist or are malformed. Returns `Ok(Err(ProcedureRefusal::AlreadyExists))`
    /// when the id is taken: the article says not to run it then.
    pub async fn create_transaction(
        &self,
        req: &NewTransfer,
    ) -> Result<std::result::Result<String, ProcedureRefusal>> {
        if let Some(problem) = request_problem(req) {
            return Err(Error::Invalid(problem));
        }
        let accounts = check_accounts(self, &req.src, &req.dest).await?;
        let id = req.id.clone().unwrap_or_else(new_transaction_id);
        if id.is_empty() {
            return Err(Error::Invalid("transaction id must not be empty".into()));
        }
        // Before any write: a reused id, or applies that cannot fit.
        let t = Transfer {
            id: id.clone(),
            src: req.src.clone(),
            dest: req.dest.clone(),
            amount: req.amount,
        };
        let checked = steps::check_fresh_id(&t, (&accounts.0, &accounts.1)).and_then(|()| {
            let applies = [Step::ApplySource, Step::ApplyDestination];
            steps::preflight(
                &t,
                &applies,
                (&accounts.0, &accounts.1),
                self.config.fencing,
            )
        });
        if let Err(refusal) = checked {
            return Ok(Err(refusal));
        }
        let (times, now) = (self.time_fields().await?, self.now().await);
        if let Some(c) = times.creation_conflict() {
            return Err(crate::error::Error::Invalid(format!(
                "refused before the first write: {c}"
            )));
        }
        let doc: Map<String, Value> = json!({
            "src_acct": req.src,
            "dest_acct": req.dest,
            "amount": req.amount,
            "transaction_state": "created",
            "creation_time": times.creation.stamp(now),
            "modification_time": times.modification.stamp(now),
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        let index = &self.config.indices.transactions;
        let answer = self.exec.create(index, &id, &doc).await;
        creation_answer(answer, id, &doc)
    }

    /// Every stuck transaction, oldest first, as found by search. Refuses a
    /// partial view (some shards failed): see [`Protocol::stuck`] to see one.
    pub async fn stuck_transactions(&self) -> Result<Vec<Transaction>> {
        let l = self.stuck().await?;
        l.summary
            .coverage
            .require_complete(false, "list stuck transactions")?;
        Ok(l.transactions)
    }

    /// Transactions matching `states` (all when empty) older than
    /// `older_than`, oldest first. Refuses a partial view.
    pub async fn list_transactions(
        &self,
        states: &[String],
        older_than: Option<Duration>,
    ) -> Result<Vec<Transaction>> {
        let mut out = Vec::new();
        let s = self
            .list_pages(states, older_than, |page| {
                out.extend(page);
                true
            })
            .await?;
        s.coverage.require_complete(false, "list transactions")?;
        Ok(out)
    }

    /// Recovers every stuck transaction, at most `concurrency` at a time,
    /// then sweeps the locks stale on evidence (never unknown ones); refuses a
    /// partial view of them. See [`Self::recover_all_stuck_with`].
    pub async fn recover_all_stuck(&self, concurrency: usize) -> Result<StuckRecovery> {
        self.recover_all_stuck_with(Pace::OneAtATime { concurrency }, false)
            .await
    }

    /// The recovery of every stuck transaction, one procedure for the CLI
    /// and the demo: each transaction at `pace` (re-read and re-checked
    /// against the recovery window, so one that moved since the search is
    /// left alone), then the sweep of every lock whose owner is terminal or
    /// missing ([`Self::release_abandoned_locks_allowing`]: those nobody else
    /// will release). A partial view of the transactions is refused before
    /// anything is written unless `allow_partial`; the same holds for the
    /// listing of the locks, whose refusal or failure is reported in
    /// [`StuckRecovery::locks`] without losing the transactions' reports.
    pub async fn recover_all_stuck_with(
        &self,
        pace: Pace,
        allow_partial: bool,
    ) -> Result<StuckRecovery> {
        self.check_schema().await?;
        let reports = match pace {
            Pace::OneAtATime { concurrency } => {
                let ids = stuck_ids_to_recover(self, allow_partial).await?;
                stream::iter(ids)
                    .map(|id| async move { self.recover(&id, false).await })
                    .buffer_unordered(concurrency.max(1))
                    .collect::<Vec<_>>()
                    .await
            }
            Pace::Batched(opts) => self.recover_all_stuck_batched(opts, allow_partial).await?,
        };
        let locks = self.release_abandoned_locks_allowing(allow_partial).await;
        Ok(StuckRecovery { reports, locks })
    }

    /// Recovers every stuck transaction in batches (see [`super::batch`]);
    /// one report per transaction, as [`Protocol::recover_all_stuck`] gives.
    /// Refuses a partial view of them unless `allow_partial`, and mappings
    /// that would reject the protocol's writes before anything is written.
    pub async fn recover_all_stuck_batched(
        &self,
        opts: BatchOptions,
        allow_partial: bool,
    ) -> Result<Vec<ProcedureReport>> {
        let ids = stuck_ids_to_recover(self, allow_partial).await?;
        Ok(self.recover_batched(&ids, opts).await)
    }

    /// The locks the closing sweep of a recovery of every stuck transaction
    /// would release, judged now ([`LockView::is_sweepable`], the sweep's
    /// own rule): what its preview names. Locks whose owner is stuck are
    /// not among them: that owner's recovery releases them (its own plan
    /// names them). A partial listing is refused unless `allow_partial`.
    pub async fn sweepable_locks(&self, allow_partial: bool) -> Result<Vec<LockView>> {
        let listing = match self.list_locks_with(!allow_partial).await {
            Ok(l) => l,
            Err(crate::error::Error::IndexMissing(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        listing
            .summary
            .coverage
            .require_complete(allow_partial, "sweep abandoned locks")?;
        Ok(listing
            .locks
            .into_iter()
            .filter(LockView::is_sweepable)
            .collect())
    }

    /// Reverses finished transaction `id` (see the module docs). Refuses a
    /// transaction that is already reversed (naming the reversal), rolled
    /// back, or not finished (a committed one is finished first when
    /// `opts.finish_committed`).
    pub async fn reverse(&self, id: &str, opts: ReverseOptions) -> ReverseReport {
        let rev = reversal_id(id);
        let mut report = ReverseReport {
            original: id.to_string(),
            reversal: rev.clone(),
            original_state: None,
            transfer: None,
            resumed: false,
            steps: Vec::new(),
            verdict: ReverseVerdict::Stopped("not started".into()),
        };
        report.verdict = match reverse_steps(self, id, &rev, opts, &mut report).await {
            Ok(v) => v,
            Err(e) => ReverseVerdict::Failed(e),
        };
        report
    }
}
