//! The stored form of a record's plan and steps in the audit index: compact,
//! so a bulk run's record costs a few hundred bytes per transaction, not
//! over a kilobyte (issue 31, a lean trail). A [`Record`](super::Record) and
//! a part keep their one shape in memory and in `history --json`; only the
//! documents in the index are packed ([`pack`]) when written and unpacked
//! ([`unpack`]) when read, so records written before this read as they are
//! (their `steps` are objects, their `plan` strings) and a file trail keeps
//! the full form.
//!
//! Packed:
//! - `st`: the steps grouped per transaction, in order: each group the
//!   transaction id, then its steps, each step `[label, target, result,
//!   detail]` (plus a fifth item, the state it wrote, only when the detail
//!   does not say it), or just `[label, target]` for a step that did what
//!   its label says (`updated`, `state a -> b` or `removed from pending`:
//!   [`usual_detail`]). Labels and results known to the tool are short
//!   codes (`c4` is `core 4: pending -> committed`, `u` is `updated`); any
//!   other is kept whole behind `=`. A target `index/id` is `k/id`, `k` the
//!   index's position in the document's `ix` list, or just `k` when the id
//!   is the group's transaction. A step with a receipt (a balance write,
//!   `crate::protocol::receipt`) ends with it, the numbers `[before, after,
//!   term, on, at]` (`at` left out when the write's answer was lost).
//!
//!   Written as ONE string ([`StText`]): groups split by `#`, a group's
//!   transaction and steps by `;`, a step's items by `|`, a receipt
//!   `$before,after,term,on,at`; `%`, `#`, `;`, `|` and `$` inside an item
//!   as `%25`, `%23`, `%3B`, `%7C`, `%24`. So `[["t1", ["c4", "0"],
//!   ["c5", "1/a1"]]]` is `t1;c4|0;c5|1/a1`. Why a string: the test
//!   server (osmem) keeps every stored document parsed, as a tree of
//!   objects its garbage collector walks on each collection for as long as
//!   the document lives, and a bulk run's 8 600 steps as arrays were some
//!   40 000 of them (a string is one); the string is also a fifth smaller
//!   than the arrays (no quotes nor brackets). Records written before
//!   (`st` as arrays of arrays, steps with receipts as arrays of numbers,
//!   or steps as full objects) read as they are.
//! - `plan`: a line `TXN: label, label` of known labels is `[TXN, "c1 c2"]`;
//!   any other line stays a string.
//!
//! - `planned` (a part's): those of the part's transactions its run's plan
//!   lists (`super::listed::Listed`), kept apart from `transactions` so as
//!   to be stored without being indexed: the run record and its plan's
//!   parts index them already. Read back, they are the part's
//!   `transactions` again (before the others).
//!
//! `steps` stays (empty) beside `st`, so a reader of the old shape finds
//! the field. The audit index's mapping stores `st`, `ix`, `steps` and
//! `plan` without indexing them (`assets/mappings/audit.json`: objects with
//! `"enabled": false`, which take any value, arrays and strings included,
//! unparsed: <https://www.elastic.co/docs/reference/elasticsearch/mapping-reference/enabled>,
//! <https://docs.opensearch.org/latest/mappings/mapping-parameters/enabled/>).
//! An index mapped by an earlier `init` maps `st` and `ix` dynamically.

use super::listed::Listed;
use super::record::TrailStep;
use super::st_text::StText;
use crate::protocol::decide::Effect;
use crate::protocol::receipt::Receipt;
use crate::protocol::report::RELEASE_LOCK;
use crate::protocol::steps::Step;
use crate::protocol::transaction::TxnState;
use serde_json::{json, Map, Value};

