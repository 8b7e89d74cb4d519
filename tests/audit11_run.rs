//! Audit 11: `gantry run` as a modder lives in it (issues 5 and 10, README
//! "The mod host"): load order across languages, ticks, errors and exit
//! status, the sandbox's limits, `--trace`, `--why`, `--watch`, `gantry
//! explain`/`gantry table`, and the table file as the CLI handles it.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use gantry_host::Hub;
use gantry_lua::runtime::{LuaOptions, LuaRuntime};

mod support;

use support::{Watching, copy_dir, gantry, stderr as err, stdout as out, write};

fn run(dir: &Path, extra: &[&str]) -> Output {
    gantry()
        .arg("run")
        .arg(dir)
        .args(extra)
        .output()
        .expect("gantry runs")
}

fn trace_lines(o: &Output) -> Vec<String> {
    err(o)
        .lines()
        .filter(|l| l.starts_with("trace:"))
        .map(str::to_owned)
        .collect()
}

/// Waits for a child for at most `limit`; kills it if still running.
fn wait_or_kill(mut child: std::process::Child, limit: Duration) -> Option<Output> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

// ---------------------------------------------------------------- loading

#[test]
fn run_loads_lua_and_rhai_interleaved_in_file_name_order() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "d.lua", "print('d lua')");
    write(dir.path(), "a.rhai", "print(\"a rhai\");");
    write(dir.path(), "c.rhai", "print(\"c rhai\");");
    write(dir.path(), "b.lua", "print('b lua')");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(
        &dir.path().join("sub"),
        "0.lua",
        "print('nested, never loaded')",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "a rhai\nb lua\nc rhai\nd lua\n");
}

#[test]
fn rhai_listener_gets_game_tick_n_from_1_as_int_and_dt_as_float() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.rhai",
        "ListenMessage(\"Game.Tick\", (), |n, dt| { print(`${n} ${type_of(n)} ${type_of(dt)} ${dt > 0.0 && dt < 1.0}`); });\n",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "3"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "1 i64 f64 true\n2 i64 f64 true\n3 i64 f64 true\n");
}

#[test]
fn ticks_zero_sends_no_tick_and_default_is_one() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Game.Tick', nil, function(n) print('tick', n) end)",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "");
    let o = run(dir.path(), &["--no-table"]);
    assert_eq!(out(&o), "tick\t1\n");
}

#[test]
fn each_script_gets_its_own_object_in_one_world() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "1.lua",
        "ListenWorldMessage(self:World(), 'Who', nil, function(o) print('same object', o == self) end)",
    );
    write(
        dir.path(),
        "2.rhai",
        "NotifyObjectMessage(SELF, \"Who\", SELF);",
    );
    write(
        dir.path(),
        "3.lua",
        "NotifyObjectMessage(self, 'Who', self)",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "same object\tfalse\nsame object\tfalse\n");
}

#[test]
fn a_rhai_compile_error_is_file_line_on_stderr_exit_1_and_the_rest_still_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.rhai", "let x = 1;\nlet y = ;\n");
    write(
        dir.path(),
        "b.lua",
        "ListenMessage('Game.Tick', nil, function(n) print('b ticks', n) end)",
    );
    let o = run(dir.path(), &["--no-table"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).lines().any(|l| l.contains("a.rhai:2: ")),
        "{}",
        err(&o)
    );
    assert_eq!(out(&o), "b ticks\t1\n");
}

// ---------------------------------------------------------------- errors

/// DESIGN: "a mismatch is reported with key, position, expected/got and
/// call site, and that dispatch is aborted". One mismatch, one report.
#[test]
fn a_mismatched_send_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "NotifyMessage('Player.Hurt', 1.5)\nNotifyMessage('Player.Hurt', 'lots')\n",
    );
    let o = run(dir.path(), &["--no-table"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = err(&o);
    assert_eq!(
        stderr.matches("expected float, got string").count(),
        1,
        "one mismatch, one report:\n{stderr}"
    );
}

/// The same abort is told by the error report and by the trace: they name
/// the same argument position (the trace says `argument 1`).
#[test]
fn mismatch_report_and_trace_name_the_same_argument_position() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "NotifyMessage('Player.Hurt', 1.5)\nNotifyMessage('Player.Hurt', 'lots')\n",
    );
    let o = run(dir.path(), &["--no-table", "--trace"]);
    let stderr = err(&o);
    assert!(
        stderr.contains("ABORTED Player.Hurt: argument 1: expected float, got string"),
        "{stderr}"
    );
    let report = stderr
        .lines()
        .find(|l| l.starts_with("error: a.lua:2:"))
        .unwrap_or_else(|| panic!("no report at a.lua:2:\n{stderr}"));
    assert!(
        !report.contains("parameter 0") && report.contains(" 1"),
        "the report names the first argument as position 0: {report}"
    );
}

