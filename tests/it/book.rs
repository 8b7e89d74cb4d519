//! The book (`book/src/`) stays true: every Lua and Rhai example runs
//! through the real runtimes and prints what the page says it prints, the
//! generated API reference is the one the table makes today, every page
//! with Rust examples is compiled and run as doctests, and every relative
//! link lands on a page and a heading.
//!
//! How a page marks its examples (info strings, so they render as code):
//! - ```` ```lua ```` / ```` ```rhai ````: a script, loaded on a fresh
//!   object of the page's one world (as `gantry run` loads a mod's files),
//!   which must run without an error. Attributes after commas:
//!   `file=NAME` (the script's file name, default `main.lua` /
//!   `main.rhai`), `ticks=N` (then send `Game.Tick` N times), `fails` (it
//!   must report an error), `ignore` (not a mod script, such as an editor's
//!   configuration: not run).
//! - ```` ```text,output ```` right after a script: exactly what it (and its
//!   ticks) printed.
//! - ```` ```text,error ```` right after a `fails` script: text its error
//!   must contain.
//! - A script inside an HTML comment (`<!-- setup` ... `-->`) runs as
//!   setup and is not shown to the reader.
//!
//! Every script of a page runs in one hub, in page order, so a page may
//! build on its earlier examples.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use gantry_host::face::ScriptRuntime;
use gantry_host::{Hub, KeyDecl, Source, Type};
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::{RhaiOptions, RhaiRuntime};

const REGENERATE: &str = "cargo run -- doc --out book/src/reference/";

fn book_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src")
}

/// Every page of the book, as (path relative to `book/src`, text).
pub(super) fn pages() -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy();
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((rel.replace('\\', "/"), text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&book_src(), &book_src(), &mut out);
    assert!(out.len() > 5, "the book has pages");
    out
}

/// One fenced block of a page.
#[derive(Debug)]
pub(super) struct Fence {
    /// The 1-based line of its opening fence.
    pub(super) line: usize,
    pub(super) lang: String,
    pub(super) attrs: Vec<String>,
    pub(super) code: String,
}

impl Fence {
    pub(super) fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find_map(|a| {
            a.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
                .or((a == name).then_some(""))
        })
    }
}

pub(super) fn fences(page: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut open: Option<Fence> = None;
    for (i, line) in page.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let mut parts = info.split(',').map(|p| p.trim().to_owned());
                    open = Some(Fence {
                        line: i + 1,
                        lang: parts.next().unwrap_or_default(),
                        attrs: parts.collect(),
                        code: String::new(),
                    });
                }
            }
            Some(fence) => {
                if trimmed == "```" {
                    out.push(open.take().unwrap());
                } else {
                    fence.code.push_str(line);
                    fence.code.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "a fence is never closed");
    out
}

/// One page's hub with both runtimes, as `gantry run` sets them up.
struct Host {
    hub: Hub,
    world: gantry_host::WorldId,
    engines: Vec<Box<dyn ScriptRuntime>>,
    printed: Rc<RefCell<Vec<String>>>,
    ticks: i64,
}

impl Host {
    fn new() -> Host {
        let hub = Hub::new();
        hub.declare(
            "Game.Tick",
            KeyDecl::event()
                .param("n", Type::Int)
                .param("dt", Type::Float),
        )
        .unwrap();
        let world = hub.create_world();
        let printed = Rc::new(RefCell::new(Vec::new()));
        let lua = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
        let rhai = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).unwrap();
        let sink = printed.clone();
        lua.on_print(move |line| sink.borrow_mut().push(line.to_owned()));
        let sink = printed.clone();
        rhai.on_print(move |line| sink.borrow_mut().push(line.to_owned()));
        Host {
            hub,
            world,
            engines: vec![Box::new(lua), Box::new(rhai)],
            printed,
            ticks: 0,
        }
    }

    /// Runs one script (and its ticks): what it printed and every error.
    fn run(&mut self, fence: &Fence) -> (String, Vec<String>) {
        let file = fence
            .attr("file")
            .map_or_else(|| format!("main.{}", fence.lang), str::to_owned);
        let object = self.hub.spawn(self.world).unwrap();
        let engine = self
            .engines
            .iter()
            .find(|e| e.extension() == fence.lang)
            .unwrap();
        let mut errors = Vec::new();
        if let Err(e) = engine.load(&file, &fence.code, object) {
            errors.push(e.to_string());
        }
        let ticks: i64 = fence.attr("ticks").map_or(0, |n| n.parse().unwrap());
        for _ in 0..ticks {
            self.ticks += 1;
            self.hub
                .send("Game.Tick", Source::Global, (self.ticks, 1.0f64 / 60.0))
                .unwrap();
        }
        for engine in &self.engines {
            errors.extend(engine.take_errors().iter().map(ToString::to_string));
        }
        errors.extend(self.hub.take_reports().iter().map(ToString::to_string));
        let printed = std::mem::take(&mut *self.printed.borrow_mut());
        let mut printed = printed.join("\n");
        if !printed.is_empty() {
            printed.push('\n');
        }
        (printed, errors)
    }
}

