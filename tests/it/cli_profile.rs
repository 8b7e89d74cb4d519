//! `gantry run --profile` and `--profile-out FILE.svg`: the table names
//! the listener that takes the ticks' time, the flame graph is an SVG that
//! names it too, and a file that is no SVG is never overwritten.

use std::path::Path;
use std::process::Output;

use crate::support::{gantry, stderr as err, stdout as out, write};

/// The listener that burns about 20 ms of every tick, at laggy/main.lua:1.
const LAGGY: &str = r#"ListenMessage("Game.Tick", nil, function(n)
  local start = os.clock()
  while os.clock() - start < 0.02 do end
end)
ListenMessage("Game.Tick", nil, function(n)
  NotifyMessage("Score.Changed", n)
end)
"#;

/// A mod whose listener is fast, and hears what laggy sends.
const CALM: &str = r#"print("calm loaded")
ListenMessage("Score.Changed", nil, function(n) end)
"#;

/// A game of two mods: `laggy` (one slow listener beside a fast one) and
/// `calm`.
fn game() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, script) in [("laggy", LAGGY), ("calm", CALM)] {
        let folder = dir.path().join("mods").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        write(
            &folder,
            "mod.toml",
            &format!("[mod]\nname = \"{name}\"\nversion = \"0.1.0\"\n"),
        );
        write(&folder, "main.lua", script);
    }
    dir
}

fn run(dir: &Path, extra: &[&str]) -> Output {
    gantry()
        .arg("run")
        .arg(dir)
        .args(["--no-table", "--ticks", "3"])
        .args(extra)
        .output()
        .expect("gantry runs")
}

