//! Where the cluster is, said as an Elastic Cloud ID (`--cloud-id`,
//! `ESTX_CLOUD_ID`, profile `cloud_id`): decoded into `--url`
//! ([`crate::cluster::cloud_id_url`]). A Cloud ID and an explicit
//! `--url`/`ESTX_URL` are two answers to one question and are refused
//! together rather than one silently winning.

use super::global::GlobalArgs;
use super::profile::{unset, ProfileError};
use clap::ArgMatches;

/// An Elastic Cloud ID (flag, variable or profile) decoded into the URL;
/// refused next to an explicit `--url`/`ESTX_URL`.
pub(super) fn resolve_cloud_id(g: &mut GlobalArgs, m: &ArgMatches) -> Result<(), ProfileError> {
    let Some(id) = g.cloud_id.as_deref().filter(|i| !i.trim().is_empty()) else {
        return Ok(());
    };
    if !unset(m, "url") {
        return Err(ProfileError(
            "--cloud-id (ESTX_CLOUD_ID) and --url (ESTX_URL) both say where the cluster is; \
             give one"
                .into(),
        ));
    }
    let url = crate::cluster::cloud_id_url(id).map_err(|e| ProfileError(e.to_string()))?;
    g.url = url.to_string();
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::cli::cloud::*;
    use crate::cli::global::SharedOptions;
    use clap::{CommandFactory, FromArgMatches};

    const ID: &str = "staging:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRjZWM2ZjI2MWE3NGJmMjRjZTMzYmI4ODExYjg0Mjk0ZiRjNmMyY2E2ZDA0MjI0OWFmMGNjN2Q3YTllOTYyNTc0Mw==";

    fn resolved(args: &[&str]) -> Result<String, ProfileError> {
        let m = SharedOptions::command().try_get_matches_from(args).unwrap();
        let mut cli = SharedOptions::from_arg_matches(&m).unwrap();
        resolve_cloud_id(&mut cli.global, &m).map(|()| cli.global.url)
    }

    #[test]
    fn a_cloud_id_becomes_the_url() {
        assert_eq!(
            resolved(&["estx-tui", "--cloud-id", ID]).unwrap(),
            "https://cec6f261a74bf24ce33bb8811b84294f.us-east-1.aws.found.io/"
        );
        assert_eq!(resolved(&["estx-tui"]).unwrap(), "http://localhost:9200");
        let e = resolved(&["estx-tui", "--cloud-id", ID, "--url", "http://x:1"]);
        assert!(e.unwrap_err().0.contains("both"));
        let e = resolved(&["estx-tui", "--cloud-id", "x:@@"]);
        assert!(e.unwrap_err().0.contains("--cloud-id"));
    }
}
