//! `gantry run` flags of the mod host experience (issue 10): `--trace`,
//! `--trace-key`, and `--watch` reloading a script while the game runs.

use std::path::Path;
use std::time::Duration;

mod support;

use support::{Watching, gantry, write};

#[test]
fn trace_prints_one_line_per_dispatch_with_listener_sites() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"
ListenMessage("Player.Hurt", nil, function(dmg) print("hurt", dmg) end, { order = -5 })
ListenMessage("Game.Tick", nil, function(n)
  NotifyMessage("Player.Hurt", n * 1.5)
end)
"#,
    );
    let out = gantry()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--ticks",
            "2",
            "--trace",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("trace:")).collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(
        lines[0].starts_with(
            "trace:   [tick 1] send Player.Hurt from global (1.5) → a.lua:2 (order -5, "
        ),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(
            "trace: [tick 1] send Game.Tick from global (1, 0.0167) → a.lua:3 (order 0, "
        ),
        "{stderr}"
    );
    // Script output stays on stdout, untouched.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hurt\t1.5\nhurt\t3.0\n"
    );
}

#[test]
fn trace_key_focuses_on_one_key_family() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"
ListenMessage("Game.Tick", nil, function(n)
  NotifyMessage("Player.Hurt", 1.0)
  NotifyMessage("Player.Healed", 2.0)
  NotifyMessage("Shop.Open", true)
end)
"#,
    );
    let out = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--trace-key", "Player"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let keys: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("trace:"))
        .map(|l| l.split_whitespace().nth(4).unwrap())
        .collect();
    assert_eq!(keys, ["Player.Hurt", "Player.Healed"], "{stderr}");
}

#[test]
fn trace_shows_an_aborted_dispatch_and_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"
NotifyMessage("Player.Hurt", 1.5)
NotifyMessage("Player.Hurt", "lots")
"#,
    );
    let out = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--no-table", "--trace"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a mismatch is an error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("trace: [load] ABORTED Player.Hurt: argument 1: expected float, got string"),
        "{stderr}"
    );
}

#[test]
fn watch_reloads_an_edited_script_and_stored_state_replays_to_it() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "1_state.lua",
        r#"StoreObjectMessage(self:World(), "Arena.Size", 20)"#,
    );
    let v1 = r#"
ListenWorldMessage(self:World(), "Arena.Size", nil, function(n) print("v1 size " .. n) end)
"#;
    write(dir.path(), "2_ui.lua", v1);
    let run = Watching::start(dir.path());
    run.wait_for("v1 size 20");
    // An editor saving in steps: first a half-written file that does not compile...
    write(
        dir.path(),
        "2_ui.lua",
        "ListenWorldMessage(self:World(), \"Arena.Size\", nil, function(n)",
    );
    std::thread::sleep(Duration::from_millis(150));
    // ...then the whole new version.
    write(
        dir.path(),
        "2_ui.lua",
        r#"
ListenWorldMessage(self:World(), "Arena.Size", nil, function(n) print("v2 size " .. n) end)
"#,
    );
    run.wait_for("[reloading 2_ui.lua]");
    run.wait_for("v2 size 20");
    let (status, _stderr) = run.interrupt();
    assert!(
        status.code().is_some(),
        "exited on its own terms: {status:?}"
    );
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(
        table.contains("Arena.Size"),
        "Ctrl-C saved the table: {table}"
    );
}

#[test]
fn watch_keeps_a_failed_reloads_old_version_unloads_deleted_and_follows_renamed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"
local said = false
ListenMessage("Game.Tick", nil, function(n)
  if not said then print("a alive"); said = true end
end)
"#,
    );
    write(
        dir.path(),
        "b.lua",
        r#"
ListenMessage("Game.Tick", nil, function(n)
  if n % 10 == 0 then print("b tick") end
end)
"#,
    );
    let run = Watching::start(dir.path());
    run.wait_for("a alive");
    run.wait_for("b tick");
    // A top level that fails: reported, and the old a.lua goes on running
    // (reloaded on a fresh object, so it says so again).
    write(dir.path(), "a.lua", "error('broken on purpose')");
    run.wait_for("a alive");
    std::fs::remove_file(dir.path().join("b.lua")).unwrap();
    run.wait_for("[unloaded b.lua]");
    // A rename is the old name gone and a new script: unloaded, then loaded
    // under its new name (a fresh object, so it says so again). The file on
    // disk is still the broken one: mend it first.
    write(
        dir.path(),
        "a.lua",
        "local said = false\nListenMessage('Game.Tick', nil, function(n)\n  if not said then print('a alive'); said = true end\nend)\n",
    );
    run.wait_for("a alive");
    std::fs::rename(dir.path().join("a.lua"), dir.path().join("c.lua")).unwrap();
    run.wait_for("[unloaded a.lua]");
    run.wait_for("a alive");
    let (_, stderr) = run.interrupt();
    assert!(stderr.contains("a.lua:1: broken on purpose"), "{stderr}");
    assert!(
        stderr.contains("the previous version keeps running"),
        "{stderr}"
    );
}

