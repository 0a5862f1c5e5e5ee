//! Tests of [`super`]: profiles applied under the command line.

use super::*;
use crate::cli::Cli;
use clap::{CommandFactory, FromArgMatches};

/// Profile `p` of a config file's text.
fn config(text: &str) -> Result<Profile, ProfileError> {
    let path = Path::new("/x/config.toml");
    parse(text, path)?.profile("p", path)
}

fn with(text: &str, args: &[&str]) -> Cli {
    let p = config(text).unwrap();
    let m = Cli::command().try_get_matches_from(args).unwrap();
    let mut cli = Cli::from_arg_matches(&m).unwrap();
    apply(&mut cli.global, &mut cli.dashboard, &m, "p", &p).unwrap();
    cli
}

const PROD: &str = r#"
    [profiles.p]
    url = "https://prod:9200"
    transactions_index = "tx"
    audit_index = "audit-prod"
    recovery_window = "5m"
    production = true
    password_env = "PROD_PW"
"#;

#[test]
fn flags_override_the_profile() {
    let cli = with(PROD, &["estx-tui", "list"]);
    assert_eq!(cli.global.url, "https://prod:9200");
    assert_eq!(cli.global.transactions_index, "tx");
    assert_eq!(cli.global.accounts_index, "accounts");
    assert_eq!(cli.global.audit_index, "audit-prod");
    assert_eq!(cli.global.recovery_window, Duration::from_secs(300));
    assert_eq!(cli.global.resolved.password_env.as_deref(), Some("PROD_PW"));
    assert!(cli.dashboard.is_read_only(), "production starts read-only");
    let cli = with(
        PROD,
        &[
            "estx-tui",
            "list",
            "--url",
            "http://x:1",
            "--read-only=false",
        ],
    );
    assert_eq!(cli.global.url, "http://x:1");
    assert!(!cli.dashboard.is_read_only());
    let cli = with(PROD, &["estx-tui", "--recovery-window", "1m", "list"]);
    assert_eq!(cli.global.recovery_window, Duration::from_secs(60));
}

#[test]
fn a_profile_names_its_heartbeat_index() {
    let text = format!(
        "{PROD}\n[profiles.p.liveness]\nindex = \"instances\"\ninstance_field = \"id\"\n\
         time_field = \"heartbeatDate\"\ntimeout = \"90s\"\n"
    );
    let cli = with(&text, &["estx-tui", "locks"]);
    let source = cli.global.resolved.liveness.clone().unwrap();
    assert_eq!(source.index, "instances");
    assert_eq!(source.timeout, Duration::from_secs(90));
    let config = crate::cli::context::protocol_config(&cli.global);
    assert_eq!(config.liveness, Some(source));
    assert_eq!(
        with(PROD, &["estx-tui", "locks"]).global.resolved.liveness,
        None
    );
    let unknown = format!("{PROD}\n[profiles.p.liveness]\nindex = \"i\"\nfield = \"x\"\n");
    assert!(config_err(&unknown).contains("field"));
}

/// `[profiles.NAME.runbooks]` maps causes to URLs, reaching the
/// protocol's configuration; an unknown cause is refused, naming the valid
/// ones.
#[test]
fn a_profile_maps_causes_to_runbooks() {
    use crate::protocol::read::verdict::CauseKind;
    let text = format!(
        "{PROD}\n[profiles.p.runbooks]\nholder_dead = \"https://rb/dead\"\n\
         hot_account = \"https://rb/hot\"\n"
    );
    let cli = with(&text, &["estx-tui", "check"]);
    let pc = crate::cli::context::protocol_config(&cli.global);
    assert_eq!(
        pc.runbooks.get(CauseKind::HolderDead),
        Some("https://rb/dead")
    );
    assert_eq!(
        pc.runbooks.get(CauseKind::HotAccount),
        Some("https://rb/hot")
    );
    assert_eq!(pc.runbooks.get(CauseKind::Unknown), None);
    let bad = format!("{PROD}\n[profiles.p.runbooks]\ndead_holder = \"https://rb\"\n");
    let p = config(&bad).unwrap();
    let m = Cli::command()
        .try_get_matches_from(["estx-tui", "check"])
        .unwrap();
    let mut cli = Cli::from_arg_matches(&m).unwrap();
    let err = apply(&mut cli.global, &mut cli.dashboard, &m, "p", &p)
        .unwrap_err()
        .0;
    assert!(
        err.contains("`dead_holder`")
            && err.contains(
                "holder_dead, holder_live, hot_account, refused, app_recovering, unknown"
            ),
        "{err}"
    );
}

