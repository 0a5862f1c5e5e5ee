//! How the dashboard looks: the [`Theme`] (one palette of named colours,
//! chosen by `--theme` or the config file) and whether the screen is drawn in
//! plain ASCII (`--ascii`). The state holds one [`Theme`]; `ui/` takes every
//! colour from it, so no pane carries a colour of its own.
//!
//! A colour never carries a state alone: every coloured state also has a
//! word or a mark (`!`, `!!`, `?`, `stale`, `READ-ONLY`, `WARNING`), so the
//! screen reads the same under `NO_COLOR`, in any palette, and to an
//! operator who cannot tell red from green.

use ratatui::style::{Color, Modifier, Style};

/// The palettes by name (`--theme NAME`, `theme = "NAME"` in the config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThemeName {
    /// Light text on a dark terminal (the default).
    #[default]
    Dark,
    /// Dark, saturated colours for a light terminal background.
    Light,
    /// The bright colours and bold alerts, for low-contrast screens.
    HighContrast,
    /// The Okabe–Ito palette: danger is vermillion, good is blue, never red
    /// against green.
    #[value(alias = "color-blind")]
    #[serde(alias = "color-blind")]
    ColourBlind,
}

impl ThemeName {
    /// Every theme, in the order the help lists them.
    pub const ALL: [ThemeName; 4] = [
        ThemeName::Dark,
        ThemeName::Light,
        ThemeName::HighContrast,
        ThemeName::ColourBlind,
    ];

    /// The name as typed.
    pub fn as_str(self) -> &'static str {
        match self {
            ThemeName::Dark => "dark",
            ThemeName::Light => "light",
            ThemeName::HighContrast => "high-contrast",
            ThemeName::ColourBlind => "colour-blind",
        }
    }
}

/// The colours of every pane, by what they mean. The names are the ones
/// the panes use (`theme.danger`, `theme.warn`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// The palette's name.
    pub name: ThemeName,
    /// Destructive actions, failures, transactions needing investigation.
    pub danger: Color,
    /// Stuck transactions, stale locks and data, forced recovery.
    pub warn: Color,
    /// Malformed documents and unknown states.
    pub odd: Color,
    /// Writes that happened, live locks, green health.
    pub good: Color,
    /// The focused pane and the active filter.
    pub focus: Color,
    /// Secondary text.
    pub dim: Color,
    /// What did nothing (no-op steps).
    pub muted: Color,
    /// Text written on a `danger` background.
    pub on_alert: Color,
    /// Text written on a `warn` background.
    pub on_warn: Color,
    /// No colour at all (`NO_COLOR`): alerts are drawn reversed instead.
    pub mono: bool,
    /// Plain ASCII only (`--ascii`): borders, marks and arrows.
    pub ascii: bool,
}

impl Default for Theme {
    fn default() -> Theme {
        Theme::new(ThemeName::Dark)
    }
}

impl Theme {
    /// The palette `name`, in colour, with Unicode.
    pub fn new(name: ThemeName) -> Theme {
        let (danger, warn, odd, good, focus, dim, muted, on_alert, on_warn) = match name {
            ThemeName::Dark => (
                Color::Red,
                Color::Yellow,
                Color::Magenta,
                Color::Green,
                Color::Cyan,
                Color::DarkGray,
                Color::Gray,
                Color::White,
                Color::Black,
            ),
            // xterm-256 colours dark enough to read on white.
            ThemeName::Light => (
                Color::Indexed(124),
                Color::Indexed(130),
                Color::Indexed(91),
                Color::Indexed(28),
                Color::Indexed(25),
                Color::Indexed(244),
                Color::Indexed(240),
                Color::White,
                Color::White,
            ),
            ThemeName::HighContrast => (
                Color::LightRed,
                Color::LightYellow,
                Color::LightMagenta,
                Color::LightGreen,
                Color::LightCyan,
                Color::Gray,
                Color::White,
                Color::Black,
                Color::Black,
            ),
            // Okabe & Ito, "Color Universal Design" (2008), as the nearest
            // xterm-256 colours: vermillion, orange-yellow, reddish purple,
            // sky blue, bluish green.
            ThemeName::ColourBlind => (
                Color::Indexed(166),
                Color::Indexed(220),
                Color::Indexed(175),
                Color::Indexed(74),
                Color::Indexed(36),
                Color::DarkGray,
                Color::Gray,
                Color::White,
                Color::Black,
            ),
        };
        Theme {
            name,
            danger,
            warn,
            odd,
            good,
            focus,
            dim,
            muted,
            on_alert,
            on_warn,
            mono: false,
            ascii: false,
        }
    }

    /// The theme as the environment asks: `NO_COLOR` set (to anything but
    /// the empty string, <https://no-color.org>) drops every colour.
    pub fn from_env(name: ThemeName, ascii: bool) -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Theme::new(name).with_ascii(ascii).with_mono(no_color)
    }

    /// Drawn in plain ASCII (or not).
    pub fn with_ascii(mut self, ascii: bool) -> Theme {
        self.ascii = ascii;
        self
    }

    /// Every colour dropped (or not): text keeps its marks and words,
    /// alerts are reversed.
    pub fn with_mono(mut self, mono: bool) -> Theme {
        if mono {
            let reset = Color::Reset;
            self = Theme {
                danger: reset,
                warn: reset,
                odd: reset,
                good: reset,
                focus: reset,
                dim: reset,
                muted: reset,
                on_alert: reset,
                on_warn: reset,
                mono: true,
                ..self
            };
        }
        self
    }

    /// Secondary text.
    pub fn dim_text(&self) -> Style {
        Style::new().fg(self.dim)
    }

    /// A bold alert on a `bg` background (`danger` or `warn`): the banner
    /// of a stale screen, a refused dialog, `READ-ONLY`. Reversed without
    /// colour.
    pub fn alert(&self, bg: Color) -> Style {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        if self.mono {
            bold.add_modifier(Modifier::REVERSED)
        } else {
            let fg = if bg == self.warn {
                self.on_warn
            } else {
                self.on_alert
            };
            bold.fg(fg).bg(bg)
        }
    }
}