#[test]
fn explain_names_senders_listeners_a_near_miss_and_a_listener_wanting_too_much() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"
ListenMessage("Player.Hrut", nil, function(dmg) end)
ListenMessage("Player.Hurt", nil, function(dmg, causer, extra) end)
NotifyMessage("Player.Hurt", 1.5)
"#,
    );
    let run = gantry()
        .args(["run", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out = gantry()
        .args(["explain", dir.path().to_str().unwrap(), "Player.Hrut"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sent from: nowhere"), "{text}");
    assert!(text.contains("a.lua:2 (ListenMessage)"), "{text}");
    assert!(text.contains("did you mean Player.Hurt (sent)?"), "{text}");
    let out = gantry()
        .args(["explain", dir.path().to_str().unwrap(), "Player.Hurt"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("a.lua:4 (NotifyMessage)"), "{text}");
    assert!(
        text.contains("a.lua:3: the listener takes 3 parameters but Player.Hurt carries 1"),
        "{text}"
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

/// `--why KEY`: after the run, each listener of KEY with whether it fired
/// and, if not, the first reason that applies.
fn why(dir: &Path, keys: &[&str]) -> String {
    let mut cmd = gantry();
    cmd.args(["run", dir.to_str().unwrap(), "--ticks", "2", "--no-table"]);
    for key in keys {
        cmd.args(["--why", key]);
    }
    let out = cmd.output().unwrap();
    String::from_utf8(out.stderr)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("why: ") || l.starts_with("  "))
        .filter(|l| !l.starts_with("  ") || !l.trim_start().starts_with('['))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn why_tells_wrong_scope_and_times_used_up() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"ListenMessage("Player.Hurt", nil, function(dmg) end, { times = 1 })
local other = GMP.Spawn()
ListenObjectMessage(other, "Player.Hurt", nil, function(dmg) end)
ListenWorldMessage(self:World(), "Player.Hurt", nil, function(dmg) end)
ListenMessage("Game.Tick", nil, function(n) NotifyMessage("Player.Hurt", 1.5) end)
"#,
    );
    let text = why(dir.path(), &["Player.Hurt"]);
    assert!(
        text.contains("why: Player.Hurt: dispatched 2 times during the run (from global ×2)"),
        "{text}"
    );
    assert!(
        text.contains(
            "a.lua:1 (listener on global): fired 1 time, then left: its `times` were used up"
        ),
        "{text}"
    );
    assert!(
        text.contains("a.lua:3 (listener on object#2): never fired: Player.Hurt was sent only from global ×2, and a listener on object#2 hears only sends at that object"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:4 (listener on world#1): never fired: Player.Hurt was sent only from global ×2, and a listener on world#1 hears only sends at that world or its objects"),
        "{text}"
    );
}

#[test]
fn why_tells_a_near_miss_key_and_an_aborted_send() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"ListenMessage("Player.Hrut", nil, function(dmg) end)
ListenMessage("Shop.Buy", nil, function(n) end)
ListenMessage("Game.Tick", nil, function(n)
  NotifyMessage("Player.Hurt", 1.5)
end)
"#,
    );
    write(
        dir.path(),
        "b.lua",
        r#"ListenMessage("Game.Tick", nil, function(n)
  if n == 1 then NotifyMessage("Shop.Buy", 3) else NotifyMessage("Shop.Buy", "lots") end
end)
ListenMessage("Shop.Sell", nil, function(n) end)
ListenMessage("Shop.Sell", nil, function(n) end)
"#,
    );
    let text = why(dir.path(), &["Player.Hrut", "Shop.Buy"]);
    assert!(
        text.contains("a.lua:1 (listener on global): never fired: nothing sent Player.Hrut, but Player.Hurt was sent 2 times — a typo?"),
        "{text}"
    );
    assert!(
        text.contains("why: Shop.Buy: dispatched 1 time during the run (from global ×1); aborted: argument 1: expected int, got string (×1)"),
        "{text}"
    );
}

#[test]
fn why_tells_a_hook_cancelled_by_a_higher_priority_one_and_an_owner_gone() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"ListenHook("Combat.Damage", nil, function(hit, ctx) ctx:Cancel() end, { priority = 5 })
ListenHook("Combat.Damage", nil, function(hit, ctx) end, { priority = 1 })
local owner = GMP.Spawn()
ListenMessage("Game.Tick", owner, function(n) end)
GMP.Destroy(owner)
ListenMessage("Game.Tick", nil, function(n)
  RunHook("Combat.Damage", { __struct = "Hit", amount = 1 })
end)
"#,
    );
    let text = why(dir.path(), &["Combat.Damage", "Game.Tick"]);
    assert!(
        text.contains("a.lua:2 (hook listener, priority 1 on global): never fired: a higher-priority hook listener (a.lua:1) cancelled the run before its turn 2 times"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:4 (listener on global): never fired: its object was destroyed before anything reached it"),
        "{text}"
    );
    assert!(
        text.contains("a.lua:6 (listener on global): fired 2 times"),
        "{text}"
    );
}

#[test]
fn why_tells_a_slot_whose_row_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"local world = self:World()
do
  local items <close> = GMP.StoredArray(world, "Inv.Items")
  items:Add({ __struct = "Item", name = "sword", count = 1 })
  items:Add({ __struct = "Item", name = "bow", count = 1 })
end
ListenRowMessage(world, "Inv.Items", nil, 3, function() end)
ListenMessage("Game.Tick", nil, function(n)
  local items <close> = GMP.StoredArray(world, "Inv.Items")
  items:GetMutable(1).count = n + 1
end)
"#,
    );
    let text = why(dir.path(), &["Inv.Items"]);
    assert!(
        text.contains("a.lua:7 (slot listener on world#1): never fired: Inv.Items changed 2 times since it joined, but never at row 3"),
        "{text}"
    );
}

