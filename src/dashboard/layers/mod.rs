//! The layers over the panes, as a stack (after helix's compositor and
//! gitui's popups): the confirmation dialog, help, the filter and look-up
//! being typed, the audit pane, the stuck transactions by cause, the jobs
//! view, the timeline of interventions and the stop question. Each layer is a module that owns its state
//! (carried by its [`Overlay`] variant, so the stack carries the state),
//! its keys (`key`, returning an [`Outcome`]: what it asks of the rest of
//! the dashboard) and its key hints; the stack hands the top one every key
//! (nothing reaches the panes below while one is open), closing one
//! uncovers the one under it (Enter on an audit finding opens a dialog
//! over the audit pane; closing the dialog goes back to the pane), and the
//! renderer draws them bottom to top.
//!
//! A layer closed keeps its state in the stack (`kept`) when it says so
//! ([`Overlay::keeps`]): the by-cause counts, the jobs list and the audit
//! cursor are there again when it reopens, and a count still running is
//! not asked twice.
//!
//! What every layer imports (the [`Context`] a key reads, the [`Outcome`]
//! and [`Effect`]s it returns, hints) is `contract.rs`, re-exported here:
//! a layer never imports the stack that holds it.
//!
//! Adding a layer: its module here (state, `key`, `hints`, `draw`, tests),
//! its variant and the arms of [`Overlay`]'s dispatch below with the key
//! that opens it in [`open_for`], and that key in the one key table
//! (`keymap/table.rs`).

pub mod audit;
mod contract;
pub mod dialog;
pub mod filter;
pub mod groups;
pub mod help;
pub mod jobs;
pub mod lookup;
pub mod stop;
pub mod timeline;

use super::event::IoRequest;
use super::keymap::{DialogOp, Keymap, Op};
pub use contract::{hint, Context, DrawCx, Effect, FilterEdit, Hint, Outcome};
use crossterm::event::KeyEvent;
use dialog::Dialog;
use ratatui::layout::Rect;
use ratatui::Frame;
use stop::StopAsk;

/// One layer over the panes, carrying its state.
#[derive(Debug, Clone)]
pub enum Overlay {
    /// A confirmation dialog.
    Dialog(Box<Dialog>),
    /// Help.
    Help(help::Help),
    /// Typing the text filter (`/`); the text is the table's query
    /// (`App::query`), which the table follows as it is typed.
    Filter,
    /// Typing a transaction id to look up (`#`).
    LookUp(lookup::LookUp),
    /// The audit pane (the report is `App::audit`: the background audit
    /// runs whether the pane is open or not).
    Audit(audit::Audit),
    /// The stuck transactions by cause (`c`).
    Groups(groups::GroupsView),
    /// The jobs view (`J`).
    Jobs(jobs::JobsView),
    /// The last hour's interventions (`T`).
    Timeline(timeline::TimelineView),
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
    /// [`Overlay::Groups`].
    Groups,
    /// [`Overlay::Jobs`].
    Jobs,
    /// [`Overlay::Timeline`].
    Timeline,
    /// [`Overlay::StopRun`].
    StopRun,
}

impl Overlay {
    /// Which layer it is.
    pub fn kind(&self) -> OverlayKind {
        match self {
            Overlay::Dialog(_) => OverlayKind::Dialog,
            Overlay::Help(_) => OverlayKind::Help,
            Overlay::Filter => OverlayKind::Filter,
            Overlay::LookUp(_) => OverlayKind::LookUp,
            Overlay::Audit(_) => OverlayKind::Audit,
            Overlay::Groups(_) => OverlayKind::Groups,
            Overlay::Jobs(_) => OverlayKind::Jobs,
            Overlay::Timeline(_) => OverlayKind::Timeline,
            Overlay::StopRun(_) => OverlayKind::StopRun,
        }
    }

    /// Whether the layer keeps its state once closed, for when it opens
    /// again.
    pub fn keeps(&self) -> bool {
        matches!(
            self,
            Overlay::Audit(_) | Overlay::Groups(_) | Overlay::Jobs(_) | Overlay::Timeline(_)
        )
    }