/// Runs a page's scripts in order; the failures, each naming its line.
fn run_page(name: &str, page: &str) -> Vec<String> {
    let fences = fences(page);
    let mut host = None;
    let mut failures = Vec::new();
    for (i, fence) in fences.iter().enumerate() {
        if fence.attr("ignore").is_some() {
            continue;
        }
        let host = match fence.lang.as_str() {
            "lua" | "rhai" => host.get_or_insert_with(Host::new),
            // A page's `mod.toml` declares its keys before the scripts after it.
            "toml" if fence.attr("file") == Some("mod.toml") => {
                let host = host.get_or_insert_with(Host::new);
                let declared = gantry_host::manifest::parse("mod.toml", &fence.code)
                    .map_err(|errors| errors.to_string())
                    .and_then(|m| m.declare_on(&host.hub).map_err(|e| e.to_string()));
                if let Err(e) = declared {
                    failures.push(format!("{name}:{} (mod.toml): {e}", fence.line));
                }
                continue;
            }
            _ => continue,
        };
        let (printed, errors) = host.run(fence);
        let next = fences.get(i + 1).filter(|f| f.lang == "text");
        let expected = |kind: &str| next.filter(|f| f.attr(kind).is_some()).map(|f| &f.code);
        let at = format!("{name}:{} ({})", fence.line, fence.lang);
        if fence.attr("fails").is_some() {
            let all = errors.join("\n");
            match expected("error") {
                _ if errors.is_empty() => failures.push(format!("{at}: should fail but ran")),
                Some(text) if !all.contains(text.trim()) => failures.push(format!(
                    "{at}: the error should contain\n  {}\nbut was\n  {all}",
                    text.trim()
                )),
                _ => {}
            }
        } else if !errors.is_empty() {
            failures.push(format!("{at}: failed:\n  {}", errors.join("\n  ")));
        }
        if let Some(output) = expected("output")
            && *output != printed
        {
            failures.push(format!(
                "{at}: should print\n{output}but printed\n{printed}"
            ));
        }
    }
    failures
}

#[test]
fn every_lua_and_rhai_example_of_the_book_runs_and_prints_what_it_says() {
    let mut failures = Vec::new();
    let mut scripts = 0;
    for (name, page) in pages() {
        scripts += fences(&page)
            .iter()
            .filter(|f| matches!(f.lang.as_str(), "lua" | "rhai"))
            .count();
        failures.extend(run_page(&name, &page));
    }
    assert!(scripts > 40, "only {scripts} scripts found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_book_example_that_stopped_working_is_caught() {
    let page = "```lua\nNotifyMessage(\"Typed.Key\", 1)\nNotifyMessage(\"Typed.Key\", \"x\")\n```\n\n```lua\nprint(\"a\")\n```\n\n```text,output\nb\n```\n\n```rhai,fails\nlet x = 1;\n```\n";
    let failures = run_page("probe.md", page);
    assert_eq!(failures.len(), 3, "{failures:#?}");
    assert!(
        failures[0].contains("expected int, got string"),
        "{}",
        failures[0]
    );
    assert!(failures[1].contains("should print\nb\n"), "{}", failures[1]);
    assert!(
        failures[2].contains("should fail but ran"),
        "{}",
        failures[2]
    );
}

#[test]
fn the_committed_api_reference_is_what_the_api_table_generates() {
    let path = book_src()
        .join("reference")
        .join(gantry_stubs::reference::REFERENCE_FILE);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == gantry_stubs::reference::api_reference(),
        "{} is stale: regenerate it with `{REGENERATE}`",
        path.display()
    );
}

