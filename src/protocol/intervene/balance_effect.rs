//! A procedure's balance change in words ([`BalanceEffect`]): what the
//! previews (dry run, `show`, the dialogs) say beside the numbers, so a
//! recovery that only credits the destination reads as completing a debit
//! already made, not as money appearing.

use std::fmt;

/// What a procedure does to the balances, in words: where it finishes or
/// undoes a side an earlier step already wrote, it says so ("completes the
/// debit of 90 already made on A: credits B +90"), so a net change that
/// looks like money appearing reads as what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceEffect {
    /// Which kind of change.
    pub kind: EffectKind,
    /// The transfer's amount.
    pub amount: i64,
    /// Its source account.
    pub src: String,
    /// Its destination account.
    pub dest: String,
    /// The change per account (non-zero only), for [`EffectKind::Other`].
    pub changes: Vec<(String, i64)>,
}

/// The kinds of [`BalanceEffect`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectKind {
    /// No balance changes.
    None,
    /// A recovery after the source was debited: credits the destination.
    CompletesDebit,
    /// A recovery after the destination was credited: debits the source.
    CompletesCredit,
    /// A rollback after the source was debited: credits it back.
    UndoesDebit,
    /// A rollback after the destination was credited: debits it back.
    UndoesCredit,
    /// The whole transfer: debits the source, credits the destination.
    Moves,
    /// The whole transfer undone: credits the source, debits the destination.
    UndoesTransfer,
    /// Anything else: the changes per account.
    Other,
}

impl BalanceEffect {
    /// The effect of a change of `ds` on `src` and `dd` on `dest` by a
    /// transfer of `amount` (recovering when `recovers`, else rolling back).
    pub fn of(recovers: bool, amount: i64, src: &str, dest: &str, (ds, dd): (i64, i64)) -> Self {
        let a = amount;
        let kind = match (recovers, ds, dd) {
            (_, 0, 0) => EffectKind::None,
            _ if src == dest || a <= 0 => EffectKind::Other,
            (true, 0, d) if d == a => EffectKind::CompletesDebit,
            (true, s, 0) if s == -a => EffectKind::CompletesCredit,
            (true, s, d) if s == -a && d == a => EffectKind::Moves,
            (false, s, 0) if s == a => EffectKind::UndoesDebit,
            (false, 0, d) if d == -a => EffectKind::UndoesCredit,
            (false, s, d) if s == a && d == -a => EffectKind::UndoesTransfer,
            _ => EffectKind::Other,
        };
        BalanceEffect {
            kind,
            amount,
            src: src.to_string(),
            dest: dest.to_string(),
            changes: [(src, ds), (dest, dd)]
                .into_iter()
                .filter(|(_, d)| *d != 0)
                .map(|(acct, d)| (acct.to_string(), d))
                .collect(),
        }
    }
}

impl fmt::Display for BalanceEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (a, src, dest) = (self.amount, &self.src, &self.dest);
        match self.kind {
            EffectKind::None => f.write_str("no balance change"),
            EffectKind::CompletesDebit => write!(
                f,
                "completes the debit of {a} already made on {src}: credits {dest} +{a}"
            ),
            EffectKind::CompletesCredit => write!(
                f,
                "completes the credit of {a} already made on {dest}: debits {src} -{a}"
            ),
            EffectKind::UndoesDebit => write!(
                f,
                "undoes the debit of {a} already made on {src}: credits {src} +{a}"
            ),
            EffectKind::UndoesCredit => write!(
                f,
                "undoes the credit of {a} already made on {dest}: debits {dest} -{a}"
            ),
            EffectKind::Moves => {
                write!(f, "moves {a}: debits {src} -{a}, credits {dest} +{a}")
            }
            EffectKind::UndoesTransfer => write!(
                f,
                "undoes the transfer of {a}: credits {src} +{a}, debits {dest} -{a}"
            ),
            EffectKind::Other => {
                let parts: Vec<String> = self
                    .changes
                    .iter()
                    .map(|(acct, d)| format!("{acct} {d:+}"))
                    .collect();
                f.write_str(&parts.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_half_made_transfer_reads_as_completed_or_undone() {
        let words =
            |recovers, change| BalanceEffect::of(recovers, 90, "A", "B", change).to_string();
        assert_eq!(
            words(true, (0, 90)),
            "completes the debit of 90 already made on A: credits B +90"
        );
        assert_eq!(
            words(false, (90, 0)),
            "undoes the debit of 90 already made on A: credits A +90"
        );
        assert_eq!(
            words(true, (-90, 90)),
            "moves 90: debits A -90, credits B +90"
        );
        assert_eq!(words(true, (0, 0)), "no balance change");
        assert_eq!(words(false, (5, 0)), "A +5");
    }
}