/// Issue 5: "exceeding either [memory limit or instruction budget] stops
/// that call with an error naming the script and line".
#[test]
fn memory_limit_at_a_top_level_names_the_script_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "hog.lua",
        "local x = 1\nlocal s = string.rep('x', 400 * 1024 * 1024)\nprint('after')\n",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "0"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = err(&o);
    assert!(stderr.contains("memory"), "{stderr}");
    assert!(
        stderr.contains("hog.lua:2:"),
        "the error names the script but not the line:\n{stderr}"
    );
    assert_eq!(out(&o), "");
}

/// Issue 5 / DESIGN: an instruction budget per handler call "stops a
/// runaway loop with an error naming the script and line". A script that
/// wraps its runaway loop in `pcall` must not be able to swallow the stop.
#[test]
fn the_instruction_budget_cannot_be_swallowed_by_pcall() {
    let hub = Hub::new();
    let world = hub.create_world();
    let rt = LuaRuntime::new(
        hub.clone(),
        LuaOptions {
            instruction_budget: 200_000,
            watchdog_interval: Duration::from_millis(2),
            ..LuaOptions::default()
        },
    )
    .unwrap();
    let printed = std::rc::Rc::new(std::cell::RefCell::new(Vec::<String>::new()));
    let sink = printed.clone();
    rt.on_print(move |l| sink.borrow_mut().push(l.to_owned()));
    // Bounded so a broken budget ends by itself: each caught stop costs
    // one hook step, so 2000 catches finish quickly.
    let result = rt.load_script(
        "escape.lua",
        "local caught = 0\n\
         for i = 1, 2000 do\n\
           pcall(function() while true do end end)\n\
           caught = caught + 1\n\
         end\n\
         print('escaped the budget', caught)\n",
        hub.spawn(world).unwrap(),
    );
    let printed = printed.borrow().clone();
    assert!(
        printed.is_empty(),
        "the runaway call went on after its budget was spent: {printed:?}"
    );
    let e = result.expect_err("the top level is stopped").to_string();
    assert!(e.contains("escape.lua:"), "{e}");
    assert!(e.contains("instruction budget"), "{e}");
}

/// Rhai's limit is not catchable: `try`/`catch` cannot swallow it.
#[test]
fn the_rhai_operation_limit_cannot_be_swallowed_by_try_catch() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.rhai",
        "ListenMessage(\"Game.Tick\", (), |n, dt| {\n  loop {\n    try { loop { } } catch (e) { }\n  }\n});\n",
    );
    let child = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--no-table"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_or_kill(child, Duration::from_secs(10)).expect("the run ends");
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("a.rhai:"), "{}", err(&o));
}

/// DESIGN: scripts are untrusted; a runaway loop is stopped. A finalizer
/// (`__gc`) with a runaway loop runs when the Lua state closes at the end
/// of the run: the host must still end.
#[test]
fn a_runaway_gc_finalizer_does_not_hang_the_host_at_exit() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "keep = setmetatable({}, { __gc = function() while true do end end })\nprint('loaded')\n",
    );
    let child = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--no-table"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_or_kill(child, Duration::from_secs(5));
    assert!(
        o.is_some(),
        "gantry run never ended: the finalizer runs outside any budget at close"
    );
}

// ---------------------------------------------------------------- trace

