//! Docs that cannot rot: the README and the book under `docs/src/` against
//! the tool itself.
//!
//! - every subcommand and `--flag` they name exists in the command-line
//!   definition (`estx::cli::Cli`, the one clap `Command` the help, the man
//!   page and the completions are generated from), and a flag written after
//!   `estx-tui SUBCOMMAND` in code belongs to that subcommand;
//! - every visible flag and subcommand of the help is named somewhere in
//!   them;
//! - every relative link and `#anchor` resolves (anchors by the slug rule
//!   GitHub and mdBook share);
//! - every example marked `<!-- runnable: exit N -->` (a fenced `console`
//!   block of `$ estx-tui ...` lines) runs against the test server with
//!   that exit code.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use clap::CommandFactory;
use common::{TestIndices, TestServer};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Flags of other tools the docs show (cargo, pip, dpkg, the test runner).
const FOREIGN_FLAGS: &[&str] = &[
    "release",
    "locked",
    "path",
    "test",
    "ignored",
    "nocapture",
    "target",
    "root",
    "debug",
    "no-build",
    "no-strip",
    "contents",
    "bench",
];

/// One Markdown file of the docs, relative to the repository.
struct Doc {
    path: PathBuf,
    text: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every `.md` under `docs/src/`, README first, then by path.
fn docs() -> Vec<Doc> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut paths = vec![root().join("README.md")];
    walk(&root().join("docs/src"), &mut paths);
    paths
        .into_iter()
        .map(|path| Doc {
            text: std::fs::read_to_string(&path).unwrap(),
            path: path.strip_prefix(root()).unwrap().to_path_buf(),
        })
        .collect()
}

/// A Markdown file split into prose lines and code (fenced blocks, indented
/// blocks and inline code spans), each piece with its line number.
struct Parts {
    prose: Vec<(usize, String)>,
    code: Vec<(usize, String)>,
}

/// Where a line is: outside a fence, in a code block, in a screen capture.
#[derive(Clone, Copy)]
enum Fence {
    None,
    Code,
    Capture,
}

fn parts(text: &str) -> Parts {
    let span = Regex::new(r"`+([^`]+)`+").unwrap();
    let (mut prose, mut code) = (Vec::new(), Vec::new());
    let mut fenced = Fence::None;
    let mut prev_blank = true;
    let mut in_indented = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim_start();
        if let Some(lang) = trimmed.strip_prefix("```") {
            // A `text` block is a screen capture: no commands in it.
            fenced = match fenced {
                Fence::None if lang.trim() == "text" => Fence::Capture,
                Fence::None => Fence::Code,
                _ => Fence::None,
            };
            prev_blank = false;
            continue;
        }
        match fenced {
            Fence::Capture => continue,
            Fence::Code => {
                code.push((n, line.to_string()));
                continue;
            }
            Fence::None => {}
        }
        // An indented code block starts after a blank line (not inside a
        // list item's continuation, which the docs indent by 2).
        if line.starts_with("    ") && (prev_blank || in_indented) {
            in_indented = true;
            code.push((n, line.to_string()));
            continue;
        }
        in_indented = false;
        prev_blank = line.trim().is_empty();
        for c in span.captures_iter(line) {
            code.push((n, c[1].to_string()));
        }
        prose.push((n, span.replace_all(line, "").into_owned()));
    }
    Parts { prose, code }
}

/// The command line's definition: per subcommand the long flags it accepts
/// (its own and the global ones), and which of them the help shows.
struct Definition {
    /// Subcommand name → every long flag it takes (hidden ones included).
    accepts: BTreeMap<String, BTreeSet<String>>,
    /// Every long flag of the root and of every subcommand.
    all: BTreeSet<String>,
    /// (where, flag) for every flag the help shows.
    visible: BTreeSet<(String, String)>,
    /// The long flags that take a value (`--profile NAME`).
    valued: BTreeSet<String>,
}

fn definition() -> Definition {
    let mut cmd = estx::cli::Cli::command();
    cmd.build();
    let longs = |c: &clap::Command, hidden: bool| -> BTreeSet<String> {
        c.get_arguments()
            .filter(|a| hidden || !a.is_hide_set())
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect()
    };
    let global = longs(&cmd, true);
    let valued = std::iter::once(&cmd)
        .chain(cmd.get_subcommands())
        .flat_map(|c| c.get_arguments())
        .filter(|a| {
            a.get_action().takes_values() && a.get_num_args().is_none_or(|n| n.min_values() > 0)
        })
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let mut accepts = BTreeMap::new();
    let mut all = global.clone();
    let mut visible: BTreeSet<(String, String)> = longs(&cmd, false)
        .into_iter()
        .map(|f| ("estx-tui".to_string(), f))
        .collect();
    for sub in cmd.get_subcommands() {
        let name = sub.get_name().to_string();
        let own = longs(sub, true);
        all.extend(own.iter().cloned());
        visible.extend(longs(sub, false).into_iter().map(|f| (name.clone(), f)));
        let mut takes = own;
        takes.extend(global.iter().cloned());
        accepts.insert(name, takes);
    }
    Definition {
        accepts,
        all,
        visible,
        valued,
    }
}

