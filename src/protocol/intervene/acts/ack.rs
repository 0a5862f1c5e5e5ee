//! Acknowledging transactions and taking an acknowledgement back
//! ([`crate::protocol::acks`]): one act over a selection (ids, `--state`,
//! `--all-stuck`, as the bulk acts take it) going one way or the other
//! ([`AckDirection`]), its plan ([`AckPlan`]), its run and its result
//! ([`Acked`]). It writes only the acks index (no transaction, no
//! account): the pre-flight asks only of it and of the audit index, as a
//! lock release asks only of what it writes. An ack wants a reason (it
//! says why the transaction is left alone); an unack does not.

use super::super::plan::{PlanStep, Planned};
use super::super::selection::{LeftOut, Selection};
use super::super::{ActRefusal, Done, Report, Started};
use super::{Act, Runs, Subject};
use crate::error::{Error, Result};
use crate::protocol::acks::{acks_on, put_ack, remove_ack, Ack, AckRemoval, AckWrite, Acks};
use crate::protocol::time::human_age;
use crate::protocol::trail::{ActOutcome, ActionKind, Ending, TrailStep};
use crate::protocol::Protocol;
use chrono::{DateTime, Utc};
use std::fmt;
use std::time::Duration;

/// Acknowledge the selected transactions for a while (bulk acts and
/// `check` leave them out until it lapses or is taken back), or take
/// their acknowledgements back: recorded as `ack` or `unack`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acknowledge {
    /// Which transactions (acked ones included: acking again renews;
    /// only the acked ones have one to take back).
    pub selection: Selection,
    /// Where `--ids-from` read its ids (the record names it).
    pub ids_source: Option<String>,
    /// Act on a partial view of the transactions (some shards failed).
    pub allow_partial: bool,
    /// Give an acknowledgement or take it back.
    pub direction: AckDirection,
}

/// Which way an [`Acknowledge`] goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckDirection {
    /// Acknowledge (`ack`): ids that name no transaction are left out.
    Give {
        /// How long it holds.
        lasts: Duration,
        /// Where the work on them is tracked.
        ticket: Option<String>,
    },
    /// Take the acknowledgement back (`unack`): ids given that name no
    /// transaction are kept (an ack may outlive its transaction).
    TakeBack,
}

impl AckDirection {
    /// How long the acks will hold (`None`: taken back).
    pub fn lasts(&self) -> Option<Duration> {
        match self {
            AckDirection::Give { lasts, .. } => Some(*lasts),
            AckDirection::TakeBack => None,
        }
    }
}

impl Acknowledge {
    /// Acknowledge the transactions `ids` for `lasts`.
    pub fn ids(ids: Vec<String>, lasts: Duration, ticket: Option<String>) -> Acknowledge {
        Acknowledge::on_ids(ids, AckDirection::Give { lasts, ticket })
    }

    /// Take back the acknowledgements of the transactions `ids`.
    pub fn take_back(ids: Vec<String>) -> Acknowledge {
        Acknowledge::on_ids(ids, AckDirection::TakeBack)
    }

    fn on_ids(ids: Vec<String>, direction: AckDirection) -> Acknowledge {
        Acknowledge {
            selection: Selection::ids(ids),
            ids_source: None,
            allow_partial: false,
            direction,
        }
    }

    /// The selection resolved (acked and held transactions included) and
    /// the acks on it now. Ids given that name no transaction are kept
    /// when taking back and left out when giving.
    async fn resolve(&self, p: &Protocol) -> Result<(Vec<String>, Vec<LeftOut>, Acks)> {
        let sel = Selection {
            include_acked: true,
            include_held: true,
            ..self.selection.clone()
        };
        let selected = p.select(&sel, self.allow_partial).await?;
        let mut ids = selected.ids();
        let mut left_out = selected.left_out;
        if self.direction == AckDirection::TakeBack && !sel.has_filters() {
            ids = sel.ids.clone().unwrap_or_default();
            left_out.clear();
        }
        let acks = acks_on(p, &ids, p.now().await).await?;
        Ok((ids, left_out, acks))
    }
}

impl Act for Acknowledge {
    type Plan = AckPlan;

    fn action(&self) -> ActionKind {
        match self.direction {
            AckDirection::Give { .. } => ActionKind::Ack,
            AckDirection::TakeBack => ActionKind::Unack,
        }
    }

