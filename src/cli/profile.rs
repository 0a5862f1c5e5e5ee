//! Named cluster profiles from `$XDG_CONFIG_HOME/estx-tui/config.toml`
//! (`~/.config/estx-tui/config.toml` without it), chosen with `--profile`
//! or `ESTX_PROFILE` (else the file's `default_profile`).
//!
//! Precedence, highest first: command-line flags, `ESTX_*` environment
//! variables, the profile, the built-in defaults. A profile never holds a
//! secret, only the *names* of the environment variables that do
//! (`password_env`, `api_key_env`, `bearer_token_env`; AWS credentials come
//! from the standard `AWS_*` variables); a profile with a secret-looking key
//! is refused. `cloud_id` and `url` are two ways to say where the cluster
//! is: a profile with both is refused, and `--cloud-id` with `--url` too. A profile marked `production = true` starts read-only unless it
//! says `read_only = false`; writable, it is framed in red (`label`,
//! `colour` frame any profile) and its bulk and forced acts want a typed
//! confirmation ([`crate::protocol::intervene::Guard`]).

use super::global::{DashboardArgs, GlobalArgs, Resolved};
use super::looks::{FileLooks, KeyTable};
use crate::dashboard::app::{MarkColour, ProfileMark};
use crate::dashboard::look::ThemeName;
use crate::protocol::locks::LivenessSource;
use crate::protocol::read::verdict::Runbooks;
use crate::protocol::schema::Schema;
use crate::protocol::time::parse_duration;
use crate::protocol::ApprovalRule;
use clap::parser::ValueSource;
use clap::ArgMatches;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Environment variable naming the profile (like `--profile`).
pub const PROFILE_ENV: &str = "ESTX_PROFILE";

/// Words that make a key look like it holds a secret.
const SECRET_WORDS: [&str; 13] = [
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "credential",
    "private_key",
    "bearer",
    "jwt",
    "access_key",
    "authorization",
    "cloud_auth",
];

/// The config file. Profiles stay raw until one is chosen, so a mistake in
/// one profile does not stop the others from being used.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The profile used when neither `--profile` nor `ESTX_PROFILE` is given.
    pub default_profile: Option<String>,
    /// Profiles by name (`[profiles.NAME]` tables).
    #[serde(default)]
    pub profiles: BTreeMap<String, toml::Table>,
    /// The dashboard's theme (a profile's or `--theme` wins).
    pub theme: Option<ThemeName>,
    /// Draw the dashboard in ASCII.
    pub ascii: Option<bool>,
    /// Main-screen key rebindings (`[keys]`, see [`super::looks`]).
    #[serde(default)]
    pub keys: KeyTable,
    /// Confirmation-dialog key rebindings (`[dialog_keys]`).
    #[serde(default)]
    pub dialog_keys: KeyTable,
}

/// One cluster's settings; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Base URL of the cluster (no credentials in it).
    pub url: Option<String>,
    /// Basic-auth user (not a secret).
    pub user: Option<String>,
    /// Name of the environment variable holding the password.
    pub password_env: Option<String>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Name of the environment variable holding a bearer token (service
    /// account token, OAuth2 access token or JWT).
    pub bearer_token_env: Option<String>,
    /// Elastic Cloud ID (instead of `url`).
    pub cloud_id: Option<String>,
    /// Sign requests with AWS SigV4 for this service (`es` or `aoss`).
    pub aws_sigv4: Option<crate::cluster::AwsService>,
    /// AWS region for `aws_sigv4` (else `AWS_REGION`).
    pub aws_region: Option<String>,
    /// PEM file of the cluster's CA.
    pub ca_cert: Option<PathBuf>,
    /// Transactions index.
    pub transactions_index: Option<String>,
    /// Accounts index.
    pub accounts_index: Option<String>,
    /// Locks index.
    pub locks_index: Option<String>,
    /// Audit-trail index.
    pub audit_index: Option<String>,
    /// Recovery window (e.g. `2m`).
    pub recovery_window: Option<String>,
    /// Investigate-after threshold (e.g. `1h`).
    pub investigate_after: Option<String>,
    /// Per-request timeout (e.g. `10s`).
    pub timeout: Option<String>,
    /// Start read-only (or not, overriding `production`).
    pub read_only: Option<bool>,
    /// A production cluster: read-only unless `read_only = false`; framed
    /// in red with `PRODUCTION` in the dashboard; its bulk and forced acts
    /// want a typed confirmation (`--confirm`).
    #[serde(default)]
    pub production: bool,
    /// Who approves an intervention: `"second-operator"` runs acts only
    /// from a plan file (`--plan-out`, then `estx-tui apply`) applied by
    /// another identity than its planner.
    #[serde(default)]
    pub approval: ApprovalRule,
    /// The label on the frame the dashboard draws around the whole screen
    /// (`PRODUCTION` for a production profile, else the profile's name).
    pub label: Option<String>,
    /// The frame's colour: a name (`red`, `lightblue`), `#rrggbb` or an
    /// index (`208`); red for a production profile, else yellow.
    #[serde(alias = "color")]
    pub colour: Option<String>,
    /// Where the application records its instances' heartbeats
    /// (`[profiles.NAME.liveness]`): locks held by instances are judged by
    /// them instead of being unknown.
    pub liveness: Option<LivenessProfile>,
    /// The dashboard's theme with this profile (`--theme` wins).
    pub theme: Option<ThemeName>,
    /// The application's names of fields and states
    /// (`[profiles.NAME.schema]`, see [`crate::protocol::schema`]).
    pub schema: Option<toml::Table>,
    /// A runbook URL per cause of stuck transactions
    /// (`[profiles.NAME.runbooks]`, keys the causes' snake_case names:
    /// [`crate::protocol::read::verdict::CauseKind`]), shown beside each
    /// cause; an unknown key is refused, naming the valid ones.
    pub runbooks: Option<BTreeMap<String, String>>,
}

