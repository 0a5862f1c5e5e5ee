//! Messages in the application's names. The readers of documents work on
//! canonical names (the boundary renamed them), so the problems they report
//! name fields the article's way (`` `transaction_state` is missing ``).
//! Before such a message reaches an operator, every field it names between
//! backticks is given the name in force under the map, and a state value
//! the map does not name loses the mark that kept it unknown, so the
//! message speaks of what the operator sees in the documents.

use super::names::UNMAPPED;
use super::{Field, Schema};
use crate::protocol::problem::Problem;

impl Schema {
    /// `text` with each `` `canonical` `` field name replaced by the
    /// application's name in force, and each `` `unmapped:VALUE` `` shown as
    /// the value the application wrote. One pass: a replaced name is never
    /// replaced again (a map may give one field another's canonical name).
    pub fn localize(&self, text: &str) -> String {
        if self.is_default() || !text.contains('`') {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        // Between the n-th and (n+1)-th backtick: quoted when n is odd, and
        // only when a closing backtick follows.
        let parts: Vec<&str> = text.split('`').collect();
        let last = parts.len() - 1;
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                out.push('`');
            }
            if i % 2 == 1 && i < last {
                out.push_str(&self.localize_quoted(part));
            } else {
                out.push_str(part);
            }
        }
        out
    }

    fn localize_quoted(&self, quoted: &str) -> String {
        if let Some(raw) = quoted.strip_prefix(UNMAPPED) {
            return raw.to_string();
        }
        match Field::by_canonical(quoted) {
            Some(f) => self.name(f).to_string(),
            None => quoted.to_string(),
        }
    }

    /// Each problem with the field names in force and the states as the
    /// application wrote them (see [`Self::localize`]).
    pub fn localize_problems(&self, problems: &mut [Problem]) {
        if self.is_default() {
            return;
        }
        for p in problems {
            for field in p.fields_mut() {
                *field = self.localize_quoted(field);
            }
            match p {
                Problem::UnknownState { state, .. } => *state = self.localize_quoted(state),
                Problem::Document { problems, .. } => self.localize_problems(problems),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java() -> Schema {
        Schema::default()
            .with_field(Field::State, "transactionState")
            .with_field(Field::ModificationTime, "modificationTime")
            .with_field(Field::Source, "srcAcct")
            .with_field(Field::LockCreated, "creation_time")
            .with_state("pending", "PENDING")
    }

    #[test]
    fn quoted_field_names_take_the_names_in_force() {
        let s = java();
        assert_eq!(
            s.localize("`transaction_state` is missing; `modification_time` is not a timestamp: 3"),
            "`transactionState` is missing; `modificationTime` is not a timestamp: 3"
        );
        assert_eq!(
            s.localize("`src_acct`/`src_account` is missing"),
            "`srcAcct`/`src_account` is missing"
        );
        // Names the map leaves alone, words outside backticks, and an
        // unclosed backtick are left as they are.
        assert_eq!(
            s.localize("`amount` is missing; transaction_state `t1"),
            "`amount` is missing; transaction_state `t1"
        );
    }

    #[test]
    fn one_pass_and_unmapped_values_shown_as_written() {
        let s = java();
        // `created_at` becomes `creation_time`, which is not renamed again.
        assert_eq!(
            s.localize("`created_at` is late"),
            "`creation_time` is late"
        );
        assert_eq!(
            s.localize("`transaction_state` holds an unknown state `unmapped:pending`"),
            "`transactionState` holds an unknown state `pending`"
        );
        assert_eq!(
            Schema::default().localize("`transaction_state` is missing"),
            "`transaction_state` is missing"
        );
    }

    #[test]
    fn typed_problems_take_the_names_in_force() {
        let s = java();
        let mut p = vec![
            Problem::Missing(vec!["src_acct".into(), "src_account".into()]),
            Problem::UnknownState {
                field: "transaction_state".into(),
                state: "unmapped:pending".into(),
            },
            Problem::SameAccount("modification_time".into()),
        ];
        s.localize_problems(&mut p);
        assert_eq!(
            crate::protocol::problem::Problems(p).to_string(),
            "`srcAcct`/`src_account` is missing; `transactionState` holds an unknown state \
             `pending`; source and destination are the same account `modification_time`"
        );
    }
}
