//! `gantry test`: a mod's `tests/*.lua` and `tests/*.rhai`, each case in a
//! fresh game with the mod loaded.
//!
//! A test script is an ordinary script of the hub, run on the runtimes'
//! own sandbox and limits (a case that loops is stopped like a mod's
//! listener), beside the mod, with four more functions, the same in both
//! languages:
//!
//! - `test(name, fn)` — a named case;
//! - `expect_eq(got, want)` — fails the case with `expected want, got got`
//!   (tables and arrays compared by content);
//! - `tick(n)` — sends the mod the next `n` ticks (`Game.Tick`, numbered on);
//! - `sent(key)` — every send the mod made of `key` so far in this case,
//!   oldest first, each the array of its values.
//!
//! Messages go to the mod with the usual API (`NotifyMessage`, …).
//!
//! The script runs once to list its cases, then once per case in a new
//! game: `test` runs only the case of that run, so a case sees none of
//! another's state. The functions are written in the script's language
//! (on the first line, before the script's own text, so lines keep their
//! numbers); `tick` and `sent` reach the runner through two keys of its
//! own.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use gantry_host::face::Faced;
use gantry_host::{Caller, KeyDecl, Source, TraceEvent, Type, Value};
use gantry_lua::runtime::LuaRuntime;
use gantry_rhai::RhaiRuntime;

use crate::record::{self, Recording, Verdict};
use crate::{Event, Game, Options, TICK_KEY, TableChoice};

/// A recording kept among the tests runs as a case.
pub const REPLAY_EXTENSION: &str = ".gantry-rec";

/// The largest test script read, in bytes.
pub const MAX_TEST_BYTES: u64 = 1024 * 1024;
/// The most test scripts one folder may have.
pub const MAX_TEST_FILES: usize = 1000;
/// The most cases one script may name.
pub const MAX_CASES: usize = 10_000;
/// The most ticks one `tick(n)` may send.
pub const MAX_TICKS: i64 = 100_000;

/// The runner's own keys, which a mod does not see.
const TICK_REQUEST: &str = "Gantry.Test.Tick";
const SENT_REQUEST: &str = "Gantry.Test.Sent";
const CASE_FOUND: &str = "Gantry.Test.Case";
/// The sends a case's `sent` keeps, all keys together.
const MAX_KEPT_SENDS: usize = 100_000;
/// The seconds a tick of a test stands for.
const TEST_DT: f64 = 1.0 / 60.0;

/// A send of the mod's kept for `sent`: its key and values.
type Sent = (String, Vec<Value>);

/// One case's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The test script as named from the mod folder (`tests/quest.lua`).
    pub file: String,
    /// The case's name; the file's own name when the script could not run.
    pub name: String,
    /// `Err` with what failed, at its file:line.
    pub outcome: Result<(), String>,
    /// Wall-clock seconds the case took.
    pub seconds: f64,
}

/// The test scripts of `root/tests/`, sorted, and what was skipped (a
/// link, a special file, a file too large): said, never read.
pub fn test_files(root: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let dir = root.join("tests");
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            skipped.push("tests: not a folder (a link or a file); no tests run".to_owned());
            return (files, skipped);
        }
        Err(_) => return (files, skipped),
    }
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) => {
            skipped.push(format!("tests: cannot be read: {e}"));
            return (files, skipped);
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.ends_with(".lua") || name.ends_with(".rhai") || name.ends_with(REPLAY_EXTENSION))
        {
            continue;
        }
        // symlink_metadata: a link is never followed out of the folder,
        // and a FIFO or device is never opened (it could block).
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_file() => {
                if meta.len() > MAX_TEST_BYTES {
                    skipped.push(format!(
                        "tests/{name}: {} bytes, over the {MAX_TEST_BYTES} a test script may have; skipped",
                        meta.len()
                    ));
                } else if files.len() >= MAX_TEST_FILES {
                    skipped.push(format!(
                        "tests/{name}: over {MAX_TEST_FILES} test scripts; skipped"
                    ));
                } else {
                    files.push(path);
                }
            }
            Ok(meta) if meta.file_type().is_symlink() => {
                skipped.push(format!("tests/{name}: a link, not read; skipped"))
            }
            Ok(_) => skipped.push(format!("tests/{name}: not a regular file; skipped")),
            Err(e) => skipped.push(format!("tests/{name}: {e}; skipped")),
        }
    }
    files.sort();
    (files, skipped)
}

