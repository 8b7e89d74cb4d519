//! ARCHITECTURE.md names only what exists: every file or folder it cites is
//! in the repository, and every Rust name it cites (`Hub::call_entry`,
//! `ScriptRuntime`, `call_api`) is defined in the workspace's sources. A
//! newcomer following one send through the document never reaches a name
//! that was renamed or moved away.
//!
//! What counts as a name: a backticked span that is a path (it holds a `/`
//! or ends in a source extension) or looks like Rust (`Type`, `a::b`,
//! `snake_case`). Quoted keys (`"Player.Hurt"`), commands with spaces and
//! plain lowercase words (`times`) are prose and are not checked.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The backticked spans of `text`, in order (fenced code blocks skipped).
fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            spans.push(inside.to_owned());
        }
    }
    spans
}

/// Every file and folder of the repository (not `target/`, not hidden).
fn repo_paths(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            out.push(path.clone());
            repo_paths(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every `.rs` file of the repository.
fn rust_files() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    repo_paths(&root(), &mut paths);
    paths.retain(|p| p.extension().is_some_and(|e| e == "rs"));
    paths
}

/// The names the workspace defines: items (`fn`, `struct`, `enum`, `trait`,
/// `mod`, `type`, `const`, `static`), enum variants and fields (a line that
/// starts with the name), and the crates (`gantry_host`).
fn defined_names() -> HashSet<String> {
    let files = rust_files();
    let mut names: HashSet<String> = ["gantry", "gantry_host", "gantry_lua", "gantry_rhai"]
        .into_iter()
        .chain(["gantry_lsp", "gantry_stubs"])
        .map(str::to_owned)
        .collect();
    let items = [
        "fn", "struct", "enum", "trait", "mod", "type", "const", "static",
    ];
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let words: Vec<&str> = line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            for pair in words.windows(2) {
                if items.contains(&pair[0]) {
                    names.insert(pair[1].to_owned());
                }
            }
            // A variant or a field: the line starts with the name.
            let trimmed = line.trim_start().trim_start_matches("pub ");
            let first: String = trimmed
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = trimmed[first.len()..].trim_start();
            if !first.is_empty()
                && (after.starts_with('(')
                    || after.starts_with('{')
                    || after.starts_with(',')
                    || after.starts_with(':'))
            {
                names.insert(first);
            }
        }
    }
    names
}

fn is_path(span: &str) -> bool {
    span.contains('/')
        || [".rs", ".md", ".lua", ".rhai", ".toml"]
            .iter()
            .any(|ext| span.ends_with(ext))
}

/// Whether a span reads as Rust: one or more `::`-joined identifiers, at
/// least one a type (`Hub`) or an item with an underscore (`call_api`).
fn rust_segments(span: &str) -> Option<Vec<&str>> {
    let segments: Vec<&str> = span.split("::").collect();
    let identifier = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && !s.contains("__")
    };
    if !segments.iter().all(|s| identifier(s)) {
        return None;
    }
    let looks_rust = segments.len() > 1
        || segments[0].starts_with(|c: char| c.is_ascii_uppercase())
        || segments[0].contains('_');
    looks_rust.then_some(segments)
}

/// A cited path exists: from the repository's root, or (a bare file name or
/// a short path like `hub/mod.rs`) as the tail of some file or folder.
fn path_exists(span: &str, paths: &[PathBuf]) -> bool {
    let span = span.trim_end_matches('/');
    root().join(span).exists() || paths.iter().any(|p| p.ends_with(span))
}

