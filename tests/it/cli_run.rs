//! `gantry run DIR` as a modder lives in it: scripts load in file-name order
//! across languages, each on its own object in one world, then tick with
//! `n` and `dt`; errors name the file and line and the exit status says so;
//! the sandbox's limits (time, budget, memory) stop a mod at its line and
//! Ctrl-C stops a stuck one, the table saved either way; the signature
//! table is created, loaded, refused when corrupt or newer, and left alone.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gantry_host::Hub;
use gantry_host::face::ScriptRuntime;
use gantry_lua::runtime::{LuaOptions, LuaRuntime};

use crate::support::{copy_dir, gantry, stderr, stderr as err, stdout, stdout as out, write};

fn run(dir: &Path, extra: &[&str]) -> Output {
    gantry()
        .arg("run")
        .arg(dir)
        .args(extra)
        .output()
        .expect("gantry runs")
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

/// "a mismatch is reported with key, position, expected/got and
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

/// "exceeding either [memory limit or instruction budget] stops
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

/// an instruction budget per handler call "stops a
/// runaway loop with an error naming the script and line". A script that
/// wraps its runaway loop in `pcall` must not be able to swallow the stop.
#[test]
fn the_instruction_budget_cannot_be_swallowed_by_pcall() {
    let hub = Hub::new();
    let world = hub.create_world();
    let rt = LuaRuntime::new(
        hub.clone(),
        LuaOptions {
            budget: Some(200_000),
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

/// scripts are untrusted; a runaway loop is stopped. A finalizer
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
    let table = "/proc/gantry-unwritable/signatures.json";
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

/// The sandbox gives scripts `string` without `dump` (no binary chunks),
/// and the shared string metatable does not hand out the real
/// `string.dump` either.
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

/// "Every send and listen records its call site (script
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

#[test]
fn a_failing_listener_is_reported_once_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.rhai",
        "ListenMessage(\"Game.Tick\", (), |n, dt| { throw \"boom\"; });\n",
    );
    write(
        dir.path(),
        "b.lua",
        "ListenMessage('Game.Tick', nil, function(n) error('bang') end)\n",
    );
    let out = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--no-table"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("boom").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("b.lua:1: bang").count(), 1, "{stderr}");
    assert!(stderr.contains("error: a.rhai:1:"), "{stderr}");
}

/// A `gantry run` child with piped output, the first stdout line read.
struct Running {
    child: std::process::Child,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Running {
    fn start(dir: &Path, flags: &[&str]) -> Self {
        let mut child = gantry()
            .args(["run", dir.to_str().unwrap()])
            .args(flags)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Self { child, stdout }
    }

    /// Blocks until the mod printed `want`.
    fn wait_for(&mut self, want: &str) {
        let mut line = String::new();
        loop {
            line.clear();
            let read = std::io::BufRead::read_line(&mut self.stdout, &mut line).unwrap();
            assert_ne!(read, 0, "the run ended before printing {want:?}");
            if line.trim_end() == want {
                return;
            }
        }
    }

    /// Ctrl-C; the exit status and stderr, within 10 s.
    fn interrupt(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        let killed = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        assert!(killed.success());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("Ctrl-C did not stop the run within 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().unwrap(), &mut stderr).unwrap();
        (status, stderr)
    }
}

#[test]
fn ctrl_c_stops_a_lua_listener_stuck_in_a_loop_and_the_run_saves_its_table() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "NotifyMessage('Mod.Loaded', 1)\n\
         ListenMessage('Game.Tick', nil, function()\n\
           print('looping')\n\
           while true do end\n\
         end)\n",
    );
    // A time limit far beyond the test: only Ctrl-C can end this call.
    let mut run = Running::start(dir.path(), &["--time-limit", "600000"]);
    run.wait_for("looping");
    assert_interrupted_and_saved(run, dir.path(), "a.lua:4: ");
}

#[test]
fn ctrl_c_stops_a_rhai_top_level_stuck_in_a_loop_and_the_run_saves_its_table() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('Mod.Loaded', 1)");
    write(
        dir.path(),
        "b.rhai",
        "print(\"looping\");\nlet n = 0;\nloop { n += 1; }\n",
    );
    let mut run = Running::start(
        dir.path(),
        &["--time-limit", "600000", "--budget", "1000000000000"],
    );
    run.wait_for("looping");
    assert_interrupted_and_saved(run, dir.path(), "b.rhai:3");
}

/// Ctrl-C to `run`: it exits 130, names `place` (where the script looped)
/// as interrupted, and saved its table (which records `Mod.Loaded`).
fn assert_interrupted_and_saved(run: Running, dir: &Path, place: &str) {
    let (status, stderr) = run.interrupt();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains(place), "names where it looped: {stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let table = std::fs::read_to_string(dir.join(".gantry/signatures.json")).unwrap();
    assert!(
        table.contains("Mod.Loaded"),
        "the run saved its table: {table}"
    );
}

#[test]
fn a_small_time_limit_stops_a_looping_mod_at_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Game.Tick', nil, function()\n  while true do end\nend)\n",
    );
    write(dir.path(), "b.rhai", "let n = 0;\nloop { n += 1; }\n");
    let started = std::time::Instant::now();
    let o = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--time-limit", "200"])
        // Only the clock can stop these loops.
        .args(["--budget", "1000000000000"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(8), "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("time limit"))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("a.lua:2:")),
        "the Lua loop, at its line: {stderr}"
    );
    assert!(
        lines.iter().any(|l| l.contains("b.rhai:2")),
        "the Rhai loop, at its line: {stderr}"
    );
}

