//! A dashboard session's fixed settings: the cluster, the windows the
//! stuck rule uses, read-only, the profile in use and how it marks the
//! screen (a labelled, coloured frame; production's typed confirmations),
//! and whether other operators can be seen (not with a file trail).

use crate::protocol::intervene::Guard;
use std::time::Duration;

/// Fixed settings of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Cluster URL (shown in the header).
    pub url: String,
    /// The recovery window.
    pub recovery_window: Duration,
    /// When a transaction needs investigation.
    pub investigate_after: Duration,
    /// Actions disabled.
    pub read_only: bool,
    /// `estx-tui init` hint uses these.
    pub transactions_index: String,
    /// The config profile in use (shown in the header).
    pub profile: Option<String>,
    /// How the profile marks the screen (a labelled, coloured frame) and
    /// whether it is production (typed confirmations); `None`: no frame.
    pub mark: Option<ProfileMark>,
    /// The profile's runbook URL per cause, shown beside a cause (the
    /// detail pane, the by-cause view).
    pub runbooks: crate::protocol::read::verdict::Runbooks,
    /// Why other operators' jobs and acts cannot be seen (a file audit
    /// trail: the poll asks the cluster nothing of them), said in the jobs
    /// view; `None`: they are read from the audit index.
    pub others_unavailable: Option<crate::protocol::jobs::OthersUnavailable>,
}

impl Settings {
    /// Whether the profile in use is marked `production = true`.
    pub fn production(&self) -> bool {
        self.mark.as_ref().is_some_and(|m| m.production)
    }

    /// What the operator must type before `forced` (or bulk: `bulk`
    /// transactions) runs, on a production profile (the protocol's rule).
    pub fn guard(&self, forced: bool, bulk: Option<usize>) -> Option<Guard> {
        Guard::of(self.profile.as_deref(), self.production(), forced, bulk)
    }
}

/// The frame a profile draws around the whole screen (`label`, `colour`
/// in its config; `production = true` gives a red `PRODUCTION` one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileMark {
    /// Shown on the frame's top edge.
    pub label: String,
    /// The frame's colour.
    pub colour: MarkColour,
    /// The profile is production: bulk and forced acts want a typed
    /// confirmation.
    pub production: bool,
}

/// The colour of a profile's frame: one of the theme's, or the profile's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkColour {
    /// The theme's danger colour (production's default).
    Danger,
    /// The theme's warning colour (a label without a colour).
    Warn,
    /// The colour the profile names (`colour = "blue"`, `"#3366ff"`).
    Named(ratatui::style::Color),
}