#[test]
fn every_name_architecture_md_cites_exists_in_the_repository() {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let names = defined_names();
    let mut paths = Vec::new();
    repo_paths(&root(), &mut paths);
    let mut missing = Vec::new();
    let mut checked = 0;
    for span in code_spans(&text) {
        if span.starts_with('.') || span.contains(' ') || span.contains('"') {
            continue;
        }
        if is_path(&span) {
            checked += 1;
            if !path_exists(&span, &paths) {
                missing.push(format!("path `{span}`"));
            }
        } else if let Some(segments) = rust_segments(&span) {
            checked += 1;
            for segment in segments {
                if !names.contains(segment) {
                    missing.push(format!("`{segment}` (in `{span}`)"));
                }
            }
        }
    }
    assert!(
        checked > 40,
        "only {checked} names checked: is the span reader broken?"
    );
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md cites what the repository does not have:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_span_reader_tells_names_from_prose() {
    let spans = code_spans("a `Hub::send` b `\"Player.Hurt\"` c\n```\n`no`\n```\n`x/y.rs`");
    assert_eq!(spans, ["Hub::send", "\"Player.Hurt\"", "x/y.rs"]);
    assert!(rust_segments("Hub::send").is_some());
    assert!(rust_segments("call_api").is_some());
    assert!(rust_segments("times").is_none());
    assert!(rust_segments("NotifyObjectMessage__Player__Hurt").is_none());
    assert!(is_path("host/src/hub/"));
    assert!(is_path("store.rs"));
}

// ----- the dispatch core's imports ----------------------------------------
//
// ARCHITECTURE.md's invariant "routing and delivery name no feature", read
// from the source: the core files import no feature module, and no chain
// of imports leads from a core file back to itself. A feature (stored
// messages, collections, hooks, requests) plugs in through the seam and is
// held by the hub's World — `Hub` (`hub/mod.rs`) and `State`
// (`hub/state.rs`), which hold one field per feature, as bevy's `World`
// holds its `Observers` — so a chain through those two is the feature being
// held, not the core depending on it; every other chain counts.
//
// An import is a `use` of `crate::`, `super::`, `self::` or a child
// module, or such a path written inline; it leads to the file that defines
// the name, following re-exports (`pub use`), which are not imports of
// their own file.

use std::collections::{BTreeMap, BTreeSet};

/// The dispatch core: which lists a send reaches, the lists and lanes it
/// reads, and the calls down them.
const CORE: [&str; 4] = ["hub/routing.rs", "hub/delivery.rs", "channel.rs", "lane.rs"];

/// The features, each with its own state: a core file imports none.
const FEATURES: [&str; 4] = ["collection/", "hook.rs", "store.rs", "request.rs"];

/// The files that hold every feature's state (see above).
const WORLD: [&str; 2] = ["hub/mod.rs", "hub/state.rs"];

/// The files of `host/src`, by path under it, with their text.
fn host_sources() -> BTreeMap<String, String> {
    let src = root().join("host/src");
    let mut paths = Vec::new();
    repo_paths(&src, &mut paths);
    paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let name = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (name, fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// A file's module path (`hub/mod.rs` → `["hub"]`, `lib.rs` → `[]`).
fn module_of(file: &str) -> Vec<String> {
    let mut segments: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib")) {
        segments.pop();
    }
    segments
}

/// The code of a file: comments and its test module left out.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (an `as` rename dropped).
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or("").replace(' ', "");
        return vec![path];
    };
    let prefix = tree[..open].replace(' ', "");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
        .iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand_use(p.trim()))
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

/// The paths a file's code names: `(path, is a re-export)`.
fn named_paths(code: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    // The code outside `use` statements, for the paths written inline.
    let mut inline = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let word_start = !before.ends_with(is_ident);
        let line_start = before.rsplit('\n').next().unwrap_or("").trim();
        let statement = line_start.is_empty() || line_start.starts_with("pub");
        let after = &rest[at + 4..];
        inline.push_str(&rest[..at + 4]);
        if word_start && statement {
            let end = after.find(';').unwrap_or(after.len());
            let reexport = line_start.starts_with("pub");
            for path in expand_use(&after[..end]) {
                out.push((path, reexport));
            }
            rest = &after[end..];
        } else {
            rest = after;
        }
    }
    inline.push_str(rest);
    let code = inline.as_str();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let at = from + at;
            from = at + start.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == ':' || c == '{') {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':')
                .collect();
            out.push((path.trim_end_matches(':').to_owned(), false));
        }
    }
    out
}

/// Whether `code` defines an item named `name`.
fn defines(code: &str, name: &str) -> bool {
    ["fn", "struct", "enum", "trait", "type", "const", "static"]
        .iter()
        .any(|item| {
            let needle = format!("{item} {name}");
            code.match_indices(&needle).any(|(at, _)| {
                let before = code[..at].chars().next_back();
                let after = code[at + needle.len()..].chars().next();
                !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
            })
        })
}

/// The crate's files and where each of their imports leads.
struct Imports {
    code: BTreeMap<String, String>,
    modules: BTreeMap<Vec<String>, String>,
}

impl Imports {
    fn new(files: &BTreeMap<String, String>) -> Self {
        Imports {
            code: files.iter().map(|(f, t)| (f.clone(), code_of(t))).collect(),
            modules: files.keys().map(|f| (module_of(f), f.clone())).collect(),
        }
    }