/// Each known step label with its stored code. The codes are a stored
/// format: never reuse or renumber one.
fn labels() -> [(&'static str, &'static str); 14] {
    [
        ("c1", Step::Begin.label()),
        ("c2", Step::ApplySource.label()),
        ("c3", Step::ApplyDestination.label()),
        ("c4", Step::Commit.label()),
        ("c5", Step::RemoveSource.label()),
        ("c6", Step::RemoveDestination.label()),
        ("c7", Step::Finish.label()),
        ("r0", Step::CancelCreated.label()),
        ("r1", Step::Terminate.label()),
        ("r2", Step::UndoSource.label()),
        ("r3", Step::UndoDestination.label()),
        ("r4", Step::RolledBack.label()),
        ("rl", RELEASE_LOCK),
        ("rp", "repair"),
    ]
}

/// Each step result word with its stored code.
const RESULTS: [(&str, &str); 4] = [
    ("u", "updated"),
    ("n", "noop"),
    ("e", "error"),
    ("r", "refused"),
];

/// Marks a label or result kept whole.
const WHOLE: char = '=';

fn code_of(table: &[(&'static str, &'static str)], word: &str) -> String {
    table
        .iter()
        .find(|(_, w)| *w == word)
        .map_or_else(|| format!("{WHOLE}{word}"), |(c, _)| (*c).to_string())
}

fn word_of(table: &[(&'static str, &'static str)], code: &str) -> Result<String> {
    if let Some(whole) = code.strip_prefix(WHOLE) {
        return Ok(whole.to_string());
    }
    table
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, w)| (*w).to_string())
        .ok_or_else(|| malformed(format!("unknown code `{code}`")))
}

/// What is wrong with a packed document (the caller names it).
type Result<T> = std::result::Result<T, String>;

fn malformed(problems: String) -> String {
    problems
}

/// What an `updated` step with `label` says it did when it did what its
/// label says: `state a -> b` for a step that moves the transaction
/// (`core 4: pending -> committed`), `removed from pending` for a remove.
/// Such a step is stored without result and detail.
fn usual_detail(label: &str) -> Option<String> {
    if label == Step::RemoveSource.label() || label == Step::RemoveDestination.label() {
        return Some(Effect::Removed.to_string());
    }
    let (_, moved) = label.split_once(": ")?;
    moved.contains(" -> ").then(|| {
        format!(
            "{}",
            Effect::Transitioned {
                from: TxnState::parse(moved.split(" -> ").next().unwrap_or_default()),
                to: TxnState::parse(moved.rsplit(" -> ").next().unwrap_or_default()),
            }
        )
    })
}

/// The state a step's detail says it wrote (`state a -> b` wrote `b`).
fn implied_state(result: &str, detail: &str) -> Option<String> {
    let moved = detail.strip_prefix("state ")?;
    let (_, to) = moved.split_once(" -> ")?;
    (result == "updated").then(|| to.to_string())
}

/// Packs the steps and plan lines of one document.
struct Packer {
    indices: Vec<String>,
}

impl Packer {
    fn target(&mut self, target: &str, txn: &str) -> String {
        let Some((index, id)) = target.split_once('/') else {
            return if target.is_empty() {
                String::new()
            } else {
                format!("{WHOLE}{target}")
            };
        };
        let k = match self.indices.iter().position(|i| i == index) {
            Some(k) => k,
            None => {
                self.indices.push(index.to_string());
                self.indices.len() - 1
            }
        };
        if id == txn && !txn.is_empty() {
            k.to_string()
        } else {
            format!("{k}/{id}")
        }
    }

    fn step(&mut self, s: &TrailStep) -> Value {
        let mut items = vec![
            Value::String(code_of(&labels(), &s.label)),
            Value::String(self.target(&s.target, &s.txn)),
        ];
        let usual = s.result == "updated"
            && usual_detail(&s.label).as_deref() == Some(s.detail.as_str())
            && implied_state(&s.result, &s.detail) == s.wrote_state;
        if !usual {
            items.push(Value::String(code_of(&RESULTS, &s.result)));
            items.push(Value::String(s.detail.clone()));
            if implied_state(&s.result, &s.detail) != s.wrote_state {
                items.push(Value::String(s.wrote_state.clone().unwrap_or_default()));
            }
        }
        if let Some(r) = &s.receipt {
            items.push(pack_receipt(r));
        }
        Value::Array(items)
    }

