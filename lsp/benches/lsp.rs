//! The server's latency on a generated 10,000-line Lua script, through the
//! in-process connection: completion after a one-character edit, fresh
//! diagnostics after an edit, and — the baseline, in the same run — a full
//! tree-sitter parse (and parse + scan) of the same file.
//!
//! Criterion reports means; the targets are percentiles, so the run
//! starts by printing p50/p99 over a fixed number of samples (skipped when
//! a filter selects only other groups).
//!
//! `lsp_10k_lines_editing`: rename of a key used hundreds of times, inlay
//! hints for a screen, semantic tokens of the whole file, beside a full
//! parse of it.
//!
//! `lsp_check_10k_lines`: `gantry check` of the same script as a mod with
//! a 300-key `mod.toml`, and without it (the baseline).
//!
//! `lsp_nesting`: completion in the key of a call 40,000 braces deep (Lua
//! and Rhai, one line), beside the same at a quarter of the depth and on a
//! flat file of the same size: time linear in the file shows as a ratio
//! near 4 to the quarter depth.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::Criterion;
use gantry_lsp::uri::path_to_uri;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use lsp_types::{Position, Range, Uri};
use serde_json::{Value, json};

const LINES: usize = 10_000;
/// The line whose key string the edits and completions happen in.
const CURSOR_LINE: usize = 5_001;

fn table() -> String {
    let mut keys = serde_json::Map::new();
    for group in ["Player", "Inv", "World", "Quest", "Ui"] {
        for i in 0..20 {
            keys.insert(
                format!("{group}.Event{i}"),
                json!({ "kind": "event", "origin": "declared",
                        "params": [ { "name": "amount", "type": "float" }, { "name": "who", "type": "object" } ] }),
            );
        }
    }
    serde_json::to_string_pretty(&json!({ "version": 1, "keys": keys })).unwrap()
}

/// Functions, locals, control flow and an API call every few lines.
fn script() -> String {
    let mut out = String::with_capacity(LINES * 40);
    let mut line = 0;
    while line < LINES {
        if line + 1 == CURSOR_LINE {
            out.push_str("NotifyObjectMessage(self, \"Player.\", 1.0, self)\n");
            line += 1;
            continue;
        }
        match line % 10 {
            0 => out.push_str(&format!("local function handler_{line}(a, b)\n")),
            1 => out.push_str("  local total = a + b * 2\n"),
            2 => out.push_str(&format!(
                "  NotifyObjectMessage(self, \"Player.Event{}\", total, self)\n",
                line % 20
            )),
            3 => out.push_str("  if total > 10 then\n"),
            4 => out.push_str(&format!(
                "    GMP.NotifyMessage(\"Inv.Event{}\", 2.5)\n",
                line % 20
            )),
            5 => out.push_str("  end\n"),
            6 => out.push_str("  return total\n"),
            7 => out.push_str("end\n"),
            8 => out.push_str(&format!(
                "ListenMessage(\"World.Event{}\", self, function(amount, who) print(amount) end)\n",
                line % 20
            )),
            _ => out
                .push_str("-- a comment line with \"quotes\" and NotifyMessage(\"Not.A.Call\")\n"),
        }
        line += 1;
    }
    out
}

struct Client {
    conn: Connection,
    next: i32,
    version: i32,
    uri: Uri,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl Client {
    fn start(dir: &Path, text: &str) -> Client {
        Self::start_file(dir, "main.lua", text)
    }

    /// Opens `file` (written in `dir` by the caller), language by extension.
    fn start_file(dir: &Path, file: &str, text: &str) -> Client {
        let (server, conn) = Connection::memory();
        let thread = std::thread::spawn(move || gantry_lsp::run(server));
        let uri = path_to_uri(&dir.join(file)).unwrap();
        let mut client = Client {
            conn,
            next: 0,
            version: 1,
            uri,
            thread: Some(thread),
        };
        client.request("initialize", json!({ "capabilities": {} }));
        client.notify("initialized", json!({}));
        let uri = client.uri.as_str().to_owned();
        let language = if file.ends_with(".rhai") {
            "rhai"
        } else {
            "lua"
        };
        client.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": language, "version": 1, "text": text } }),
        );
        client.wait_diagnostics(1);
        client
    }