    fn title(&self) -> &'static str {
        match self.direction {
            AckDirection::Give { .. } => "Acknowledge",
            AckDirection::TakeBack => "Take back the acknowledgement of",
        }
    }

    /// Its transactions are named by its plan; nothing of them is
    /// re-read before a confirmed run (an ack writes none of them).
    fn subject(&self) -> Subject {
        Subject::Selection
    }

    fn destructive(&self) -> bool {
        false
    }

    fn updates_documents(&self) -> bool {
        false
    }

    async fn plan(&self, p: &Protocol) -> Result<AckPlan> {
        let (ids, left_out, acks) = self.resolve(p).await?;
        Ok(AckPlan {
            lasts: self.direction.lasts(),
            targets: self.selection.describe(self.ids_source.as_deref()),
            ids,
            left_out,
            acks,
        })
    }

    async fn preview(&self, p: &Protocol) -> Result<AckPlan> {
        self.plan(p).await
    }
}

/// Refused before any write when the acks index is missing (`init`
/// creates it), so no record promises acks that cannot be written.
async fn acks_index_exists(p: &Protocol) -> Result<()> {
    let index = &p.config().indices.acks;
    match p.cluster().index_exists(index).await? {
        true => p.check_partial_updates_on(index).await,
        false => Err(Error::IndexMissing(index.clone())),
    }
}

impl Runs for Acknowledge {
    type Result = Acked;

    /// Each planned transaction in turn: its ack written (made or
    /// renewed, all until the same time) or removed.
    async fn run(started: Started<Acknowledge>, p: &Protocol) -> Done<Acked> {
        let result = async {
            acks_index_exists(p).await?;
            let i = started.intervention();
            let now = p.now().await;
            let given = match &i.act.direction {
                AckDirection::Give { lasts, ticket } => {
                    let lasts = chrono::Duration::from_std(*lasts)
                        .map_err(|e| Error::Invalid(format!("--for is too long: {e}")))?;
                    Some(Ack {
                        txn: String::new(),
                        by: started.trail.operator().user.clone(),
                        reason: i.choices.reason_text().unwrap_or_default().to_string(),
                        ticket: ticket.clone(),
                        since: now,
                        until: now + lasts,
                    })
                }
                AckDirection::TakeBack => None,
            };
            let mut each = Vec::new();
            for txn in &started.plan().ids {
                let outcome = match &given {
                    Some(ack) => {
                        let ack = Ack {
                            txn: txn.clone(),
                            ..ack.clone()
                        };
                        match put_ack(p, &ack).await {
                            Ok(AckWrite::Acked) => AckOutcome::Acked { until: ack.until },
                            Ok(AckWrite::Renewed) => AckOutcome::Renewed { until: ack.until },
                            Err(e) => AckOutcome::Failed(e),
                        }
                    }
                    None => match remove_ack(p, txn, now).await {
                        Ok(AckRemoval::Removed(was)) => AckOutcome::Removed(was),
                        Ok(AckRemoval::NotAcked) => AckOutcome::NotAcked,
                        Err(e) => AckOutcome::Failed(e),
                    },
                };
                each.push((txn.clone(), outcome));
            }
            Ok(each)
        }
        .await;
        started.finish(p, Acked(result)).await
    }
}

/// An ack's or unack's plan: the transactions it acts on, those its
/// selection named and left out, and the acks on them now.
#[derive(Debug, Clone)]
pub struct AckPlan {
    /// How long the acks will hold (`None`: an unack).
    pub lasts: Option<Duration>,
    /// The selection as the options that made it (the record's targets).
    pub targets: Vec<String>,
    /// The transactions acted on.
    pub ids: Vec<String>,
    /// Ids given that are not acted on (unknown, not matching the filters).
    pub left_out: Vec<LeftOut>,
    /// The live acks on them now (an ack renews these; an unack takes
    /// them back).
    pub acks: Acks,
}

impl Planned for AckPlan {
    fn transactions(&self) -> Vec<String> {
        self.ids.clone()
    }

    fn targets(&self) -> Vec<String> {
        self.targets.clone()
    }

    fn steps(&self) -> Vec<PlanStep> {
        self.ids
            .iter()
            .map(|txn| match self.lasts {
                Some(d) => PlanStep::Ack {
                    txn: txn.clone(),
                    lasts: human_age(d.as_secs() as i64),
                },
                None => PlanStep::Unack { txn: txn.clone() },
            })
            .collect()
    }