/// A heartbeat index as a profile names it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LivenessProfile {
    /// The index holding the heartbeats.
    pub index: String,
    /// The field naming the instance (a `keyword`: matched exactly).
    pub instance_field: String,
    /// The field holding the heartbeat's time.
    pub time_field: String,
    /// How old a last heartbeat may be before its instance is dead (e.g. `1m`).
    pub timeout: String,
}

impl LivenessProfile {
    /// The liveness source it describes; a bad timeout is refused.
    fn source(&self, name: &str) -> Result<LivenessSource, ProfileError> {
        let timeout = parse_duration(&self.timeout).map_err(|e| {
            ProfileError(format!(
                "profile `{name}`: liveness.timeout = \"{}\": {e}",
                self.timeout
            ))
        })?;
        if timeout.is_zero() {
            return Err(ProfileError(format!(
                "profile `{name}`: liveness.timeout must be longer than the heartbeat period, not 0"
            )));
        }
        Ok(LivenessSource {
            index: self.index.clone(),
            instance_field: self.instance_field.clone(),
            time_field: self.time_field.clone(),
            timeout,
        })
    }
}

/// Why the configuration could not be used (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProfileError(pub String);

/// `$XDG_CONFIG_HOME/estx-tui/config.toml`, else `~/.config/estx-tui/config.toml`.
pub fn config_path() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".config"))
    })?;
    Some(base.join("estx-tui").join("config.toml"))
}

/// Parses a config file's text (valid TOML, known top-level keys).
pub fn parse(text: &str, path: &Path) -> Result<ConfigFile, ProfileError> {
    toml::from_str(text).map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .map(|s| format!(", line {}", super::looks::line_of(text, s.start)))
            .unwrap_or_default();
        ProfileError(format!(
            "config file {}{line}: {}",
            path.display(),
            e.message().trim()
        ))
    })
}

impl ConfigFile {
    /// What it says of the dashboard's looks ([`super::looks::apply`]).
    pub fn looks(&self) -> FileLooks<'_> {
        FileLooks {
            theme: self.theme,
            ascii: self.ascii,
            keys: &self.keys,
            dialog_keys: &self.dialog_keys,
        }
    }

    /// The profile `name`; refuses secret-looking keys and credentials in
    /// its URL before anything else, then unknown keys and bad values.
    pub fn profile(&self, name: &str, path: &Path) -> Result<Profile, ProfileError> {
        let at = path.display();
        let Some(table) = self.profiles.get(name) else {
            let known: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            let known = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            return Err(ProfileError(format!(
                "no profile `{name}` in {at} (profiles: {known})"
            )));
        };
        if let Some(key) = secret_key(table, &format!("profiles.{name}.")) {
            return Err(ProfileError(format!(
                "config file {at}: `{key}` looks like a secret; profiles hold only the NAME of \
                 the environment variable holding it (e.g. password_env = \"PROD_ES_PASSWORD\", \
                 api_key_env = \"PROD_ES_API_KEY\", bearer_token_env = \"PROD_ES_TOKEN\"; AWS \
                 credentials come from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN), \
                 never the secret itself"
            )));
        }
        let profile: Profile =
            toml::Value::Table(table.clone())
                .try_into()
                .map_err(|e: toml::de::Error| {
                    ProfileError(format!(
                        "config file {at}: profile `{name}`: {}",
                        e.message().trim()
                    ))
                })?;
        if profile.url.is_some() && profile.cloud_id.is_some() {
            return Err(ProfileError(format!(
                "config file {at}: profile `{name}` has both url and cloud_id; keep one"
            )));
        }
        if let Some(url) = profile.url.as_deref().and_then(|u| url::Url::parse(u).ok()) {
            if url.password().is_some() {
                return Err(ProfileError(format!(
                    "config file {at}: profile `{name}` has a password in its url; \
                     name the variable holding it with password_env instead"
                )));
            }
        }
        Ok(profile)
    }
}

