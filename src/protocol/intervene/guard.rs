//! Production guardrails, the rule written once: on a profile marked
//! `production = true`, a bulk act and a forced act run only when the
//! operator has typed what the [`Guard`] asks — the count of transactions
//! a bulk act covers, or the profile's name (a forced act on one target
//! asks for the name only: typing `1` is as reflexive as `y`). The
//! dashboard asks for it in its dialog, the command line takes it as
//! `--confirm`, and [`super::start`] checks it again against its own plan
//! before anything is written.

use std::fmt;

/// What the operator must type before an act runs on a production profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The production profile's name.
    pub profile: String,
    /// The transactions a bulk act covers (`None`: a forced act on one
    /// target, confirmed by the profile's name only).
    pub count: Option<usize>,
}

impl Guard {
    /// The guard an act meets: `Some` on a production profile for a bulk
    /// act (`bulk`: how many transactions it covers) or a forced one.
    pub fn of(
        profile: Option<&str>,
        production: bool,
        forced: bool,
        bulk: Option<usize>,
    ) -> Option<Guard> {
        let profile = profile.filter(|_| production)?;
        (forced || bulk.is_some()).then(|| Guard {
            profile: profile.to_string(),
            count: bulk,
        })
    }

    /// Whether `typed` confirms it: the count (of a bulk act) or the
    /// profile's name, exactly (surrounding blanks aside).
    pub fn accepts(&self, typed: Option<&str>) -> bool {
        let Some(typed) = typed.map(str::trim) else {
            return false;
        };
        typed == self.profile || self.count.is_some_and(|n| typed == n.to_string())
    }

    /// What to type, in words: "37 (the count) or `prod` (the profile)".
    pub fn asks(&self) -> String {
        match self.count {
            Some(n) => format!("{n} (the count) or `{}` (the profile)", self.profile),
            None => format!("`{}` (the profile)", self.profile),
        }
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.count {
            Some(n) => format!("a bulk act on {n} transaction(s)"),
            None => "a forced act".to_string(),
        };
        write!(
            f,
            "profile `{}` is production: {what} runs only once confirmed by typing {}",
            self.profile,
            self.asks()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Guard;

    #[test]
    fn only_bulk_or_forced_acts_on_production_are_guarded() {
        assert_eq!(Guard::of(Some("prod"), false, true, Some(3)), None);
        assert_eq!(Guard::of(None, true, true, Some(3)), None);
        assert_eq!(Guard::of(Some("prod"), true, false, None), None);
        let g = Guard::of(Some("prod"), true, false, Some(37)).unwrap();
        assert!(g.accepts(Some("37")) && g.accepts(Some(" prod ")));
        assert!(!g.accepts(Some("36")) && !g.accepts(Some("y")) && !g.accepts(None));
        let forced = Guard::of(Some("prod"), true, true, None).unwrap();
        assert!(forced.accepts(Some("prod")) && !forced.accepts(Some("1")));
        assert_eq!(g.asks(), "37 (the count) or `prod` (the profile)");
    }
}
