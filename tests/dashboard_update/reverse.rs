//! `V` in `update`: the reverse dialog opens only on a finished (or
//! committed: finished first) selection, an already reversed one is refused
//! in the protocol's words, the dialog previews every write, the reason is
//! required, and the run is checked against the preview line by line.

use super::*;
use estx::dashboard::confirm::planned_lines;
use estx::protocol::intervene::{AnyPlan, JudgedReversal, ReversalPlan, TxnPlan};
use estx::protocol::report::{StepReport, StepResult};
use estx::protocol::views::AccountView;

/// A finished `id` (A -> B, 100), optionally linked to `reversed_by`.
fn finished(id: &str, reversed_by: Option<&str>) -> Transaction {
    let t = now() - chrono::Duration::minutes(30);
    let mut doc = json!({"src_acct": "A", "dest_acct": "B", "amount": 100,
        "transaction_state": "finished",
        "modification_time": estx::protocol::time::format_timestamp(t)});
    if let Some(by) = reversed_by {
        doc["reversed_by"] = json!(by);
    }
    Transaction::from_source(id, doc.as_object().unwrap())
}

/// The reversal of `of` in `state`.
fn reversal(of: &str, state: &str) -> Transaction {
    Transaction::from_source(
        &format!("{of}-reversal"),
        json!({"src_acct": "B", "dest_acct": "A", "amount": 100, "reverses": of,
               "transaction_state": state,
               "modification_time": estx::protocol::time::format_timestamp(now())})
        .as_object()
        .unwrap(),
    )
}

/// `t` re-read with its accounts at 400 (A) and 500 (B).
fn reread(t: Transaction) -> TransactionDetail {
    let mut d = detail_of(t, vec![]);
    d.accounts = [("A", 400), ("B", 500)]
        .into_iter()
        .map(|(id, balance)| AccountView {
            id: id.into(),
            state: Some(AccountState::new(balance)),
            carries: false,
            settled: None,
            problems: Default::default(),
        })
        .collect();
    d
}

/// A poll listing `t-old` (pending) and `txns`; selects `id`.
fn with_selected(app: &mut App, txns: Vec<Transaction>, id: &str) {
    let mut all = vec![txn("t-old", "pending", 90), txn("t-mid", "committed", 10)];
    all.extend(txns);
    update(app, Event::Polled(Ok(Box::new(snapshot(all)))));
    app.select(id.to_string());
}

fn last_log(app: &App) -> String {
    app.log.back().unwrap().text.clone()
}

/// The protocol's plan of reversing `t` (re-read) with `existing` under
/// the reversal's id, finishing a committed one first (`checked`: the
/// refusal of an unforced finish).
fn reversal_plan(
    t: Transaction,
    existing: Option<Transaction>,
    checked: Option<estx::protocol::intervene::ActRefusal>,
) -> JudgedReversal {
    JudgedReversal::on_reversal(reread(t), existing, true, checked, now())
}

fn previewed(app: &mut App, plan: JudgedReversal) {
    update(
        app,
        Event::Preview {
            act: reverse(plan.original.txn.id.clone()),
            plan: Ok(AnyPlan::Reverse(ReversalPlan::Judged(Box::new(plan)))),
        },
    );
}

#[test]
fn the_dialog_opens_only_on_a_finished_or_committed_selection() {
    let mut app = app(false);
    with_selected(&mut app, vec![finished("t-done", None)], "t-old");
    let cmds = update(&mut app, key('V'));
    assert!(app.overlays.dialog().is_none());
    assert!(!cmds.iter().any(|c| matches!(c, IoRequest::LoadPreview(..))));
    let log = last_log(&app);
    assert!(
        log.contains("Reverse t-old: refused: transaction is pending: it never completed"),
        "{log}"
    );

    app.select("t-mid".into());
    let cmds = update(&mut app, key('V'));
    assert_eq!(
        app.overlays.dialog().and_then(|d| d.act()),
        Some(&reverse("t-mid"))
    );
    assert!(cmds.contains(&IoRequest::LoadPreview(reverse("t-mid"))));
    update(&mut app, code(KeyCode::Esc));
    assert!(app.overlays.dialog().is_none());

    app.select("t-done".into());
    let cmds = update(&mut app, key('V'));
    assert!(cmds.contains(&IoRequest::LoadPreview(reverse("t-done"))));

    // Read-only: nothing opens.
    let mut ro = super::app(true);
    with_selected(&mut ro, vec![finished("t-done", None)], "t-done");
    update(&mut ro, key('V'));
    assert!(ro.overlays.dialog().is_none());
    // The refusal names the reverse key too (from the key table).
    assert!(
        last_log(&ro).contains("read-only mode: R rollback, F recover, L release, V reverse"),
        "{}",
        last_log(&ro)
    );
}