/// The first key (dotted path) under `table` that looks like a secret.
fn secret_key(table: &toml::Table, prefix: &str) -> Option<String> {
    for (key, value) in table {
        let path = format!("{prefix}{key}");
        let lower = key.to_ascii_lowercase();
        if !lower.ends_with("_env") && SECRET_WORDS.iter().any(|w| lower.contains(w)) {
            return Some(path);
        }
        if let toml::Value::Table(t) = value {
            if let Some(found) = secret_key(t, &format!("{path}.")) {
                return Some(found);
            }
        }
    }
    None
}

/// Applies the chosen profile (if any) underneath the command line: the
/// one `--profile`/`ESTX_PROFILE` names, else the file's `default_profile`
/// (not for the demo, which runs its own throw-away cluster).
pub fn apply_chosen(
    global: &mut GlobalArgs,
    dashboard: &mut DashboardArgs,
    matches: &ArgMatches,
    is_demo: bool,
) -> Result<(), ProfileError> {
    let path = config_path();
    let file = match &path {
        Some(p) if p.exists() => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                ProfileError(format!("cannot read config file {}: {e}", p.display()))
            })?;
            let config = parse(&text, p)?;
            Some((p.clone(), config, text))
        }
        _ => None,
    };
    let name = global
        .profile
        .clone()
        .filter(|n| !n.is_empty())
        .or_else(|| {
            file.as_ref()
                .filter(|_| !is_demo)
                .and_then(|(_, c, _)| c.default_profile.clone())
        });
    if let Some(name) = name {
        apply_named(global, dashboard, matches, &name, file.as_ref(), path)?;
    }
    match &file {
        Some((path, config, text)) => super::looks::apply(dashboard, config.looks(), text)
            .map_err(|e| ProfileError(format!("config file {}, {e}", path.display()))),
        None => Ok(()),
    }
}

/// Applies the profile `name` from `file`, which must exist (`path` is
/// where it was looked for).
fn apply_named(
    global: &mut GlobalArgs,
    dashboard: &mut DashboardArgs,
    matches: &ArgMatches,
    name: &str,
    file: Option<&(PathBuf, ConfigFile, String)>,
    path: Option<PathBuf>,
) -> Result<(), ProfileError> {
    let Some((path, config, _)) = file else {
        let shown = path.map_or("(no $XDG_CONFIG_HOME or $HOME)".into(), |p| {
            p.display().to_string()
        });
        return Err(ProfileError(format!(
            "profile `{name}` requested but there is no config file at {shown}"
        )));
    };
    let profile = config.profile(name, path)?;
    apply(global, dashboard, matches, name, &profile)
}

/// Whether the option was left at its default (neither flag nor env).
pub(super) fn unset(m: &ArgMatches, id: &str) -> bool {
    !matches!(
        m.value_source(id),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    )
}

/// Sets every option the command line and environment left at its default
/// from `profile`.
pub fn apply(
    g: &mut GlobalArgs,
    dashboard: &mut DashboardArgs,
    m: &ArgMatches,
    name: &str,
    profile: &Profile,
) -> Result<(), ProfileError> {
    apply_options(g, m, name, profile)?;
    g.resolved = resolved(name, profile)?;
    g.profile = Some(name.to_string());
    dashboard.theme = dashboard.theme.or(profile.theme);
    if dashboard.read_only.is_none() {
        dashboard.read_only = Some(profile.read_only.unwrap_or(profile.production));
    }
    Ok(())
}