    fn notify(&self, method: &str, params: Value) {
        self.conn
            .sender
            .send(Notification::new(method.to_owned(), params).into())
            .unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        self.conn
            .sender
            .send(Request::new(id.clone(), method.to_owned(), params).into())
            .unwrap();
        loop {
            match self.conn.receiver.recv().unwrap() {
                Message::Response(r) if r.id == id => {
                    return r.response_result.unwrap_or(Value::Null);
                }
                _ => {}
            }
        }
    }

    /// A one-character edit: insert `ch` at `at`, or delete the character there.
    fn edit(&mut self, at: Position, insert: Option<&str>) {
        self.version += 1;
        let range = match insert {
            Some(_) => Range::new(at, at),
            None => Range::new(at, Position::new(at.line, at.character + 1)),
        };
        let uri = self.uri.as_str().to_owned();
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": self.version },
                    "contentChanges": [ { "range": range, "text": insert.unwrap_or("") } ] }),
        );
    }

    fn wait_diagnostics(&self, version: i32) -> usize {
        loop {
            if let Message::Notification(n) = self.conn.receiver.recv().unwrap()
                && n.method == "textDocument/publishDiagnostics"
                && n.params["version"] == version
            {
                return n.params["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    fn completion(&mut self, at: Position) -> usize {
        let uri = self.uri.as_str().to_owned();
        let result = self.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": at }),
        );
        result.as_array().map_or(0, Vec::len)
    }

    /// Edit then complete; alternates inserting and deleting one letter.
    fn edit_and_complete(&mut self, toggle: &mut bool) -> usize {
        let key_start = Position::new(CURSOR_LINE as u32 - 1, 34);
        *toggle = !*toggle;
        if *toggle {
            self.edit(key_start, Some("E"));
            self.completion(Position::new(key_start.line, key_start.character + 1))
        } else {
            self.edit(key_start, None);
            self.completion(key_start)
        }
    }

    /// A new statement begun at the start of the last line (one letter
    /// typed, then deleted), then key completion far above it.
    fn new_statement_and_complete(&mut self, toggle: &mut bool) -> usize {
        let last_line = Position::new(LINES as u32 - 1, 0);
        *toggle = !*toggle;
        self.edit(last_line, if *toggle { Some("x") } else { None });
        self.completion(Position::new(CURSOR_LINE as u32 - 1, 34))
    }

    /// One letter typed (then deleted) at the start of line `line`, then
    /// key completion at `at`: an edit above the cursor when `line` is
    /// above it, the case (last line, completion at line 9) when
    /// below.
    fn edit_line_and_complete(&mut self, line: u32, at: Position, toggle: &mut bool) -> usize {
        *toggle = !*toggle;
        self.edit(
            Position::new(line, 0),
            if *toggle { Some("x") } else { None },
        );
        self.completion(at)
    }

    fn edit_and_diagnose(&mut self, toggle: &mut bool) -> usize {
        let at = Position::new(2, 10);
        *toggle = !*toggle;
        self.edit(at, if *toggle { Some("x") } else { None });
        self.wait_diagnostics(self.version)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn report(name: &str, samples: &mut [Duration]) {
    println!(
        "{name}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms over {} samples",
        percentile(samples, 0.50).as_secs_f64() * 1e3,
        percentile(samples, 0.99).as_secs_f64() * 1e3,
        samples.iter().max().unwrap().as_secs_f64() * 1e3,
        samples.len()
    );
}

fn setup() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".gantry")).unwrap();
    std::fs::write(dir.path().join(".gantry/signatures.json"), table()).unwrap();
    let text = script();
    std::fs::write(dir.path().join("main.lua"), &text).unwrap();
    (dir, text)
}