#[test]
fn explain_with_ticks_runs_the_mod_and_says_why_each_listener_fired_or_not() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        r#"local other = GMP.Spawn()
ListenObjectMessage(other, "Player.Hurt", nil, function(dmg) end)
ListenMessage("Player.Hurt", nil, function(dmg) print("hurt", dmg) end)
ListenMessage("Game.Tick", nil, function(n) NotifyMessage("Player.Hurt", 1.5) end)
"#,
    );
    let out = gantry()
        .args([
            "explain",
            dir.path().to_str().unwrap(),
            "Player.Hurt",
            "--ticks",
            "2",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("hurt\t1.5"), "the run's output: {text}");
    assert!(
        text.contains("a.lua:3 (listener on global): fired 2 times"),
        "{text}"
    );
    assert!(
        text.contains(
            "a.lua:2 (listener on object#2): never fired: Player.Hurt was sent only from global ×2"
        ),
        "{text}"
    );
    assert!(
        text.contains("listened to at:"),
        "the static part follows: {text}"
    );
    // The tick's send site is the host's, stable across gantry versions.
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(table.contains("(gantry run)"), "{table}");
    assert!(!table.contains("src/run.rs"), "{table}");
}

#[test]
fn a_hand_edit_of_the_table_made_during_a_watch_run_survives_its_exit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('Mod.Loaded', 1)");
    let first = gantry()
        .args(["run", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(first.status.success());
    let table = dir.path().join(".gantry/signatures.json");
    write(
        dir.path(),
        "b.lua",
        "ListenMessage('Game.Tick', nil, function(n) if n == 2 then print('b ticking') end end)\n\
         NotifyMessage('Mod.Ready', true)",
    );
    let run = Watching::start(dir.path());
    run.wait_for("b ticking");
    // The user documents a key by hand while the game runs.
    let text = std::fs::read_to_string(&table).unwrap();
    let edited = text.replacen(
        "\"keys\": {",
        "\"keys\": {\n    \"Hand.Made\": { \"kind\": \"event\", \"origin\": \"declared\", \"doc\": \"written by hand\" },",
        1,
    );
    assert_ne!(text, edited);
    std::fs::write(&table, edited).unwrap();
    let (_, stderr) = run.interrupt();
    let saved = std::fs::read_to_string(&table).unwrap();
    assert!(saved.contains("written by hand"), "{stderr}\n{saved}");
    assert!(saved.contains("Mod.Ready"), "the run's key too:\n{saved}");
    assert!(saved.contains("Mod.Loaded"), "{saved}");
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
    let run = |flags: &[&str]| {
        gantry()
            .args(["run", dir.path().to_str().unwrap(), "--no-table"])
            .args(flags)
            .output()
            .unwrap()
    };
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
    let run = |flags: &[&str]| {
        gantry()
            .args(["run", dir.path().to_str().unwrap(), "--no-table"])
            .args(flags)
            .output()
            .unwrap()
    };
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
