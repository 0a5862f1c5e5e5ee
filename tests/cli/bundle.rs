//! `bundle OUT.tar.gz`: the archive holds what it says (doctor, audit, the
//! stuck list, each one's history, the interventions since --since, the
//! log and config), private, and no secret: the password and API key in
//! force, a URL's userinfo, an Authorization value and secret-named values
//! seeded into the log, the config and an intervention's reason are looked
//! for in every file of the archive.

use super::*;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

/// Every file in the archive: path -> text.
fn unpack(path: &std::path::Path) -> BTreeMap<String, String> {
    let file = std::fs::File::open(path).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut files = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        assert_eq!(entry.header().mode().unwrap() & 0o077, 0, "private entries");
        let name = entry.path().unwrap().display().to_string();
        let mut text = String::new();
        entry.read_to_string(&mut text).unwrap();
        files.insert(name, text);
    }
    files
}

#[test]
fn the_bundle_holds_what_it_says_and_no_secret() {
    let w = World::new();
    for a in ["A", "B", "C", "D"] {
        w.account(a, 500);
    }
    w.stage("s1", "A", "B", 10, 2);
    w.backdate("s1", 10); // stuck
    w.stage("r1", "C", "D", 10, 2);
    w.backdate("r1", 10);
    w.refresh();
    w.run(&["rollback", "r1", "--reason", "INC-7 password=reason-S3cr3t"])
        .code(0);
    w.refresh();

    // Secrets where a careless line could have put them.
    let b64_basic = "ZXN0eDpwdy1TM2NyM3QteHl6"; // base64("estx:pw-S3cr3t-xyz")
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(&w.g.log)
        .unwrap();
    writeln!(
        log,
        "connecting to https://bob:url-S3cr3t@es.internal:9200\n\
         request headers: authorization: Basic {b64_basic}\n\
         env ESTX_API_KEY=key-S3cr3t-abc token=tok-S3cr3t-q"
    )
    .unwrap();
    let config_dir = w.g.log.with_file_name("config").join("estx-tui");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        config_dir.join("config.toml"),
        "[profiles.prod]\nurl = \"https://es.internal:9200\"\npassword_env = \"PROD_PW\"\n\
         # was: api_key = \"cfg-S3cr3t-k\"\n",
    )
    .unwrap();

    let out_dir = tempfile::tempdir().unwrap();
    let archive = out_dir.path().join("incident.tar.gz");
    let archive_arg = archive.display().to_string();
    let out = w.g.run_env(
        // One credential kind at a time (basic auth here): the API key
        // appears only in the log line above, redacted by its shape.
        &[("ESTX_PASSWORD", "pw-S3cr3t-xyz")],
        &["--user", "estx", "bundle", &archive_arg, "--since", "1h"],
    );
    out.code(0).stdout_has("wrote ");
    let mode = std::fs::metadata(&archive).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the archive is private: {mode:o}");

    let files = unpack(&archive);
    let top = files
        .keys()
        .next()
        .and_then(|k| k.split('/').next())
        .unwrap()
        .to_string();
    let file = |name: &str| {
        files
            .get(&format!("{top}/{name}"))
            .unwrap_or_else(|| panic!("{name} missing: {:?}", files.keys()))
    };
    assert!(file("MANIFEST.txt").contains("stuck.csv"));
    assert!(file("doctor.txt").contains("cluster"));
    assert!(file("doctor.json").starts_with('{'));
    assert!(file("audit.txt").contains("finding") || file("audit.txt").contains("balance"));
    assert!(file("audit.json").starts_with('{'));
    let csv = file("stuck.csv");
    assert!(csv.starts_with("as_of,id,state"), "{csv}");
    assert!(csv.contains("\ns1,") || csv.contains(",s1,"), "{csv}");
    assert!(!csv.contains(",r1,"), "r1 was rolled back: {csv}");
    assert!(file("history/s1.txt").starts_with("transaction s1"));
    let interventions = file("interventions.txt");
    assert!(
        interventions.contains("rollback") && interventions.contains("INC-7"),
        "{interventions}"
    );
    assert!(file("interventions.json").contains("r1"));
    let log = file("log/estx-tui.log");
    assert!(
        log.contains("es.internal:9200") && log.contains("[REDACTED]"),
        "{log}"
    );
    assert!(file("config.toml").contains("password_env = \"PROD_PW\""));

    for (name, text) in &files {
        for secret in ["S3cr3t", b64_basic] {
            assert!(
                !text.contains(secret),
                "{secret} leaked into {name}:\n{text}"
            );
        }
    }

    // Evidence is not overwritten.
    w.run(&["bundle", &archive_arg])
        .code(1)
        .stderr_has("exists");
}