    /// Steps in groups of consecutive steps of one transaction.
    fn steps(&mut self, steps: &[TrailStep]) -> Value {
        let mut groups: Vec<Vec<Value>> = Vec::new();
        let mut current: Option<&str> = None;
        for s in steps {
            if current != Some(s.txn.as_str()) {
                groups.push(vec![Value::String(s.txn.clone())]);
                current = Some(&s.txn);
            }
            let packed = self.step(s);
            if let Some(g) = groups.last_mut() {
                g.push(packed);
            }
        }
        Value::Array(groups.into_iter().map(Value::Array).collect())
    }
}

/// A receipt as `[before, after, term, on, at]` (`at` left out when unknown).
fn pack_receipt(r: &Receipt) -> Value {
    let mut n = vec![r.before, r.after, r.term, r.on];
    n.extend(r.at);
    json!(n)
}

/// The receipt a packed step ends with, if any.
fn unpack_receipt(v: &Value) -> Result<Option<Receipt>> {
    let Some(Value::Array(n)) = v.as_array().and_then(|a| a.last()) else {
        return Ok(None);
    };
    let n: Option<Vec<i64>> = n.iter().map(Value::as_i64).collect();
    match n.as_deref() {
        Some(&[before, after, term, on]) => Ok(Some(Receipt::new(before, after, (on, term), None))),
        Some(&[before, after, term, on, at]) => Ok(Some(Receipt::new(
            before,
            after,
            (on, term),
            Some((at, term)),
        ))),
        _ => Err(malformed(format!("bad receipt in step {v}"))),
    }
}

/// A plan line `TXN: label, label` of known labels as `[TXN, "code code"]`
/// (only when that reads back to exactly the line), else the line.
fn pack_line(line: &str) -> Value {
    let table = labels();
    let packed = line.split_once(": ").and_then(|(txn, rest)| {
        let codes: Option<Vec<&str>> = if rest.is_empty() {
            Some(Vec::new())
        } else {
            rest.split(", ")
                .map(|l| table.iter().find(|(_, w)| *w == l).map(|(c, _)| *c))
                .collect()
        };
        let packed = json!([txn, codes?.join(" ")]);
        (unpack_line(&packed).ok().as_deref() == Some(line)).then_some(packed)
    });
    packed.unwrap_or_else(|| Value::String(line.to_string()))
}

fn unpack_line(v: &Value) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Array(a) => {
            let (Some(Value::String(txn)), Some(Value::String(codes)), 2) =
                (a.first(), a.get(1), a.len())
            else {
                return Err(malformed(format!("bad plan line {v}")));
            };
            let labels = codes
                .split_whitespace()
                .map(|c| word_of(&labels(), c))
                .collect::<Result<Vec<_>>>()?;
            Ok(format!("{txn}: {}", labels.join(", ")))
        }
        _ => Err(malformed(format!("bad plan line {v}"))),
    }
}

/// The stored form of a record or part document (see the module's notes):
/// its `steps` grouped into `st` with their indices in `ix`, its plan lines
/// packed. A document without steps or plan is left as it is.
pub fn pack(doc: &mut Map<String, Value>) {
    if let Some(Value::Array(plan)) = doc.get_mut("plan") {
        for line in plan.iter_mut() {
            if let Value::String(s) = line {
                *line = pack_line(s);
            }
        }
    }
    let steps: Vec<TrailStep> = match doc.get("steps") {
        Some(v @ Value::Array(a)) if !a.is_empty() => match serde_json::from_value(v.clone()) {
            Ok(steps) => steps,
            Err(_) => return,
        },
        _ => return,
    };
    pack_steps(doc, &steps);
}