/// The doctests that compile and run the book's Rust examples.
const DOCTESTS: &str = include_str!("../../stubs/src/book_doctests.rs");

#[test]
fn every_page_with_rust_examples_is_compiled_and_run_as_doctests() {
    for (name, page) in pages() {
        let fences = fences(&page);
        if fences.iter().any(|f| f.lang == "rust") {
            let include = format!("book/src/{name}\")");
            assert!(
                DOCTESTS.contains(&include),
                "{name} has Rust examples: include it in stubs/src/book_doctests.rs"
            );
        }
        for fence in &fences {
            assert!(
                !fence.lang.is_empty(),
                "{name}:{}: a fence without a language is Rust to rustdoc: name it",
                fence.line
            );
        }
    }
}

/// The anchor mdBook gives a heading.
fn anchor(heading: &str) -> String {
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

fn anchors(page: &str) -> BTreeSet<String> {
    let mut in_fence = false;
    let mut out = BTreeSet::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            out.insert(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

/// Every `](target)` of a page outside code.
fn links(page: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut out = Vec::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                out.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    out
}

fn broken_links(pages: &[(String, String)]) -> Vec<String> {
    let mut broken = Vec::new();
    for (name, page) in pages {
        for link in links(page) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                Some(name.clone())
            } else {
                let base = Path::new(name).parent().unwrap_or(Path::new(""));
                let joined = base.join(file).to_string_lossy().into_owned();
                let mut parts: Vec<&str> = Vec::new();
                for part in joined.split('/') {
                    match part {
                        ".." => {
                            parts.pop();
                        }
                        "." | "" => {}
                        other => parts.push(other),
                    }
                }
                Some(parts.join("/"))
            };
            let found = target.and_then(|t| pages.iter().find(|(n, _)| *n == t));
            match found {
                None => broken.push(format!("{name}: `{link}`: no such page")),
                Some((_, target))
                    if !fragment.is_empty() && !anchors(target).contains(fragment) =>
                {
                    broken.push(format!("{name}: `{link}`: no heading `#{fragment}`"))
                }
                Some(_) => {}
            }
        }
    }
    broken
}

#[test]
fn every_link_of_the_book_lands_on_a_page_and_a_heading() {
    let pages = pages();
    let broken = broken_links(&pages);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    let summary = &pages.iter().find(|(n, _)| n == "SUMMARY.md").unwrap().1;
    let listed: BTreeSet<String> = links(summary).into_iter().collect();
    for (name, _) in &pages {
        assert!(
            name == "SUMMARY.md" || listed.contains(name),
            "{name} is not in SUMMARY.md, so mdBook would not build it"
        );
    }
}

#[test]
fn a_broken_link_is_caught() {
    let pages = vec![
        (
            "a.md".to_owned(),
            "# Top\n[ok](b.md#the-end) [bad](b.md#nope) [gone](c.md)\n".to_owned(),
        ),
        ("b.md".to_owned(), "# The end\n[up](a.md#top)\n".to_owned()),
    ];
    let broken = broken_links(&pages);
    assert_eq!(broken.len(), 2, "{broken:#?}");
}

/// The string literal starting at `text` (just after its opening quote),
/// unescaped, and where it ends.
fn string_literal(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                // A line continued: Rust drops the next line's indent.
                '\n' => while chars.next_if(|c| c.is_whitespace()).is_some() {},
                'u' => {
                    let code: String = chars.by_ref().skip(1).take_while(|c| *c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&code, 16).ok()?)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

/// Whether a marker applies to a file (its path from the repository root).
type AppliesTo = fn(&str) -> bool;

/// Where a message the runtimes print is made: a marker and the files it
/// is looked for in. The rule: the message literal of every call that
/// makes an error or a line a user reads, and nothing else —
/// - `#[error("...")]`: every error type of the hub and both runtimes;
/// - `write!(f, "...")`, into a formatter, in every `Display` impl (not
///   `Debug`: the Rust programmer's view), the texts errors and reports
///   are made of (a `write!` into a `String` builds code, not a message);
/// - the errors a script sees, raised from Rust: `mlua::Error::runtime`,
///   `mlua::Error::RuntimeError` and `error_here(lua, ...)` in Lua's
///   runtime, `EvalAltResult::ErrorRuntime` and `fail(...)` in Rhai's;
/// - the Lua sandbox's refusals (`sandbox.lua`): `error(...)` and the
///   `string.format` messages it returns;
/// - `tracing::error!`, which `gantry run` shows under its default log
///   filter (`error`; `warn!` lines are seen only with `GANTRY_LOG`).
const MESSAGE_MARKERS: &[(&str, AppliesTo)] = &[
    ("#[error(", |_| true),
    ("write!(", |_| true),
    ("Error::runtime(", |file| file.starts_with("lua/")),
    ("Error::RuntimeError(", |file| file.starts_with("lua/")),
    ("error_here(", |file| file.starts_with("lua/")),
    ("EvalAltResult::ErrorRuntime(", |file| {
        file.starts_with("rhai/")
    }),
    ("fail(", |file| file.starts_with("rhai/")),
    ("error(", |file| file.ends_with("sandbox.lua")),
    ("string_format(", |file| file.ends_with("sandbox.lua")),
    ("tracing::error!(", |_| true),
];

/// The first string literal inside the call that starts at `args` (just
/// after its opening parenthesis), unescaped: the call's message.
fn first_literal(args: &str) -> Option<String> {
    let mut depth = 1;
    for (at, c) in args.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            '"' => return string_literal(&args[at + 1..]),
            _ => {}
        }
    }
    None
}

