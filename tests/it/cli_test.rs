//! `gantry test DIR`: a mod's test scripts run case by case, each in a
//! fresh game, with a line per case, a count, JUnit XML and the exit status
//! a CI reads; a case that fails, errors or runs away names its file:line,
//! and a tests/ folder's links and special files are skipped, not read.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::{copy_dir, gantry, stderr, stdout, write};

fn test(dir: &Path, extra: &[&str]) -> Output {
    gantry()
        .arg("test")
        .arg(dir)
        .args(extra)
        .output()
        .expect("gantry runs")
}

/// A mod that says hello back to whoever greets it, and counts ticks.
fn greeter(dir: &Path) {
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    write(
        dir,
        "main.lua",
        r#"
local ticks = 0
ListenMessage("Hello", nil, function(name) NotifyMessage("Hello.Back", "hi " .. name) end)
ListenMessage("Game.Tick", nil, function(n) ticks = ticks + 1; NotifyMessage("Counted", ticks) end)
"#,
    );
}

#[test]
fn the_quest_example_passes_its_own_tests_in_both_languages() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quest"),
        tmp.path(),
    );
    let out = test(tmp.path(), &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains(
            "ok   tests/starts_on_the_first_tick.lua: the first tick starts the wolves quest"
        ),
        "{text}"
    );
    assert!(
        text.contains("ok   tests/the_log_finishes.rhai: a started quest is done at once"),
        "{text}"
    );
    assert!(
        text.contains("ok   tests/first_ticks.gantry-rec: replays as recorded"),
        "{text}"
    );
    assert!(text.contains("6 passed, 0 failed"), "{text}");
}

#[test]
fn a_passing_and_a_failing_case_are_both_printed_the_run_exits_1_and_junit_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    greeter(tmp.path());
    write(
        tmp.path(),
        "tests/hello.lua",
        r#"test("a greeting is answered", function()
  NotifyMessage("Hello", "ann")
  expect_eq(sent("Hello.Back"), { { "hi ann" } })
end)
test("a wrong answer is caught", function()
  NotifyMessage("Hello", "bob")
  expect_eq(sent("Hello.Back")[1][1], "hello bob")
end)
"#,
    );
    let junit = tmp.path().join("out.xml");
    let out = test(tmp.path(), &["--junit", junit.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("ok   tests/hello.lua: a greeting is answered"),
        "{text}"
    );
    assert!(
        text.contains("FAIL tests/hello.lua: a wrong answer is caught"),
        "{text}"
    );
    assert!(
        text.contains(r#"tests/hello.lua:7: expected "hello bob", got "hi bob""#),
        "{text}"
    );
    assert!(text.contains("1 passed, 1 failed"), "{text}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(
        xml.contains(r#"<testsuites name="gantry test" tests="2" failures="1">"#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testcase classname="tests/hello.lua" name="a greeting is answered""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<failure message="tests/hello.lua:7: expected &quot;hello bob&quot;"#),
        "{xml}"
    );
    // Every element opened is closed: as many <testcase as testcases ended.
    let opened = xml.matches("<testcase ").count();
    let closed = xml.matches("/>").count() + xml.matches("</testcase>").count();
    assert_eq!(opened, closed, "{xml}");
}

#[test]
fn each_case_starts_from_a_fresh_game_and_ticks_count_from_one() {
    let tmp = tempfile::tempdir().unwrap();
    greeter(tmp.path());
    write(
        tmp.path(),
        "tests/ticks.rhai",
        r#"test("three ticks are counted", || {
    tick(3);
    expect_eq(sent("Counted"), [[1], [2], [3]]);
});
test("the next case counts from one again", || {
    tick(1);
    expect_eq(sent("Counted"), [[1]]);
});
"#,
    );
    let out = test(tmp.path(), &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("2 passed, 0 failed"), "{text}");
}

#[test]
fn a_case_that_loops_forever_is_stopped_and_failed_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    greeter(tmp.path());
    write(
        tmp.path(),
        "tests/stuck.lua",
        "test(\"spins\", function()\n  while true do end\nend)\ntest(\"fine\", function() end)\n",
    );
    let started = Instant::now();
    let out = test(tmp.path(), &["--time-limit", "300"]);
    let text = stdout(&out);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAIL tests/stuck.lua: spins"), "{text}");
    assert!(text.contains("tests/stuck.lua:2"), "{text}");
    assert!(text.contains("ok   tests/stuck.lua: fine"), "{text}");
}

#[cfg(unix)]
#[test]
fn a_fifo_and_a_link_out_of_tests_are_skipped_and_said_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    greeter(tmp.path());
    write(
        outside.path(),
        "secret.lua",
        "test(\"outside\", function() end)\n",
    );
    write(
        tmp.path(),
        "tests/ok.lua",
        "test(\"inside\", function() end)\n",
    );
    std::os::unix::fs::symlink(
        outside.path().join("secret.lua"),
        tmp.path().join("tests/link.lua"),
    )
    .unwrap();
    let fifo = tmp.path().join("tests/pipe.lua");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let out = test(tmp.path(), &[]);
    assert!(started.elapsed() < Duration::from_secs(10));
    let (text, errors) = (stdout(&out), stderr(&out));
    assert!(text.contains("ok   tests/ok.lua: inside"), "{text}");
    assert!(!text.contains("outside"), "{text}");
    assert!(
        errors.contains("tests/link.lua: a link, not read; skipped"),
        "{errors}"
    );
    assert!(
        errors.contains("tests/pipe.lua: not a regular file; skipped"),
        "{errors}"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "skipped scripts fail the run: {text}"
    );
}

#[test]
fn a_failed_rhai_expectation_and_a_lua_error_are_said_at_their_lines() {
    let tmp = tempfile::tempdir().unwrap();
    greeter(tmp.path());
    write(
        tmp.path(),
        "tests/lines.rhai",
        "// one\ntest(\"counts\", || {\n    tick(2);\n    expect_eq(sent(\"Counted\").len(), 3);\n});\ntest(\"indexes\", || {\n    let a = [1];\n    a[5]\n});\n",
    );
    write(
        tmp.path(),
        "tests/lines.lua",
        "test(\"indexes nil\", function()\n  local t = nil\n  return t.x\nend)\n",
    );
    let out = test(tmp.path(), &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("tests/lines.rhai:4: expected 3, got 2"),
        "{text}"
    );
    assert!(
        text.contains("tests/lines.lua:3: attempt to index a nil value"),
        "{text}"
    );
    assert!(text.contains("0 passed, 3 failed"), "{text}");
}

#[test]
fn a_kept_recording_the_mod_no_longer_matches_fails_as_a_case() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quest"),
        tmp.path(),
    );
    let giver = tmp.path().join("giver.lua");
    let script = std::fs::read_to_string(&giver).unwrap();
    std::fs::write(&giver, script.replace("gold = 50", "gold = 5")).unwrap();
    let out = test(tmp.path(), &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL tests/first_ticks.gantry-rec: replays as recorded"),
        "{text}"
    );
    assert!(
        text.contains("tests/first_ticks.gantry-rec: differs at tick 1: expected Quest.Start("),
        "{text}"
    );
}

#[test]
fn a_junit_path_that_holds_a_script_is_refused_and_the_script_kept() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quest"),
        tmp.path(),
    );
    let script = tmp.path().join("giver.lua");
    let before = std::fs::read_to_string(&script).unwrap();
    let out = test(tmp.path(), &["--junit", script.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("exists and is not an XML report; not overwritten"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&script).unwrap(), before);
}
