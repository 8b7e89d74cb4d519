//! Issue 7's sandbox and isolation rules: limits per handler call and per
//! top level, call depth, sizes, `import` only from the mod folder, one
//! script's failure not stopping the others.

mod common;

use common::Fixture;
use gantry_host::Source;
use gantry_rhai::runtime::RhaiOptions;

fn small(f: impl FnOnce(&mut RhaiOptions)) -> Fixture {
    let mut options = RhaiOptions::default();
    f(&mut options);
    Fixture::with(options)
}

#[test]
fn operation_limit_per_handler_call_stops_the_handler_and_names_its_line() {
    let f = small(|o| o.max_operations_per_call = 10_000);
    f.load(
        "spin.rhai",
        "ListenMessage(\"Spin\", (), || {\n    let x = 0;\n    loop { x += 1; }\n});\nListenMessage(\"Spin\", (), || print(\"second ran\"));\n",
    );
    let key = f.hub.key("Spin").unwrap();
    f.hub.send(key, Source::Global, ()).unwrap();
    assert_eq!(f.printed(), vec!["second ran"]);
    let errors = f.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    // Rhai gives a limit hit inside a closure no position: the error names
    // the line the listener was registered at.
    assert!(errors[0].starts_with("spin.rhai:1:"), "{errors:?}");
    assert!(errors[0].contains("listener registered"), "{errors:?}");
    assert!(errors[0].contains("operation limit"), "{errors:?}");
    assert_eq!(f.failures().len(), 1);
}

#[test]
fn operation_limit_per_handler_call_counts_each_call_from_zero() {
    let f = small(|o| o.max_operations_per_call = 3_000);
    // Each call does about half the limit: no call may inherit the count
    // of the calls before it.
    f.load(
        "half.rhai",
        "ListenMessage(\"Half\", (), || { let n = 0; for i in 0..500 { n += 1; } print(`ran ${n}`); });\n",
    );
    let key = f.hub.key("Half").unwrap();
    for _ in 0..6 {
        f.hub.send(key, Source::Global, ()).unwrap();
    }
    assert_eq!(f.printed(), vec!["ran 500"; 6]);
    assert!(f.errors().is_empty(), "{:?}", f.errors());
}

#[test]
fn operation_limit_per_top_level_is_separate_from_the_per_call_limit() {
    let f = small(|o| {
        o.max_operations_per_call = 2_000;
        o.max_operations_top_level = 1_000_000;
    });
    // The top level may run longer than one call may.
    f.load(
        "long.rhai",
        "let n = 0;\nfor i in 0..5000 { n += 1; }\nListenMessage(\"Work\", (), || { let n = 0; for i in 0..5000 { n += 1; } print(\"done\"); });\n",
    );
    f.hub
        .send(f.hub.key("Work").unwrap(), Source::Global, ())
        .unwrap();
    assert!(f.printed().is_empty());
    assert!(f.errors()[0].contains("operation limit"));
    let err = f.load_err("forever.rhai", "let x = 0;\nwhile true { x += 1; }\n");
    assert!(err.starts_with("forever.rhai:2:"), "{err}");
    assert!(err.contains("operation limit"), "{err}");
}

#[test]
fn call_depth_limit_stops_runaway_recursion() {
    let f = small(|o| o.max_call_depth = 16);
    let err = f.load_err("deep.rhai", "fn down(n) { down(n + 1) }\ndown(0);\n");
    assert!(err.starts_with("deep.rhai:"), "{err}");
    assert!(err.to_lowercase().contains("stack overflow"), "{err}");
}

#[test]
fn string_array_and_map_size_limits() {
    let f = small(|o| {
        o.max_string_size = 100;
        o.max_array_size = 50;
        o.max_map_size = 20;
    });
    let err = f.load_err("s.rhai", "let s = \"xx\";\nloop { s += s; }\n");
    assert!(
        err.starts_with("s.rhai:2:") && err.contains("string"),
        "{err}"
    );
    let err = f.load_err("a.rhai", "let a = [];\nloop { a.push(1); }\n");
    assert!(
        err.starts_with("a.rhai:2:") && err.contains("array"),
        "{err}"
    );
    let fields: Vec<String> = (0..30).map(|i| format!("f{i}: {i}")).collect();
    let err = f.load_err(
        "m.rhai",
        &format!("let m = 1;\nm = #{{ {} }};\n", fields.join(", ")),
    );
    assert!(err.starts_with("m.rhai:2:") && err.contains("map"), "{err}");
}

#[test]
fn import_is_disabled_without_a_mod_folder() {
    let f = Fixture::new();
    let err = f.load_err("i.rhai", "import \"helpers\" as h;\n");
    assert!(err.starts_with("i.rhai:1:"), "{err}");
}