    /// A key for the layer: it changes its own state and says what else
    /// follows.
    pub fn key(&mut self, cx: &Context, key: KeyEvent) -> Outcome {
        match self {
            Overlay::Dialog(d) => d.key(cx, key),
            Overlay::Help(h) => h.key(cx, key),
            Overlay::LookUp(l) => l.key(key),
            Overlay::Audit(a) => a.key(cx, key),
            Overlay::Groups(g) => g.key(cx, key),
            Overlay::Jobs(j) => j.key(cx, key),
            Overlay::Timeline(t) => t.key(cx, key),
            Overlay::Filter => filter::key(key),
            Overlay::StopRun(s) => s.key(cx, key),
        }
    }

    /// Draws the layer over `area` (the filter and look-up show in the
    /// table's title and the key bar).
    pub fn draw(&self, frame: &mut Frame, cx: &DrawCx, area: Rect) {
        match self {
            Overlay::Dialog(d) => dialog::draw::render(frame, cx, d, area),
            Overlay::Help(h) => help::draw::render(frame, cx, h, area),
            Overlay::Audit(a) => audit::draw::render(frame, cx, a, area),
            Overlay::Groups(g) => groups::draw::render(frame, cx, g, area),
            Overlay::Jobs(j) => jobs::draw::render(frame, cx, j, area),
            Overlay::Timeline(t) => timeline::draw::render(frame, cx, t, area),
            Overlay::StopRun(s) => stop::draw::render(frame, cx, s, area),
            Overlay::Filter | Overlay::LookUp(_) => {}
        }
    }

    /// The key bar's hints while the layer is on top (the force key only
    /// when `y` would be refused).
    pub fn hints(&self, keys: &Keymap) -> Vec<Hint> {
        match self {
            Overlay::Dialog(d) => keys
                .dialog
                .iter()
                .filter(|b| b.op != DialogOp::Force || d.needs_force())
                .filter(|b| b.op != DialogOp::SavePlan || d.selection_plan().is_some())
                .filter_map(|b| b.bar.map(|(p, w)| (p, b.label.to_string(), w.to_string())))
                .collect(),
            Overlay::Help(_) => help::Help::hints(keys),
            Overlay::LookUp(l) => l.hints(),
            Overlay::Audit(_) => audit::Audit::hints(keys),
            Overlay::Groups(_) => groups::GroupsView::hints(),
            Overlay::Jobs(_) => jobs::JobsView::hints(),
            Overlay::Timeline(_) => timeline::TimelineView::hints(),
            Overlay::Filter => filter::hints(),
            Overlay::StopRun(_) => StopAsk::hints(keys),
        }
    }
}

/// The layer a key of the main table opens on the panes, with the I/O it
/// asks for (`None`: the key is no layer's).
pub fn open_for(op: Op, kept: &mut Overlays) -> Option<(Overlay, Vec<IoRequest>)> {
    Some(match op {
        Op::Help => (Overlay::Help(help::Help::default()), vec![]),
        Op::LookUp => (Overlay::LookUp(lookup::LookUp::default()), vec![]),
        Op::Groups => {
            let mut g = kept.take_kept::<groups::GroupsView>().unwrap_or_default();
            let io = g.open();
            (Overlay::Groups(g), io)
        }
        Op::Jobs => {
            let mut j = kept.take_kept::<jobs::JobsView>().unwrap_or_default();
            let io = j.open();
            (Overlay::Jobs(j), io)
        }
        Op::Timeline => {
            let mut t = kept
                .take_kept::<timeline::TimelineView>()
                .unwrap_or_default();
            let io = t.open();
            (Overlay::Timeline(t), io)
        }
        _ => return None,
    })
}

/// A type carried by one [`Overlay`] variant, so the stack finds a layer's
/// state by its type.
pub trait Layer: Sized {
    /// The variant's kind.
    const KIND: OverlayKind;
    /// The state, when `o` is this layer.
    fn of(o: &Overlay) -> Option<&Self>;
    /// The same, to change it.
    fn of_mut(o: &mut Overlay) -> Option<&mut Self>;
    /// The state out of its variant.
    fn take(o: Overlay) -> Option<Self>;
}