#[test]
fn trace_names_store_replay_request_and_hook_dispatches_with_sites() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"StoreObjectMessage(self:World(), "Arena.Size", 20)
ListenWorldMessage(self:World(), "Arena.Size", nil, function(n) end, { order = 3 })
ListenObjectMessage(self, "Shop.Price", nil, function(item, rsp) rsp:Response(4) end)
SendObjectMessage(self, "Shop.Price", "potion", function(price) end)
ListenHook("Combat.Damage", nil, function(hit, ctx) ctx:Cancel() end, { priority = 7 })
RunHook("Combat.Damage", { __struct = "Hit", amount = 5 })
"#,
    );
    write(
        dir.path(),
        "b.rhai",
        "ListenWorldMessage(SELF.World(), \"Arena.Size\", (), |n| { });\n",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "1", "--trace"]);
    assert!(o.status.success(), "{}", err(&o));
    let lines = trace_lines(&o);
    let has = |prefix: &str, rest: &str| {
        lines
            .iter()
            .any(|l| l.starts_with(prefix) && l.contains(rest))
    };
    assert!(
        has(
            "trace: [load] store Arena.Size from world#",
            "(20) → no listener"
        ),
        "{lines:#?}"
    );
    assert!(
        has(
            "trace: [load] replay Arena.Size to a listener on world#",
            "→ a.lua:2 (order 3, "
        ),
        "{lines:#?}"
    );
    assert!(
        has(
            "trace: [load] replay Arena.Size to a listener on world#",
            "→ b.rhai:1 (order 0, "
        ),
        "{lines:#?}"
    );
    assert!(
        has(
            "trace: [load] request Shop.Price from object#",
            "(\"potion\") → a.lua:3 (order 0, "
        ),
        "{lines:#?}"
    );
    assert!(
        has("trace: [load] hook Combat.Damage", "a.lua:5 (priority 7, ")
            && has("trace: [load] hook Combat.Damage", "cancelled"),
        "{lines:#?}"
    );
    assert!(
        has("trace: [tick 1] send Game.Tick from global (1, 0.0167)", ""),
        "{lines:#?}"
    );
}

#[test]
fn trace_off_prints_no_trace_lines() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Game.Tick', nil, function(n) NotifyMessage('Player.Hurt', 1.5) end)",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "2"]);
    assert!(o.status.success());
    assert!(trace_lines(&o).is_empty(), "{}", err(&o));
    assert_eq!(err(&o), "");
}

#[test]
fn trace_shows_an_aborted_send_during_a_tick_with_its_tick() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "NotifyMessage('Shop.Buy', 3)\nListenMessage('Game.Tick', nil, function(n)\n  if n == 2 then NotifyMessage('Shop.Buy', 'lots') end\nend)\n",
    );
    let o = run(
        dir.path(),
        &["--no-table", "--ticks", "2", "--trace-key", "Shop"],
    );
    let lines = trace_lines(&o);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("[tick 2] ABORTED Shop.Buy: argument 1: expected int, got string")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().all(|l| !l.contains("Game.Tick")),
        "--trace-key Shop hides Game.Tick: {lines:#?}"
    );
}

// ---------------------------------------------------------------- why

fn why(dir: &Path, extra: &[&str]) -> (Output, String) {
    let mut args = vec!["--ticks", "2", "--no-table"];
    args.extend_from_slice(extra);
    let o = run(dir, &args);
    let text = err(&o)
        .lines()
        .filter(|l| l.starts_with("why: ") || l.starts_with("  "))
        .map(|l| format!("{l}\n"))
        .collect();
    (o, text)
}

#[test]
fn why_tells_unbound_and_owner_collected() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"local id = ListenMessage("Player.Hurt", nil, function(dmg) end)
UnbindMessage("Player.Hurt", id)
do
  local owner = {}
  ListenMessage("Player.Hurt", owner, function(dmg) end)
end
collectgarbage()
collectgarbage()
ListenMessage("Player", nil, function(dmg) end, { match = "partial" })
ListenMessage("Game.Tick", nil, function(n) NotifyMessage("Player.Hurt", 1.5) end)
"#,
    );
    let (_, text) = why(dir.path(), &["--why", "Player.Hurt"]);
    assert!(
        text.contains(
            "a.lua:1 (listener on global): never fired: it was unbound before anything reached it"
        ),
        "{text}"
    );
    assert!(
        text.contains("a.lua:5 (listener on global): never fired: its owner was collected before anything reached it"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:9 (partial listener on global): fired 2 times"),
        "{text}"
    );
}

#[test]
fn why_tells_an_arity_mismatch_against_a_declared_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    std::fs::write(
        dir.path().join(".gantry/signatures.json"),
        r#"{
  "version": 1,
  "keys": {
    "Shop.Buy": {
      "kind": "event",
      "origin": "declared",
      "params": [ { "name": "item", "type": "string" } ]
    }
  }
}
"#,
    )
    .unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Shop.Buy', nil, function(item) end)\nListenMessage('Game.Tick', nil, function(n) NotifyMessage('Shop.Buy', 'potion', 3) end)\n",
    );
    let o = run(dir.path(), &["--ticks", "2", "--why", "Shop.Buy"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = err(&o);
    assert!(
        stderr.contains(
            "a.lua:1 (listener on global): never fired: every send of Shop.Buy was aborted"
        ),
        "{stderr}"
    );
}

/// DESIGN: "A bad key is a clear error, never a panic." `--why` and
/// `--trace-key` take a KEY.
#[test]
fn why_and_trace_key_refuse_a_malformed_key() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('Player.Hurt', 1.5)");
    for flag in ["--why", "--trace-key"] {
        let o = run(dir.path(), &["--no-table", flag, "Player Hurt"]);
        assert!(
            !o.status.success() && err(&o).contains("Player Hurt"),
            "{flag} \"Player Hurt\" was accepted silently: {:?} {}",
            o.status,
            err(&o)
        );
    }
}

