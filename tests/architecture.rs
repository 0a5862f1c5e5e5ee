//! The code's shape, checked from its text (no cluster, std only):
//!
//! - the protocol facade (`impl Protocol`) spans at most 8 files;
//! - no import circle among `src/`'s files is larger than 3 files, and
//!   no new smaller one appears (`KNOWN_CIRCLES` only shrinks);
//! - every path `ARCHITECTURE.md` names exists.
//!
//! Import circles are counted between files. An edge is a `use` (or a path
//! written in code) starting with `crate::`, `super::` or `self::`, or naming
//! a child module, with comments, string literals and `#[cfg(test)]` items
//! left out. A path is resolved to the file that defines the item it names,
//! through re-exports: `crate::protocol::Protocol` is `protocol/handle.rs`,
//! not `protocol/mod.rs`. A `mod.rs` (or `lib.rs`) that only re-exports
//! (`pub use`) does not depend on what it re-exports; any other `use` does.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The facade's budget (issue 29: at most 8 files).
const MAX_FACADE_FILES: usize = 8;
/// The largest import circle allowed (issue 29: none over 3 files).
const MAX_CIRCLE: usize = 3;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_protocol_facade_spans_at_most_8_files() {
    let crate_ = Crate::load(&root().join("src"));
    let files: Vec<&str> = crate_
        .modules
        .iter()
        .filter(|m| m.impls_protocol)
        .map(|m| m.file.as_str())
        .collect();
    assert!(
        files.len() <= MAX_FACADE_FILES,
        "`impl Protocol` spans {} files (at most {MAX_FACADE_FILES}):\n  {}",
        files.len(),
        files.join("\n  ")
    );
}

/// Files that import each other in a ring cannot be read, tested or moved
/// apart (issue 29: none over 3 files). `ARCH_DEBUG=1` prints every
/// circle's edges.
#[test]
fn no_import_circle_over_3_files() {
    let crate_ = Crate::load(&root().join("src"));
    let large: Vec<String> = crate_
        .circles()
        .iter()
        .filter(|(files, _)| *files > MAX_CIRCLE)
        .map(|(files, walk)| format!("{files} files: {}", walk.join(" -> ")))
        .collect();
    assert!(
        large.is_empty(),
        "import circles over {MAX_CIRCLE} files (each printed in the order its imports run):\n  {}",
        large.join("\n  ")
    );
}

/// The small circles left (of 2 or 3 files), each a few files that read
/// as one unit, or whose cut waits for a change nearby (ARCHITECTURE.md,
/// Known debts): a new one fails, and one paid off must leave this list,
/// so it only shrinks.
const KNOWN_CIRCLES: [&[&str]; 2] = [
    &["protocol/batch/phase.rs", "protocol/batch/round.rs"],
    &["protocol/trail/compact.rs", "protocol/trail/record.rs"],
];

#[test]
fn small_import_circles_do_not_grow() {
    let crate_ = Crate::load(&root().join("src"));
    let found: BTreeSet<Vec<String>> = crate_
        .circles()
        .into_iter()
        .filter(|(files, _)| *files <= MAX_CIRCLE)
        .map(|(_, walk)| {
            walk.into_iter()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        })
        .collect();
    let known: BTreeSet<Vec<String>> = KNOWN_CIRCLES
        .iter()
        .map(|c| c.iter().map(|f| f.to_string()).collect())
        .collect();
    let show = |c: &Vec<String>| c.join(", ");
    let new: Vec<String> = found.difference(&known).map(show).collect();
    let paid: Vec<String> = known.difference(&found).map(show).collect();
    assert!(
        new.is_empty(),
        "new import circles:\n  {}",
        new.join("\n  ")
    );
    assert!(
        paid.is_empty(),
        "no longer circles (take them out of KNOWN_CIRCLES):\n  {}",
        paid.join("\n  ")
    );
}