#[test]
fn an_already_reversed_transaction_is_refused() {
    let mut app = app(false);
    // Linked to another reversal: refused at the key, as the protocol words it.
    with_selected(&mut app, vec![finished("t-x", Some("elsewhere"))], "t-x");
    update(&mut app, key('V'));
    assert!(app.overlays.dialog().is_none());
    let log = last_log(&app);
    assert!(
        log.contains("refused: transaction is already reversed by `elsewhere`"),
        "{log}"
    );

    // Linked to its own reversal: the re-read finds it finished and refuses;
    // only Close is left, `y` runs nothing.
    let t = finished("t-f", Some("t-f-reversal"));
    with_selected(&mut app, vec![t.clone()], "t-f");
    update(&mut app, key('V'));
    let plan = reversal_plan(t, Some(reversal("t-f", "finished")), None);
    assert!(planned_lines(&plan).is_empty());
    previewed(&mut app, plan);
    assert!(!app.overlays.dialog().unwrap().can_confirm());
    let cmds = update(&mut app, key('y'));
    assert!(!cmds.iter().any(|c| matches!(c, IoRequest::Run(_))));
    assert!(last_log(&app).contains("nothing to confirm"));
}

#[test]
fn confirming_needs_a_reason_and_the_run_is_compared_with_the_preview() {
    let mut app = app(false);
    let t = finished("t-f", None);
    with_selected(&mut app, vec![t.clone()], "t-f");
    update(&mut app, key('V'));
    let plan = reversal_plan(t.clone(), None, None);
    let lines = planned_lines(&plan);
    assert_eq!(lines[0], "reverse: create reversal: write");
    assert_eq!(lines[1], "reverse: link original: write");
    assert!(lines.len() > 4, "{lines:?}");
    assert!(
        lines[2..].iter().all(|l| l.ends_with(": write")),
        "{lines:?}"
    );
    // The reversal moves the amount back: A +100, B -100.
    assert_eq!(
        plan.balance_change,
        [("A".to_string(), 100), ("B".to_string(), -100)]
    );
    previewed(&mut app, plan);

    update(&mut app, key('y'));
    assert_eq!(
        app.overlays.dialog().unwrap().reason_for,
        Some(RunChoice::Plain)
    );
    let cmds = update(&mut app, code(KeyCode::Enter));
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(
        last_log(&app).contains("needs a reason"),
        "{}",
        last_log(&app)
    );
    for ch in "INC-9".chars() {
        update(&mut app, key(ch));
    }
    let cmds = update(&mut app, code(KeyCode::Enter));
    let run = cmds
        .iter()
        .find_map(|c| match c {
            IoRequest::Run(r) => Some(r.clone()),
            _ => None,
        })
        .expect("a run");
    assert_eq!(
        run,
        Run::new(
            reverse("t-f"),
            false,
            Some("INC-9".into()),
            None,
            Expected {
                state: Some(TxnState::Finished),
                modified: t.modification_time,
            },
        )
    );
    assert_eq!(app.running.as_ref().unwrap().planned, lines);

    // The steps come back as the protocol reports them: the link on the
    // original, everything else on the reversal.
    for l in &lines {
        let label = l.trim_end_matches(": write").to_string();
        let txn = if label == "reverse: link original" {
            "t-f"
        } else {
            "t-f-reversal"
        };
        let report = StepReport {
            txn: txn.into(),
            step: None,
            label,
            target: format!("transactions/{txn}"),
            result: StepResult::Updated(estx::protocol::decide::Effect::Created),
            receipt: None,
        };
        update(&mut app, Event::Step(report));
    }
    update(
        &mut app,
        Event::ActionDone(ActionOutcome {
            act: reverse("t-f"),
            summary: "reversed by t-f-reversal (B -> A, amount 100)".into(),
            ok: true,
            receipts: None,
            record: None,
        }),
    );
    let log: Vec<&str> = app.log.iter().map(|e| e.text.as_str()).collect();
    assert!(
        log.contains(&"Reverse t-f: reversed by t-f-reversal (B -> A, amount 100)"),
        "{log:#?}"
    );
    let previewed = format!("Reverse t-f: ran as previewed ({} lines)", lines.len());
    assert!(log.contains(&previewed.as_str()), "{log:#?}");
}

#[test]
fn a_committed_original_is_finished_first_and_forced_only_by_the_force_key() {
    let mut app = app(false);
    let t = txn("t-mid", "committed", 1);
    with_selected(&mut app, vec![], "t-mid");
    update(&mut app, key('V'));
    let recent = estx::protocol::ProcedureRefusal::Recent {
        age: chrono::TimeDelta::minutes(1),
        window: std::time::Duration::from_secs(120),
    };
    let first = estx::protocol::reverse::ReverseRefusal::Protocol(recent);
    let checked = Some(estx::protocol::intervene::ActRefusal::Reverse(first));
    let plan = reversal_plan(t.clone(), None, checked);
    let lines = planned_lines(&plan);
    let create = lines
        .iter()
        .position(|l| l == "reverse: create reversal: write")
        .unwrap();
    assert!(create > 0, "the finish comes first: {lines:?}");
    let finish = TxnPlan::on_transaction(estx::protocol::Procedure::Recover, reread(t), None);
    assert_eq!(lines[..create], planned_lines(&finish)[..]);
    // Committed: the amount already moved (finishing only settles the
    // entries); the reversal moves it back.
    assert!(finish.balance_change.is_empty());
    assert_eq!(
        plan.balance_change,
        [("A".to_string(), 100), ("B".to_string(), -100)]
    );
    previewed(&mut app, plan);
    let cmds = update(&mut app, key('y'));
    assert!(cmds.is_empty());
    assert!(last_log(&app).contains("refused: finishing it first"));
    update(&mut app, key('!'));
    assert_eq!(
        app.overlays.dialog().unwrap().reason_for,
        Some(RunChoice::Forced)
    );
}