fn config_err(text: &str) -> String {
    config(text).unwrap_err().0
}

#[test]
fn a_profile_names_its_token_variable_cloud_id_and_signing() {
    let text = "[profiles.p]\ncloud_id = \"c:aGVyZSRpZA==\"\nbearer_token_env = \"PROD_TOKEN\"\n\
                aws_sigv4 = \"aoss\"\naws_region = \"eu-west-1\"\n";
    let cli = with(text, &["estx-tui", "list"]);
    let g = &cli.global;
    assert_eq!(g.cloud_id.as_deref(), Some("c:aGVyZSRpZA=="));
    assert_eq!(g.resolved.bearer_token_env.as_deref(), Some("PROD_TOKEN"));
    assert_eq!(g.aws_sigv4, Some(crate::cluster::AwsService::Aoss));
    assert_eq!(g.resolved.aws_region.as_deref(), Some("eu-west-1"));
    // An explicit --url wins over the profile's Cloud ID.
    let cli = with(text, &["estx-tui", "--url", "http://x:1", "list"]);
    assert_eq!(cli.global.cloud_id, None);
    let both = "[profiles.p]\nurl = \"https://a:9200\"\ncloud_id = \"c:aGVyZSRpZA==\"\n";
    assert!(config_err(both).contains("both url and cloud_id"));
}

#[test]
fn production_may_say_it_is_writable() {
    let text = format!("{PROD}\nread_only = false\n");
    assert!(!with(&text, &["estx-tui", "list"]).dashboard.is_read_only());
}

#[test]
fn secrets_are_refused() {
    for bad in [
        "[profiles.p]\npassword = \"hunter2\"",
        "[profiles.p]\napi_key = \"abc\"",
        "[profiles.p]\nbearer_token = \"abc\"",
        "[profiles.p]\naws_secret_access_key = \"abc\"",
        "[profiles.p]\naws_access_key_id = \"AKID\"",
        "[profiles.p]\njwt = \"abc\"",
        "[profiles.p.auth]\ntoken = \"abc\"",
        "[profiles.p]\nurl = \"https://u:pw@h:9200\"",
    ] {
        let e = config(bad).unwrap_err().0;
        assert!(e.contains("secret") || e.contains("password"), "{bad}: {e}");
    }
    assert!(config("[profiles.p]\npassword_env = \"PW\"").is_ok());
    // A mistake in another profile does not stop this one.
    assert!(config("[profiles.p]\n[profiles.q]\npassword = \"x\"").is_ok());
    let e = config("[profiles.p]\nulr = \"x\"").unwrap_err().0;
    assert!(e.contains("ulr"), "{e}");
}

#[test]
fn a_profile_names_its_schema() {
    let text = format!(
        "{PROD}\n[profiles.p.schema]\ntransaction_state = \"transactionState\"\n\
         [profiles.p.schema.states]\npending = \"PENDING\"\n"
    );
    let pc = crate::cli::context::protocol_config(&with(&text, &["estx-tui", "list"]).global);
    use crate::protocol::schema::Field;
    assert_eq!(pc.schema.name(Field::State), "transactionState");
    assert_eq!(pc.schema.state_value("pending"), "PENDING");
    assert!(protocol_config_default().schema.is_default());
    let bad = format!("{PROD}\n[profiles.p.schema]\nstate = \"s\"\n");
    let p = config(&bad).unwrap();
    let m = Cli::command()
        .try_get_matches_from(["estx-tui", "list"])
        .unwrap();
    let mut cli = Cli::from_arg_matches(&m).unwrap();
    let e = apply(&mut cli.global, &mut cli.dashboard, &m, "p", &p)
        .unwrap_err()
        .0;
    assert!(e.contains("unknown field `state`"), "{e}");
}