/// Runs every case of the test script `file` of the mod in `root`, each
/// in a fresh game opened with `options` (no signature table is read or
/// written).
pub fn run_file(root: &Path, options: &Options, file: &Path) -> Vec<CaseResult> {
    let label = format!(
        "tests/{}",
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let failed = |text: String| {
        vec![CaseResult {
            file: label.clone(),
            name: label.clone(),
            outcome: Err(text),
            seconds: 0.0,
        }]
    };
    if label.ends_with(REPLAY_EXTENSION) {
        return vec![replay_case(root, options, file, label)];
    }
    let source = match read_bounded(file) {
        Ok(source) => source,
        Err(text) => return failed(format!("{label}: {text}")),
    };
    let mut options = options.clone();
    options.table = TableChoice::Off;
    let listing = run_once(root, &options, &label, &source, None);
    let names = match listing {
        Ok(names) => names,
        Err(text) => return failed(text),
    };
    if names.is_empty() {
        return failed(format!("{label}: no `test(name, fn)` case in it"));
    }
    let mut results = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for name in names {
        if !seen.insert(name.clone()) {
            results.push(CaseResult {
                file: label.clone(),
                name: name.clone(),
                outcome: Err(format!("{label}: two cases are named {name:?}; rename one")),
                seconds: 0.0,
            });
            continue;
        }
        let started = std::time::Instant::now();
        let outcome = run_once(root, &options, &label, &source, Some(&name)).map(|_| ());
        results.push(CaseResult {
            file: label.clone(),
            name,
            outcome,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    results
}

/// A recording (`gantry run --record`) kept in `tests/` as a case: it
/// passes when the mod sends what was recorded.
fn replay_case(root: &Path, options: &Options, file: &Path, label: String) -> CaseResult {
    let started = std::time::Instant::now();
    let outcome = (|| {
        let recording = Recording::read(file).map_err(|e| e.to_string())?;
        let mut options = options.clone();
        options.table = TableChoice::Off;
        let mut game = Game::open(root, options).map_err(|e| e.to_string())?;
        game.on_event(|_| {});
        match record::replay(&mut game, &recording) {
            Verdict::Equal { .. } => Ok(()),
            Verdict::Differs {
                tick,
                expected,
                got,
            } => {
                let say = |d: Option<Box<record::Dispatch>>| {
                    d.map_or_else(|| "nothing".to_owned(), |d| d.to_string())
                };
                Err(format!(
                    "{label}: differs at tick {tick}: expected {}, got {}",
                    say(expected),
                    say(got)
                ))
            }
        }
    })();
    CaseResult {
        file: label.clone(),
        name: "replays as recorded".to_owned(),
        outcome,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Reads a regular file of at most [`MAX_TEST_BYTES`], never following a
/// link nor opening a special file.
fn read_bounded(file: &Path) -> Result<String, String> {
    let meta = std::fs::symlink_metadata(file).map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".to_owned());
    }
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(file)
        .map_err(|e| e.to_string())?
        .take(MAX_TEST_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_TEST_BYTES {
        return Err(format!("over {MAX_TEST_BYTES} bytes"));
    }
    Ok(text)
}

/// One run of the script in a new game: with `want` `None` it lists the
/// cases (none runs); with a name it runs that case alone. Errors (the
/// mod's or the case's) are the run's failure, each at its file:line.
fn run_once(
    root: &Path,
    options: &Options,
    label: &str,
    source: &str,
    want: Option<&str>,
) -> Result<Vec<String>, String> {
    let mut game = Game::open(root, options.clone()).map_err(|e| e.to_string())?;
    let errors: Rc<RefCell<Vec<String>>> = Rc::default();
    let said = errors.clone();
    game.on_event(move |event| match event {
        Event::Error(text) | Event::Report(text) => {
            let mut said = said.borrow_mut();
            if said.len() < 20 && !said.iter().any(|s| s == text) {
                said.push(text.to_owned());
            }
        }
        _ => {}
    });
    game.load();
    if !errors.borrow().is_empty() {
        return Err(format!(
            "the mod did not load cleanly: {}",
            errors.borrow().join("; ")
        ));
    }
    let hub = game.hub().clone();
    let world = game.world();
    let declare = |key: &str, decl: KeyDecl| hub.declare(key, decl).map_err(|e| e.to_string());
    declare(TICK_REQUEST, KeyDecl::event().param("n", Type::Int))?;
    declare(
        SENT_REQUEST,
        KeyDecl::request()
            .param("key", Type::String)
            .response("sends", Type::Array(Box::new(Type::Any))),
    )?;
    declare(CASE_FOUND, KeyDecl::event().param("name", Type::String))?;

    let object = hub.spawn(world).map_err(|e| e.to_string())?;
    // What the mod sends, kept for `sent`: every dispatch nested in one
    // the test made (its own sends are the outermost), the runner's keys
    // and the tick aside.
    let kept: Rc<RefCell<Vec<Sent>>> = Rc::default();
    let keep = kept.clone();
    let depth = Cell::new(0usize);
    hub.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| match event {
        TraceEvent::Dispatch { key, args, .. } => {
            if depth.get() > 0 && !key.starts_with("Gantry.Test.") && *key != TICK_KEY {
                let mut keep = keep.borrow_mut();
                if keep.len() < MAX_KEPT_SENDS {
                    keep.push(((*key).to_owned(), args.to_vec()));
                }
            }
            depth.set(depth.get() + 1);
        }
        TraceEvent::End { .. } | TraceEvent::HookDone { .. } => {
            depth.set(depth.get().saturating_sub(1));
        }
        _ => {}
    })));

    let tick_key = hub.key(TICK_KEY).map_err(|e| e.to_string())?;
    let ticks = Rc::new(Cell::new(0i64));
    let ticking = hub.clone();
    let count = ticks.clone();
    let _tick = hub
        .listen_message(TICK_REQUEST, Source::Global, Default::default(), move |m| {
            let n = match m.args.first() {
                Some(Value::Int(n)) => (*n).clamp(0, MAX_TICKS),
                _ => 1,
            };
            for _ in 0..n {
                count.set(count.get() + 1);
                let mut args = [Value::Int(count.get()), Value::Float(TEST_DT)];
                let _ =
                    ticking.send_values(tick_key, Source::Global, &mut args, Caller::Unrecorded);
            }
        })
        .map_err(|e| e.to_string())?;
    let _sent = hub
        .listen_message(SENT_REQUEST, Source::Global, Default::default(), move |m| {
            let Some(responder) = m.responder else { return };
            let key = match m.args.first() {
                Some(Value::Str(key)) => key.clone(),
                _ => Rc::from(""),
            };
            let sends: Vec<Value> = kept
                .borrow()
                .iter()
                .filter(|(k, _)| **k == *key)
                .map(|(_, args)| Value::Array(Rc::new(args.clone())))
                .collect();
            responder.respond_values(&[Value::Array(Rc::new(sends))]);
        })
        .map_err(|e| e.to_string())?;
    let names: Rc<RefCell<Vec<String>>> = Rc::default();
    let found = names.clone();
    let _found = hub
        .listen_message(CASE_FOUND, Source::Global, Default::default(), move |m| {
            if let Some(Value::Str(name)) = m.args.first() {
                let mut found = found.borrow_mut();
                if found.len() < MAX_CASES {
                    found.push(name.to_string());
                }
            }
        })
        .map_err(|e| e.to_string())?;

    let loaded = if label.ends_with(".lua") {
        let runtime =
            LuaRuntime::new(hub.clone(), options.lua.clone()).map_err(|e| e.to_string())?;
        let text = format!("{}{source}", lua_prelude(want));
        runtime
            .load_script(label, &text, object)
            .map(drop)
            .map_err(|e| without_traceback(&e.to_string()))
    } else {
        let runtime =
            RhaiRuntime::new(hub.clone(), options.rhai.clone()).map_err(|e| e.to_string())?;
        let text = format!("{}{}", rhai_prelude(want), mark_expect_lines(source));
        runtime
            .load_script(label, &text, object)
            .map(drop)
            .map_err(|e| expectation_at_its_line(label, &e.to_string()))
    };
    hub.set_tracer(None);
    loaded?;
    if !errors.borrow().is_empty() {
        return Err(errors.borrow().join("; "));
    }
    let names = names.borrow().clone();
    // A case found when listing that this run did not reach (its `test`
    // call depends on something that changed) must not pass unseen.
    if let Some(want) = want
        && names.is_empty()
    {
        return Err(format!("{label}: the case {want:?} did not run this time"));
    }
    Ok(names)
}

/// What a failed Rhai `expect_eq` throws before its line: a Rhai error
/// names the line of the `throw` (the runner's), so the case's line rides
/// in the text.
const EXPECT_MARK: &str = "gantry-expect@";

/// Each `expect_eq(` of a Rhai script given its line: `expect_eq_at(4, `.
/// Lines keep their numbers.
fn mark_expect_lines(source: &str) -> String {
    const CALL: &str = "expect_eq(";
    let mut out = String::with_capacity(source.len());
    for (at, line) in source.split_inclusive('\n').enumerate() {
        let mut rest = line;
        while let Some(found) = rest.find(CALL) {
            let before = &rest[..found];
            let joined = before
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            out.push_str(before);
            if joined {
                out.push_str(CALL);
            } else {
                out.push_str(&format!("expect_eq_at({}, ", at + 1));
            }
            rest = &rest[found + CALL.len()..];
        }
        out.push_str(rest);
    }
    out
}

/// A Rhai error of a failed `expect_eq` said at the case's line
/// (`tests/quest.rhai:4: expected 2, got 1`); any other as it is.
fn expectation_at_its_line(label: &str, text: &str) -> String {
    let Some(at) = text.find(EXPECT_MARK) else {
        // The frames of the runner's own `test` (on line 1) say nothing.
        return text.replace("in `test`: in the closure called at line 1: ", "");
    };
    let rest = &text[at + EXPECT_MARK.len()..];
    match rest.split_once(':') {
        Some((line, what)) if line.parse::<u32>().is_ok() => format!("{label}:{line}: {what}"),
        _ => text.to_owned(),
    }
}

/// A Lua error without its stack traceback: the first lines name the
/// case's file:line; the frames below are the runner's.
fn without_traceback(text: &str) -> String {
    match text.find("\nstack traceback:") {
        Some(at) => text[..at].to_owned(),
        None => text.to_owned(),
    }
}

/// A string literal both languages read back as `text`.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The Lua test functions, on one line (the script's first line follows
/// it, so its lines keep their numbers).
fn lua_prelude(want: Option<&str>) -> String {
    let test = match want {
        None => format!(
            "function test(name, fn) NotifyMessage({}, tostring(name)) end",
            literal(CASE_FOUND)
        ),
        Some(name) => format!(
            "function test(name, fn) if tostring(name) == {name} then NotifyMessage({found}, {name}) fn() end end",
            name = literal(name),
            found = literal(CASE_FOUND),
        ),
    };
    format!(
        "{test}; \
         local function __show(v) if type(v) == \"table\" then local p = {{}} for k, x in pairs(v) do if k ~= \"__struct\" then p[#p + 1] = tostring(k) .. \" = \" .. __show(x) end end table.sort(p) return \"{{\" .. table.concat(p, \", \") .. \"}}\" elseif type(v) == \"string\" then return string.format(\"%q\", v) else return tostring(v) end end; \
         local function __eq(a, b) if type(a) ~= \"table\" or type(b) ~= \"table\" then return a == b end for k, x in pairs(a) do if k ~= \"__struct\" and not __eq(x, b[k]) then return false end end for k in pairs(b) do if k ~= \"__struct\" and a[k] == nil then return false end end return true end; \
         function expect_eq(got, want) if not __eq(got, want) then error(\"expected \" .. __show(want) .. \", got \" .. __show(got), 2) end end; \
         function tick(n) NotifyMessage({tick}, n or 1) end; \
         function sent(key) local got = {{}} SendObjectMessage(self:World(), {sent}, key, function(list) got = list end) return got end; ",
        tick = literal(TICK_REQUEST),
        sent = literal(SENT_REQUEST),
    )
}

/// The Rhai test functions, on one line as Lua's.
fn rhai_prelude(want: Option<&str>) -> String {
    let test = match want {
        None => format!(
            "fn test(name, f) {{ NotifyMessage({}, `${{name}}`); }}",
            literal(CASE_FOUND)
        ),
        Some(name) => format!(
            "fn test(name, f) {{ if `${{name}}` == {name} {{ NotifyMessage({found}, {name}); f.call(); }} }}",
            name = literal(name),
            found = literal(CASE_FOUND),
        ),
    };
    format!(
        "{test} \
         fn expect_eq(got, want) {{ if type_of(got) != type_of(want) || got != want {{ throw `expected ${{want}}, got ${{got}}`; }} }} \
         fn expect_eq_at(line, got, want) {{ if type_of(got) != type_of(want) || got != want {{ throw `{EXPECT_MARK}${{line}}:expected ${{want}}, got ${{got}}`; }} }} \
         fn tick(n) {{ NotifyMessage({tick}, n); }} \
         fn sent(key) {{ GMP::Request(Spawn().World(), {sent}, key) }} ",
        tick = literal(TICK_REQUEST),
        sent = literal(SENT_REQUEST),
    )
}
