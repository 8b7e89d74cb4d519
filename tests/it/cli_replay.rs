//! `gantry run --record FILE` and `gantry replay FILE DIR`: a recorded
//! session replays equal; a changed script fails the replay at the tick
//! and key where the mods first send something else; a recording cut by a
//! crash replays its prefix and says so; a file that is no recording is
//! refused with its name, never read past its bound or blocked on.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::{copy_dir, gantry, stderr, stdout};

fn arena() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/arena"),
        tmp.path(),
    );
    tmp
}

fn record(dir: &Path, file: &Path, ticks: u32) -> Output {
    let out = gantry()
        .arg("run")
        .arg(dir)
        .args(["--no-table", "--ticks", &ticks.to_string(), "--record"])
        .arg(file)
        .output()
        .expect("gantry runs");
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

fn replay(file: &Path, dir: &Path) -> Output {
    gantry()
        .arg("replay")
        .arg(file)
        .arg(dir)
        .output()
        .expect("gantry runs")
}

#[test]
fn a_recording_of_the_arena_example_replays_equal() {
    let game = arena();
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("play.rec");
    record(game.path(), &file, 5);
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with(r#"{"gantry_recording":1,"mods":"#),
        "{text}"
    );
    assert_eq!(text.matches(r#""in":"Game.Tick""#).count(), 5, "{text}");
    assert!(
        text.contains(r#"{"t":2,"out":"Player.Hurt","src":"global","args":["ann",3]}"#),
        "{text}"
    );
    assert!(text.ends_with("{\"end\":true,\"ticks\":5}\n"), "{text}");
    let out = replay(&file, game.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("replay: equal (5 inputs,"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_changed_script_fails_the_replay_at_the_tick_and_key_it_changed() {
    let game = arena();
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("play.rec");
    record(game.path(), &file, 5);
    let armour = game.path().join("3_armour.lua");
    let script = std::fs::read_to_string(&armour).unwrap();
    std::fs::write(&armour, script.replace("math.min(2,", "math.min(1,")).unwrap();
    let out = replay(&file, game.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(
        text.contains("replay: differs at tick 2, key Player.Hurt"),
        "{text}"
    );
    assert!(
        text.contains(r#"expected: Player.Hurt("ann", 3) from global"#),
        "{text}"
    );
    assert!(
        text.contains(r#"got:      Player.Hurt("ann", 4) from global"#),
        "{text}"
    );
}

#[test]
fn a_recording_cut_mid_line_replays_its_prefix_and_says_it_was_cut() {
    let game = arena();
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("play.rec");
    record(game.path(), &file, 5);
    let text = std::fs::read_to_string(&file).unwrap();
    // As a crash leaves it: the tick-3 input whole, a line half written.
    let at = text.find(r#"{"t":3,"out""#).unwrap();
    std::fs::write(&file, &text[..at + 12]).unwrap();
    let out = replay(&file, game.path());
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(said.contains("replay: equal (3 inputs,"), "{said}");
    assert!(
        said.contains("was cut after tick 3 (no end line): its prefix replayed"),
        "{said}"
    );
}

#[test]
fn a_file_that_is_no_recording_is_refused_with_its_name() {
    let game = arena();
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("notes.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let out = replay(&file, game.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("notes.txt: not a gantry recording"),
        "{}",
        stderr(&out)
    );
    std::fs::write(&file, "{\"gantry_recording\":99}\n").unwrap();
    let out = replay(&file, game.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("format version 99"),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_given_as_the_recording_is_refused_without_blocking() {
    let game = arena();
    let rec = tempfile::tempdir().unwrap();
    let fifo = rec.path().join("play.rec");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let started = Instant::now();
    let out = replay(&fifo, game.path());
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("play.rec: not a regular file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_run_killed_mid_way_leaves_a_recording_whose_prefix_replays() {
    let game = arena();
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("crash.rec");
    let mut child = gantry()
        .arg("run")
        .arg(game.path())
        .args(["--no-table", "--watch", "--tick-ms", "20", "--record"])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(8);
    // Each tick's input is on disk before the tick runs: wait for four.
    while std::fs::read_to_string(&file).map_or(0, |t| t.matches(r#""in":"Game.Tick""#).count()) < 4
    {
        assert!(Instant::now() < deadline, "the watching run never ticked");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(r#""end""#), "{text}");
    let out = replay(&file, game.path());
    let said = stdout(&out);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(said.contains("replay: equal ("), "{said}");
    assert!(
        said.contains("(no end line): its prefix replayed"),
        "{said}"
    );
}

#[test]
fn a_recording_that_cannot_be_created_stops_the_run_naming_the_flag() {
    let game = arena();
    let out = gantry()
        .arg("run")
        .arg(game.path())
        .args(["--no-table", "--record"])
        .arg(game.path().join("no/such/folder/play.rec"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = stderr(&out);
    assert!(said.contains("--record "), "{said}");
    assert!(said.contains("play.rec"), "{said}");
}

#[test]
fn a_run_recorded_without_saved_state_replays_equal_after_saving_its_own() {
    // The three_mods game persists the player's gold: the recorded run
    // starts with none saved and saves its own at exit, which the replay
    // does not start from.
    let game = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/three_mods"),
        game.path(),
    );
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("play.rec");
    record(game.path(), &file, 5);
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .ends_with(r#""saved":null}"#)
    );
    assert!(game.path().join(".gantry/saved").is_dir(), "the run saved");
    let out = replay(&file, game.path());
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).starts_with("replay: equal"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_script_reloaded_while_recording_records_its_top_levels_sends_as_the_mods() {
    let game = tempfile::tempdir().unwrap();
    crate::support::write(game.path(), "boot.lua", "NotifyMessage(\"Boot.Said\", 1)\n");
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("watch.rec");
    let mut child = gantry()
        .arg("run")
        .arg(game.path())
        .args(["--no-table", "--watch", "--tick-ms", "20", "--record"])
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(8);
    let wait_for = |want: &str| {
        while !std::fs::read_to_string(&file).is_ok_and(|t| t.contains(want)) {
            assert!(Instant::now() < deadline, "never recorded {want}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(r#""in":"Game.Tick""#);
    crate::support::write(game.path(), "boot.lua", "NotifyMessage(\"Boot.Said\", 2)\n");
    wait_for(r#""Boot.Said","src":"global","args":[2]"#);
    child.kill().unwrap();
    child.wait().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(r#""out":"Boot.Said","src":"global","args":[2]"#),
        "{text}"
    );
    assert!(!text.contains(r#""in":"Boot.Said""#), "{text}");
}

#[test]
fn recording_over_a_file_that_is_no_recording_is_refused_and_the_file_kept() {
    let game = arena();
    let script = game.path().join("1_inventory.lua");
    let before = std::fs::read_to_string(&script).unwrap();
    let out = gantry()
        .arg("run")
        .arg(game.path())
        .args(["--no-table", "--record"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("exists and is not a recording; not overwritten"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&script).unwrap(), before);
    // A recording is replaced by the next one.
    let rec = tempfile::tempdir().unwrap();
    let file = rec.path().join("play.rec");
    record(game.path(), &file, 1);
    record(game.path(), &file, 2);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with("{\"end\":true,\"ticks\":2}\n"), "{text}");
}
