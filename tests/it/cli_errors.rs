//! What the CLI says when it is given the wrong thing — a missing folder, a
//! file for a folder, a folder for a table, a script it cannot read — and
//! what it does when nobody reads its output any more.

use std::path::Path;
use std::process::{Output, Stdio};

use crate::support::{Watching, gantry, stderr, stdout, write};

/// Every subcommand that takes a mod folder, with `DIR` where it goes.
const WITH_A_FOLDER: &[&[&str]] = &[
    &["run", "DIR"],
    &["check", "DIR"],
    &["stubs", "DIR"],
    &["explain", "DIR", "Player.Hurt"],
    &["explain", "DIR", "Player.Hurt", "--ticks", "1"],
    &["table", "DIR"],
];

fn gantry_with(args: &[&str], dir: &Path) -> Output {
    let dir = dir.to_str().unwrap();
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "DIR" { dir } else { a })
        .collect();
    gantry().args(&args).output().unwrap()
}

#[test]
fn every_subcommand_says_a_missing_mod_folder_does_not_exist_and_fails() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("no-such-mod");
    for args in WITH_A_FOLDER {
        let o = gantry_with(args, &missing);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "the mod folder {} does not exist",
                missing.display()
            )),
            "{args:?}: {}",
            stderr(&o)
        );
        // Nothing was explained, checked or created.
        assert_eq!(stdout(&o), "", "{args:?}");
        assert!(!missing.exists(), "{args:?} created the folder");
    }
}

#[test]
fn every_subcommand_refuses_a_file_given_as_the_mod_folder() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("a.lua");
    std::fs::write(&file, "print('hi')").unwrap();
    for args in WITH_A_FOLDER {
        let o = gantry_with(args, &file);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("{} is not a folder", file.display())),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), "", "{args:?}");
    }
}

#[test]
fn every_subcommand_refuses_a_signature_table_path_that_is_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "print('hi')");
    std::fs::create_dir_all(dir.path().join(".gantry/signatures.json")).unwrap();
    for args in WITH_A_FOLDER {
        let o = gantry_with(args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("signatures.json is a folder, not a file"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // A table named with --table is held to the same.
    let o = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--table"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a folder, not a file"),
        "{}",
        stderr(&o)
    );
}

#[cfg(unix)]
#[test]
fn a_script_with_a_non_utf8_name_is_named_as_such_and_the_others_still_run() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "NotifyMessage('Mod.Loaded', 1) print('a ran')",
    );
    let odd = std::ffi::OsStr::from_bytes(b"b\xff.lua");
    std::fs::write(dir.path().join(odd), "print('b ran')").unwrap();
    let o = gantry()
        .args(["run", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error: b\u{FFFD}.lua: the file name is not valid UTF-8"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("No such file"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a ran\n");
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(
        table.contains("Mod.Loaded"),
        "the run saved its table: {table}"
    );
}

#[test]
fn a_byte_order_mark_at_the_start_of_a_script_is_not_a_syntax_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "\u{feff}print('lua with a BOM')");
    write(dir.path(), "b.rhai", "\u{feff}print(\"rhai with a BOM\");");
    let o = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--no-table"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "lua with a BOM\nrhai with a BOM\n");
}

#[test]
fn a_watched_script_rewritten_as_invalid_utf8_is_reported_once_and_the_old_one_keeps_running() {
    let dir = tempfile::tempdir().unwrap();
    let version = |n: u32| {
        format!(
            "local said = false\nListenMessage('Game.Tick', nil, function()\n  if not said then print('v{n} ticking'); said = true end\nend)\n"
        )
    };
    write(dir.path(), "a.lua", &version(1));
    let run = Watching::start(dir.path());
    run.wait_for("v1 ticking");
    std::fs::write(dir.path().join("a.lua"), b"print('x')\nprint('\xff')\n").unwrap();
    run.wait_for_error(
        "a.lua is not valid UTF-8 text (line 2); the previous version keeps running",
    );
    write(dir.path(), "a.lua", &version(2));
    run.wait_for("[reloading a.lua]");
    run.wait_for("v2 ticking");
    let (_, rest) = run.interrupt();
    assert!(!rest.contains("UTF-8"), "said once: {rest}");
}