    /// The file that defines what `path`, named in `file`, names.
    fn resolve(&self, file: &str, path: &str, hops: usize) -> Option<String> {
        let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut module = module_of(file);
        match segments.first().copied() {
            Some("crate") => {
                module.clear();
                segments.remove(0);
            }
            Some("super") => {
                while segments.first() == Some(&"super") {
                    module.pop();
                    segments.remove(0);
                }
            }
            Some("self") => {
                segments.remove(0);
            }
            Some(child) => {
                let mut below = module.clone();
                below.push(child.to_owned());
                if !self.modules.contains_key(&below) {
                    return None;
                }
            }
            None => return None,
        }
        while let Some(next) = segments.first() {
            let mut below = module.clone();
            below.push((*next).to_owned());
            if !self.modules.contains_key(&below) {
                break;
            }
            module = below;
            segments.remove(0);
        }
        let found = self.modules.get(&module)?.clone();
        let Some(name) = segments.first().filter(|n| !matches!(**n, "*" | "self")) else {
            return Some(found);
        };
        if hops > 8 {
            return Some(found);
        }
        // An alias names what it aliases.
        let code = &self.code[&found];
        let alias = format!("type {name} = ");
        if let Some(at) = code.find(&alias) {
            let aliased: String = code[at + alias.len()..]
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':')
                .collect();
            return self.resolve(&found, &aliased, hops + 1).or(Some(found));
        }
        if defines(code, name) {
            return Some(found);
        }
        // A re-export: where it leads.
        for (reexported, _) in named_paths(&self.code[&found]) {
            if reexported.rsplit("::").next() == Some(*name)
                && let Some(target) = self.resolve(&found, &reexported, hops + 1)
            {
                return Some(target);
            }
        }
        Some(found)
    }

    /// The files `file` imports from (not itself; re-exports left out).
    fn edges(&self, file: &str) -> BTreeSet<String> {
        named_paths(&self.code[file])
            .into_iter()
            .filter(|(_, reexport)| !reexport)
            .filter_map(|(path, _)| self.resolve(file, &path, 0))
            .filter(|target| target != file)
            .collect()
    }

    /// Every file's imports, `skipped` files left out of the graph.
    fn graph(&self, skipped: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
        self.code
            .keys()
            .filter(|f| !skipped.contains(&f.as_str()))
            .map(|f| {
                let mut to = self.edges(f);
                to.retain(|t| !skipped.contains(&t.as_str()));
                (f.clone(), to)
            })
            .collect()
    }
}

/// A chain of imports from `from` back to itself, if there is one
/// (breadth first: the shortest).
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from.to_owned()]);
    while let Some(at) = queue.pop_front() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == from {
                let mut chain = vec![at.clone()];
                let mut back = at.clone();
                while back != from {
                    back = came_from[&back].clone();
                    chain.push(back.clone());
                }
                chain.reverse();
                chain.push(from.to_owned());
                return Some(chain);
            }
            if !came_from.contains_key(next) {
                came_from.insert(next.clone(), at.clone());
                queue.push_back(next.clone());
            }
        }
    }
    None
}

#[test]
fn the_dispatch_core_imports_no_feature() {
    let imports = Imports::new(&host_sources());
    let mut wrong = Vec::new();
    for core in CORE {
        let edges = imports.edges(core);
        assert!(
            !edges.is_empty(),
            "no import read from {core}: is the reader broken?"
        );
        for target in edges {
            if FEATURES.iter().any(|f| target.starts_with(f)) {
                wrong.push(format!("{core} imports {target}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "the dispatch core names a feature (plug it in through hub/seam.rs):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_dispatch_core_is_in_no_import_cycle() {
    let imports = Imports::new(&host_sources());
    let graph = imports.graph(&WORLD);
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(
        edges > 100,
        "only {edges} imports read: is the reader broken?"
    );
    let cycles: Vec<String> = CORE
        .iter()
        .filter_map(|core| cycle_through(&graph, core))
        .map(|chain| chain.join(" -> "))
        .collect();
    assert!(
        cycles.is_empty(),
        "the dispatch core imports what imports it back:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_import_reader_follows_reexports_and_finds_a_cycle() {
    let files: BTreeMap<String, String> = [
        ("lib.rs", "mod a;\nmod b;\npub use crate::b::Thing;"),
        (
            "a.rs",
            "use crate::Thing;\nfn f() -> crate::c::Other { todo!() }",
        ),
        (
            "b.rs",
            "// use crate::a::Nothing;\npub struct Thing;\nuse super::a::f;",
        ),
        (
            "c/mod.rs",
            "pub(crate) use inner::Other;\npub(crate) use real::Real;\nmod inner;",
        ),
        ("c/inner.rs", "pub type Other = super::Real;"),
        ("c/real.rs", "pub struct Real;"),
    ]
    .into_iter()
    .map(|(f, t)| (f.to_owned(), t.to_owned()))
    .collect();
    let imports = Imports::new(&files);
    let to = |f: &str| imports.edges(f).into_iter().collect::<Vec<_>>();
    assert_eq!(to("a.rs"), ["b.rs", "c/real.rs"]);
    assert_eq!(to("b.rs"), ["a.rs"]);
    assert_eq!(to("lib.rs"), Vec::<String>::new());
    let graph = imports.graph(&[]);
    assert_eq!(
        cycle_through(&graph, "a.rs").unwrap(),
        ["a.rs", "b.rs", "a.rs"]
    );
    assert!(cycle_through(&graph, "c/real.rs").is_none());
    assert!(cycle_through(&imports.graph(&["b.rs"]), "a.rs").is_none());
}