    fn refusal(&self) -> Option<ActRefusal> {
        None
    }
}

/// What one transaction's ack or unack did.
#[derive(Debug)]
pub enum AckOutcome {
    /// Acknowledged until then (it had no live ack).
    Acked {
        /// When it lapses.
        until: DateTime<Utc>,
    },
    /// Its live ack was renewed until then.
    Renewed {
        /// When it lapses.
        until: DateTime<Utc>,
    },
    /// Its ack was taken back (as it stood).
    Removed(Box<Ack>),
    /// It had no live ack to take back.
    NotAcked,
    /// The write failed.
    Failed(Error),
}

impl fmt::Display for AckOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |t: &DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
        match self {
            AckOutcome::Acked { until } => write!(f, "acknowledged until {}", at(until)),
            AckOutcome::Renewed { until } => write!(f, "ack renewed until {}", at(until)),
            AckOutcome::Removed(was) => write!(f, "ack taken back (was {was})"),
            AckOutcome::NotAcked => f.write_str("not acknowledged: nothing to take back"),
            AckOutcome::Failed(e) => write!(f, "failed: {e}"),
        }
    }
}

/// What an ack or unack did: each transaction's outcome, or why it could
/// not start writing (the acks index missing).
#[derive(Debug)]
pub struct Acked(pub Result<Vec<(String, AckOutcome)>>);

impl Report for Acked {
    fn ending(&self, p: &Protocol, _: &dyn Planned) -> Ending {
        let index = &p.config().indices.acks;
        let each = self.0.as_ref().map_or(&[][..], Vec::as_slice);
        let steps = each
            .iter()
            .map(|(txn, o)| TrailStep {
                txn: txn.clone(),
                label: match o {
                    AckOutcome::Removed(_) | AckOutcome::NotAcked => "unacknowledge",
                    _ => "acknowledge",
                }
                .into(),
                target: format!("{index}/{txn}"),
                result: match o {
                    AckOutcome::Failed(_) => "error",
                    AckOutcome::NotAcked => "noop",
                    _ => "updated",
                }
                .into(),
                detail: o.to_string(),
                wrote_state: None,
                receipt: None,
            })
            .collect();
        let failed =
            self.0.is_err() || each.iter().any(|(_, o)| matches!(o, AckOutcome::Failed(_)));
        let outcome = if failed {
            ActOutcome::Failed
        } else if each.iter().all(|(_, o)| matches!(o, AckOutcome::NotAcked)) {
            ActOutcome::NothingToDo
        } else {
            ActOutcome::Completed
        };
        Ending::of(outcome, self.what(), steps)
    }

    fn ok(&self, _: ActOutcome) -> bool {
        self.0
            .as_ref()
            .is_ok_and(|each| !each.iter().any(|(_, o)| matches!(o, AckOutcome::Failed(_))))
    }

    fn what(&self) -> String {
        let each = match &self.0 {
            Err(e) => return format!("failed: {e}"),
            Ok(each) if each.is_empty() => return "no transaction selected".into(),
            Ok(each) => each,
        };
        let count = |f: fn(&AckOutcome) -> bool| each.iter().filter(|(_, o)| f(o)).count();
        let mut parts = Vec::new();
        let acked = count(|o| matches!(o, AckOutcome::Acked { .. } | AckOutcome::Renewed { .. }));
        if acked > 0 {
            let until = each.iter().find_map(|(_, o)| match o {
                AckOutcome::Acked { until } | AckOutcome::Renewed { until } => Some(*until),
                _ => None,
            });
            let until = until.map_or(String::new(), |u| {
                format!(" until {}", u.format("%Y-%m-%d %H:%M UTC"))
            });
            parts.push(format!("{acked} acknowledged{until}"));
        }
        let removed = count(|o| matches!(o, AckOutcome::Removed(_)));
        if removed > 0 {
            parts.push(format!("{removed} ack(s) taken back"));
        }
        let none = count(|o| matches!(o, AckOutcome::NotAcked));
        if none > 0 {
            parts.push(format!("{none} not acknowledged"));
        }
        let failed = count(|o| matches!(o, AckOutcome::Failed(_)));
        if failed > 0 {
            parts.push(format!("{failed} failed"));
        }
        parts.join(", ")
    }
}
