//! What sits over the panes, as a stack (after helix's compositor): the
//! confirmation dialog, help, the filter and look-up being typed, the audit
//! pane. The top one takes every key first (`update` hands it the
//! key; nothing reaches the panes below while one is open), closing it
//! uncovers the one under it (Enter on an audit finding opens a dialog over
//! the audit pane; closing the dialog goes back to the pane), and the
//! renderer draws them bottom to top.

use super::dialog::Dialog;
use super::stop::StopAsk;

/// One layer over the panes.
#[derive(Debug, Clone)]
pub enum Overlay {
    /// A confirmation dialog.
    Dialog(Box<Dialog>),
    /// Help, scrolled down by `scroll` lines when it does not fit.
    Help {
        /// Lines scrolled down.
        scroll: usize,
    },
    /// Typing the text filter (`/`); the text is `App::filter`, which the
    /// table follows as it is typed.
    Filter,
    /// Typing a transaction id to look up (`#`), as typed so far.
    LookUp(String),
    /// The audit pane (its findings and cursor are `App::audit`).
    Audit,
    /// The stuck transactions by cause (`c`).
    Groups,
    /// The jobs view (its list and cursor are `App::jobs`).
    Jobs,
    /// The question before a bulk run is stopped (the stop key), or before
    /// quitting during one (`q`, Ctrl-C).
    StopRun(StopAsk),
}

/// Which layer an [`Overlay`] is, without its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverlayKind {
    /// [`Overlay::Dialog`].
    Dialog,
    /// [`Overlay::Help`].
    Help,
    /// [`Overlay::Filter`].
    Filter,
    /// [`Overlay::LookUp`].
    LookUp,
    /// [`Overlay::Audit`].
    Audit,
    /// The view by cause.
    Groups,
    /// [`Overlay::Jobs`].
    Jobs,
    /// [`Overlay::StopRun`].
    StopRun,
}

impl Overlay {
    /// Which layer it is.
    pub fn kind(&self) -> OverlayKind {
        match self {
            Overlay::Dialog(_) => OverlayKind::Dialog,
            Overlay::Help { .. } => OverlayKind::Help,
            Overlay::Filter => OverlayKind::Filter,
            Overlay::LookUp(_) => OverlayKind::LookUp,
            Overlay::Audit => OverlayKind::Audit,
            Overlay::Groups => OverlayKind::Groups,
            Overlay::Jobs => OverlayKind::Jobs,
            Overlay::StopRun(_) => OverlayKind::StopRun,
        }
    }
}

/// The layers over the panes, bottom first.
#[derive(Debug, Clone, Default)]
pub struct Overlays(Vec<Overlay>);

impl Overlays {
    /// The layer that takes the keys.
    pub fn top(&self) -> Option<&Overlay> {
        self.0.last()
    }

    /// The same, to change it.
    pub fn top_mut(&mut self) -> Option<&mut Overlay> {
        self.0.last_mut()
    }

    /// Opens `o` on top; one already open of its kind is closed first (a
    /// layer is never open twice).
    pub fn open(&mut self, o: Overlay) {
        self.close(o.kind());
        self.0.push(o);
    }

    /// Closes the layer of `kind`, if open; says whether it was.
    pub fn close(&mut self, kind: OverlayKind) -> bool {
        let before = self.0.len();
        self.0.retain(|o| o.kind() != kind);
        self.0.len() != before
    }

    /// Whether a layer of `kind` is open.
    pub fn is_open(&self, kind: OverlayKind) -> bool {
        self.0.iter().any(|o| o.kind() == kind)
    }

    /// Whether nothing is open over the panes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The layers, bottom first (the order they are drawn in).
    pub fn iter(&self) -> impl Iterator<Item = &Overlay> {
        self.0.iter()
    }

    /// The open dialog.
    pub fn dialog(&self) -> Option<&Dialog> {
        self.0.iter().find_map(|o| match o {
            Overlay::Dialog(d) => Some(&**d),
            _ => None,
        })
    }

    /// The open dialog, to change it.
    pub fn dialog_mut(&mut self) -> Option<&mut Dialog> {
        self.0.iter_mut().find_map(|o| match o {
            Overlay::Dialog(d) => Some(&mut **d),
            _ => None,
        })
    }

    /// Closes the dialog and gives it back.
    pub fn take_dialog(&mut self) -> Option<Dialog> {
        let i = self
            .0
            .iter()
            .position(|o| o.kind() == OverlayKind::Dialog)?;
        match self.0.remove(i) {
            Overlay::Dialog(d) => Some(*d),
            _ => None,
        }
    }

    /// Opens `d` on top (in place of any open dialog).
    pub fn open_dialog(&mut self, d: Dialog) {
        self.open(Overlay::Dialog(Box::new(d)));
    }

    /// The help overlay's scroll, when it is open.
    pub fn help_scroll(&self) -> Option<usize> {
        self.0.iter().find_map(|o| match o {
            Overlay::Help { scroll } => Some(*scroll),
            _ => None,
        })
    }

    /// The question before stopping a bulk run, when it is open.
    pub fn stop_ask(&self) -> Option<&StopAsk> {
        self.0.iter().find_map(|o| match o {
            Overlay::StopRun(a) => Some(a),
            _ => None,
        })
    }

    /// The same, to change it.
    pub fn stop_ask_mut(&mut self) -> Option<&mut StopAsk> {
        self.0.iter_mut().find_map(|o| match o {
            Overlay::StopRun(a) => Some(a),
            _ => None,
        })
    }

    /// The id being typed to look up, when `#` is open.
    pub fn typed_lookup(&self) -> Option<&str> {
        self.0.iter().find_map(|o| match o {
            Overlay::LookUp(s) => Some(s.as_str()),
            _ => None,
        })
    }
}