// ---------------------------------------------------------------- explain

/// `gantry explain DIR KEY` "says who sends and who listens": an
/// `UnbindMessage` neither sends nor listens.
#[test]
fn explain_does_not_count_unbind_message_as_a_sender() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "local id = ListenMessage('Player.Hurt', nil, function(dmg) end)\nUnbindMessage('Player.Hurt', id)\n",
    );
    let o = run(dir.path(), &[]);
    assert!(o.status.success(), "{}", err(&o));
    let o = gantry()
        .args(["explain", dir.path().to_str().unwrap(), "Player.Hurt"])
        .output()
        .unwrap();
    let text = out(&o);
    assert!(
        text.contains("sent from: nowhere"),
        "an UnbindMessage line is listed as a sender:\n{text}"
    );
    let table =
        gantry_host::SignatureTable::load(&dir.path().join(".gantry/signatures.json")).unwrap();
    let sites = &table.get("Player.Hurt").unwrap().sites;
    assert!(
        sites
            .iter()
            .all(|site| site.role != gantry_host::Role::Send),
        "the table records the unbind as a send site: {sites:?}"
    );
}

// ---------------------------------------------------------------- table file via the CLI

#[test]
fn run_creates_the_table_when_missing_sorted_with_a_trailing_newline() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "NotifyMessage('Zeta.Key', 1)\nNotifyMessage('Alpha.Key', 'x')\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let path = dir.path().join(".gantry/signatures.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n"), "{text:?}");
    assert!(text.starts_with("{\n  \"version\": 1"), "{text}");
    assert!(
        text.find("Alpha.Key").unwrap() < text.find("Zeta.Key").unwrap(),
        "{text}"
    );
    // A second identical run changes no byte.
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // No temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path().join(".gantry"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["signatures.json"]);
}

#[test]
fn run_refuses_a_newer_table_names_it_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "print('ran')\nNotifyMessage('K.A', 1)");
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    let path = dir.path().join(".gantry/signatures.json");
    let text = "{\n  \"version\": 7,\n  \"keys\": {}\n}\n";
    std::fs::write(&path, text).unwrap();
    let o = run(dir.path(), &[]);
    assert!(!o.status.success());
    let stderr = err(&o);
    assert!(stderr.contains("signatures.json"), "{stderr}");
    assert!(stderr.contains("version 7"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn run_with_an_unwritable_table_place_reports_the_path_and_does_not_crash() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "print('ran')\nNotifyMessage('K.A', 1)");
    // A place nothing may be written to, even as root: the table loads as
    // missing (empty), the mod runs, the save fails.
    let table = "/proc/gantry-audit11/signatures.json";
    let o = run(dir.path(), &["--table", table]);
    assert!(!o.status.success());
    assert_eq!(out(&o), "ran\n");
    let stderr = err(&o);
    assert!(stderr.contains(table), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // `.gantry` is a file: the table's folder cannot be made (nor read).
    std::fs::write(dir.path().join(".gantry"), "not a folder").unwrap();
    let o = run(dir.path(), &[]);
    assert!(!o.status.success());
    let stderr = err(&o);
    assert!(stderr.contains("signatures.json"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".gantry")).unwrap(),
        "not a folder"
    );
}