/// Whether the code before a `write!` ends inside an `impl ... Debug for`.
fn in_debug_impl(before: &str) -> bool {
    let start = before.rfind("impl ").max(before.rfind("impl<"));
    start.is_some_and(|at| {
        before[at..]
            .lines()
            .next()
            .is_some_and(|line| line.contains("Debug for"))
    })
}

/// The messages the runtimes print, as (file, format string), by
/// [`MESSAGE_MARKERS`]: the hub, both runtimes and the loader (what
/// `gantry run` does), not their tests.
fn error_formats() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() && name != "tests" {
                walk(&path, out);
            } else if (name.ends_with(".rs") && name != "tests.rs") || name.ends_with(".lua") {
                out.push(path);
            }
        }
    }
    for dir in ["host/src", "lua/src", "rhai/src", "loader/src"] {
        walk(&root.join(dir), &mut files);
    }
    files.sort();
    let mut formats = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // A file's unit tests are not what a user sees.
        let text = text.split("#[cfg(test)]").next().unwrap_or_default();
        let name = file.strip_prefix(root).unwrap().display().to_string();
        let name = name.replace('\\', "/");
        for (marker, applies) in MESSAGE_MARKERS {
            if !applies(&name) {
                continue;
            }
            for (at, _) in text.match_indices(marker) {
                // `fail(` must be the call, not the end of another name.
                let before = text[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if *marker == "write!("
                    && (in_debug_impl(&text[..at])
                        || !text[at + marker.len()..].trim_start().starts_with("f,"))
                {
                    continue;
                }
                if let Some(literal) = first_literal(&text[at + marker.len()..]) {
                    formats.push((name.clone(), literal));
                }
            }
        }
    }
    formats.sort();
    formats.dedup();
    formats
}

/// The fixed words of a format string: what every message it makes says.
fn fixed_parts(format: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // Lua's `string.format` placeholders: `%d`, `%.0f`, `%s`.
            '%' if chars
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '.') =>
            {
                parts.push(std::mem::take(&mut current));
                while chars.next().is_some_and(|c| !c.is_ascii_alphabetic()) {}
            }
            '{' => {
                depth += 1;
                parts.push(std::mem::take(&mut current));
            }
            '}' if depth > 0 => depth -= 1,
            c if depth == 0 => current.push(c),
            _ => {}
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| p.chars().filter(|c| c.is_alphabetic()).count() >= 4)
        .collect()
}

