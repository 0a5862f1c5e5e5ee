//! One loader state for everything the dashboard reads in the background
//! (after ratatui's async example's `LoadingState`): nothing asked yet,
//! asked and waiting, arrived, or failed with why. One type instead of a
//! value, a "loading" flag and an error beside each other, so no screen can
//! show a result and a spinner for the same read at once.

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
}

impl<T> Load<T> {
    /// `Loaded` or `Failed`, from a read's result.
    pub fn of(result: Result<T, String>) -> Load<T> {
        match result {
            Ok(v) => Load::Loaded(v),
            Err(e) => Load::Failed(e),
        }
    }

    /// The value, once arrived.
    pub fn value(&self) -> Option<&T> {
        match self {
            Load::Loaded(v) => Some(v),
            _ => None,
        }
    }

    /// Whether it is waiting for an answer.
    pub fn is_loading(&self) -> bool {
        matches!(self, Load::Loading)
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
        l = Load::of(Ok(7));
        assert_eq!(
            (l.value(), l.is_done(), l.is_loading()),
            (Some(&7), true, false)
        );
        l = Load::of(Err("unreachable".into()));
        assert_eq!(l, Load::Failed("unreachable".into()));
        assert!(l.is_done() && l.value().is_none());
    }
}