#[test]
fn every_path_architecture_md_names_exists() {
    let root = root();
    let text = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut known = Vec::new();
    for dir in ["src", "tests", "benches", "docs"] {
        list_paths(&root, &root.join(dir), &mut known);
    }
    let mut missing = Vec::new();
    let mut base = String::new();
    for line in text.lines() {
        if line.starts_with('#') {
            // A heading naming a directory (`### `src/cluster/` — the wire`)
            // is where the relative paths under it live.
            base = backticked(line)
                .find(|t| t.starts_with("src/"))
                .map(|t| t.trim_end_matches('/').to_string())
                .unwrap_or_default();
        }
        for token in backticked(line).filter(|t| names_a_path(t)) {
            if !path_exists(&root, &known, &base, token) {
                missing.push(format!("`{token}` (under `{base}`)"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist:\n  {}",
        missing.join("\n  ")
    );
}

// ---------------------------------------------------------------------------
// ARCHITECTURE.md's paths

fn backticked(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

fn names_a_path(token: &str) -> bool {
    !token.is_empty()
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && (token.contains('/') || token.ends_with(".rs") || token.ends_with(".md"))
}

fn list_paths(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        out.push(rel);
        if path.is_dir() {
            list_paths(root, &path, out);
        }
    }
}

/// A path exists if it is one from the root or from `src/`, or if a file or
/// directory under the section's directory ends with it. `NAME` stands for
/// a name to choose: only the directory it goes in must exist.
fn path_exists(root: &Path, known: &[String], base: &str, token: &str) -> bool {
    let token = token.trim_end_matches('/');
    let token = match token.find("NAME") {
        Some(at) => token[..at].trim_end_matches('/'),
        None => token,
    };
    if token.is_empty() || root.join(token).exists() || root.join("src").join(token).exists() {
        return true;
    }
    let with_rs = format!("{token}.rs");
    known.iter().any(|p| {
        p.starts_with(base)
            && [token, with_rs.as_str()]
                .iter()
                .any(|t| p == t || p.ends_with(&format!("/{t}")))
    })
}

// ---------------------------------------------------------------------------
// The crate as modules, items and imports

/// One module: the file it is written in, what it defines and imports.
struct Module {
    /// Its path from the crate root (`["protocol", "read"]`).
    path: Vec<String>,
    /// Its file, relative to `src/`.
    file: String,
    /// Whether the file is a `mod.rs` or `lib.rs` (its `pub use`s only re-export).
    is_dir_module: bool,
    /// The names of the items it defines (functions, types, consts, macros...).
    items: BTreeSet<String>,
    /// Its `use` bindings: the name it brings in, the absolute path, whether public.
    uses: Vec<Use>,
    /// Absolute paths written in its code outside `use`.
    code_paths: Vec<Vec<String>>,
    /// Whether it holds an `impl Protocol` block.
    impls_protocol: bool,
    /// Its tokens, until its imports are read.
    tokens: Vec<String>,
}

struct Use {
    /// The name bound (`*` for a glob).
    name: String,
    path: Vec<String>,
    public: bool,
}

struct Crate {
    modules: Vec<Module>,
    by_path: BTreeMap<Vec<String>, usize>,
}

impl Crate {
    fn load(src: &Path) -> Crate {
        let mut crate_ = Crate {
            modules: Vec::new(),
            by_path: BTreeMap::new(),
        };
        crate_.add(src, &src.join("lib.rs"), Vec::new(), true);
        crate_.resolve_uses();
        crate_
    }

    /// Reads one module file and, recursively, the modules it declares.
    fn add(&mut self, src: &Path, file: &Path, path: Vec<String>, is_dir_module: bool) {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let tokens = without_test_items(tokenize(&strip_comments_and_strings(&text)));
        let dir = if is_dir_module {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        let children = declared_modules(&tokens);
        let index = self.modules.len();
        self.by_path.insert(path.clone(), index);
        self.modules.push(Module {
            path: path.clone(),
            file: file
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/"),
            is_dir_module,
            items: defined_items(&tokens),
            uses: Vec::new(),
            code_paths: Vec::new(),
            impls_protocol: impls_protocol(&tokens),
            // Imports are read once every module is known (a relative
            // path may name a child module).
            tokens,
        });
        for child in children {
            let mut child_path = path.clone();
            child_path.push(child.clone());
            let flat = dir.join(format!("{child}.rs"));
            if flat.exists() {
                self.add(src, &flat, child_path, false);
            } else {
                self.add(src, &dir.join(&child).join("mod.rs"), child_path, true);
            }
        }
    }

    fn resolve_uses(&mut self) {
        for i in 0..self.modules.len() {
            let tokens = std::mem::take(&mut self.modules[i].tokens);
            let (uses, code) = imports(&tokens, &self.modules[i].path, |p| {
                self.by_path.contains_key(p)
            });
            self.modules[i].uses = uses;
            self.modules[i].code_paths = code;
        }
    }

    /// The file defining what `path` names, following re-exports; `None`
    /// when no module defines it.
    fn defining(&self, path: &[String], depth: usize) -> Option<usize> {
        if depth > 32 {
            return None;
        }
        let mut len = 0;
        while len < path.len() && self.by_path.contains_key(&path[..=len]) {
            len += 1;
        }
        let module = self.by_path[&path[..len]];
        let Some(name) = path.get(len) else {
            return Some(module);
        };
        if name == "*" {
            return Some(module);
        }
        let m = &self.modules[module];
        if m.items.contains(name) {
            return Some(module);
        }
        for u in m.uses.iter().filter(|u| &u.name == name) {
            let mut next = u.path.clone();
            next.extend_from_slice(&path[len + 1..]);
            if let Some(found) = self.defining(&next, depth + 1) {
                return Some(found);
            }
        }
        for u in m.uses.iter().filter(|u| u.name == "*") {
            let mut next = u.path.clone();
            next.extend_from_slice(&path[len..]);
            if let Some(found) = self.defining(&next, depth + 1) {
                return Some(found);
            }
        }
        None
    }

    /// The file `path` depends on: its defining file, else the deepest module it names.
    fn target(&self, path: &[String]) -> usize {
        self.defining(path, 0).unwrap_or_else(|| {
            let mut len = 0;
            while len < path.len() && self.by_path.contains_key(&path[..=len]) {
                len += 1;
            }
            self.by_path[&path[..len]]
        })
    }

    fn edges(&self) -> Vec<BTreeSet<usize>> {
        self.modules
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let uses = m
                    .uses
                    .iter()
                    .filter(|u| !(u.public && m.is_dir_module))
                    .map(|u| u.path.as_slice());
                uses.chain(m.code_paths.iter().map(Vec::as_slice))
                    .map(|p| self.target(p))
                    .filter(|&t| t != i && self.modules[t].file != m.file)
                    .collect()
            })
            .collect()
    }

    /// Every import circle of two files or more: how many files, and a
    /// walk through them all in the order their imports run (a -> b -> ... -> a).
    fn circles(&self) -> Vec<(usize, Vec<String>)> {
        let edges = self.edges();
        if std::env::var("ARCH_DEBUG").is_ok() {
            for c in strongly_connected(&edges)
                .into_iter()
                .filter(|c| c.len() > 1)
            {
                eprintln!("SCC {}", c.len());
                for &a in &c {
                    for &b in edges[a].iter().filter(|b| c.contains(b)) {
                        eprintln!("  {} -> {}", self.modules[a].file, self.modules[b].file);
                    }
                }
            }
        }
        strongly_connected(&edges)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let members: BTreeSet<usize> = c.iter().copied().collect();
                let walk = cycle_through(&edges, &members)
                    .into_iter()
                    .map(|i| self.modules[i].file.clone())
                    .collect();
                (members.len(), walk)
            })
            .collect()
    }
}

/// Tarjan's strongly connected components.
fn strongly_connected(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.edges[v].iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// A walk through every member of a strongly connected set, back to its
/// start: the shortest path from each member to the next unvisited one.
fn cycle_through(edges: &[BTreeSet<usize>], members: &BTreeSet<usize>) -> Vec<usize> {
    let start = *members.iter().next().unwrap();
    let mut walk = vec![start];
    let mut seen = BTreeSet::from([start]);
    let mut at = start;
    while seen.len() < members.len() {
        let path = shortest(edges, members, at, |v| !seen.contains(&v));
        for &v in &path[1..] {
            seen.insert(v);
            walk.push(v);
        }
        at = *path.last().unwrap();
    }
    let back = shortest(edges, members, at, |v| v == start);
    walk.extend_from_slice(&back[1..]);
    walk
}

fn shortest(
    edges: &[BTreeSet<usize>],
    members: &BTreeSet<usize>,
    from: usize,
    goal: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let mut before = BTreeMap::new();
    let mut seen = BTreeSet::from([from]);
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(v) = queue.pop_front() {
        for &w in edges[v].iter().filter(|w| members.contains(w)) {
            if goal(w) {
                let mut path = vec![w, v];
                let mut at = v;
                while at != from {
                    at = before[&at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if seen.insert(w) {
                before.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected set reaches each of its members")
}

// ---------------------------------------------------------------------------
// Reading Rust text, just enough for the above

/// The text with comments and the insides of string and char literals
/// blanked (so `"http://..."` and `'{'` are not read as code).
fn strip_comments_and_strings(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied().unwrap_or('\0');
        if at(0) == '/' && at(1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if at(0) == '/' && at(1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if (at(0) == 'r' || (at(0) == 'b' && at(1) == 'r')) && !prev_is_ident(&c, i) && {
            let k = if at(0) == 'b' { 1 } else { 0 };
            let mut j = i + k + 1;
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            c.get(j) == Some(&'"')
        } {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + if at(0) == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if c[j] == '"' && (0..hashes).all(|h| c.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if at(0) == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if at(0) == '\'' && (at(1) == '\\' || (at(2) == '\'' && at(1) != '\'')) {
            // A char literal ('x', '\n', '\u{..}'); a lifetime ('a) stays.
            i += 1;
            while i < c.len() && c[i] != '\'' {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn prev_is_ident(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// Identifiers (with `r#`), `::`, and every other character alone.
fn tokenize(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i].is_whitespace() {
            i += 1;
        } else if c[i].is_alphanumeric() || c[i] == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if word == "r" && c.get(i) == Some(&'#') {
                i += 1;
                continue;
            }
            out.push(word);
        } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            out.push(c[i].to_string());
            i += 1;
        }
    }
    out
}

/// The tokens without `#[cfg(test)]` items (test modules, test-only uses).
fn without_test_items(tokens: Vec<String>) -> Vec<String> {
    const CFG_TEST: [&str; 7] = ["#", "[", "cfg", "(", "test", ")", "]"];
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i..].iter().take(CFG_TEST.len()).eq(CFG_TEST.iter()) {
            i += CFG_TEST.len();
            // Further attributes, then the item up to its `;` or its block.
            let mut depth = 0i32;
            while i < tokens.len() {
                match tokens[i].as_str() {
                    "(" | "[" => depth += 1,
                    ")" | "]" => depth -= 1,
                    ";" if depth == 0 => {
                        i += 1;
                        break;
                    }
                    "{" if depth == 0 => {
                        i = after_block(&tokens, i);
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

/// The index after the block that opens at `open`.
fn after_block(tokens: &[String], open: usize) -> usize {
    let mut depth = 0;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// `mod NAME;` declarations (modules in their own file).
fn declared_modules(tokens: &[String]) -> Vec<String> {
    tokens
        .windows(3)
        .filter(|w| w[0] == "mod" && is_ident(&w[1]) && w[2] == ";")
        .map(|w| w[1].clone())
        .collect()
}

fn defined_items(tokens: &[String]) -> BTreeSet<String> {
    const KEYWORDS: [&str; 10] = [
        "fn",
        "struct",
        "enum",
        "trait",
        "type",
        "const",
        "static",
        "union",
        "mod",
        "macro_rules",
    ];
    let mut items = BTreeSet::new();
    for (i, t) in tokens.iter().enumerate() {
        if KEYWORDS.contains(&t.as_str()) {
            let name = if t == "macro_rules" {
                tokens.get(i + 2)
            } else {
                tokens.get(i + 1)
            };
            if let Some(name) = name.filter(|n| is_ident(n)) {
                items.insert(name.clone());
            }
        }
    }
    items
}

/// `impl Protocol {` or `impl<...> Protocol {` (not `impl Trait for Protocol`).
fn impls_protocol(tokens: &[String]) -> bool {
    (0..tokens.len()).any(|i| {
        if tokens[i] != "impl" {
            return false;
        }
        let mut j = i + 1;
        if tokens.get(j).map(String::as_str) == Some("<") {
            let mut depth = 0;
            while j < tokens.len() {
                match tokens[j].as_str() {
                    "<" => depth += 1,
                    ">" => {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        tokens.get(j).map(String::as_str) == Some("Protocol")
            && tokens.get(j + 1).map(String::as_str) == Some("{")
    })
}

/// The module's `use` bindings and the paths its code writes, both made
/// absolute. `is_module` says whether an absolute path is a module (to
/// read `use child::x` as relative).
fn imports(
    tokens: &[String],
    module: &[String],
    is_module: impl Fn(&[String]) -> bool,
) -> (Vec<Use>, Vec<Vec<String>>) {
    let mut uses = Vec::new();
    let mut code = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" && (i == 0 || tokens[i - 1] != "::") {
            let public = i > 0 && (tokens[i - 1] == "pub" || tokens[i - 1] == ")");
            let end = tokens[i..]
                .iter()
                .position(|t| t == ";")
                .map_or(tokens.len(), |p| i + p);
            let mut bound = Vec::new();
            use_tree(&tokens[i + 1..end], &mut Vec::new(), &mut bound);
            for (name, path) in bound {
                if let Some(path) = absolute(&path, module, &is_module) {
                    uses.push(Use { name, path, public });
                }
            }
            i = end + 1;
            continue;
        }
        let starts_path = matches!(tokens[i].as_str(), "crate" | "super" | "self")
            && tokens.get(i + 1).map(String::as_str) == Some("::")
            && (i == 0 || !matches!(tokens[i - 1].as_str(), "::" | "in" | "$"));
        if starts_path {
            let mut path = vec![tokens[i].clone()];
            let mut j = i + 1;
            while tokens.get(j).map(String::as_str) == Some("::")
                && tokens.get(j + 1).is_some_and(|t| is_ident(t))
            {
                path.push(tokens[j + 1].clone());
                j += 2;
            }
            if let Some(path) = absolute(&path, module, &is_module) {
                code.push(path);
            }
            i = j;
            continue;
        }
        i += 1;
    }
    (uses, code)
}

/// Flattens a use tree into (bound name, path) pairs.
fn use_tree(tokens: &[String], prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let mut i = 0;
    let depth = prefix.len();
    while i < tokens.len() {
        match tokens[i].as_str() {
            "::" => i += 1,
            "{" => {
                let close = matching(tokens, i);
                for part in split_top(&tokens[i + 1..close]) {
                    use_tree(part, prefix, out);
                }
                i = close + 1;
            }
            "*" => {
                out.push(("*".into(), prefix.clone()));
                i += 1;
            }
            "as" => {
                let name = tokens[i + 1].clone();
                if name != "_" {
                    out.push((name, prefix.clone()));
                }
                prefix.truncate(depth);
                return;
            }
            t if is_ident(t) => {
                prefix.push(t.to_string());
                i += 1;
                let ends = i == tokens.len() || tokens[i] == "," || tokens[i] == "}";
                if ends {
                    let name = if t == "self" {
                        prefix.pop();
                        prefix.last().cloned().unwrap_or_default()
                    } else {
                        t.to_string()
                    };
                    out.push((name, prefix.clone()));
                }
            }
            _ => i += 1,
        }
    }
    prefix.truncate(depth);
}

fn matching(tokens: &[String], open: usize) -> usize {
    after_block(tokens, open) - 1
}

fn split_top(tokens: &[String]) -> Vec<&[String]> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        match t.as_str() {
            "{" => depth += 1,
            "}" => depth -= 1,
            "," if depth == 0 => {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tokens[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

/// A path made absolute from the crate root, or `None` for another crate's.
fn absolute(
    path: &[String],
    module: &[String],
    is_module: &impl Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = module.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = base.clone();
            child.push(first.to_string());
            if !is_module(&child) {
                return None;
            }
        }
        None => return None,
    }
    base.extend_from_slice(rest);
    Some(base)
}