/// The profile's values for the options the command line (flag or
/// variable) left unset.
fn apply_options(
    g: &mut GlobalArgs,
    m: &ArgMatches,
    name: &str,
    profile: &Profile,
) -> Result<(), ProfileError> {
    let text_options: [(&str, &Option<String>, &mut String); 5] = [
        ("url", &profile.url, &mut g.url),
        (
            "transactions_index",
            &profile.transactions_index,
            &mut g.transactions_index,
        ),
        (
            "accounts_index",
            &profile.accounts_index,
            &mut g.accounts_index,
        ),
        ("locks_index", &profile.locks_index, &mut g.locks_index),
        ("audit_index", &profile.audit_index, &mut g.audit_index),
    ];
    for (id, value, slot) in text_options {
        if let (Some(v), true) = (value, unset(m, id)) {
            *slot = v.clone();
        }
    }
    g.locks_index_named |= profile.locks_index.is_some();
    let durations: [(&str, &Option<String>, &mut Duration); 3] = [
        (
            "recovery_window",
            &profile.recovery_window,
            &mut g.recovery_window,
        ),
        (
            "investigate_after",
            &profile.investigate_after,
            &mut g.investigate_after,
        ),
        ("timeout", &profile.timeout, &mut g.timeout),
    ];
    for (id, value, slot) in durations {
        if let (Some(v), true) = (value, unset(m, id)) {
            *slot = parse_duration(v)
                .map_err(|e| ProfileError(format!("profile `{name}`: {id} = \"{v}\": {e}")))?;
        }
    }
    if unset(m, "user") && profile.user.is_some() {
        g.user = profile.user.clone();
    }
    if unset(m, "ca_cert") && profile.ca_cert.is_some() {
        g.ca_cert = profile.ca_cert.clone();
    }
    // Where the cluster is: a flag or variable (either way to say it) wins
    // over the profile's.
    if unset(m, "cloud_id") && unset(m, "url") && profile.cloud_id.is_some() {
        g.cloud_id = profile.cloud_id.clone();
    }
    if unset(m, "aws_sigv4") && profile.aws_sigv4.is_some() {
        g.aws_sigv4 = profile.aws_sigv4;
    }
    Ok(())
}

/// What only a profile says (no flag does): its name, secrets' variables,
/// liveness source, schema and runbooks.
fn resolved(name: &str, profile: &Profile) -> Result<Resolved, ProfileError> {
    Ok(Resolved {
        name: Some(name.to_string()),
        production: profile.production,
        approval: profile.approval,
        mark: mark(name, profile)?,
        password_env: profile.password_env.clone(),
        api_key_env: profile.api_key_env.clone(),
        bearer_token_env: profile.bearer_token_env.clone(),
        aws_region: profile.aws_region.clone(),
        liveness: profile
            .liveness
            .as_ref()
            .map(|l| l.source(name))
            .transpose()?,
        schema: match &profile.schema {
            Some(t) => {
                Schema::from_table(t).map_err(|e| ProfileError(format!("profile `{name}`: {e}")))?
            }
            None => Schema::default(),
        },
        runbooks: match &profile.runbooks {
            Some(t) => Runbooks::from_table(t)
                .map_err(|e| ProfileError(format!("profile `{name}`: {e}")))?,
            None => Runbooks::default(),
        },
    })
}

/// The dashboard's frame for `profile`: with `production = true`, a
/// `label` or a `colour` (else none); a colour it cannot read is refused.
fn mark(name: &str, profile: &Profile) -> Result<Option<ProfileMark>, ProfileError> {
    if !profile.production && profile.label.is_none() && profile.colour.is_none() {
        return Ok(None);
    }
    let colour = match (&profile.colour, profile.production) {
        (Some(c), _) => MarkColour::Named(c.parse().map_err(|_| {
            ProfileError(format!(
                "profile `{name}`: colour = \"{c}\": not a colour (a name such as red or \
                 lightblue, #rrggbb, or an index 0-255)"
            ))
        })?),
        (None, true) => MarkColour::Danger,
        (None, false) => MarkColour::Warn,
    };
    let label = match (&profile.label, profile.production) {
        (Some(l), _) => l.clone(),
        (None, true) => "PRODUCTION".to_string(),
        (None, false) => name.to_string(),
    };
    Ok(Some(ProfileMark {
        label,
        colour,
        production: profile.production,
    }))
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
