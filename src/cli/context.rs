//! From arguments to a connected [`Protocol`]: connection options (secrets
//! from the environment only), protocol settings, and the step observer that
//! prints each step as it happens.

use super::global::GlobalArgs;
use super::output::out;
use crate::cluster::{AwsService, AwsSigning, Cluster, ConnectOptions};
use crate::error::Result;
use crate::protocol::{Indices, Protocol, ProtocolConfig, StepObserver, StepReport};
use std::sync::Arc;

/// Environment variable holding the basic-auth password.
pub const PASSWORD_ENV: &str = "ESTX_PASSWORD";
/// Environment variable holding the API key (base64 `id:key`).
pub const API_KEY_ENV: &str = "ESTX_API_KEY";
/// Environment variable holding a bearer token.
pub const BEARER_TOKEN_ENV: &str = "ESTX_BEARER_TOKEN";

/// A non-empty environment variable.
fn secret(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A secret from `standard` (`ESTX_PASSWORD`, `ESTX_API_KEY`: the
/// environment overrides the profile), else from the variable the profile
/// names.
fn secret_from(standard: &str, profile_var: Option<&str>) -> Option<String> {
    secret(standard).or_else(|| profile_var.and_then(secret))
}

/// Connection options from the global arguments and the environment; fails
/// when `--aws-sigv4` lacks its region or credentials.
pub fn connect_options(g: &GlobalArgs) -> Result<ConnectOptions> {
    let aws = g
        .aws_sigv4
        .map(|service| aws_signing(g, service))
        .transpose()?;
    Ok(ConnectOptions {
        url: g.url.clone(),
        user: g.user.clone().filter(|u| !u.is_empty()),
        password: secret_from(PASSWORD_ENV, g.resolved.password_env.as_deref()),
        api_key: secret_from(API_KEY_ENV, g.resolved.api_key_env.as_deref()),
        bearer_token: secret_from(BEARER_TOKEN_ENV, g.resolved.bearer_token_env.as_deref()),
        aws,
        ca_cert: g.ca_cert.clone(),
        insecure: g.insecure,
        timeout: g.timeout,
        retry_budget: g.retry_budget,
    })
}

/// SigV4 signing from the standard AWS variables; the region from
/// `--aws-region`, the profile, `AWS_REGION`, `AWS_DEFAULT_REGION`.
fn aws_signing(g: &GlobalArgs, service: AwsService) -> Result<AwsSigning> {
    let region = g
        .aws_region
        .clone()
        .or_else(|| g.resolved.aws_region.clone())
        .or_else(|| secret("AWS_REGION"))
        .or_else(|| secret("AWS_DEFAULT_REGION"));
    AwsSigning::from_values(
        service,
        region,
        secret("AWS_ACCESS_KEY_ID"),
        secret("AWS_SECRET_ACCESS_KEY"),
        secret("AWS_SESSION_TOKEN"),
    )
}

/// Protocol settings from the global arguments.
pub fn protocol_config(g: &GlobalArgs) -> ProtocolConfig {
    ProtocolConfig {
        indices: Indices {
            transactions: g.transactions_index.clone(),
            accounts: g.accounts_index.clone(),
            locks: g.locks_index.clone(),
            audit: g.audit_index.clone(),
            acks: g.acks_index.clone(),
            locks_named: g.locks_index_named,
        },
        recovery_window: g.recovery_window,
        investigate_after: g.investigate_after,
        liveness: g.resolved.liveness.clone(),
        schema: g.resolved.schema.clone(),
        runbooks: g.resolved.runbooks.clone(),
        profile: g.resolved.name.clone(),
        production: g.resolved.production,
        approval: g.resolved.approval,
        audit_file: g.audit_trail.clone(),
        job_heartbeat: g.job_heartbeat,
        ..ProtocolConfig::default()
    }
}

/// A protocol handle over the cluster the arguments name. Touches no network.
pub fn protocol(g: &GlobalArgs) -> Result<Protocol> {
    let cluster = Cluster::connect(&connect_options(g)?)?;
    tracing::info!(url = %cluster.url(), "connecting");
    Ok(Protocol::new(cluster, protocol_config(g)))
}

/// An observer printing each step to stdout as it ends; with `with_txn`,
/// each line starts with the transaction id (for concurrent runs).
pub fn printing_observer(with_txn: bool) -> StepObserver {
    Arc::new(move |r: &StepReport| {
        if with_txn {
            out(format_args!("{}  {r}", r.txn));
        } else {
            out(format_args!("  {r}"));
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::cli::context::*;
    use crate::cli::global::SharedOptions;
    use clap::Parser;
    use std::time::Duration;

    #[test]
    fn settings_follow_the_arguments() {
        let cli = SharedOptions::try_parse_from([
            "estx-tui",
            "--transactions-index",
            "t2",
            "--investigate-after",
            "30m",
            "--timeout",
            "3s",
        ])
        .unwrap();
        let c = protocol_config(&cli.global);
        assert_eq!(c.indices.transactions, "t2");
        assert_eq!(c.investigate_after, Duration::from_secs(1800));
        assert_eq!(
            connect_options(&cli.global).unwrap().timeout,
            Duration::from_secs(3)
        );
    }
}
