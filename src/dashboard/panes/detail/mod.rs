//! The detail pane: the selected transaction (listed, or read by id once it
//! left the list), or in its place the account drilled into
//! ([`super::account_detail`]). Its view (`view.rs`: the transaction, what
//! became of it and the action previews, derived once), its text
//! (`text.rs`: drawn, and measured here so the scroll is bounded without
//! asking the drawing), the keys only it handles (`j`/`k` scroll it) and
//! its drawing (`draw.rs`).

pub mod draw;
pub mod text;
pub mod view;

use super::account_detail::view::AccountDetail;
use crate::dashboard::app::{App, Pane};
use crate::dashboard::layout::layout_for;
use view::{from_detail, from_snapshot, DetailView, Fate};

/// The detail of the selected transaction: from the snapshot when it is
/// there (`listed`: a row of the table), else from its read by id (the
/// previous detail, marked as being re-read, until that read answers).
pub fn derive(app: &App, listed: bool, prev: Option<DetailView>) -> Option<DetailView> {
    let mut d = detail(app, listed, prev)?;
    d.cause = app
        .snapshot
        .as_ref()
        .and_then(|s| s.cause_of(&d.txn, app.settings.recovery_window));
    Some(d)
}

/// [`derive`] before its cause is judged.
fn detail(app: &App, listed: bool, prev: Option<DetailView>) -> Option<DetailView> {
    let id = app.selection.txn.as_ref()?;
    if let Some(snap) = &app.snapshot {
        if let Some(t) = snap.transactions.iter().find(|t| &t.id == id) {
            let fate = if listed { Fate::Listed } else { Fate::Filtered };
            return Some(from_snapshot(snap, t, fate));
        }
    }
    let prev = prev.filter(|d| &d.txn.id == id);
    let with = |fate: Fate| {
        prev.map(|mut d| {
            d.fate = fate;
            d
        })
    };
    match &app.reads.looked_up {
        Some((looked, found)) if looked == id => match found {
            Ok(Some(d)) => Some(from_detail(d)),
            Ok(None) => with(Fate::Vanished),
            Err(e) => with(Fate::ReadFailed(e.clone())),
        },
        _ => with(Fate::Reading),
    }
}

/// Rows the pane's text takes at the width the detail has when focused
/// (what bounds its scroll): the account drilled into, else the
/// transaction's detail.
pub fn rows(app: &App, detail: Option<&DetailView>, account: Option<&AccountDetail>) -> usize {
    let width = layout_for(app.screen(), Pane::Detail).detail.width;
    match (account, detail) {
        (Some(a), _) => super::account_detail::text::rows(a, width),
        (None, Some(d)) => text::rows(app, d, width),
        (None, None) => 0,
    }
}

/// `j`/`k` (and the wheel) on the detail: scrolls it by `delta` lines, no
/// further than its last line at the bottom of the pane.
pub fn scroll(app: &mut App, delta: isize) {
    let height = layout_for(app.screen(), Pane::Detail).detail.height;
    let max = app
        .view
        .detail_rows
        .saturating_sub(usize::from(height.saturating_sub(2)));
    app.selection.detail_scroll = (app.selection.detail_scroll as isize)
        .saturating_add(delta)
        .clamp(0, max as isize) as usize;
}

impl App {
    /// The id to read by id now, if the selection needs it and it was not
    /// asked for yet (recorded as asked).
    pub fn take_lookup(&mut self) -> Option<String> {
        let id = self.selection.txn.clone()?;
        let listed = self
            .snapshot
            .as_ref()
            .is_some_and(|s| s.transactions.iter().any(|t| t.id == id));
        if listed {
            // Read again by id if it leaves the list again.
            self.reads.lookup_asked = None;
            self.reads.looked_up = None;
            return None;
        }
        if self.reads.lookup_asked.as_ref() == Some(&id) {
            return None;
        }
        if self.reads.looked_up.as_ref().is_some_and(|(l, _)| l != &id) {
            self.reads.looked_up = None;
        }
        self.reads.lookup_asked = Some(id.clone());
        Some(id)
    }
}