fn percentiles() {
    let (dir, text) = setup();
    let mut client = Client::start(dir.path(), &text);
    let mut toggle = false;
    let mut completion = Vec::new();
    for i in 0..400 {
        let start = Instant::now();
        let items = client.edit_and_complete(&mut toggle);
        if i >= 20 {
            completion.push(start.elapsed());
        }
        assert!(items >= 20, "completion offers the Player keys ({items})");
        // Let the deferred diagnostics of this edit go out before the next sample.
        client.wait_diagnostics(client.version);
    }
    report("completion after a one-character edit", &mut completion);
    let mut new_statement = Vec::new();
    for i in 0..200 {
        let start = Instant::now();
        let items = client.new_statement_and_complete(&mut toggle);
        if i >= 20 {
            new_statement.push(start.elapsed());
        }
        assert!(items >= 20, "completion offers the Player keys ({items})");
        client.wait_diagnostics(client.version);
    }
    report(
        "completion after a new statement at the end of the file",
        &mut new_statement,
    );
    let key = Position::new(CURSOR_LINE as u32 - 1, 34);
    let line_9 = Position::new(8, "ListenMessage(\"World.".len() as u32);
    for (name, line, at) in [
        (
            "completion at line 5,001 after an edit at line 101",
            100,
            key,
        ),
        (
            "completion at line 9 after an edit on the last line",
            LINES as u32 - 1,
            line_9,
        ),
    ] {
        let mut samples = Vec::new();
        for i in 0..200 {
            let start = Instant::now();
            let items = client.edit_line_and_complete(line, at, &mut toggle);
            if i >= 20 {
                samples.push(start.elapsed());
            }
            assert!(items >= 20, "{name}: completion offers the keys ({items})");
            client.wait_diagnostics(client.version);
        }
        report(name, &mut samples);
        if toggle {
            client.edit_line_and_complete(line, at, &mut toggle);
            client.wait_diagnostics(client.version);
        }
    }
    let mut diagnostics = Vec::new();
    for _ in 0..100 {
        let start = Instant::now();
        black_box(client.edit_and_diagnose(&mut toggle));
        diagnostics.push(start.elapsed());
    }
    report("fresh diagnostics after an edit", &mut diagnostics);
    let mut parse = Vec::new();
    for _ in 0..30 {
        let start = Instant::now();
        black_box(gantry_lua::syntax::parse(&text, None));
        parse.push(start.elapsed());
    }
    report("full parse (baseline)", &mut parse);
}

/// A script whose one API call sits `depth` braces deep on one line, and
/// the position just after `"Player.` in its key.
fn nested(depth: usize, lua: bool) -> (String, Position) {
    let head = if lua { "local t = " } else { "let t = " };
    let before = format!("{head}{}NotifyMessage(\"Player.", "{".repeat(depth));
    let text = format!(
        "{before}Event1\", 1.0){}{}\n",
        "}".repeat(depth),
        if lua { "" } else { ";" }
    );
    (text, Position::new(0, before.len() as u32))
}

/// A script of `len` bytes with the same call on its first line and flat
/// statements after it: the file's size without its depth.
fn flat(len: usize, lua: bool) -> (String, Position) {
    let (call, filler) = if lua {
        (
            "local t = NotifyMessage(\"Player.Event1\", 1.0)\n",
            "local x = {}\n",
        )
    } else {
        (
            "let t = NotifyMessage(\"Player.Event1\", 1.0);\n",
            "let x = #{};\n",
        )
    };
    let mut text = call.to_owned();
    while text.len() < len {
        text.push_str(filler);
    }
    let at = call.find("Player.").unwrap() + "Player.".len();
    (text, Position::new(0, at as u32))
}

const DEPTH: usize = 40_000;