fn protocol_config_default() -> crate::protocol::ProtocolConfig {
    crate::cli::context::protocol_config(&with(PROD, &["estx-tui", "list"]).global)
}

/// `--theme` over the profile's theme over the file's; the file's `ascii`
/// and `[keys]` reach the dashboard's options.
#[test]
fn looks_come_from_the_flag_the_profile_then_the_file() {
    use crate::dashboard::look::ThemeName;
    let text = "theme = \"light\"\nascii = true\n[keys]\nrollback = \"Z\"\n\
                [profiles.p]\nurl = \"http://x:1\"\n";
    let path = Path::new("/x/config.toml");
    let file = parse(text, path).unwrap();
    let looks = |args: &[&str], profile_theme: Option<ThemeName>| {
        let mut cli = with(
            &format!(
                "{text}theme = \"{}\"\n",
                profile_theme.map_or("dark", |t| t.as_str())
            ),
            args,
        );
        if profile_theme.is_none() {
            cli.dashboard.theme = None;
        }
        crate::cli::looks::apply(&mut cli.dashboard, file.looks(), text).unwrap();
        cli.dashboard
    };
    let d = looks(&["estx-tui"], None);
    assert_eq!(d.theme, Some(ThemeName::Light), "the file's");
    assert!(d.ascii && d.theme().ascii);
    assert_eq!(d.keys.write_keys(), "Z F L V K");
    let d = looks(&["estx-tui"], Some(ThemeName::HighContrast));
    assert_eq!(d.theme, Some(ThemeName::HighContrast), "the profile's");
    let d = looks(
        &["estx-tui", "--theme", "colour-blind"],
        Some(ThemeName::HighContrast),
    );
    assert_eq!(d.theme, Some(ThemeName::ColourBlind), "the flag's");
}

#[test]
fn a_profile_frames_the_dashboard_production_in_red_by_default() {
    let frame = |text: &str| with(text, &["estx-tui", "list"]).global.resolved.mark;
    let prod = frame(PROD).unwrap();
    assert_eq!(
        (prod.label.as_str(), prod.colour, prod.production),
        ("PRODUCTION", MarkColour::Danger, true)
    );
    assert_eq!(frame("[profiles.p]\nurl = \"http://x\"\n"), None);
    let own = frame("[profiles.p]\nlabel = \"staging eu\"\ncolor = \"#3366ff\"\n").unwrap();
    assert_eq!(
        (own.label.as_str(), own.colour, own.production),
        (
            "staging eu",
            MarkColour::Named(ratatui::style::Color::Rgb(0x33, 0x66, 0xff)),
            false
        )
    );
    let named = frame("[profiles.p]\ncolour = \"blue\"\n").unwrap();
    assert_eq!(
        (named.label.as_str(), named.colour),
        ("p", MarkColour::Named(ratatui::style::Color::Blue))
    );
    let p = config("[profiles.p]\ncolour = \"reddish\"\n").unwrap();
    let m = Cli::command()
        .try_get_matches_from(["estx-tui", "list"])
        .unwrap();
    let mut cli = Cli::from_arg_matches(&m).unwrap();
    let e = apply(&mut cli.global, &mut cli.dashboard, &m, "p", &p).unwrap_err();
    assert!(e.0.contains("colour = \"reddish\": not a colour"), "{e}");
}

#[test]
fn the_locks_index_is_named_by_a_flag_or_a_profile() {
    // Only a named locks index that does not exist is a mistake; the
    // default one absent is a deployment without locks.
    assert!(!with(PROD, &["estx-tui", "list"]).global.locks_index_named);
    let named = format!("{PROD}locks_index = \"app-locks\"\n");
    let cli = with(&named, &["estx-tui", "list"]);
    assert!(cli.global.locks_index_named);
    assert_eq!(cli.global.locks_index, "app-locks");
    let flag = ["estx-tui", "--locks-index", "locks", "list"];
    let m = Cli::command().try_get_matches_from(flag).unwrap();
    assert!(!unset(&m, "locks_index"), "a flag names it");
}