/// `--flag` tokens of a piece of text (placeholders such as `--warn-X`
/// left out).
fn flags_in(text: &str) -> Vec<String> {
    let re = Regex::new(r"(?:^|[^\w-])--([A-Za-z][A-Za-z0-9-]*)").unwrap();
    re.captures_iter(text)
        .map(|c| c[1].trim_end_matches('-').to_string())
        .filter(|f| f.chars().all(|c| !c.is_ascii_uppercase()))
        .collect()
}

/// The `estx-tui SUBCOMMAND ...` invocations in a piece of code: the
/// subcommand and the long flags written after it (up to a comment, a pipe
/// or the end). The global flags before it are skipped with their values.
fn invocations(code: &str, def: &Definition) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    // A shell comment is prose: `# puts estx-tui in ~/.cargo/bin`.
    let code = match code.find(" #") {
        Some(i) => &code[..i],
        None if code.trim_start().starts_with('#') => "",
        None => code,
    };
    for (i, _) in code.match_indices("estx-tui ") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || "-_/.".contains(c)) {
            continue;
        }
        let rest = &code[i + "estx-tui ".len()..];
        let rest = rest.split(['#', '|', ';', '`', ')']).next().unwrap_or("");
        let mut words = rest.split_whitespace();
        let mut sub = None;
        while let Some(w) = words.next() {
            if let Some(flag) = w.strip_prefix("--") {
                if !flag.contains('=') && def.valued.contains(flag) {
                    words.next();
                }
            } else if w.starts_with('-') {
                continue;
            } else {
                sub = Some(w);
                break;
            }
        }
        let Some(sub) = sub.filter(|s| s.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        else {
            continue;
        };
        let flags = words.flat_map(flags_in).collect();
        out.push((sub.to_string(), flags));
    }
    out
}