macro_rules! layer {
    ($variant:ident, $ty:ty) => {
        impl Layer for $ty {
            const KIND: OverlayKind = OverlayKind::$variant;
            fn of(o: &Overlay) -> Option<&Self> {
                match o {
                    Overlay::$variant(s) => Some(s),
                    _ => None,
                }
            }
            fn of_mut(o: &mut Overlay) -> Option<&mut Self> {
                match o {
                    Overlay::$variant(s) => Some(s),
                    _ => None,
                }
            }
            fn take(o: Overlay) -> Option<Self> {
                match o {
                    Overlay::$variant(s) => Some(s),
                    _ => None,
                }
            }
        }
    };
}

layer!(Dialog, Box<Dialog>);
layer!(Help, help::Help);
layer!(LookUp, lookup::LookUp);
layer!(Audit, audit::Audit);
layer!(Groups, groups::GroupsView);
layer!(Jobs, jobs::JobsView);
layer!(Timeline, timeline::TimelineView);
layer!(StopRun, StopAsk);

/// The layers over the panes, bottom first, and the closed ones that keep
/// their state.
#[derive(Debug, Clone, Default)]
pub struct Overlays {
    open: Vec<Overlay>,
    kept: Vec<Overlay>,
}

impl Overlays {
    /// The layer that takes the keys.
    pub fn top(&self) -> Option<&Overlay> {
        self.open.last()
    }

    /// The same, to change it.
    pub fn top_mut(&mut self) -> Option<&mut Overlay> {
        self.open.last_mut()
    }

    /// Opens `o` on top; one already open of its kind is closed first (a
    /// layer is never open twice).
    pub fn open(&mut self, o: Overlay) {
        let kind = o.kind();
        self.open.retain(|o| o.kind() != kind);
        self.kept.retain(|o| o.kind() != kind);
        self.open.push(o);
    }

    /// Closes the layer of `kind`, if open (keeping its state if it
    /// keeps it); says whether it was.
    pub fn close(&mut self, kind: OverlayKind) -> bool {
        let Some(i) = self.open.iter().position(|o| o.kind() == kind) else {
            return false;
        };
        let o = self.open.remove(i);
        if o.keeps() {
            self.kept.retain(|k| k.kind() != kind);
            self.kept.push(o);
        }
        true
    }

    /// Whether a layer of `kind` is open.
    pub fn is_open(&self, kind: OverlayKind) -> bool {
        self.open.iter().any(|o| o.kind() == kind)
    }

    /// Whether nothing is open over the panes.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The layers, bottom first (the order they are drawn in).
    pub fn iter(&self) -> impl Iterator<Item = &Overlay> {
        self.open.iter()
    }

    /// The state of the open layer `L`.
    pub fn get<L: Layer>(&self) -> Option<&L> {
        self.open.iter().find_map(L::of)
    }

    /// The same, to change it.
    pub fn get_mut<L: Layer>(&mut self) -> Option<&mut L> {
        self.open.iter_mut().find_map(L::of_mut)
    }

    /// The state of layer `L`, open or kept closed.
    pub fn state<L: Layer>(&self) -> Option<&L> {
        self.open.iter().chain(self.kept.iter()).find_map(L::of)
    }

    /// The state of layer `L`, open or kept closed (what a late answer
    /// to its read updates).
    pub fn state_mut<L: Layer>(&mut self) -> Option<&mut L> {
        self.open
            .iter_mut()
            .chain(self.kept.iter_mut())
            .find_map(L::of_mut)
    }

    /// Takes the kept state of a closed layer `L` (to open it again).
    pub fn take_kept<L: Layer>(&mut self) -> Option<L> {
        let i = self.kept.iter().position(|o| o.kind() == L::KIND)?;
        L::take(self.kept.remove(i))
    }

    /// Closes the open layer `L` and gives its state back (not kept).
    pub fn take<L: Layer>(&mut self) -> Option<L> {
        let i = self.open.iter().position(|o| o.kind() == L::KIND)?;
        L::take(self.open.remove(i))
    }

