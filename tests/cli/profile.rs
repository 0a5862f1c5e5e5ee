//! Profiles from the config file: settings used, overridden by flags and by
//! `ESTX_*` variables; secrets refused; production profiles read-only.

use super::*;

/// Writes `text` as `$XDG_CONFIG_HOME/estx-tui/config.toml`; returns the
/// XDG_CONFIG_HOME to pass.
fn config(w: &World, text: &str) -> String {
    let home = w.g.log.with_file_name("xdg");
    std::fs::create_dir_all(home.join("estx-tui")).unwrap();
    std::fs::write(home.join("estx-tui/config.toml"), text).unwrap();
    home.display().to_string()
}

/// The binary with only `args` (no harness globals), a clean environment
/// and `envs`.
fn bare_run(w: &World, envs: &[(&str, &str)], args: &[&str]) -> Out {
    let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
    for var in ESTX_ENV {
        c.env_remove(var);
    }
    c.env("ESTX_LOG_FILE", &w.g.log).envs(envs.iter().copied());
    let output = c.args(args).stdin(Stdio::null()).output().unwrap();
    let out = Out {
        cmd: format!("estx-tui {}", args.join(" ")),
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    assert_no_panic(&out);
    out
}

#[test]
fn a_profile_is_used_and_overridden_by_flags_and_env() {
    let w = World::new();
    w.stage_old_pending();
    w.refresh();
    let text = format!(
        "[profiles.test]\nurl = \"{}\"\ntransactions_index = \"{}\"\naccounts_index = \"{}\"\n\
         locks_index = \"{}\"\naudit_index = \"{}\"\nrecovery_window = \"1h\"\n\
         [profiles.nowhere]\nurl = \"http://127.0.0.1:9\"\n",
        w.g.url, w.ix.transactions, w.ix.accounts, w.ix.locks, w.ix.audit
    );
    let xdg = config(&w, &text);
    let env = [("XDG_CONFIG_HOME", xdg.as_str())];
    // The profile's cluster and indices are used.
    let out = bare_run(&w, &env, &["--profile", "test", "list", "--json"]);
    assert_eq!(ids(&out.code(0).json()), set(&["t1"]));
    // ESTX_PROFILE chooses it too; its recovery window (1h) makes t1 (10
    // minutes old) recent.
    let env2 = [("XDG_CONFIG_HOME", xdg.as_str()), ("ESTX_PROFILE", "test")];
    bare_run(&w, &env2, &["recover", "t1"])
        .code(1)
        .stderr_has("refused");
    // A flag overrides the profile's window.
    bare_run(&w, &env2, &["recover", "t1", "--recovery-window", "1m"]).code(0);
    // An environment variable overrides the profile's URL.
    let env3 = [
        ("XDG_CONFIG_HOME", xdg.as_str()),
        ("ESTX_PROFILE", "nowhere"),
        ("ESTX_URL", w.g.url.as_str()),
        ("ESTX_TRANSACTIONS_INDEX", w.ix.transactions.as_str()),
    ];
    // (`--all`: t1 is finished by now, and `list` shows in-flight ones by default.)
    let out = bare_run(&w, &env3, &["list", "--all", "--json"]);
    assert_eq!(ids(&out.code(0).json()), set(&["t1"]));
    // ... and without it, the profile's (unreachable) URL is used.
    bare_run(&w, &env3[..2], &["list"]).code(3);
    // An unknown profile names the known ones.
    bare_run(&w, &env, &["--profile", "prod", "list"])
        .code(2)
        .stderr_has("nowhere, test");
}

#[test]
fn production_profiles_start_read_only() {
    let w = World::new();
    w.stage_old_pending();
    let text = format!(
        "default_profile = \"prod\"\n[profiles.prod]\nurl = \"{}\"\ntransactions_index = \"{}\"\n\
         accounts_index = \"{}\"\nlocks_index = \"{}\"\naudit_index = \"{}\"\nproduction = true\n",
        w.g.url, w.ix.transactions, w.ix.accounts, w.ix.locks, w.ix.audit
    );
    let xdg = config(&w, &text);
    let env = [("XDG_CONFIG_HOME", xdg.as_str()), ("ESTX_REASON", "INC-1")];
    bare_run(&w, &env, &["rollback", "t1"])
        .code(1)
        .stderr_has("profile `prod` is production");
    assert_eq!(w.state("t1"), "pending");
    bare_run(&w, &env, &["rollback", "t1", "--read-only=false"]).code(0);
    assert_eq!(w.state("t1"), "rolled-back");
}

/// A writable production profile: bulk and forced acts are refused until
/// `--confirm` names the count or the profile (nothing written, exit 2,
/// the refusal says what to pass); confirmed, they run and their audit
/// record names the profile.
#[test]
fn production_bulk_and_forced_acts_want_a_typed_confirmation() {
    let w = World::new();
    w.stage_old_pending();
    w.refresh();
    let text = format!(
        "default_profile = \"prod\"\n[profiles.prod]\nurl = \"{}\"\ntransactions_index = \"{}\"\n\
         accounts_index = \"{}\"\nlocks_index = \"{}\"\naudit_index = \"{}\"\nproduction = true\n\
         read_only = false\n",
        w.g.url, w.ix.transactions, w.ix.accounts, w.ix.locks, w.ix.audit
    );
    let xdg = config(&w, &text);
    let env = [("XDG_CONFIG_HOME", xdg.as_str()), ("ESTX_REASON", "INC-1")];
    let bulk = ["rollback", "--all-stuck"];
    bare_run(&w, &env, &bulk)
        .code(2)
        .stderr_has("profile `prod` is production: a bulk act on 1 transaction(s)")
        .stderr_has("pass --confirm 1 or --confirm prod; nothing was done");
    bare_run(&w, &env, &[&bulk[..], &["--confirm", "2"]].concat()).code(2);
    bare_run(&w, &env, &["rollback", "t1", "--force"])
        .code(2)
        .stderr_has("a forced act runs only once confirmed by typing `prod`")
        .stderr_has("pass --confirm prod;");
    bare_run(&w, &env, &["rollback", "t1", "--force", "--confirm", "1"]).code(2);
    assert_eq!(w.state("t1"), "pending");
    assert!(w.audit_records().is_empty(), "a refusal writes no record");
    // An unforced act on one transaction is not asked.
    bare_run(&w, &env, &["recover", "t1", "--dry-run"]).code(0);
    bare_run(&w, &env, &[&bulk[..], &["--confirm", "1"]].concat()).code(0);
    assert_eq!(w.state("t1"), "rolled-back");
    let records = w.audit_records();
    let [r] = records.as_slice() else {
        panic!("one record: {records:?}")
    };
    assert_eq!(
        (r["profile"].as_str(), r["production"].as_bool()),
        (Some("prod"), Some(true))
    );
}

#[test]
fn a_profile_holding_a_secret_is_refused() {
    let w = World::bare();
    let xdg = config(
        &w,
        "[profiles.p]\nurl = \"http://localhost:9200\"\npassword = \"hunter2\"\n",
    );
    let out = bare_run(
        &w,
        &[("XDG_CONFIG_HOME", xdg.as_str())],
        &["--profile", "p", "list"],
    );
    out.code(2)
        .stderr_has("`profiles.p.password` looks like a secret");
    assert!(!out.stderr.contains("hunter2"), "{out}");
}

/// The demo runs its own throw-away cluster: the file's default profile is
/// not applied to it (this one is even refused elsewhere, holding a secret).
#[test]
fn the_demo_ignores_the_default_profile() {
    let w = World::bare();
    let xdg = config(
        &w,
        "default_profile = \"p\"\n[profiles.p]\nurl = \"http://localhost:9200\"\npassword = \"hunter2\"\n",
    );
    let env = [("XDG_CONFIG_HOME", xdg.as_str())];
    bare_run(&w, &env, &["list"]).code(2);
    bare_run(&w, &env, &["demo", "--no-ui", "--for", "1s"]).code(0);
}

/// A profile's `[liveness]` names a heartbeat index: a Kestra-style lock
/// of an instance whose heartbeat is old is stale (released without
/// force), one with a fresh heartbeat live; `doctor` says what it found.
#[test]
fn a_profiles_heartbeat_index_judges_instance_locks() {
    let w = World::new();
    let hb = format!("{}-heartbeats", w.ix.locks);
    for (instance, ago_min) in [("inst-live", 0), ("inst-dead", 30)] {
        w.put(
            &hb,
            instance,
            &json!({"instance": instance, "heartbeatDate": ago(ago_min)}),
        );
        w.put(
            &w.ix.locks,
            &format!("flow_{instance}"),
            &json!({"category": "flow", "id": instance, "owner": instance, "createdAt": ago(40)}),
        );
    }
    common::refresh(&w.g.url, &hb);
    w.refresh();
    let text = format!(
        "[profiles.test]\nurl = \"{}\"\ntransactions_index = \"{}\"\naccounts_index = \"{}\"\n\
         locks_index = \"{}\"\naudit_index = \"{}\"\n\
         [profiles.test.liveness]\nindex = \"{hb}\"\ninstance_field = \"instance.keyword\"\n\
         time_field = \"heartbeatDate\"\ntimeout = \"2m\"\n",
        w.g.url, w.ix.transactions, w.ix.accounts, w.ix.locks, w.ix.audit
    );
    let xdg = config(&w, &text);
    let env = [("XDG_CONFIG_HOME", xdg.as_str()), ("ESTX_PROFILE", "test")];
    bare_run(&w, &env, &["doctor"])
        .stdout_has(&format!("liveness       heartbeats in `{hb}`"))
        .stdout_has("1 instances alive, 1 dead")
        .stdout_has("1 live, 1 stale (holder dead), 0 unknown");
    bare_run(&w, &env, &["locks"])
        .code(0)
        .stdout_has("stale: instance inst-dead is dead: no heartbeat for ")
        .stdout_has("longer than the 2m00s timeout");
    bare_run(&w, &env, &["release-lock", "flow_inst-live"])
        .code(1)
        .stderr_has("--force");
    bare_run(
        &w,
        &env,
        &[
            "release-lock",
            "flow_inst-dead",
            "--reason",
            "dead instance",
        ],
    )
    .code(0)
    .stdout_has("flow_inst-dead: released");
    assert!(w.source(&w.ix.locks, "flow_inst-live").is_some());
}

/// The config file's looks: a key bound to two actions, an unknown action
/// and an unknown theme are refused naming the line; an unknown
/// `--theme` is a usage error listing the themes.
#[test]
fn bad_looks_are_refused_naming_the_line() {
    let w = World::bare();
    let refused = |text: &str, says: &[&str]| {
        let xdg = config(&w, text);
        let out = bare_run(&w, &[("XDG_CONFIG_HOME", xdg.as_str())], &["list"]);
        out.code(2);
        for s in says {
            out.stderr_has(s);
        }
    };
    refused(
        "theme = \"light\"\n\n[keys]\nhelp = \"F1\"\nrollback = \"r\"\n",
        &["line 5", "`r` is bound to both refresh and rollback"],
    );
    refused(
        "[keys]\nrolback = \"Z\"\n",
        &["line 2", "rolback: no such action"],
    );
    refused("ascii = true\ntheme = \"neon\"\n", &["line 2", "neon"]);
    let out = bare_run(&w, &[], &["--theme", "neon", "list"]);
    out.code(2)
        .stderr_has("invalid value 'neon'")
        .stderr_has("dark, light, high-contrast, colour-blind");
    // A good file is accepted: the command goes on (and fails to connect).
    let xdg = config(&w, "theme = \"colour-blind\"\n[keys]\nrollback = \"Z\"\n");
    let out = bare_run(
        &w,
        &[("XDG_CONFIG_HOME", xdg.as_str())],
        &["--url", "http://127.0.0.1:9", "list"],
    );
    out.code(3);
}

/// A profile's `[runbooks]` map causes to URLs: `check`'s long output and
/// JSON and `list --json` give each stuck transaction its cause, safe act
/// and runbook (a worker whose heartbeat is old: holder dead, recover); an
/// unknown cause in the table is refused, naming the valid ones.
#[test]
fn runbooks_show_beside_each_cause_in_check_and_list() {
    let w = World::new();
    let hb = format!("{}-heartbeats", w.ix.locks);
    w.put(
        &hb,
        "worker-9",
        &json!({"instance": "worker-9", "heartbeatDate": ago(30)}),
    );
    w.account("A", 500);
    w.account("B", 500);
    w.stage("s1", "A", "B", 10, 2);
    w.backdate("s1", 10);
    w.put(
        &w.ix.locks,
        "A",
        &json!({"owner": "s1", "process_id": "worker-9", "created_at": ago(12)}),
    );
    common::refresh(&w.g.url, &hb);
    w.refresh();
    let base = format!(
        "[profiles.test]\nurl = \"{}\"\ntransactions_index = \"{}\"\naccounts_index = \"{}\"\n\
         locks_index = \"{}\"\naudit_index = \"{}\"\n\
         [profiles.test.liveness]\nindex = \"{hb}\"\ninstance_field = \"instance.keyword\"\n\
         time_field = \"heartbeatDate\"\ntimeout = \"2m\"\n",
        w.g.url, w.ix.transactions, w.ix.accounts, w.ix.locks, w.ix.audit
    );
    let text = format!(
        "{base}[profiles.test.runbooks]\nholder_dead = \"https://runbooks.example/holder-dead\"\n"
    );
    let xdg = config(&w, &text);
    let env = [
        ("XDG_CONFIG_HOME", xdg.as_str()),
        ("ESTX_PROFILE", "test"),
        ("ESTX_ACKS_INDEX", w.ix.acks.as_str()),
    ];
    bare_run(&w, &env, &["check", "-w=stuck=", "-c=stuck="]).stdout_has(
        "s1 pending 10m00s A -> B - cause: holder dead (its lock on A: txn s1 (worker-9) is dead: \
             no heartbeat for 30m00s, longer than the 2m00s timeout): safe act: recover \
             - runbook: https://runbooks.example/holder-dead",
    );
    let j = bare_run(&w, &env, &["check", "--format", "json"]).json();
    let cause = &j["stuck"][0]["cause"];
    assert_eq!(cause["cause"], "holder_dead", "{j}");
    assert_eq!(cause["safe_act"], "recover", "{j}");
    assert_eq!(
        cause["runbook"], "https://runbooks.example/holder-dead",
        "{j}"
    );
    let rows = bare_run(&w, &env, &["list", "--json"]).code(0).json();
    let s1 = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "s1")
        .unwrap_or_else(|| panic!("{rows}"));
    assert_eq!(s1["cause"]["cause"], "holder_dead", "{rows}");
    assert_eq!(s1["cause"]["safe_act"], "recover", "{rows}");
    assert_eq!(
        s1["cause"]["runbook"], "https://runbooks.example/holder-dead",
        "{rows}"
    );

    let bad = config(
        &w,
        &format!("{base}[profiles.test.runbooks]\ndead = \"https://x\"\n"),
    );
    let env = [("XDG_CONFIG_HOME", bad.as_str()), ("ESTX_PROFILE", "test")];
    bare_run(&w, &env, &["check"]).code(2).stderr_has(
        "runbooks: unknown cause `dead` (valid: holder_dead, holder_live, hot_account, \
         refused, app_recovering, unknown)",
    );
}