#[test]
fn a_run_whose_output_nobody_reads_still_ticks_saves_its_table_and_exits_normally() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.lua",
        "for i = 1, 100 do print('line ' .. i) end\n\
         ListenMessage('Game.Tick', nil, function(n) print('tick ' .. n) end)\n\
         NotifyMessage('Mod.Loaded', 'not an int')\n",
    );
    // The table says Mod.Loaded carries an int: the send above is refused,
    // an error the run must still count though nobody reads stderr either.
    std::fs::create_dir(dir.path().join(".gantry")).unwrap();
    write(
        dir.path(),
        ".gantry/signatures.json",
        r#"{ "version": 1, "keys": { "Mod.Loaded": { "kind": "event", "origin": "declared",
            "params": [ { "name": "n", "type": "int" } ] } } }"#,
    );
    let mut child = gantry()
        .args(["run", dir.path().to_str().unwrap(), "--ticks", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -0`: both read ends closed before the first line.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "no panic, the refused send counted");
    let table = std::fs::read_to_string(dir.path().join(".gantry/signatures.json")).unwrap();
    assert!(
        table.contains("Game.Tick"),
        "the run saved its table: {table}"
    );
}

#[test]
fn table_explain_check_and_stubs_into_a_closed_pipe_exit_normally() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "NotifyMessage('Mod.Loaded', 1)");
    assert!(
        gantry()
            .args(["run", dir.path().to_str().unwrap()])
            .status()
            .unwrap()
            .success()
    );
    let out = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = out.path().to_str().unwrap();
    for args in [
        &["table", d][..],
        &["table", d, "--json"],
        &["explain", d, "Mod.Loaded"],
        &["explain", d, "Mod.Loaded", "--ticks", "2"],
        &["check", d],
        &["stubs", d, "--out", o],
    ] {
        let mut child = gantry()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut said = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {said}");
        assert!(!said.contains("panicked"), "{args:?}: {said}");
    }
}

#[test]
fn table_of_a_mod_without_one_yet_says_so_instead_of_printing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.lua", "print('hi')");
    let o = gantry()
        .args(["table", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains("no signature table at") && stderr(&o).contains("records one"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_and_explain_take_a_mod_folder_relative_to_the_current_one() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("mod")).unwrap();
    write(
        &root.path().join("mod"),
        "a.lua",
        "NotifyMessage('Mod.Loaded', 1)",
    );
    for args in [&["check", "mod"][..], &["explain", "mod", "Mod.Loaded"]] {
        let o = gantry()
            .args(args)
            .current_dir(root.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = gantry()
        .args(["explain", "mod", "Mod.Loaded"])
        .current_dir(root.path())
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("a.lua:1 (NotifyMessage)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn run_takes_a_mod_folder_relative_to_the_current_one_and_its_modules_load() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("mod");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    write(
        &dir.join("lib"),
        "util.lua",
        "return { greet = function() return 'hi from lua' end }",
    );
    write(
        &dir.join("lib"),
        "helper.rhai",
        "fn greet() { \"hi from rhai\" }",
    );
    write(&dir, "a.lua", "print(require('lib.util').greet())");
    write(
        &dir,
        "b.rhai",
        "import \"lib/helper\" as h;\nprint(h::greet());",
    );
    let o = gantry()
        .args(["run", "mod", "--ticks", "1"])
        .current_dir(root.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("hi from lua"), "{out}");
    assert!(out.contains("hi from rhai"), "{out}");
}

#[test]
fn a_looping_listener_under_call_budget_us_is_stopped_at_its_line_each_tick_and_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "loop.lua",
        "ListenMessage('Game.Tick', nil, function(n)\n  while true do end\nend)\n",
    );
    write(
        dir.path(),
        "spin.rhai",
        "ListenMessage(\"Game.Tick\", (), |n, dt| {\n    loop { }\n});\n",
    );
    write(
        dir.path(),
        "fine.lua",
        "ListenMessage('Game.Tick', nil, function(n) print('tick ' .. n) end)\n",
    );
    let o = gantry()
        .arg("run")
        .arg(dir.path())
        .args(["--no-table", "--ticks", "3", "--call-budget-us", "2000"])
        .args(["--budget", "1000000000000", "--time-limit", "60000"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // Every tick ran the listener that stays within its budget.
    assert_eq!(stdout(&o).matches("tick ").count(), 3, "{}", stdout(&o));
    assert_eq!(
        err.matches("loop.lua:2: call budget of 2000 µs exceeded")
            .count(),
        2,
        "printed once, then in the ×3 summary: {err}"
    );
    assert!(
        err.lines()
            .any(|l| l.contains("loop.lua:2: call budget") && l.ends_with(" ×3")),
        "{err}"
    );
    assert!(
        err.lines().any(|l| l.contains("spin.rhai:1:")
            && l.contains("time limit exceeded")
            && l.ends_with(" ×3")),
        "{err}"
    );
}

#[test]
fn call_budget_us_of_zero_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let o = gantry()
        .arg("run")
        .arg(dir.path())
        .args(["--call-budget-us", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--call-budget-us"), "{}", stderr(&o));
}