fn nesting_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("lsp_nesting");
    group.sample_size(20);
    for lua in [true, false] {
        let language = if lua { "lua" } else { "rhai" };
        let deep_len = nested(DEPTH, lua).0.len();
        let cases = [
            (
                format!("{language}_completion_depth_{DEPTH}"),
                nested(DEPTH, lua),
            ),
            (
                format!("{language}_completion_depth_{}", DEPTH / 4),
                nested(DEPTH / 4, lua),
            ),
            (
                format!("{language}_completion_flat_same_size"),
                flat(deep_len, lua),
            ),
        ];
        for (name, (text, at)) in cases {
            let (dir, _) = setup();
            let file = format!("deep.{language}");
            std::fs::write(dir.path().join(&file), &text).unwrap();
            let mut client = Client::start_file(dir.path(), &file, &text);
            assert!(
                client.completion(at) >= 20,
                "{name}: completion offers the Player keys"
            );
            group.bench_function(&name, |b| b.iter(|| black_box(client.completion(at))));
        }
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let (dir, text) = setup();
    let mut group = c.benchmark_group("lsp_10k_lines");
    group.sample_size(30);
    group.bench_function("full_parse_baseline", |b| {
        b.iter(|| gantry_lua::syntax::parse(black_box(&text), None))
    });
    group.bench_function("full_parse_and_scan", |b| {
        b.iter(|| gantry_lua::syntax::scan(black_box(&text)))
    });
    let mut client = Client::start(dir.path(), &text);
    let mut toggle = false;
    group.bench_function("completion_after_edit", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                black_box(client.edit_and_complete(&mut toggle));
                total += start.elapsed();
                client.wait_diagnostics(client.version);
            }
            total
        })
    });
    group.bench_function("completion_after_new_statement_edit", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                black_box(client.new_statement_and_complete(&mut toggle));
                total += start.elapsed();
                client.wait_diagnostics(client.version);
            }
            total
        })
    });
    group.bench_function("diagnostics_after_edit", |b| {
        b.iter(|| client.edit_and_diagnose(&mut toggle))
    });
    group.finish();
}

/// The requests that read a whole script, on the same file, beside a full
/// parse in the same run: rename of a key used hundreds of times (target
/// 50 ms), inlay hints for a screen of 60 lines (5 ms), semantic tokens of
/// the whole file (30 ms).
fn editing_benches(c: &mut Criterion) {
    use gantry_lsp::analysis::rename::{Script, plan_rename};
    use gantry_lsp::analysis::{SourceFile, inlay, semantic};

    let (dir, text) = setup();
    let lines = gantry_lsp::text::LineIndex::new(&text);
    let calls = gantry_lsp::syntax::scan(gantry_host::Language::Lua, &text);
    let table = gantry_lsp::table::LoadedTable::load(&dir.path().join(".gantry/signatures.json"));
    let file = SourceFile {
        text: &text,
        lines: &lines,
        language: gantry_host::Language::Lua,
        calls: &calls,
        parsed: None,
    };
    let key = "Player.Event2";
    let uses: Vec<lsp_types::Range> = gantry_lsp::index::index_calls(&text, &lines, &calls)
        .into_iter()
        .filter(|c| c.key == key)
        .map(|c| c.range)
        .collect();
    assert!(uses.len() >= 300, "{} uses", uses.len());
    let path = dir.path().join("main.lua");
    let mut group = c.benchmark_group("lsp_10k_lines_editing");
    group.sample_size(20);
    group.bench_function("full_parse_baseline", |b| {
        b.iter(|| gantry_lua::syntax::parse(black_box(&text), None))
    });
    edit_shape_benches(&mut group, dir.path(), &text);
    group.bench_function(format!("rename_key_used_{}_times", uses.len()), |b| {
        b.iter(|| {
            let scripts = [Script {
                path: &path,
                text: &text,
                lines: &lines,
                calls: uses.clone(),
            }];
            let edits = plan_rename(key, Some("Player.Renamed"), &scripts, &[], false).unwrap();
            assert_eq!(edits[&path].len(), uses.len());
            edits
        })
    });
    let screen = lines.line_range(&text, CURSOR_LINE - 30).start
        ..lines.line_range(&text, CURSOR_LINE + 30).end;
    group.bench_function("inlay_hints_for_a_screen", |b| {
        b.iter(|| inlay::inlay_hints(&file, &table.table, black_box(screen.clone())))
    });
    group.bench_function("semantic_tokens_whole_file", |b| {
        b.iter(|| semantic::semantic_tokens(&file, Some(&table.table)))
    });
    group.finish();
}