#[test]
fn table_command_refuses_corrupt_and_newer_files_naming_them_and_json_is_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    let path = dir.path().join(".gantry/signatures.json");
    for text in [
        "{ \"version\": 1, \"keys\": ",
        "{\"version\": 2, \"keys\": {}}",
    ] {
        std::fs::write(&path, text).unwrap();
        let o = gantry()
            .args(["table", dir.path().to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{text}");
        assert!(err(&o).contains("signatures.json"), "{}", err(&o));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    write(dir.path(), "a.lua", "NotifyMessage('K.A', 1)");
    std::fs::remove_file(&path).unwrap();
    assert!(run(dir.path(), &[]).status.success());
    let o = gantry()
        .args(["table", dir.path().to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(out(&o), std::fs::read_to_string(&path).unwrap());
    let o = gantry()
        .args(["table", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out(&o).contains("K.A"), "{}", out(&o));
}

// ---------------------------------------------------------------- the arena

/// The arena's committed table is what users commit: running the README's
/// main job changes no byte of it.
#[test]
fn the_arena_run_leaves_its_committed_table_byte_identical() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/arena");
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&example, dir.path());
    let committed = std::fs::read(example.join(".gantry/signatures.json")).unwrap();
    let o = run(dir.path(), &["--ticks", "5"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(err(&o), "");
    let after = std::fs::read(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(after == committed, "{}", String::from_utf8_lossy(&after));
}

// ---------------------------------------------------------------- watch

#[test]
fn watch_loads_a_new_file_and_ctrl_c_exits_0_saving_the_table() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "print('a loaded')");
    let w = Watching::start(dir.path());
    w.wait_for("a loaded");
    write(
        dir.path(),
        "b.lua",
        "print('b loaded')\nNotifyMessage('New.Key', 1)",
    );
    w.wait_for("b loaded");
    let (status, stderr) = w.interrupt();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(table.contains("New.Key"), "{table}");
}

/// Issue 10: reloading "destroys that script's object (so its listeners
/// and what it stored go)": what it stored on its own object goes; what it
/// stored on its world is the world's (other scripts may rely on it) and
/// stays, as a store on any other source does.
#[test]
fn watch_reload_drops_what_the_reloaded_script_stored_on_its_object() {
    let hub = Hub::new();
    let rt = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    rt.load_script(
        "a.lua",
        "StoreObjectMessage(self, 'Mine.Value', 1)\nStoreObjectMessage(self:World(), 'World.Value', 2)\n",
        object,
    )
    .unwrap();
    let mine = hub.key("Mine.Value").unwrap();
    let shared = hub.key("World.Value").unwrap();
    assert!(
        hub.stored(mine, gantry_host::Source::Object(object))
            .is_some()
    );
    hub.destroy(object).unwrap();
    assert!(
        hub.stored(mine, gantry_host::Source::Object(object))
            .is_none()
    );
    assert!(
        hub.stored(shared, gantry_host::Source::World(world))
            .is_some()
    );
}

/// Issue 10: `--watch` keeps "ticking at a fixed rate, `--tick-ms`"; each
/// tick is `Game.Tick(n, dt)` with dt "a float" — the tick's length in
/// seconds is what a game loop hands its systems. (Ambiguous: the texts do
/// not say dt follows `--tick-ms`; Gantry always sends 1/60.)
#[test]
fn watch_ticks_carry_dt_of_the_tick_length() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Game.Tick', nil, function(n, dt) print(n, string.format('%.3f', dt)) end)",
    );
    let child = gantry()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--no-table",
            "--watch",
            "--tick-ms",
            "50",
            "--ticks",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_or_kill(child, Duration::from_secs(10)).expect("ends after 2 ticks");
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "1\t0.050\n2\t0.050\n");
}

/// The sandbox gives scripts `string` without `dump` (lua/src/runtime/
/// sandbox.rs) and DESIGN says "no binary chunks": the shared string
/// metatable still hands out the real `string.dump`.
#[test]
fn string_dump_is_not_reachable_through_the_string_metatable() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "print(type(string.dump), type((\"\").dump))",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "nil\tnil\n");
}

/// Issue 5: "Every send and listen records its call site (script
/// file:line) in the table" — Rhai sites as rhai, a required module's
/// sites under its own file.
#[test]
fn sites_of_rhai_scripts_and_required_modules_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    write(
        &dir.path().join("lib"),
        "util.lua",
        "local M = {}\nfunction M.go() NotifyMessage('Mod.Ping', 1) end\nreturn M\n",
    );
    write(
        dir.path(),
        "a.lua",
        "local u = require('lib.util')\nu.go()\n",
    );
    write(
        dir.path(),
        "b.rhai",
        "\nListenMessage(\"Mod.Ping\", (), |n| { });\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let table: String =
        std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    let compact: String = table.split_whitespace().collect();
    assert!(
        compact.contains(r#"{"file":"b.rhai","line":2,"language":"rhai","role":"listen"}"#),
        "{table}"
    );
    assert!(
        compact.contains(r#"{"file":"lib/util.lua","line":2,"language":"lua","role":"send"}"#),
        "{table}"
    );
}
