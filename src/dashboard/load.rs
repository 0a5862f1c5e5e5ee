//! One loader state for everything the dashboard reads in the background
//! (after ratatui's async example's `LoadingState`): nothing asked yet,
//! asked and waiting, arrived, or failed with why. One type instead of a
//! value, a "loading" flag and an error beside each other. A read asked
//! again keeps its last answer on screen while the new one runs
//! ([`Load::Reloading`]: the history of the selection, the audit pane).

/// What became of a background read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Load<T> {
    /// Not asked for.
    #[default]
    Idle,
    /// Asked for; the answer has not arrived.
    Loading,
    /// Arrived.
    Loaded(T),
    /// Failed: why, in words.
    Failed(String),
    /// Asked again: the last answer (a value, or why it failed) stays
    /// shown until the new one arrives.
    Reloading(Result<T, String>),
}

impl<T> Load<T> {
    /// `Loaded` or `Failed`, from a read's result (its error in words).
    pub fn of<E: std::fmt::Display>(result: Result<T, E>) -> Load<T> {
        match result {
            Ok(v) => Load::Loaded(v),
            Err(e) => Load::Failed(e.to_string()),
        }
    }

    /// The value to show: arrived, or kept while it is read again.
    pub fn value(&self) -> Option<&T> {
        match self {
            Load::Loaded(v) | Load::Reloading(Ok(v)) => Some(v),
            _ => None,
        }
    }

    /// The last answer to show (`None` before the first arrives), kept
    /// while it is read again.
    pub fn last(&self) -> Option<Result<&T, &str>> {
        match self {
            Load::Loaded(v) | Load::Reloading(Ok(v)) => Some(Ok(v)),
            Load::Failed(e) | Load::Reloading(Err(e)) => Some(Err(e)),
            Load::Idle | Load::Loading => None,
        }
    }

    /// Asks again: the last answer, if any, is kept ([`Load::Reloading`]).
    pub fn reload(&mut self) {
        *self = match std::mem::take(self) {
            Load::Loaded(v) => Load::Reloading(Ok(v)),
            Load::Failed(e) => Load::Reloading(Err(e)),
            r @ Load::Reloading(_) => r,
            Load::Idle | Load::Loading => Load::Loading,
        };
    }

    /// The read was dropped without an answer (it was for something no
    /// longer shown): back to the last answer, or to idle.
    pub fn settle(&mut self) {
        *self = match std::mem::take(self) {
            Load::Reloading(r) => Load::of(r),
            Load::Loading => Load::Idle,
            other => other,
        };
    }

    /// Whether it is waiting for an answer.
    pub fn is_loading(&self) -> bool {
        matches!(self, Load::Loading | Load::Reloading(_))
    }

    /// Whether the answer arrived (a value or a failure).
    pub fn is_done(&self) -> bool {
        matches!(self, Load::Loaded(_) | Load::Failed(_))
    }
}

#[cfg(test)]
mod tests {
    use crate::dashboard::load::Load;

    #[test]
    fn a_read_goes_from_idle_through_loading_to_its_answer() {
        let mut l: Load<u32> = Load::default();
        assert_eq!(l, Load::Idle);
        assert!(!l.is_loading() && !l.is_done() && l.value().is_none());
        l = Load::Loading;
        assert!(l.is_loading() && !l.is_done());
        l = Load::of(Ok::<_, String>(7));
        assert_eq!(
            (l.value(), l.is_done(), l.is_loading()),
            (Some(&7), true, false)
        );
        l = Load::of(Err::<u32, _>("unreachable"));
        assert_eq!(l, Load::Failed("unreachable".into()));
        assert!(l.is_done() && l.value().is_none());
    }

    #[test]
    fn a_read_asked_again_keeps_its_last_answer_until_the_new_one() {
        let mut l = Load::of(Ok::<_, String>(7));
        l.reload();
        assert_eq!(l, Load::Reloading(Ok(7)));
        assert!(l.is_loading() && !l.is_done());
        assert_eq!((l.value(), l.last()), (Some(&7), Some(Ok(&7))));
        l.reload();
        assert_eq!(l, Load::Reloading(Ok(7)), "asking twice keeps it too");
        l = Load::of(Err::<_, &str>("timeout"));
        l.reload();
        assert_eq!((l.value(), l.last()), (None, Some(Err("timeout"))));
        l.settle();
        assert_eq!(l, Load::Failed("timeout".into()));
        let mut fresh: Load<u32> = Load::Idle;
        fresh.reload();
        assert_eq!((fresh.clone(), fresh.last()), (Load::Loading, None));
        fresh.settle();
        assert_eq!(fresh, Load::Idle);
    }
}