#[test]
fn a_small_budget_stops_a_mod_that_runs_fine_under_the_default_one() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.rhai",
        "let n = 0;\nfor i in 0..20000 { n += i; }\nprint(`sum ${n}`);\n",
    );
    let run = |flags: &[&str]| run(dir.path(), &[&["--no-table"], flags].concat());
    let default = run(&[]);
    assert!(
        default.status.success(),
        "{}",
        String::from_utf8_lossy(&default.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&default.stdout), "sum 199990000\n");
    let small = run(&["--budget", "1000"]);
    let stderr = String::from_utf8_lossy(&small.stderr);
    assert_eq!(small.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a.rhai:2"), "{stderr}");
    assert!(stderr.contains("operation limit exceeded"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&small.stdout), "");
}

#[test]
fn a_small_memory_limit_stops_a_hoarding_mod_with_a_clear_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "local t = {}\nfor i = 1, 10000000 do\n  t[i] = ('x'):rep(64) .. i\nend\nprint('kept all')\n",
    );
    let o = gantry()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--no-table",
            "--memory",
            "16",
            // The memory limit is under test, not the time limit: a busy
            // machine must not stop the loop on time first.
            "--time-limit",
            "60000",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "an error, not an abort: {stderr}");
    assert!(stderr.contains("memory"), "{stderr}");
    assert!(stderr.contains("a.lua:"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
}

#[test]
fn a_small_budget_stops_a_lua_mod_that_runs_fine_under_the_default_one() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "local n = 0\nfor i = 1, 10000000 do n = n + 1 end\nprint('sum ' .. n)\n",
    );
    let run = |flags: &[&str]| run(dir.path(), &[&["--no-table"], flags].concat());
    let default = run(&[]);
    assert!(default.status.success(), "{}", err(&default));
    assert_eq!(String::from_utf8_lossy(&default.stdout), "sum 10000000\n");
    // The same flag, in the same unit (steps), stops Lua as it stops Rhai
    // (Lua's count starts once the call has run a moment: a short call
    // is not slowed by a count hook).
    let small = run(&["--budget", "1000000"]);
    let stderr = err(&small);
    assert_eq!(small.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a.lua:2"), "at the loop's line: {stderr}");
    assert!(stderr.contains("budget"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&small.stdout), "");
}