/// (a) Every subcommand and flag the docs name exists.
#[test]
fn every_command_and_flag_the_docs_name_exists() {
    let def = definition();
    let mut wrong = Vec::new();
    for doc in docs() {
        let p = parts(&doc.text);
        let at = |n: usize| format!("{}:{n}", doc.path.display());
        for (n, line) in p.prose.iter().chain(&p.code) {
            for flag in flags_in(line) {
                let known = def.all.contains(&flag)
                    || ["help", "version"].contains(&flag.as_str())
                    || FOREIGN_FLAGS.contains(&flag.as_str());
                if !known {
                    wrong.push(format!("{}: --{flag} is no flag of estx-tui", at(*n)));
                }
            }
        }
        for (n, code) in &p.code {
            for (sub, flags) in invocations(code, &def) {
                let Some(takes) = def.accepts.get(&sub) else {
                    wrong.push(format!("{}: `estx-tui {sub}` is no subcommand", at(*n)));
                    continue;
                };
                for flag in flags {
                    if !takes.contains(&flag) && !["help", "version"].contains(&flag.as_str()) {
                        wrong.push(format!("{}: `estx-tui {sub}` takes no --{flag}", at(*n)));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// (b) Every flag the help shows, and every subcommand, is documented.
#[test]
fn every_flag_of_the_help_is_documented() {
    let def = definition();
    let mut named = BTreeSet::new();
    let mut table = String::new();
    for doc in docs() {
        named.extend(flags_in(&doc.text));
        if doc.path.ends_with("commands.md") {
            table = doc.text.clone();
        }
    }
    let mut missing: Vec<String> = def
        .visible
        .iter()
        .filter(|(_, f)| !named.contains(f) && !["help", "version"].contains(&f.as_str()))
        .map(|(w, f)| format!("--{f} (of {w}) is named nowhere in README.md or docs/src"))
        .collect();
    for sub in def.accepts.keys() {
        if sub != "help" && !table.contains(&format!("| [`{sub}`]")) {
            missing.push(format!(
                "`{sub}` has no row in docs/src/commands.md's table"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// A heading's anchor as GitHub and mdBook make it: lower case, letters,
/// digits, `-` and `_` kept, spaces to `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code), with the
/// `-1`, `-2` suffixes of repeated ones.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        if fenced {
            continue;
        }
        let title = rest.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

#[test]
fn slugs_follow_the_github_and_mdbook_rule() {
    assert_eq!(
        slug(" Indices whose `_source` is not the document"),
        "indices-whose-_source-is-not-the-document"
    );
    assert_eq!(
        slug(" The test server (for the demo and the tests)"),
        "the-test-server-for-the-demo-and-the-tests"
    );
    assert_eq!(slug(" Rate: `--max-rate`"), "rate---max-rate");
    let a = anchors("# A\n## B\n```\n# not a heading\n```\n## B\n");
    assert_eq!(a, ["a", "b", "b-1"].map(String::from).into());
}

/// (c) Every relative link, and its anchor, resolves.
#[test]
fn every_relative_link_and_anchor_resolves() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        let dir = doc.path.parent().unwrap_or(Path::new(""));
        for (n, line) in parts(&doc.text).prose {
            for c in link.captures_iter(&line) {
                let target = &c[1];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let path = if file.is_empty() {
                    doc.path.clone()
                } else {
                    dir.join(file)
                };
                let at = format!("{}:{n}: {target}", doc.path.display());
                let full = root().join(&path);
                if !full.exists() {
                    broken.push(format!("{at}: no {}", path.display()));
                    continue;
                }
                if !anchor.is_empty() {
                    let text = std::fs::read_to_string(&full).unwrap_or_default();
                    if !anchors(&text).contains(anchor) {
                        broken.push(format!("{at}: no heading #{anchor} in {}", path.display()));
                    }
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser right?"
    );
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// A runnable example: the commands of a ```console block after a
/// `<!-- runnable: exit N -->` marker.
struct Example {
    at: String,
    exit: i32,
    commands: Vec<Vec<String>>,
}

fn examples(doc: &Doc) -> Vec<Example> {
    let marker = Regex::new(r"^<!-- runnable: exit (\d+) -->$").unwrap();
    let lines: Vec<&str> = doc.text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = marker.captures(line.trim()) else {
            continue;
        };
        let at = format!("{}:{}", doc.path.display(), i + 1);
        let fence = lines[i + 1..].iter().position(|l| !l.trim().is_empty());
        let start = fence.map(|f| i + 1 + f).expect("a block after the marker");
        assert_eq!(
            lines[start].trim(),
            "```console",
            "{at}: a ```console block"
        );
        let commands = lines[start + 1..]
            .iter()
            .take_while(|l| l.trim() != "```")
            .filter_map(|l| l.strip_prefix("$ estx-tui "))
            .map(|cmd| words(cmd, &at))
            .collect::<Vec<_>>();
        assert!(!commands.is_empty(), "{at}: no `$ estx-tui` line");
        out.push(Example {
            at,
            exit: c[1].parse().unwrap(),
            commands,
        });
    }
    out
}

/// A command line split as a shell would (plain words and "quoted" ones).
fn words(line: &str, at: &str) -> Vec<String> {
    let re = Regex::new(r#""([^"]*)"|'([^']*)'|(\S+)"#).unwrap();
    let line = line.split(" #").next().unwrap_or(line);
    re.captures_iter(line)
        .map(|c| {
            let w = c.get(1).or(c.get(2)).or(c.get(3)).unwrap().as_str();
            assert!(
                !w.contains(['$', '`', '|', '>', '<']),
                "{at}: {w}: no shell here"
            );
            w.to_string()
        })
        .collect()
}

/// (d) The runnable examples run against the test server with their exit
/// code, each file's in order on indices of its own.
#[test]
fn runnable_examples_exit_as_documented() {
    let all: Vec<(Doc, Vec<Example>)> = docs()
        .into_iter()
        .map(|d| {
            let e = examples(&d);
            (d, e)
        })
        .filter(|(_, e)| !e.is_empty())
        .collect();
    let count: usize = all.iter().map(|(_, e)| e.len()).sum();
    assert!(
        (1..=8).contains(&count),
        "{count} runnable examples: keep a handful"
    );
    let server = TestServer::shared();
    let home = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for (_, examples) in &all {
        let ix = TestIndices::unique();
        for e in examples {
            for args in &e.commands {
                let mut c = Command::new(env!("CARGO_BIN_EXE_estx-tui"));
                for (k, _) in std::env::vars() {
                    if k.starts_with("ESTX_") || k.starts_with("AWS_") {
                        c.env_remove(k);
                    }
                }
                let out = c
                    .args(args)
                    .env("ESTX_URL", server.url())
                    .env("ESTX_TRANSACTIONS_INDEX", &ix.transactions)
                    .env("ESTX_ACCOUNTS_INDEX", &ix.accounts)
                    .env("ESTX_LOCKS_INDEX", &ix.locks)
                    .env("ESTX_AUDIT_INDEX", &ix.audit)
                    .env("ESTX_LOG_FILE", "/dev/null")
                    .env("HOME", home.path())
                    .env("XDG_CONFIG_HOME", home.path().join("config"))
                    .env("XDG_STATE_HOME", home.path().join("state"))
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                if out.status.code() != Some(e.exit) {
                    wrong.push(format!(
                        "{}: estx-tui {} exited {:?}, the docs say {}\n{}{}",
                        e.at,
                        args.join(" "),
                        out.status.code(),
                        e.exit,
                        String::from_utf8_lossy(&out.stdout),
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