/// Puts `steps` into `doc` in the stored form [`pack`] gives them (`st`
/// and `ix`, `steps` left empty), straight from the typed steps: a writer
/// that has them does not serialise them in the full form to pack them.
/// No steps leave `doc` as it is.
pub fn pack_steps(doc: &mut Map<String, Value>, steps: &[TrailStep]) {
    if steps.is_empty() {
        return;
    }
    let mut packer = Packer {
        indices: Vec::new(),
    };
    let st = StText::write(&packer.steps(steps));
    doc.insert("steps".into(), Value::Array(Vec::new()));
    doc.insert("st".into(), Value::String(st));
    doc.insert("ix".into(), json!(packer.indices));
}

/// Moves those of part `doc`'s `transactions` that `listed` holds into
/// `planned` (see the module's notes), in order; none listed leaves `doc`
/// as it is.
pub fn unindex_listed(doc: &mut Map<String, Value>, listed: &Listed) {
    if listed.is_empty() {
        return;
    }
    let Some(Value::Array(all)) = doc.remove("transactions") else {
        return;
    };
    let (planned, others): (Vec<Value>, Vec<Value>) = all
        .into_iter()
        .partition(|t| t.as_str().is_some_and(|t| listed.contains(t)));
    doc.insert("transactions".into(), Value::Array(others));
    if !planned.is_empty() {
        doc.insert("planned".into(), Value::Array(planned));
    }
}

/// The document as [`pack`] (and [`unindex_listed`]) was given it: `st`
/// back into `steps`, plan lines back into strings, a part's `planned`
/// back into its `transactions`. A document in the old (full) form is left
/// as it is.
pub fn unpack(doc: &mut Map<String, Value>) -> Result<()> {
    if let Some(planned) = doc.remove("planned") {
        let Value::Array(mut planned) = planned else {
            return Err(malformed(format!("planned: {planned}")));
        };
        if let Some(Value::Array(others)) = doc.remove("transactions") {
            planned.extend(others);
        }
        doc.insert("transactions".into(), Value::Array(planned));
    }
    if let Some(Value::Array(plan)) = doc.get_mut("plan") {
        for line in plan.iter_mut() {
            if !line.is_string() {
                *line = Value::String(unpack_line(line)?);
            }
        }
    }
    let Some(st) = doc.remove("st") else {
        return Ok(());
    };
    let indices: Vec<String> = match doc.remove("ix") {
        Some(v) => serde_json::from_value(v).map_err(|e| malformed(format!("ix: {e}")))?,
        None => Vec::new(),
    };
    // Written as one string since (see the module's notes); as arrays before.
    let st = match st {
        Value::String(text) => StText::read(&text)?,
        arrays => arrays,
    };
    let mut steps = Vec::new();
    for group in st.as_array().into_iter().flatten() {
        let items = group.as_array().map_or(&[][..], Vec::as_slice);
        let Some((Value::String(txn), rest)) = items.split_first() else {
            return Err(malformed(format!("bad step group {group}")));
        };
        for s in rest {
            steps.push(unpack_step(s, txn, &indices)?);
        }
    }
    let steps = serde_json::to_value(steps).map_err(|e| malformed(e.to_string()))?;
    doc.insert("steps".into(), steps);
    Ok(())
}