    /// The open dialog.
    pub fn dialog(&self) -> Option<&Dialog> {
        self.get::<Box<Dialog>>().map(|d| &**d)
    }

    /// The open dialog, to change it.
    pub fn dialog_mut(&mut self) -> Option<&mut Dialog> {
        self.get_mut::<Box<Dialog>>().map(|d| &mut **d)
    }

    /// Closes the dialog and gives it back.
    pub fn take_dialog(&mut self) -> Option<Dialog> {
        self.take::<Box<Dialog>>().map(|d| *d)
    }

    /// Opens `d` on top (in place of any open dialog).
    pub fn open_dialog(&mut self, d: Dialog) {
        self.open(Overlay::Dialog(Box::new(d)));
    }

    /// The question before stopping a bulk run, when it is open.
    pub fn stop_ask(&self) -> Option<&StopAsk> {
        self.get::<StopAsk>()
    }

    /// The same, to change it.
    pub fn stop_ask_mut(&mut self) -> Option<&mut StopAsk> {
        self.get_mut::<StopAsk>()
    }

    /// The id being typed to look up, when `#` is open.
    pub fn typed_lookup(&self) -> Option<&str> {
        self.get::<lookup::LookUp>().map(|l| l.typed.as_str())
    }
}

/// What the layers' unit tests hand a layer: the default keys, a plain
/// (not production) session, no audit, an 80×24 screen.
#[cfg(test)]
pub(crate) mod fixture {
    use super::audit::AuditState;
    use super::*;
    use crate::dashboard::look::Theme;
    use crate::dashboard::settings::Settings;

    /// The shared pieces a [`Context`] borrows.
    pub struct Shared {
        pub keys: Keymap,
        pub settings: Settings,
        pub audit: AuditState,
        pub theme: Theme,
    }

    impl Shared {
        pub fn new() -> Shared {
            Shared {
                keys: Keymap::default(),
                settings: Settings {
                    url: "http://localhost:9200".into(),
                    recovery_window: std::time::Duration::from_secs(60),
                    investigate_after: std::time::Duration::from_secs(3600),
                    read_only: false,
                    transactions_index: "transactions".into(),
                    profile: None,
                    mark: None,
                    runbooks: Default::default(),
                    others_unavailable: None,
                },
                audit: AuditState::default(),
                theme: Theme::default(),
            }
        }

        /// A context with no act refused.
        pub fn cx(&self) -> Context<'_> {
            let now = chrono::DateTime::UNIX_EPOCH;
            Context {
                keys: &self.keys,
                settings: &self.settings,
                now,
                audit: &self.audit,
                help_rows: (0, 0),
                screen: (80, 24),
                draw: DrawCx {
                    theme: &self.theme,
                    keys: &self.keys,
                    settings: &self.settings,
                    now,
                    size: (80, 24),
                    audit: &self.audit,
                    bulk: None,
                },
            }
        }
    }

    /// A plain key press.
    pub fn key(code: crossterm::event::KeyCode) -> KeyEvent {
        KeyEvent::new(code, crossterm::event::KeyModifiers::NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_layer_that_keeps_its_state_finds_it_again_and_one_that_does_not_starts_afresh() {
        let mut stack = Overlays::default();
        let view = groups::GroupsView {
            cursor: 3,
            ..Default::default()
        };
        stack.open(Overlay::Groups(view));
        stack.open(Overlay::Help(help::Help { scroll: 2 }));
        assert_eq!(stack.top().map(Overlay::kind), Some(OverlayKind::Help));
        assert!(stack.close(OverlayKind::Help));
        assert!(stack.close(OverlayKind::Groups));
        assert!(stack.is_empty());
        assert!(stack.state::<help::Help>().is_none(), "help keeps nothing");
        assert_eq!(
            stack.state::<groups::GroupsView>().map(|g| g.cursor),
            Some(3)
        );
        let (reopened, _) = open_for(Op::Groups, &mut stack).unwrap();
        assert!(matches!(&reopened, Overlay::Groups(g) if g.cursor == 3));
        assert!(stack.state::<groups::GroupsView>().is_none(), "taken back");
    }
}