#[test]
fn a_small_memory_limit_refuses_what_a_rhai_mod_would_hold_in_the_hub() {
    let dir = tempfile::tempdir().unwrap();
    // Each store keeps a 64 KiB string on its own named source: 1,000 of
    // them would hold over 60 MiB of the hub.
    write(
        dir.path(),
        "a.rhai",
        "let big = \"x\";\nbig.pad(65536, 'x');\n\
         for i in 0..1000 {\n    \
         StoreObjectMessage(GMP::Named(SELF, `s${i}`), \"Big.Blob\", big);\n\
         }\nprint(\"kept all\");\n",
    );
    let o = run(
        dir.path(),
        &["--no-table", "--memory", "16", "--time-limit", "60000"],
    );
    let stderr = err(&o);
    assert_eq!(o.status.code(), Some(1), "an error, not an abort: {stderr}");
    assert!(stderr.contains("hub memory limit"), "{stderr}");
    assert!(stderr.contains("a.rhai:4"), "at the store's line: {stderr}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
}

#[test]
fn an_error_repeated_every_tick_is_printed_once_and_counted_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "ListenMessage('Game.Tick', nil, function(n)\n  local t = nil\n  return t.x\nend)\n",
    );
    write(
        dir.path(),
        "b.rhai",
        "ListenMessage(\"Game.Tick\", (), |n, dt| {\n    throw \"b fails\";\n});\n",
    );
    let o = run(dir.path(), &["--no-table", "--ticks", "5"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let stderr = err(&o);
    assert_eq!(
        stderr.matches("a.lua:3: attempt to index").count(),
        2,
        "{stderr}"
    );
    assert_eq!(stderr.matches("b fails").count(), 2, "{stderr}");
    let last: Vec<&str> = stderr.lines().rev().take(2).collect();
    assert!(
        last.iter().any(|l| l.starts_with("error: a.lua:")
            && l.contains("a.lua:3: attempt to index")
            && l.ends_with(" ×5")),
        "{stderr}"
    );
    assert!(
        last.iter().any(|l| l.starts_with("error: b.rhai:")
            && l.contains("b.rhai:2:")
            && l.contains("b fails")
            && l.ends_with(" ×5")),
        "{stderr}"
    );
}

#[test]
fn run_help_states_each_limit_and_its_default() {
    let o = gantry().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for flag in ["--budget <N>", "--time-limit <MS>", "--memory <MIB>"] {
        let at = help.find(flag).unwrap_or_else(|| panic!("{flag}: {help}"));
        let text: String = help[at..].chars().take(400).collect();
        let entry = &text[..text.find("\n  -").unwrap_or(text.len())];
        assert!(entry.contains("[default: "), "{flag}: {entry}");
    }
    assert!(help.contains("[default: 2000]"), "{help}");
    // One unit for the budget in both languages, and each default.
    assert!(
        help.contains("a step is a Lua VM instruction or a Rhai operation"),
        "{help}"
    );
    assert!(
        help.contains("[default: Lua 100000000; Rhai 20000000]"),
        "{help}"
    );
    assert!(
        help.contains("[default: Lua state 256; hub 256 for Lua, 256 for Rhai]"),
        "{help}"
    );
}

#[test]
fn a_small_memory_limit_stops_a_mod_storing_in_the_hub_at_its_line_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "local mb = string.rep('x', 1 << 20)\nfor i = 1, 100 do\n  StoreObjectMessage(self, 'Hoard.L' .. i, mb .. i)\nend\nprint('lua kept all')\n",
    );
    write(
        dir.path(),
        "b.rhai",
        "let half = \"x\";\nhalf.pad(500000, 'x');\nfor i in 0..100 {\n  StoreObjectMessage(SELF, `Hoard.R${i}`, `${half}${i}`);\n}\nprint(\"rhai kept all\");\n",
    );
    let run = |flags: &[&str]| run(dir.path(), &[&["--no-table"], flags].concat());
    // Under the defaults both mods keep what they store...
    let roomy = run(&[]);
    assert!(
        roomy.status.success(),
        "{}",
        String::from_utf8_lossy(&roomy.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&roomy.stdout),
        "lua kept all\nrhai kept all\n"
    );
    // ...under 16 MiB each is stopped where it stored, and the run goes on.
    let o = run(&["--memory", "16"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "an error, not an abort: {stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("a.lua:3:") && l.contains("Hoard.L")),
        "{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("b.rhai:4") && l.contains("Hoard.R")),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
}

fn gantry_output(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gantry"))
        .args(args)
        .env("GANTRY_LOG", "off")
        .output()
        .expect("gantry runs")
}

fn write_script(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn run_loads_scripts_in_file_name_order_then_ticks_with_n_and_dt() {
    let dir = tempfile::tempdir().unwrap();
    write_script(
        dir.path(),
        "b.lua",
        "print('b loaded')\nListenMessage('Game.Tick', nil, function(n, dt) print('tick', n, math.type(n), math.type(dt), dt > 0) end)",
    );
    write_script(dir.path(), "a.lua", "print('a loaded', self ~= nil)");
    write_script(dir.path(), "notes.txt", "not a script");
    let out = gantry_output(&["run", dir.path().to_str().unwrap(), "--ticks", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "a loaded\ttrue\nb loaded\ntick\t1\tinteger\tfloat\ttrue\ntick\t2\tinteger\tfloat\ttrue\n"
    );
}

#[test]
fn run_scripts_share_one_world_through_their_objects() {
    let dir = tempfile::tempdir().unwrap();
    write_script(
        dir.path(),
        "1.lua",
        "ListenWorldMessage(self:World(), 'Hello', nil, function(who) print('hello from', who == self) end)",
    );
    write_script(
        dir.path(),
        "2.lua",
        "NotifyObjectMessage(self, 'Hello', self)",
    );
    let out = gantry_output(&["run", dir.path().to_str().unwrap(), "--no-table"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello from\tfalse\n");
}

#[test]
fn run_reports_script_errors_with_file_and_line_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    write_script(
        dir.path(),
        "bad.lua",
        "local x = 1\nerror('top level broke')\n",
    );
    write_script(
        dir.path(),
        "handler.lua",
        "ListenMessage('Game.Tick', nil, function()\n  local t\n  return t.x\nend)\nListenMessage('Game.Tick', nil, function(n) print('still ticking', n) end)\n",
    );
    let out = gantry_output(&["run", dir.path().to_str().unwrap(), "--no-table"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("bad.lua:2:"), "{err}");
    assert!(err.contains("handler.lua:3:"), "{err}");
    assert_eq!(stdout(&out), "still ticking\t1\n");
}

#[test]
fn run_saves_the_signature_table_and_loads_it_next_time() {
    let dir = tempfile::tempdir().unwrap();
    write_script(dir.path(), "a.lua", "NotifyMessage('Player.Hurt', 5, 0.5)");
    let out = gantry_output(&["run", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = dir.path().join(".gantry/signatures.json");
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(text.contains("Player.Hurt"), "{text}");
    assert!(text.contains("a.lua"), "{text}");
    // Next run: the recorded types hold; a float where an int was recorded
    // is a mismatch reported with its line.
    write_script(
        dir.path(),
        "a.lua",
        "\nNotifyMessage('Player.Hurt', 5.5, 0.5)",
    );
    let out = gantry_output(&["run", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("a.lua:2"), "{}", stderr(&out));
}

#[test]
fn run_with_no_table_writes_nothing_and_table_flag_picks_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_script(dir.path(), "a.lua", "NotifyMessage('K.A', 1)");
    let out = gantry_output(&["run", dir.path().to_str().unwrap(), "--no-table"]);
    assert!(out.status.success());
    assert!(!dir.path().join(".gantry").exists());
    let custom = dir.path().join("custom.json");
    let out = gantry_output(&[
        "run",
        dir.path().to_str().unwrap(),
        "--table",
        custom.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&custom).unwrap().contains("K.A"));
}

#[test]
fn run_refuses_a_corrupt_table_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    write_script(dir.path(), "a.lua", "NotifyMessage('K.A', 1)");
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    let table = dir.path().join(".gantry/signatures.json");
    std::fs::write(&table, "{ not json").unwrap();
    let out = gantry_output(&["run", dir.path().to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("signatures.json"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&table).unwrap(), "{ not json");
}

#[test]
fn run_the_arena_example_mod() {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/arena");
    copy_dir(&example, dir.path());
    let out = gantry_output(&["run", dir.path().to_str().unwrap(), "--ticks", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let readme = std::fs::read_to_string(example.join("README.md")).unwrap();
    let pinned = readme
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the arena README shows its transcript");
    assert_eq!(
        stdout(&out),
        pinned,
        "the transcript the arena README shows"
    );
    assert_eq!(
        stdout(&out),
        "[ui] slot 1: sword x1\n\
         a goblin lurks in the arena\n\
         ann steps into the arena\n\
         -- tick 1 --\n\
         [ui] slot 2: potion x1\n\
         ann buys a potion for 4 gold (6 left)\n\
         -- tick 2 --\n\
         the goblin swings (5)\n\
         [armour] blocks 2 of 5\n\
         ann takes 3 (17 hp)\n\
         first blood!\n\
         -- tick 3 --\n\
         the goblin swings (6)\n\
         [armour] blocks 2 of 6\n\
         ann takes 4 (13 hp)\n\
         -- tick 4 --\n\
         the goblin swings (7)\n\
         [shrine] the shrine's light turns the blow aside\n\
         the goblin curses\n\
         -- tick 5 --\n\
         the goblin swings (8)\n\
         [armour] blocks 2 of 8\n\
         ann takes 6 (7 hp)\n\
         [ui] slot 2: (empty)\n\
         ann drinks a potion (15 hp)\n"
    );
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    for key in [
        "Inv.Items",
        "Inv.Add",
        "Inv.Use",
        "Shop.Buy",
        "Combat.Damage",
        "Boot.Done",
        "Player.Hurt",
        "Game.Tick",
    ] {
        assert!(table.contains(key), "{key} missing from {table}");
    }
}

/// The call sites a run leaves in `.gantry/signatures.json`, one
/// `file:line` per site, sorted.
fn table_sites(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(".gantry/signatures.json")).unwrap();
    let table: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut sites = Vec::new();
    for entry in table["keys"].as_object().unwrap().values() {
        for site in entry["sites"].as_array().into_iter().flatten() {
            sites.push(format!(
                "{}:{}",
                site["file"].as_str().unwrap(),
                site["line"]
            ));
        }
    }
    sites.sort();
    sites
}

#[test]
fn editing_one_line_and_running_again_changes_only_that_lines_sites() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "goblin.lua",
        "NotifyMessage(\"Goblin.Seen\", 1)\nNotifyMessage(\"Goblin.Hit\", 2)\n",
    );
    write(
        dir.path(),
        "watch.rhai",
        "ListenMessage(\"Goblin.Seen\", (), |n| {});\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let before = table_sites(dir.path());
    assert!(before.contains(&"goblin.lua:2".to_owned()), "{before:?}");

    // A line inserted above the second send moves its site: it is not added.
    write(
        dir.path(),
        "goblin.lua",
        "NotifyMessage(\"Goblin.Seen\", 1)\n-- a comment\nNotifyMessage(\"Goblin.Hit\", 2)\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let after = table_sites(dir.path());
    let gone: Vec<_> = before.iter().filter(|s| !after.contains(s)).collect();
    let new: Vec<_> = after.iter().filter(|s| !before.contains(s)).collect();
    assert_eq!(gone, ["goblin.lua:2"]);
    assert_eq!(new, ["goblin.lua:3"]);
}

#[test]
fn a_deleted_script_leaves_no_sites_in_the_table_after_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage(\"Door.Opened\", 1)\n");
    write(
        dir.path(),
        "b.lua",
        "ListenMessage(\"Door.Opened\", nil, function(n) end)\n",
    );
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(table_sites(dir.path()), ["a.lua:1", "b.lua:1"]);

    std::fs::remove_file(dir.path().join("b.lua")).unwrap();
    let o = run(dir.path(), &["--ticks", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(table_sites(dir.path()), ["a.lua:1"]);
}