fn unpack_step(v: &Value, txn: &str, indices: &[String]) -> Result<TrailStep> {
    let items: Vec<&str> = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let receipt = unpack_receipt(v)?;
    if let [label, target] = items.as_slice() {
        let label = word_of(&labels(), label)?;
        let detail =
            usual_detail(&label).ok_or_else(|| malformed(format!("step {v} says no result")))?;
        return Ok(TrailStep {
            txn: txn.to_string(),
            target: unpack_target(target, txn, indices)?,
            result: "updated".into(),
            wrote_state: implied_state("updated", &detail),
            detail,
            label,
            receipt,
        });
    }
    let [label, target, result, detail, rest @ ..] = items.as_slice() else {
        return Err(malformed(format!("bad step {v}")));
    };
    let result = word_of(&RESULTS, result)?;
    let wrote_state = match rest {
        [] => implied_state(&result, detail),
        [w] => Some(w.to_string()).filter(|w| !w.is_empty()),
        _ => return Err(malformed(format!("bad step {v}"))),
    };
    Ok(TrailStep {
        txn: txn.to_string(),
        label: word_of(&labels(), label)?,
        target: unpack_target(target, txn, indices)?,
        result,
        detail: detail.to_string(),
        wrote_state,
        receipt,
    })
}

fn unpack_target(t: &str, txn: &str, indices: &[String]) -> Result<String> {
    if t.is_empty() {
        return Ok(String::new());
    }
    if let Some(whole) = t.strip_prefix(WHOLE) {
        return Ok(whole.to_string());
    }
    let (k, id) = t.split_once('/').unwrap_or((t, txn));
    let index = k
        .parse::<usize>()
        .ok()
        .and_then(|k| indices.get(k))
        .ok_or_else(|| malformed(format!("bad step target `{t}`")))?;
    Ok(format!("{index}/{id}"))
}

/// What plan `line` costs packed, in bytes (what a page's budget counts).
pub fn packed_line_size(line: &str) -> usize {
    json_len(&pack_line(line)) + 1
}

/// The bytes `item` takes as JSON, counted as it is written (nothing is
/// kept: sizing a page item by item allocates nothing).
pub fn json_len<T: serde::Serialize>(item: &T) -> usize {
    let mut n = Bounded { left: usize::MAX };
    match serde_json::to_writer(&mut n, item) {
        Ok(()) => usize::MAX - n.left,
        Err(_) => 0,
    }
}

/// Whether `item` takes at most `budget` bytes as JSON; writing stops as
/// soon as it is over (a bulk run's thousands of steps are not written out
/// to learn that they do not fit in a record).
pub fn json_fits<T: serde::Serialize>(item: &T, budget: usize) -> bool {
    serde_json::to_writer(&mut Bounded { left: budget }, item).is_ok()
}