/// The profile's table rows: the lines after its header up to `by mod:`.
fn table_rows(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .skip_while(|l| !l.starts_with("mod "))
        .skip(1)
        .take_while(|l| !l.starts_with("by mod:"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_profile_names_the_slow_listener_first_with_its_calls_and_share() {
    let dir = game();
    let o = run(dir.path(), &["--profile"]);
    let stderr = err(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("profile: 3 tick(s), "),
        "a summary line: {stderr}"
    );
    let rows = table_rows(&stderr);
    assert_eq!(rows.len(), 3, "one row per listener: {stderr}");
    let first: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(
        first[..4],
        ["laggy", "Game.Tick", "mods/laggy/main.lua:1", "3"],
        "the slow listener first, with its mod, key and calls: {stderr}"
    );
    let share: f64 = first[7].trim_end_matches('%').parse().unwrap();
    assert!(share > 50.0, "it takes most of the ticks: {stderr}");
    let mean_ms: f64 = first[5].parse().unwrap();
    assert!(mean_ms >= 19.0, "about 20 ms a call: {stderr}");
    assert!(
        rows.iter().any(|r| r.starts_with("calm ")
            && r.contains("Score.Changed")
            && r.contains("mods/calm/main.lua:2")),
        "the nested send's listener is a row of its own mod: {stderr}"
    );
    let by_mod = stderr.lines().find(|l| l.starts_with("by mod:")).unwrap();
    assert!(by_mod.starts_with("by mod: laggy "), "{by_mod}");
    assert!(
        stderr.contains("3 tick(s) over 5.0 ms:"),
        "every tick is a spike: {stderr}"
    );
    let spike = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("tick 2: "))
        .unwrap_or_else(|| panic!("tick 2 is listed: {stderr}"));
    assert!(
        spike.contains("— mods/laggy/main.lua:1 "),
        "a spike names what took its time first: {spike}"
    );
}

#[test]
fn a_spike_threshold_over_every_tick_lists_no_spike() {
    let dir = game();
    let o = run(dir.path(), &["--profile", "--spike-ms", "5000"]);
    let stderr = err(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("no tick over 5000.0 ms"), "{stderr}");
}

#[test]
fn a_run_without_profile_prints_no_profile() {
    let dir = game();
    let o = run(dir.path(), &[]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(!err(&o).contains("profile:"), "{}", err(&o));
}

#[test]
fn profile_out_writes_an_svg_flame_graph_naming_the_slow_listener() {
    let dir = game();
    let svg = dir.path().join("profile.svg");
    let o = run(dir.path(), &["--profile-out", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, options)
        .unwrap_or_else(|e| panic!("the flame graph is XML: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let titles: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .collect();
    let has = |frame: &str| titles.iter().any(|t| t.starts_with(frame));
    for frame in [
        "laggy (",
        "Game.Tick (",
        "mods/laggy/main.lua:1 (",
        "mods/laggy/main.lua:5 (",
        "Score.Changed (",
        "mods/calm/main.lua:2 (",
    ] {
        assert!(has(frame), "a frame {frame:?}: {titles:?}");
    }
    // A second run replaces its own flame graph.
    let o = run(dir.path(), &["--profile-out", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
}

#[test]
fn profile_out_never_overwrites_a_file_that_is_no_svg() {
    let dir = game();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    let o = run(
        dir.path(),
        &["--profile", "--profile-out", notes.to_str().unwrap()],
    );
    let stderr = err(&o);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains("--profile-out") && stderr.contains("exists and is not an SVG"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    assert!(
        !out(&o).contains("calm loaded"),
        "refused before any script ran: {}",
        out(&o)
    );
}

#[cfg(unix)]
#[test]
fn profile_out_never_opens_a_fifo() {
    let dir = game();
    let fifo = dir.path().join("graph.svg");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let o = run(dir.path(), &["--profile-out", fifo.to_str().unwrap()]);
    let stderr = err(&o);
    assert!(!o.status.success(), "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
}

#[test]
fn profiling_beside_trace_and_record_keeps_all_three_working() {
    let dir = game();
    let recording = dir.path().join("play.gantry-rec");
    let o = run(
        dir.path(),
        &[
            "--profile",
            "--trace",
            "--record",
            recording.to_str().unwrap(),
        ],
    );
    let stderr = err(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("trace: [tick 3] send Game.Tick"),
        "the trace: {stderr}"
    );
    assert!(
        table_rows(&stderr)[0].contains("mods/laggy/main.lua:1"),
        "{stderr}"
    );
    let recorded = std::fs::read_to_string(&recording).unwrap();
    assert!(
        recorded.contains(r#""in":"Game.Tick""#) && recorded.lines().count() > 3,
        "the recording: {recorded}"
    );
}

#[test]
fn a_slow_listener_reached_through_a_send_is_charged_and_not_its_sender() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "main.lua",
        r#"ListenMessage("Game.Tick", nil, function(n)
  NotifyMessage("Path.Find", n)
end)
ListenMessage("Path.Find", nil, function(n)
  local start = os.clock()
  while os.clock() - start < 0.02 do end
end)
"#,
    );
    let o = run(dir.path(), &["--profile"]);
    let stderr = err(&o);
    assert!(o.status.success(), "{stderr}");
    let rows = table_rows(&stderr);
    let columns =
        |row: &str| -> Vec<String> { row.split_whitespace().map(str::to_owned).collect() };
    let first = columns(&rows[0]);
    assert_eq!(first[1..3], ["Path.Find", "main.lua:4"], "{stderr}");
    let sender = rows
        .iter()
        .map(|r| columns(r))
        .find(|c| c[2] == "main.lua:1")
        .unwrap_or_else(|| panic!("the sender has a row: {stderr}"));
    let sender_ms: f64 = sender[4].parse().unwrap();
    let slow_ms: f64 = first[4].parse().unwrap();
    assert!(slow_ms >= 57.0, "3 calls of 20 ms: {stderr}");
    assert!(
        sender_ms < slow_ms / 4.0,
        "the sender's own time leaves out the time it caused: {stderr}"
    );
}

#[test]
fn a_run_in_which_no_listener_ran_still_writes_a_valid_svg() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "main.lua", "print(\"no listener\")\n");
    let svg = dir.path().join("empty.svg");
    let o = run(dir.path(), &["--profile-out", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("XML: {e}\n{text}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    assert!(text.contains("no listener ran in a tick"), "{text}");
}

#[test]
fn the_profile_counts_each_rhai_listeners_own_operations() {
    // `caller` runs 10 steps a tick and sends to `worker`, whose 1,000
    // steps are its own, not its caller's; `plain` (Lua) has no Rhai
    // count, and its instructions in a column of their own.
    let dir = tempfile::tempdir().unwrap();
    let mods = [
        (
            "caller",
            "main.rhai",
            "ListenMessage(\"Game.Tick\", (), |n, dt| {\n    let x = 0;\n    for i in 0..10 { x += i; }\n    NotifyMessage(\"Work.Asked\", x);\n});\n",
        ),
        (
            "worker",
            "main.rhai",
            "ListenMessage(\"Work.Asked\", (), |x| {\n    let y = 0;\n    for i in 0..1000 { y += i; }\n});\n",
        ),
        (
            "plain",
            "main.lua",
            "ListenMessage(\"Game.Tick\", nil, function(n) end)\n",
        ),
    ];
    for (name, file, script) in mods {
        let folder = dir.path().join("mods").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        write(&folder, "mod.toml", &format!("[mod]\nname = \"{name}\"\n"));
        write(&folder, file, script);
    }
    let o = run(dir.path(), &["--profile", "--lua-instructions"]);
    let stderr = err(&o);
    assert!(o.status.success(), "{stderr}");
    let header = stderr.lines().find(|l| l.starts_with("mod ")).unwrap();
    assert!(
        header
            .trim_end()
            .ends_with("share      Rhai ops     Lua instr"),
        "{header}"
    );
    let ops = |listener: &str| work_of(&stderr, listener, 2);
    let worker: u64 = ops("mods/worker/main.rhai:1").parse().unwrap();
    let caller: u64 = ops("mods/caller/main.rhai:1").parse().unwrap();
    assert!(worker >= 3 * 1000, "three calls of 1,000 steps: {stderr}");
    assert!(caller >= 3 * 10, "three ticks of 10 steps: {stderr}");
    assert!(
        caller * 20 < worker,
        "the caller's count is without its sends' listeners: {stderr}"
    );
    assert_eq!(ops("mods/plain/main.lua:1"), "-", "{stderr}");
    assert_eq!(
        work_of(&stderr, "mods/worker/main.rhai:1", 1),
        "-",
        "a Rhai listener has no Lua instructions: {stderr}"
    );
}

/// The `from_end`-th last column (1: the last) of `listener`'s row.
fn work_of(stderr: &str, listener: &str, from_end: usize) -> String {
    let row = table_rows(stderr)
        .into_iter()
        .find(|r| r.contains(listener))
        .unwrap_or_else(|| panic!("a row for {listener}: {stderr}"));
    let columns: Vec<&str> = row.split_whitespace().collect();
    columns[columns.len() - from_end].to_owned()
}

#[test]
fn the_profile_counts_each_lua_listeners_own_instructions() {
    // `caller` runs a short loop a tick and sends to `worker`, whose
    // loop of 100,000 additions (two instructions each) is its own, not
    // its caller's; `idle` does nothing.
    let dir = tempfile::tempdir().unwrap();
    let mods = [
        (
            "caller",
            "ListenMessage(\"Game.Tick\", nil, function(n)\n  local x = 0\n  for i = 1, 10 do x = x + i end\n  NotifyMessage(\"Work.Asked\", x)\nend)\n",
        ),
        (
            "worker",
            "ListenMessage(\"Work.Asked\", nil, function(x)\n  local y = 0\n  for i = 1, 100000 do y = y + i end\nend)\n",
        ),
        (
            "idle",
            "ListenMessage(\"Game.Tick\", nil, function(n) end)\n",
        ),
    ];
    for (name, script) in mods {
        let folder = dir.path().join("mods").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        write(&folder, "mod.toml", &format!("[mod]\nname = \"{name}\"\n"));
        write(&folder, "main.lua", script);
    }
    let o = run(dir.path(), &["--profile", "--lua-instructions"]);
    let stderr = err(&o);
    assert!(o.status.success(), "{stderr}");
    let header = stderr.lines().find(|l| l.starts_with("mod ")).unwrap();
    assert!(
        header.trim_end().ends_with("share     Lua instr"),
        "one count column, Lua's: {header}"
    );
    let instr = |listener: &str| -> u64 {
        let n = work_of(&stderr, listener, 1);
        n.parse()
            .unwrap_or_else(|_| panic!("{listener} has a count, not {n}: {stderr}"))
    };
    let worker = instr("mods/worker/main.lua:1");
    let caller = instr("mods/caller/main.lua:1");
    let idle = instr("mods/idle/main.lua:1");
    assert!(
        (3 * 200_000..3 * 220_000).contains(&worker),
        "three calls of about 200,000 instructions: {stderr}"
    );
    assert!(
        caller < 3 * 2_000,
        "the caller's count is without its send's listener: {stderr}"
    );
    assert!(idle < worker / 100, "{stderr}");
}

#[test]
fn lua_instructions_are_counted_only_when_asked_for() {
    let dir = game();
    let o = run(dir.path(), &["--profile"]);
    let stderr = err(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        !stderr.contains("Lua instr"),
        "a plain --profile leaves Lua uncounted: {stderr}"
    );
    let o = run(dir.path(), &["--lua-instructions"]);
    assert!(!o.status.success(), "it needs --profile: {}", err(&o));
}
