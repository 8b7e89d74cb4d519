//! `gantry run --trace` and `--trace-key`: one line per dispatch with its
//! listeners' sites (stores, replays, requests, hooks, aborted sends with
//! their reason and tick), focused on a key family, and nothing when off.

use std::path::Path;
use std::process::Output;

use crate::support::{gantry, stderr as err, write};

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

#[test]
fn trace_prints_one_line_per_dispatch_with_listener_sites_the_cause_first() {
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
    // The tick's line first, then the send its listener made, indented.
    assert!(
        lines[0].starts_with(
            "trace: [tick 1] send Game.Tick from global (1, 0.0167) → a.lua:3 (order 0, "
        ),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(
            "trace:   [tick 1] send Player.Hurt from global (1.5) → a.lua:2 (order -5, "
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
