//! What `doctor` advises about the map in force beyond the proposal: the
//! profile its TOML belongs to, and the state values on the cluster the map
//! leaves unmapped although every field fits (their transactions show as
//! unknown and are never acted on), with how to map each.

use super::propose::state_of_value;
use super::{Schema, STATES};

/// What stands for the profile's name where none is in use.
pub const PROFILE_PLACEHOLDER: &str = "NAME";

/// The profile's name for a TOML table or a message: the one in use, else
/// [`PROFILE_PLACEHOLDER`].
pub fn profile_label(profile: Option<&str>) -> &str {
    profile.unwrap_or(PROFILE_PLACEHOLDER)
}

impl Schema {
    /// The warning for the state values found on the cluster that the map
    /// does not name (`unknown`, as `doctor`'s schema report lists them),
    /// saying for each how it could be mapped under
    /// `[profiles.<profile>.schema.states]`; `None` when there are none.
    pub fn unmapped_states_warning(
        &self,
        unknown: &[String],
        profile: Option<&str>,
    ) -> Option<String> {
        if unknown.is_empty() {
            return None;
        }
        let listed: Vec<String> = unknown.iter().map(|v| format!("`{v}`")).collect();
        let how: Vec<String> = unknown.iter().map(|v| self.how_to_map(v)).collect();
        Some(format!(
            "the map leaves state values on the cluster unmapped: {} (their transactions show \
             as unknown and are never acted on); under [profiles.{}.schema.states]: {}",
            listed.join(", "),
            profile_label(profile),
            how.join("; ")
        ))
    }

    /// How one unmapped value could be mapped, or why it cannot be.
    fn how_to_map(&self, value: &str) -> String {
        match state_of_value(value) {
            Some(state) if self.state_value(state) == state => {
                format!(
                    "`{value}` looks like {state}: `{} = \"{value}\"`",
                    toml_key(state)
                )
            }
            Some(state) => format!(
                "`{value}` spells {state}, which the map writes `{}`: a state takes one value, \
                 so these stay unknown until the application writes `{}`",
                self.state_value(state),
                self.state_value(state)
            ),
            None => format!(
                "`{value}` matches no state: if it stands for one, `<state> = \"{value}\"` \
                 (one of {})",
                STATES.join(", ")
            ),
        }
    }
}

fn toml_key(state: &str) -> String {
    if state.contains('-') {
        format!("\"{state}\"")
    } else {
        state.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unmapped_value_gets_its_way_to_be_mapped() {
        let java = Schema::default().with_state("pending", "PENDING");
        let w = java
            .unmapped_states_warning(
                &["PAUSED".into(), "pending".into(), "ROLLED_BACK".into()],
                Some("java"),
            )
            .unwrap();
        assert!(
            w.contains("unmapped: `PAUSED`, `pending`, `ROLLED_BACK`"),
            "{w}"
        );
        assert!(w.contains("[profiles.java.schema.states]"), "{w}");
        assert!(w.contains("`PAUSED` matches no state"), "{w}");
        assert!(
            w.contains("`pending` spells pending, which the map writes `PENDING`"),
            "{w}"
        );
        assert!(w.contains("`\"rolled-back\" = \"ROLLED_BACK\"`"), "{w}");
        assert_eq!(java.unmapped_states_warning(&[], Some("java")), None);
        let none = Schema::default()
            .unmapped_states_warning(&["X".into()], None)
            .unwrap();
        assert!(none.contains("[profiles.NAME.schema.states]"), "{none}");
    }
}