#[test]
fn the_troubleshooting_page_has_every_error_the_runtimes_print() {
    let page = std::fs::read_to_string(book_src().join("modding/troubleshooting.md")).unwrap();
    let formats = error_formats();
    assert!(
        formats.len() > 30,
        "only {} error texts found",
        formats.len()
    );
    let missing: Vec<String> = formats
        .iter()
        .flat_map(|(file, format)| {
            fixed_parts(format)
                .into_iter()
                .filter(|part| !page.contains(part.as_str()))
                .map(move |part| format!("{file}: `{part}` (of \"{format}\")"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "book/src/modding/troubleshooting.md lacks these errors' texts (say what each means and what to do):\n{}",
        missing.join("\n")
    );
}

/// The names of Lua's `GMP` helpers and handle methods, from the runtime's
/// source: the first name of each `gmp.raw_set(` in `sandbox.rs`, and the
/// method name after `methods, "receiver",` in the handle and writer files.
fn lua_helpers_and_methods() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("lua/src/runtime");
    let mut names = BTreeSet::new();
    let sandbox = std::fs::read_to_string(root.join("sandbox.rs")).unwrap();
    for (at, _) in sandbox.match_indices("gmp.raw_set(") {
        if let Some(name) = first_literal(&sandbox[at + "gmp.raw_set(".len()..]) {
            names.insert(format!("GMP.{name}"));
        }
    }
    for file in ["handles.rs", "collection.rs"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for (at, _) in text.match_indices("methods,") {
            let rest = &text[at + "methods,".len()..];
            let rest = rest.trim_start();
            let Some(receiver) = rest.strip_prefix('"') else {
                continue;
            };
            let Some(end) = receiver.find('"') else {
                continue;
            };
            let after = receiver[end + 1..].trim_start().trim_start_matches(',');
            if let Some(name) = after
                .trim_start()
                .strip_prefix('"')
                .and_then(string_literal)
            {
                names.insert(format!(":{name}("));
            }
        }
    }
    names
}

#[test]
fn every_lua_helper_and_handle_method_is_in_the_reference() {
    let page = std::fs::read_to_string(book_src().join("reference/handles.md")).unwrap();
    let names = lua_helpers_and_methods();
    assert!(names.len() > 20, "only {names:?} found");
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !page.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "book/src/reference/handles.md lacks {missing:?}: add each with the chapter that shows it"
    );
}

/// The names of Rhai's `GMP` helpers and handle methods, from the
/// runtime's source: the name of each `add_raw(module, "Name"` in
/// `register.rs` (the key functions' names are not literals there), and of
/// each `register_fn("Name"` of the handle and writer files that starts
/// with a capital (Rhai's own `len`, `to_string` are Rhai's) or is
/// `unbind`; `Commit` is registered in a loop with `commit`.
fn rhai_helpers_and_methods() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("rhai/src/runtime");
    let mut names = BTreeSet::new();
    let register = std::fs::read_to_string(root.join("register.rs")).unwrap();
    for (at, _) in register.match_indices("add_raw(") {
        let rest = register[at + "add_raw(".len()..].trim_start();
        let Some(rest) = rest.strip_prefix("module,") else {
            continue;
        };
        if let Some(name) = rest.trim_start().strip_prefix('"').and_then(string_literal) {
            names.insert(name);
        }
    }
    for file in ["handles.rs", "writer.rs"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for (at, _) in text.match_indices("register_fn(") {
            let rest = text[at + "register_fn(".len()..].trim_start();
            if let Some(name) = rest.strip_prefix('"').and_then(string_literal)
                && (name.starts_with(|c: char| c.is_ascii_uppercase()) || name == "unbind")
            {
                names.insert(name);
            }
        }
        if text.contains("[\"Commit\", \"commit\"]") {
            names.extend(["Commit".to_owned(), "commit".to_owned()]);
        }
    }
    names
}

#[test]
fn every_rhai_helper_and_handle_method_is_in_the_reference() {
    let page = std::fs::read_to_string(book_src().join("reference/handles.md")).unwrap();
    let names = rhai_helpers_and_methods();
    assert!(names.len() > 20, "only {names:?} found");
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| {
            ![format!(".{n}("), format!("::{n}("), format!("`{n}()`")]
                .iter()
                .any(|form| page.contains(form.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "book/src/reference/handles.md lacks Rhai's {missing:?}: add each with the chapter that shows it"
    );
}
