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