/// A writer that only counts down what it may still take, and fails once
/// over it.
struct Bounded {
    left: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.left = self
            .left
            .checked_sub(buf.len())
            .ok_or_else(|| std::io::Error::other("over the budget"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// About what `step` costs packed, in bytes (what a page's budget counts):
/// its text in `st` and its separator, as JSON escapes them.
pub fn packed_size(step: &TrailStep) -> usize {
    let mut packer = Packer {
        indices: Vec::new(),
    };
    let mut text = String::new();
    StText::step(&mut text, &packer.step(step));
    json_len(&text) - 2 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_sized_as_written_and_a_budget_check_stops_at_the_budget() {
        let v = json!({"a": [1, "two", {"b": null}], "c": "d\"e"});
        let len = serde_json::to_vec(&v).unwrap().len();
        assert_eq!(json_len(&v), len);
        assert!(json_fits(&v, len));
        assert!(!json_fits(&v, len - 1));
        assert!(!json_fits(&"x".repeat(100), 10));
    }

    fn step(txn: &str, label: &str, target: &str, result: &str, detail: &str) -> TrailStep {
        TrailStep {
            txn: txn.into(),
            label: label.into(),
            target: target.into(),
            result: result.into(),
            detail: detail.into(),
            wrote_state: implied_state(result, detail),
            receipt: None,
        }
    }

    #[test]
    fn steps_and_plan_read_back_exactly_and_smaller() {
        let mut odd = step("t1", "custom", "locks/r", "noop", "state a -> b");
        odd.wrote_state = Some("c".into());
        let steps = vec![
            step(
                "t1",
                Step::Commit.label(),
                "tx/t1",
                "updated",
                "state pending -> committed",
            ),
            TrailStep {
                receipt: Some(Receipt::new(100, 95, (41, 2), Some((44, 2)))),
                ..step(
                    "t1",
                    Step::ApplySource.label(),
                    "acc/a1",
                    "updated",
                    "applied -5",
                )
            },
            TrailStep {
                receipt: Some(Receipt::new(95, 100, (44, 2), None)),
                ..step(
                    "t1",
                    Step::UndoSource.label(),
                    "acc/a1",
                    "updated",
                    "undone +5",
                )
            },
            odd,
            step("", "repair", "", "updated", "fixed a1"),
            step("t2", "weird label", "nohost", "strange", "state x -> y"),
            step(
                "t1",
                Step::Finish.label(),
                "tx/t1",
                "noop",
                "state is finished",
            ),
            step(
                "t3",
                Step::RemoveSource.label(),
                "acc/a1",
                "updated",
                "removed from pending",
            ),
            step(
                "t3",
                Step::RolledBack.label(),
                "tx/t3",
                "updated",
                "state terminating -> rolled-back",
            ),
        ];
        let plan = vec![
            format!("t1: {}, {}", Step::Begin.label(), Step::Commit.label()),
            "t2: ".to_string(),
            "release lock r held by w (stale)".to_string(),
            "t3: core 4: pending -> committed, not a label".to_string(),
        ];
        let mut doc = Map::new();
        doc.insert("steps".into(), serde_json::to_value(&steps).unwrap());
        doc.insert("plan".into(), json!(plan));
        let full = serde_json::to_vec(&doc).unwrap().len();
        let original = doc.clone();
        pack(&mut doc);
        assert!(serde_json::to_vec(&doc).unwrap().len() < full, "{doc:#?}");
        assert_eq!(doc["plan"][0], json!(["t1", "c1 c4"]));
        let text = doc["st"].as_str().expect("st as one string");
        assert!(
            text.starts_with(
                "t1;c4|0;c2|1/a1|u|applied -5|$100,95,2,41,44;r2|1/a1|u|undone +5|$95,100,2,44;"
            ),
            "{text}"
        );
        let st = StText::read(text).unwrap();
        assert_eq!(st[0][1], json!(["c4", "0"]), "{st:#?}");
        assert_eq!(st[4][1], json!(["c5", "1/a1"]), "{st:#?}");
        assert_eq!(
            st[0][2],
            json!(["c2", "1/a1", "u", "applied -5", [100, 95, 2, 41, 44]]),
            "{st:#?}"
        );
        assert_eq!(st[4][2], json!(["r4", "0"]), "{st:#?}");
        assert_eq!(doc["plan"][3], json!(plan[3]));
        unpack(&mut doc).unwrap();
        assert_eq!(doc, original);
    }

    #[test]
    fn steps_as_one_string_escape_what_separates_and_are_a_fifth_smaller() {
        let mut odd = step("t#1;|$%", "=x|y", "ix/a;b", "updated", "50% | #3; $4");
        odd.receipt = Some(Receipt::new(-7, 3, (1, 1), None));
        let steps = vec![
            odd,
            step("", "repair", "", "updated", ""),
            step(
                "t2",
                Step::Commit.label(),
                "ix/t2",
                "updated",
                "state pending -> committed",
            ),
            step(
                "t2",
                Step::Finish.label(),
                "ix/t2",
                "updated",
                "state committed -> finished",
            ),
        ];
        let mut doc = Map::new();
        pack_steps(&mut doc, &steps);
        let text = doc["st"].as_str().unwrap().to_string();
        assert!(text.contains("50%25 %7C %233%3B %244"), "{text}");
        assert_eq!(text.matches('#').count(), 2, "three groups: {text}");
        let mut back = doc.clone();
        unpack(&mut back).unwrap();
        let read: Vec<TrailStep> = serde_json::from_value(back["steps"].clone()).unwrap();
        assert_eq!(read, steps);
        // Against the same groups as arrays (the form before): smaller even
        // with every item escaped, a fifth smaller for a run's usual steps.
        let arrays = StText::read(&text).unwrap();
        let (as_text, as_arrays) = (json_len(&doc["st"]), json_len(&arrays));
        assert!(as_text < as_arrays, "{as_text} vs {as_arrays}");
        let mut usual = Map::new();
        let mut applied = step(
            "t9",
            Step::ApplySource.label(),
            "acc/a9",
            "updated",
            "applied -9",
        );
        applied.receipt = Some(Receipt::new(1_000_049, 1_000_040, (1, 1), Some((1000, 1))));
        pack_steps(&mut usual, &[applied, steps[2].clone(), steps[3].clone()]);
        let arrays = StText::read(usual["st"].as_str().unwrap()).unwrap();
        let (as_text, as_arrays) = (json_len(&usual["st"]), json_len(&arrays));
        assert!(as_text * 5 <= as_arrays * 4, "{as_text} vs {as_arrays}");
        // Each step's size as the pager counts it: its text and separator.
        let counted: usize = steps.iter().map(packed_size).sum();
        assert!(counted <= as_text + steps.len(), "{counted} vs {as_text}");
        // A bad escape or receipt is named, not read as something else.
        for bad in ["t1;c4|%2", "t1;c4|%ZZ", "t1;c2|0|u|d|$1,x"] {
            let mut doc = Map::new();
            doc.insert("st".into(), json!(bad));
            assert!(unpack(&mut doc).is_err(), "{bad}");
        }
    }

    #[test]
    fn steps_stored_as_arrays_before_read_as_they_were() {
        let mut doc = Map::new();
        doc.insert("ix".into(), json!(["tx", "acc"]));
        doc.insert(
            "st".into(),
            json!([[
                "t1",
                ["c4", "0"],
                ["c2", "1/a1", "u", "applied -5", [100, 95, 2, 41, 44]]
            ]]),
        );
        unpack(&mut doc).unwrap();
        let read: Vec<TrailStep> = serde_json::from_value(doc["steps"].clone()).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].target, "tx/t1");
        assert_eq!(read[1].detail, "applied -5");
        assert_eq!(
            read[1].receipt,
            Some(Receipt::new(100, 95, (41, 2), Some((44, 2))))
        );
    }

    #[test]
    fn a_parts_planned_transactions_are_kept_apart_and_read_back_first() {
        let mut doc = Map::new();
        doc.insert("transactions".into(), json!(["t1", "x", "t2", "y"]));
        let listed = Listed::of(&["t1".to_string(), "t2".to_string(), "t9".to_string()]);
        let mut none = doc.clone();
        unindex_listed(&mut none, &Listed::default());
        assert_eq!(none, doc);
        unindex_listed(&mut doc, &listed);
        assert_eq!(doc["transactions"], json!(["x", "y"]));
        assert_eq!(doc["planned"], json!(["t1", "t2"]));
        unpack(&mut doc).unwrap();
        assert_eq!(doc["transactions"], json!(["t1", "t2", "x", "y"]));
        assert!(!doc.contains_key("planned"));
        // All planned: no list left to index.
        let mut all = Map::new();
        all.insert("transactions".into(), json!(["t1"]));
        unindex_listed(&mut all, &listed);
        assert_eq!(all["transactions"], json!([]));
        unpack(&mut all).unwrap();
        assert_eq!(all["transactions"], json!(["t1"]));
    }

    #[test]
    fn a_document_in_the_old_form_reads_as_it_is() {
        let steps = vec![step("t1", "x", "tx/t1", "updated", "d")];
        let mut doc = Map::new();
        doc.insert("steps".into(), serde_json::to_value(&steps).unwrap());
        doc.insert("plan".into(), json!(["t1: x"]));
        let original = doc.clone();
        unpack(&mut doc).unwrap();
        assert_eq!(doc, original);
    }
}