#[test]
fn import_resolves_only_inside_the_mod_folder() {
    let dir = std::env::temp_dir().join(format!("gantry-rhai-mods-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(dir.join("lib/helpers.rhai"), "fn twice(x) { x * 2 }\n").unwrap();
    std::fs::write(
        dir.parent().unwrap().join("outside.rhai"),
        "fn secret() { 1 }\n",
    )
    .unwrap();
    let f = small(|o| o.mod_dir = Some(dir.clone()));
    f.load(
        "ok.rhai",
        "import \"lib/helpers\" as h;\nprint(`${h::twice(21)}`);\n",
    );
    assert_eq!(f.printed(), vec!["42"]);
    let err = f.load_err("bad.rhai", "import \"../outside\" as o;\n");
    assert!(err.contains("mod folder"), "{err}");
    let err = f.load_err(
        "abs.rhai",
        &format!(
            "import \"{}/outside\" as o;\n",
            dir.parent().unwrap().display()
        ),
    );
    assert!(err.contains("mod folder"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn eval_is_not_available() {
    let f = Fixture::new();
    let err = f.load_err("e.rhai", "eval(\"1 + 1\");\n");
    assert!(err.starts_with("e.rhai:1:"), "{err}");
}

#[test]
fn each_script_has_its_own_scope() {
    let f = Fixture::new();
    let (a, _) = f.load("a.rhai", "let x = 1;\nconst NAME = \"a\";\n");
    let (b, _) = f.load("b.rhai", "let x = 2;\nprint(`${is_def_var(\"NAME\")}`);\n");
    assert_eq!(f.printed(), vec!["false"]);
    assert_eq!(f.rt.global(a, "x").unwrap().as_int().unwrap(), 1);
    assert_eq!(f.rt.global(b, "x").unwrap().as_int().unwrap(), 2);
}

#[test]
fn a_failing_handler_is_reported_and_the_other_listeners_still_run() {
    let f = Fixture::new();
    f.load(
        "bad.rhai",
        "ListenMessage(\"Boom\", (), |n| {\n    let y = n / 0;\n});\n",
    );
    f.load(
        "good.rhai",
        "ListenMessage(\"Boom\", (), |n| print(`good ${n}`));\n",
    );
    let key = f.hub.key("Boom").unwrap();
    f.hub.send(key, Source::Global, (1i64,)).unwrap();
    f.hub.send(key, Source::Global, (2i64,)).unwrap();
    assert_eq!(f.printed(), vec!["good 1", "good 2"]);
    let errors = f.errors();
    assert_eq!(errors.len(), 2);
    assert!(errors[0].starts_with("bad.rhai:2:"), "{errors:?}");
    assert_eq!(f.failures().len(), 2);
}

#[test]
fn a_listener_resending_what_it_listens_to_hits_the_nesting_limit() {
    let f = Fixture::new();
    f.load(
        "loop.rhai",
        "ListenMessage(\"Echo\", (), || NotifyMessage(\"Echo\"));\nNotifyMessage(\"Echo\");\nprint(\"survived\");\n",
    );
    assert_eq!(f.printed(), vec!["survived"]);
    assert!(f.errors().iter().any(|e| e.contains("nested")));
}

#[test]
fn a_failing_top_level_is_returned_with_the_authors_position() {
    let f = Fixture::new();
    let err = f.load_err("top.rhai", "let a = 1;\n\nlet b = a.nope();\n");
    assert!(err.starts_with("top.rhai:3:"), "{err}");
    let err = f.load_err("parse.rhai", "let a = ;\n");
    assert!(err.starts_with("parse.rhai:1:"), "{err}");
}
// ----- import reads a module as every mod file is read -----------------------

/// A fresh folder under the system's temporary folder, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "gantry-rhai-import-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Loads `script` (as `main.rhai`) in a runtime whose mod folder is `dir`,
/// on its own thread: what it printed, or its load error. Fails if that
/// takes over five seconds (an import that blocks on a FIFO shows as a
/// failure, not a hang).
fn import_in(dir: &std::path::Path, script: &'static str) -> Result<Vec<String>, String> {
    let dir = dir.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let f = small(|o| o.mod_dir = Some(dir));
        let object = f.spawn();
        let result = match f.rt.load_script("main.rhai", script, object) {
            Ok(_) => Ok(f.printed()),
            Err(e) => Err(e.to_string()),
        };
        let _ = tx.send(result);
    });
    rx.recv_timeout(std::time::Duration::from_secs(5))
        .expect("import blocked: the script did not finish within 5 s")
}

fn assert_import_refused(result: Result<Vec<String>, String>, needle: &str) {
    let err = result.expect_err("the import should have failed");
    assert!(err.starts_with("main.rhai:1:"), "{err}");
    assert!(err.contains(needle), "{err}");
}

#[cfg(unix)]
#[test]
fn import_refuses_a_module_that_links_out_of_the_mod_folder() {
    let root = TempDir::new();
    let mod_dir = root.path().join("mod");
    std::fs::create_dir_all(&mod_dir).unwrap();
    std::fs::write(root.path().join("secret.rhai"), "fn secret() { 1 }\n").unwrap();
    std::os::unix::fs::symlink("../secret.rhai", mod_dir.join("evil.rhai")).unwrap();
    std::os::unix::fs::symlink("..", mod_dir.join("up")).unwrap();
    assert_import_refused(
        import_in(&mod_dir, "import \"evil\" as e;\n"),
        "evil.rhai leads outside",
    );
    assert_import_refused(
        import_in(&mod_dir, "import \"up/secret\" as e;\n"),
        "up/secret.rhai leads outside",
    );
}

#[cfg(unix)]
#[test]
fn import_follows_a_link_that_stays_inside_the_mod_folder() {
    let dir = TempDir::new();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/util.rhai"), "fn twice(x) { x * 2 }\n").unwrap();
    std::os::unix::fs::symlink("real/util.rhai", dir.path().join("util.rhai")).unwrap();
    let printed = import_in(
        dir.path(),
        "import \"util\" as u;\nprint(`${u::twice(21)}`);\n",
    );
    assert_eq!(printed.unwrap(), ["42"]);
}

#[cfg(unix)]
#[test]
fn import_of_a_fifo_fails_at_once_instead_of_blocking() {
    let dir = TempDir::new();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe.rhai"))
        .status()
        .unwrap();
    assert!(status.success());
    assert_import_refused(
        import_in(dir.path(), "import \"pipe\" as p;\n"),
        "pipe.rhai is a FIFO (named pipe), not a regular file",
    );
}

#[cfg(unix)]
#[test]
fn import_of_a_module_linked_to_dev_zero_fails_without_reading_it() {
    let dir = TempDir::new();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.rhai")).unwrap();
    assert_import_refused(
        import_in(dir.path(), "import \"zero\" as z;\n"),
        "zero.rhai is a character device",
    );
}

#[test]
fn import_refuses_a_module_larger_than_the_script_bound() {
    let dir = TempDir::new();
    let file = std::fs::File::create(dir.path().join("huge.rhai")).unwrap();
    file.set_len(gantry_host::files::MAX_SCRIPT_BYTES + 1)
        .unwrap();
    drop(file);
    assert_import_refused(
        import_in(dir.path(), "import \"huge\" as h;\n"),
        "huge.rhai is larger than 16 MiB",
    );
}

#[test]
fn import_loads_a_module_starting_with_a_byte_order_mark() {
    let dir = TempDir::new();
    std::fs::write(
        dir.path().join("bom.rhai"),
        "\u{FEFF}fn read() { \"read\" }\n",
    )
    .unwrap();
    let printed = import_in(dir.path(), "import \"bom\" as b;\nprint(b::read());\n");
    assert_eq!(printed.unwrap(), ["read"]);
}

#[test]
fn an_imported_module_that_is_missing_or_broken_is_named_in_the_error() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("broken.rhai"), "fn ok() { 1 }\nlet = ;\n").unwrap();
    std::fs::write(dir.path().join("latin1.rhai"), b"// \xE9t\xE9\n").unwrap();
    assert_import_refused(
        import_in(dir.path(), "import \"missing\" as m;\n"),
        "missing",
    );
    assert_import_refused(import_in(dir.path(), "import \"broken\" as b;\n"), "broken");
    assert_import_refused(
        import_in(dir.path(), "import \"latin1\" as l;\n"),
        "latin1.rhai is not valid UTF-8 text (line 1)",
    );
}

#[test]
fn a_module_imported_by_two_scripts_is_evaluated_once() {
    let dir = TempDir::new();
    std::fs::write(
        dir.path().join("noisy.rhai"),
        "print(\"evaluated\");\nfn one() { 1 }\n",
    )
    .unwrap();
    let f = small(|o| o.mod_dir = Some(dir.path().to_path_buf()));
    f.load(
        "a.rhai",
        "import \"noisy\" as n;\nprint(`a ${n::one()}`);\n",
    );
    f.load(
        "b.rhai",
        "import \"noisy\" as n;\nprint(`b ${n::one()}`);\n",
    );
    assert_eq!(f.printed(), ["evaluated", "a 1", "b 1"]);
}