/// Completion after one letter typed at the start of a line, for each
/// place of the edit against the cursor: far above it (line 101 and the
/// middle of the file, key completion at line 5,001), and the issue's own
/// case — the last line, key completion at line 9 (in a `ListenMessage`).
/// Diagnostics of each edit go out before the next (they are deferred
/// until the client is quiet, so they are not timed).
fn edit_shape_benches(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    dir: &Path,
    text: &str,
) {
    let key = Position::new(CURSOR_LINE as u32 - 1, 34);
    let line_9 = Position::new(8, "ListenMessage(\"World.".len() as u32);
    let shapes = [
        ("completion_after_edit_near_the_top", 100, key),
        ("completion_after_edit_in_the_middle", 2_500, key),
        (
            "completion_at_line_9_after_edit_on_last_line",
            LINES as u32 - 1,
            line_9,
        ),
    ];
    let mut client = Client::start(dir, text);
    let mut toggle = false;
    for (name, line, at) in shapes {
        assert!(
            client.edit_line_and_complete(line, at, &mut toggle) >= 20,
            "{name}: completion offers the keys"
        );
        client.wait_diagnostics(client.version);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    black_box(client.edit_line_and_complete(line, at, &mut toggle));
                    total += start.elapsed();
                    client.wait_diagnostics(client.version);
                }
                total
            })
        });
        // Leave the file as it was for the next shape.
        if toggle {
            client.edit_line_and_complete(line, at, &mut toggle);
            client.wait_diagnostics(client.version);
        }
    }
}

/// A `mod.toml` declaring 300 keys: the script's 100 and 200 more.
fn manifest() -> String {
    let mut out = String::from("[mod]\nname = \"bench\"\n");
    for group in ["Player", "Inv", "World", "Quest", "Ui"] {
        for i in 0..60 {
            out.push_str(&format!(
                "\n[keys.\"{group}.Event{i}\"]\nkind = \"event\"\nparams = [\"amount: float\", \"who: object\"]\ndoc = \"Event {i} of {group}.\"\n"
            ));
        }
    }
    out
}

/// `gantry check` of a 10,000-line mod with a 300-key manifest (target:
/// under 200 ms), beside the same mod checked with no manifest (its
/// baseline, in the same run).
fn check_benches(c: &mut Criterion) {
    let text = script();
    let bare = tempfile::tempdir().unwrap();
    std::fs::write(bare.path().join("main.lua"), &text).unwrap();
    let declared = tempfile::tempdir().unwrap();
    std::fs::write(declared.path().join("main.lua"), &text).unwrap();
    std::fs::write(declared.path().join("mod.toml"), manifest()).unwrap();
    let mut group = c.benchmark_group("lsp_check_10k_lines");
    group.sample_size(20);
    group.bench_function("check_without_manifest_baseline", |b| {
        b.iter(|| gantry_lsp::check_dir(black_box(bare.path())).unwrap())
    });
    group.bench_function("check_with_300_key_manifest", |b| {
        b.iter(|| gantry_lsp::check_dir(black_box(declared.path())).unwrap())
    });
    group.finish();
}

/// Whether the command line's filter (if any) may select benchmarks of
/// `group`: the percentiles run only with the group they describe.
fn selects(group: &str) -> bool {
    let mut filters = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .peekable();
    filters.peek().is_none() || filters.any(|f| group.contains(&f) || f.contains(group))
}

fn main() {
    if selects("lsp_10k_lines") {
        percentiles();
    }
    let mut criterion = Criterion::default().configure_from_args();
    benches(&mut criterion);
    editing_benches(&mut criterion);
    nesting_benches(&mut criterion);
    check_benches(&mut criterion);
    criterion.final_summary();
}
