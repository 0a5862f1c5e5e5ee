//! The transaction table's sort keys: which `o` moves through, how the
//! table's title names the order in force (`O` reverses it).

/// Transaction table sort keys (`o` cycles, `O` reverses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    /// Oldest modification first.
    Age,
    /// By state in protocol order.
    State,
    /// By amount.
    Amount,
    /// By id.
    Id,
}

impl SortKey {
    /// Column name shown in the title.
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Age => "age",
            SortKey::State => "state",
            SortKey::Amount => "amount",
            SortKey::Id => "id",
        }
    }

    /// How the title says the order in force: the age key in words
    /// (ascending modification time is *descending* age, so an arrow would
    /// read backwards), the others with an arrow (↑ ascending).
    pub fn order_label(self, desc: bool) -> String {
        match (self, desc) {
            (SortKey::Age, false) => "oldest first".into(),
            (SortKey::Age, true) => "newest first".into(),
            (k, false) => format!("{} ↑", k.name()),
            (k, true) => format!("{} ↓", k.name()),
        }
    }

    /// The key `o` moves on to.
    pub(super) fn next(self) -> SortKey {
        match self {
            SortKey::Age => SortKey::State,
            SortKey::State => SortKey::Amount,
            SortKey::Amount => SortKey::Id,
            SortKey::Id => SortKey::Age,
        }
    }
}
