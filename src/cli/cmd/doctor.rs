//! `doctor`: what will work on this cluster, as text or JSON. Exit code by
//! the worst finding: 0 all good, 1 warnings (works, worse), 3 errors
//! (something the tool needs will fail) or the cluster could not be asked.

use crate::cli::output::{fail, out, print_json};
use crate::protocol::read::doctor::{DoctorReport, IndexReport, Security, Severity};
use crate::protocol::read::index_info::{Refresh, Target};
use crate::protocol::read::schema_report::SchemaReport;
use crate::protocol::schema::advice::profile_label;
use crate::protocol::Protocol;

/// `doctor`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Exit code for a severity.
pub fn exit_code(s: Severity) -> i32 {
    match s {
        Severity::Ok => 0,
        Severity::Warning => 1,
        Severity::Error => 3,
    }
}

/// Runs `doctor`.
pub async fn run(p: Protocol, a: &Args) -> i32 {
    let report = match p.doctor().await {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    if a.json {
        match serde_json::to_value(&report) {
            Ok(v) => print_json(&v),
            Err(e) => return fail(&crate::Error::Decode(e.to_string())),
        }
    } else {
        for l in lines(&report) {
            out(l);
        }
    }
    exit_code(report.severity())
}

/// The human text of a report.
pub fn lines(r: &DoctorReport) -> Vec<String> {
    let mut l = Vec::new();
    let product = match &r.product {
        Some(p) => format!(
            "{} {} (cluster `{}`)",
            p.distribution, p.version, p.cluster_name
        ),
        None => "unknown product".into(),
    };
    l.push(format!("{:<14} {} at {}", "cluster", product, r.url));
    l.push(format!("{:<14} {}", "credential", r.credential));
    l.push(format!("{:<14} {}", "clock", r.clock.text));
    if let Some(paging) = &r.paging {
        l.push(format!("{:<14} {paging}", "paging"));
    }
    let t = &r.times;
    for f in [
        &t.modification,
        &t.creation,
        &t.lock_created,
        &t.lock_expires,
    ] {
        l.push(format!("{:<14} {:<18} {}", "time field", f.name, f.how()));
    }
    for i in &r.indices {
        l.extend(index_lines(i));
    }
    l.push(String::new());
    l.extend(security_lines(&r.security));
    if let Some(file) = &r.audit_file {
        l.push(format!(
            "{:<14} the local file {} (--audit-trail): interventions are recorded there, \
             not in an audit index",
            "audit trail",
            file.display()
        ));
    }
    l.push(String::new());
    l.push(match &r.liveness {
        Some(live) => format!("{:<14} {live}", "liveness"),
        None => format!(
            "{:<14} not configured: locks held by processes or instances are judged unknown \
             (never released without --force); a profile's [liveness] names a heartbeat index",
            "liveness"
        ),
    });
    l.push(String::new());
    l.extend(schema_lines(&r.schema));
    l.push(String::new());
    l.extend(check_lines(r));
    l
}

/// The lines of one index: what it is, its settings and how each field
/// the tool queries resolved.
fn index_lines(i: &IndexReport) -> Vec<String> {
    let mut l = Vec::new();
    l.push(String::new());
    let what = match &i.info.target {
        Target::Missing => "does not exist".to_string(),
        Target::Absent => "does not exist: this deployment takes no locks".to_string(),
        Target::Index => "index".to_string(),
        Target::Alias { indices } => format!("alias over {}", indices.join(", ")),
        Target::DataStream { indices } => {
            format!("data stream over {}", indices.join(", "))
        }
    };
    l.push(format!("{:<14} `{}`: {what}", i.role, i.info.name));
    if i.info.is_absent() {
        l.push(
            "  no --locks-index was named: lock reads find none, the lock sweep and lock \
             releases have nothing to do, and only `transfer --locks` is refused \
             (`estx-tui init` creates the index; --locks-index names one that exists)"
                .into(),
        );
    }
    if !i.info.exists() {
        return l;
    }
    let refresh = match i.info.refresh {
        Refresh::Every(d) => format!("{}s", d.as_secs_f64()),
        r @ Refresh::ServerlessDefault => format!(
            "{}s (Elasticsearch Serverless's default: not an index setting there)",
            r.interval().unwrap_or_default().as_secs()
        ),
        Refresh::Never => "-1 (never: searches see nothing new)".into(),
    };
    l.push(format!(
        "  documents {}   dynamic {}   refresh {}   health {}{}",
        i.doc_count
            .map(|n| n.to_string())
            .unwrap_or_else(|| "?".into()),
        i.info.dynamic,
        refresh,
        i.health.as_deref().unwrap_or("?"),
        match i.unassigned_shards {
            Some(n) if n > 0 => format!(" ({n} unassigned shards)"),
            _ => String::new(),
        }
    ));
    for f in &i.fields {
        l.push(format!("  {:<22} {}", f.name, f.how()));
    }
    match (&i.mapping_change, i.writes_rejected) {
        (Some(c), true) => l.push(format!("  REJECTS the protocol's writes until: {c}")),
        (Some(c), false) => l.push(format!(
            "  not mapped yet (mapped dynamically on first write; `init --upgrade-mappings` adds): {c}"
        )),
        (None, _) => {}
    }
    l
}

/// The security line(s): off, or the user's privileges or roles.
fn security_lines(security: &Security) -> Vec<String> {
    let mut l = Vec::new();
    match security {
        Security::Off => l.push(format!(
            "{:<14} off (no authentication: anyone reaching the URL may change balances)",
            "security"
        )),
        Security::Privileges { user, indices, .. } => {
            l.push(format!(
                "{:<14} on, user {}",
                "security",
                user.as_deref().unwrap_or("?")
            ));
            for (index, privs) in indices {
                let list: Vec<String> = privs
                    .iter()
                    .map(|(p, ok)| format!("{p} {}", if *ok { "yes" } else { "NO" }))
                    .collect();
                l.push(format!("  {index}: {}", list.join(", ")));
            }
        }
        Security::Roles {
            user,
            roles,
            backend_roles,
            ..
        } => l.push(format!(
            "{:<14} on (OpenSearch), user {}, roles {}, backend roles {}",
            "security",
            user.as_deref().unwrap_or("?"),
            roles.join(", "),
            backend_roles.join(", ")
        )),
    }
    l
}

/// The verdict: everything works, or each check that did not pass.
fn check_lines(r: &DoctorReport) -> Vec<String> {
    let mut l = Vec::new();
    if r.checks.iter().all(|c| c.severity == Severity::Ok) {
        l.push("everything the tool needs works here".into());
    }
    for c in r.checks.iter().filter(|c| c.severity != Severity::Ok) {
        let mark = match c.severity {
            Severity::Error => "ERROR",
            _ => "warn ",
        };
        l.push(format!("{mark} {}", c.text));
    }
    l
}

/// The schema section: the map in force, what each name resolved to, the
/// state values, and the proposed map to paste when it differs.
fn schema_lines(s: &SchemaReport) -> Vec<String> {
    let profile = profile_label(s.profile.as_deref());
    let mut l = vec![format!(
        "{:<14} {}",
        "schema",
        if s.default {
            format!("the article's names (no [profiles.{profile}.schema])")
        } else {
            "the profile's map".to_string()
        }
    )];
    for f in &s.fields {
        l.push(format!(
            "  {:<22} {:<22} {}",
            f.canonical, f.name, f.resolved
        ));
    }
    let states: Vec<String> = s.states.iter().map(|(c, v)| format!("{c}={v}")).collect();
    l.push(format!("  states: {}", states.join(" ")));
    if !s.seen_states.is_empty() {
        l.push(format!(
            "  values on the cluster: {}",
            s.seen_states.join(", ")
        ));
    }
    if !s.unknown_states.is_empty() {
        l.push(format!(
            "  not in the map (shown as unknown, never acted on): {}",
            s.unknown_states.join(", ")
        ));
    }
    if let Some(p) = &s.proposal {
        l.push(format!(
            "  the names in force do not fit this cluster; proposed map (not applied: \
             paste into the profile{}):",
            if s.profile.is_some() {
                ""
            } else {
                ", NAME being its name"
            }
        ));
        l.extend(p.lines().map(|x| format!("    {x}")));
        if !s.unmatched_states.is_empty() {
            l.push(format!(
                "  values no state matches (left unknown): {}",
                s.unmatched_states.join(", ")
            ));
        }
    }
    l
}
