//! The sandbox and isolation rules: limits of operations and of time per
//! handler call and per top level (final once spent, whatever catches or
//! ignores the error), the host's interrupt, call depth, sizes (also
//! inside one built-in call), no `sleep`, `import` only from the mod
//! folder, one script's failure not stopping the others.

use std::time::{Duration, Instant};

use gantry_host::Source;
use gantry_host::face::ScriptRuntime;
use gantry_rhai::runtime::RhaiOptions;
use gantry_test_support::guard;

use crate::support::Fixture;

fn small(f: impl FnOnce(&mut RhaiOptions)) -> Fixture {
    let mut options = RhaiOptions::default();
    f(&mut options);
    Fixture::with(options)
}

#[test]
fn operation_limit_per_handler_call_stops_the_handler_and_names_its_line() {
    let f = small(|o| o.budget = Some(10_000));
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
    let f = small(|o| o.budget = Some(3_000));
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
        o.budget = Some(2_000);
        o.top_level_budget = Some(1_000_000);
        o.time_limit = Some(Duration::from_secs(60));
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

/// Operations bounded, time practically not: what stops a call here is
/// its operation count.
fn by_operations(per_call: u64, top_level: u64) -> Fixture {
    small(|o| {
        o.budget = Some(per_call);
        o.top_level_budget = Some(top_level);
        o.time_limit = Some(Duration::from_secs(60));
    })
}

/// Time bounded, operations not: what stops a call here is the clock.
fn by_time(limit: Duration) -> Fixture {
    small(|o| {
        o.budget = None;
        o.top_level_budget = None;
        o.time_limit = Some(limit);
    })
}

/// Loads `source` expecting it to fail within `within`; its error.
fn fails_within(f: &Fixture, within: Duration, file: &str, source: &str) -> String {
    let started = Instant::now();
    let err = f.load_err(file, source);
    let took = started.elapsed();
    assert!(took < within, "{file} took {took:?} to fail: {err}");
    err
}

#[test]
fn sleep_is_refused_with_an_error_naming_it() {
    let f = Fixture::new();
    for (file, source) in [
        (
            "int.rhai",
            "let x = 1;
sleep(1000000000);
print(\"woke\");\n",
        ),
        (
            "float.rhai",
            "let x = 1;
sleep(1e9);
print(\"woke\");\n",
        ),
    ] {
        let err = fails_within(&f, Duration::from_secs(5), file, source);
        assert!(err.starts_with(&format!("{file}:2:")), "{err}");
        assert!(err.contains("`sleep` is not available"), "{err}");
    }
    assert!(f.printed().is_empty());
}

#[test]
fn a_top_level_loop_stops_at_the_time_limit_and_names_its_line() {
    let f = by_time(Duration::from_millis(200));
    let started = Instant::now();
    let err = fails_within(
        &f,
        Duration::from_secs(5),
        "spin.rhai",
        "let x = 0;\nloop { x += 1; }\n",
    );
    assert!(started.elapsed() >= Duration::from_millis(200), "{err}");
    assert!(err.starts_with("spin.rhai:2:"), "{err}");
    assert!(
        err.contains("time limit exceeded") && err.contains("200ms"),
        "{err}"
    );
}

#[test]
fn a_listener_stopped_at_the_time_limit_fails_and_the_next_one_runs() {
    let f = by_time(Duration::from_millis(200));
    f.load(
        "spin.rhai",
        "ListenMessage(\"Spin\", (), || {\n    loop { }\n});\nListenMessage(\"Spin\", (), || print(\"second ran\"));\n",
    );
    let started = Instant::now();
    f.hub
        .send(f.hub.key("Spin").unwrap(), Source::Global, ())
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(f.printed(), vec!["second ran"]);
    let errors = f.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    // As for the operation limit, Rhai gives a stop inside a closure no
    // position: the error names the line the listener was registered at.
    assert!(errors[0].starts_with("spin.rhai:1:"), "{errors:?}");
    assert!(errors[0].contains("listener registered"), "{errors:?}");
    assert!(errors[0].contains("time limit exceeded"), "{errors:?}");
}

#[test]
fn hooks_and_replies_are_stopped_at_the_time_limit_too() {
    let f = by_time(Duration::from_millis(200));
    f.load(
        "hook.rhai",
        "ListenHook(\"Spin.Hook\", (), |p, ctx| {\n    loop { }\n});\n",
    );
    let started = Instant::now();
    let mut payload = gantry_host::Value::Int(1);
    f.hub.run_hook("Spin.Hook", &mut payload).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let errors = f.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("time limit exceeded"), "{errors:?}");
    // A reply runs inside the call that sent the request: the time up
    // stops the reply and then the sending top level.
    let err = fails_within(
        &f,
        Duration::from_secs(5),
        "reply.rhai",
        "ListenObjectMessage(SELF, \"Q.Add\", (), |a, b, rsp| rsp.Response(a + b));\nSendObjectMessage(SELF, \"Q.Add\", 2, 3, |sum| { loop { } });\nprint(\"went on\");\n",
    );
    assert!(err.contains("time limit exceeded"), "{err}");
    assert!(f.printed().is_empty());
}

#[test]
fn the_time_limit_counts_each_call_from_its_start() {
    let f = by_time(Duration::from_millis(400));
    // Each call spends about a third of the limit: together they spend
    // more than the limit, and none may inherit the time of those before.
    f.load(
        "busy.rhai",
        "ListenMessage(\"Busy\", (), || { let t = timestamp(); while t.elapsed < 0.13 { } print(\"done\"); });\n",
    );
    let key = f.hub.key("Busy").unwrap();
    for _ in 0..5 {
        f.hub.send(key, Source::Global, ()).unwrap();
    }
    assert_eq!(f.errors(), Vec::<String>::new());
    assert_eq!(f.printed(), vec!["done"; 5]);
}

#[test]
fn a_comparator_stopped_by_the_operation_limit_fails_the_sort() {
    let f = by_operations(10_000, 10_000);
    let err = fails_within(
        &f,
        Duration::from_secs(5),
        "sort.rhai",
        "let a = [2, 1];\na.sort(|x, y| { loop { } });\nprint(\"sorted\");\n",
    );
    assert!(err.starts_with("sort.rhai:"), "{err}");
    assert!(err.contains("operation limit exceeded"), "{err}");
    assert!(f.printed().is_empty());
}

#[test]
fn a_loop_of_sorts_with_looping_comparators_stops() {
    let f = by_operations(10_000, 10_000);
    let err = fails_within(
        &f,
        Duration::from_secs(5),
        "sorts.rhai",
        "let n = 0;\nloop {\n    [2, 1].sort(|x, y| { loop { } });\n    n += 1;\n}\n",
    );
    assert!(err.starts_with("sorts.rhai:"), "{err}");
    assert!(err.contains("operation limit exceeded"), "{err}");
    // The same in a listener, stopped by time instead.
    let f = by_time(Duration::from_millis(200));
    f.load(
        "sorts.rhai",
        "ListenMessage(\"Sort\", (), || {\n    loop { [2, 1].sort(|x, y| { loop { } }); }\n});\n",
    );
    let started = Instant::now();
    f.hub
        .send(f.hub.key("Sort").unwrap(), Source::Global, ())
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let errors = f.errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("time limit exceeded"), "{errors:?}");
}

#[test]
fn a_limit_hit_in_the_callback_of_any_built_in_stops_the_call() {
    let f = by_operations(10_000, 10_000);
    let calls = [
        "a.map(|x| { loop { } })",
        "a.filter(|x| { loop { } })",
        "a.reduce(|sum, x| { loop { } }, 0)",
        "a.reduce_rev(|sum, x| { loop { } }, 0)",
        "a.retain(|x| { loop { } })",
        "a.drain(|x| { loop { } })",
        "a.some(|x| { loop { } })",
        "a.all(|x| { loop { } })",
        "a.index_of(|x| { loop { } })",
        "a.find(|x| { loop { } })",
        "a.find_map(|x| { loop { } })",
        "a.for_each(|| { loop { } })",
        "a.zip([3, 4], |x, y| { loop { } })",
        "a.dedup(|x, y| { loop { } })",
        "a.sort(|x, y| { loop { } })",
        "a.order_by(|x, y| { loop { } })",
        "m.filter(|k, v| { loop { } })",
        "m.map(|k, v| { loop { } })",
        "m.drain(|k, v| { loop { } })",
        "m.retain(|k, v| { loop { } })",
    ];
    for call in calls {
        let source = format!(
            "let a = [2, 1, 1];\nlet m = #{{ x: 1, y: 2 }};\nlet r = {call};\nprint(\"went on\");\n"
        );
        let err = fails_within(&f, Duration::from_secs(5), "cb.rhai", &source);
        assert!(err.contains("operation limit exceeded"), "{call}: {err}");
    }
    assert!(f.printed().is_empty(), "{:?}", f.printed());
}

#[test]
fn the_operations_of_built_in_callbacks_count_against_the_limit() {
    let f = by_operations(100_000, 100_000);
    // A thousand maps of a thousand short callbacks: few operations of the
    // loop itself, a million in the callbacks.
    let err = fails_within(
        &f,
        Duration::from_secs(8),
        "maps.rhai",
        "let a = [];\na.pad(1000, 0);\nfor i in 0..1000 {\n    a.map(|x| x + 1);\n}\nprint(\"all mapped\");\n",
    );
    assert!(err.contains("operation limit exceeded"), "{err}");
    assert!(f.printed().is_empty());
}

#[test]
fn catching_a_limit_error_gives_the_script_no_more_operations() {
    let f = by_operations(10_000, 10_000);
    for (file, source) in [
        (
            "plain.rhai",
            "try {\n    loop { }\n} catch {\n    print(\"caught\");\n}\nprint(\"went on\");\n",
        ),
        (
            "in_fn.rhai",
            "fn spin() { loop { } }\ntry { spin(); } catch (e) { print(`caught ${e}`); }\nprint(\"went on\");\n",
        ),
        (
            "in_map.rhai",
            "try { [1].map(|x| { loop { } }); } catch (e) { print(`caught ${e}`); }\nprint(\"went on\");\n",
        ),
        (
            "in_sort.rhai",
            "try { [2, 1].sort(|x, y| { loop { } }); } catch (e) { print(`caught ${e}`); }\nprint(\"went on\");\n",
        ),
    ] {
        let err = fails_within(&f, Duration::from_secs(5), file, source);
        assert!(err.contains("operation limit exceeded"), "{err}");
        assert!(f.printed().is_empty(), "{file}: {:?}", f.printed());
    }
}

#[test]
fn catching_a_time_limit_error_gives_the_script_no_more_time() {
    let f = by_time(Duration::from_millis(200));
    let err = fails_within(
        &f,
        Duration::from_secs(5),
        "catch.rhai",
        "try {\n    loop { }\n} catch {\n    loop { }\n}\n",
    );
    assert!(err.contains("time limit exceeded"), "{err}");
    let err = fails_within(
        &f,
        Duration::from_secs(5),
        "catch_map.rhai",
        "loop {\n    try { [1].map(|x| { loop { } }); } catch { }\n}\n",
    );
    assert!(err.contains("time limit exceeded"), "{err}");
}

#[test]
fn one_built_in_call_cannot_build_more_than_the_size_limits() {
    let f = by_time(Duration::from_secs(60));
    // A 100 KB string: replacing each of its characters by itself would
    // ask for 10 GB.
    let big = "let s = \"a\"; s.pad(100000, \"a\");\n";
    for (what, source) in [
        (
            "string pad",
            "let s = \"a\";\ns.pad(1 << 40, \"b\");\n".to_owned(),
        ),
        ("array pad", "let a = [];\na.pad(1 << 40, 0);\n".to_owned()),
        ("blob", "let x = 1;\nlet b = blob(1 << 40);\n".to_owned()),
        ("replace", format!("{big}let t = s.replace(\"a\", s);\n")),
        (
            "replace empty",
            format!("{big}let t = s.replace(\"\", s);\n"),
        ),
        ("replace char", format!("{big}let t = s.replace('a', s);\n")),
        (
            "replace twice",
            format!("{big}s.replace(\"a\", \"bb\"); s.replace(\"b\", s);\n"),
        ),
    ] {
        let err = fails_within(&f, Duration::from_secs(5), "big.rhai", &source);
        assert!(err.starts_with("big.rhai:2:"), "{what}: {err}");
        assert!(err.contains("too large"), "{what}: {err}");
    }
    // Within the limit, `replace` replaces as before.
    f.load(
        "small.rhai",
        "let s = \"abca\";\ns.replace(\"a\", \"xy\");\nlet t = \"abc\";\nt.replace('b', 'B');\nprint(`${s} ${t}`);\n",
    );
    assert_eq!(f.printed(), vec!["xybcxy aBc"]);
}

#[test]
fn an_interrupt_from_another_thread_stops_a_running_loop() {
    // The time limit only ends the test if the interrupt fails.
    let f = by_time(Duration::from_secs(8));
    let (printed, lines) = std::sync::mpsc::channel::<String>();
    f.rt.on_print(move |line| printed.send(line.to_owned()).unwrap());
    let interrupter = f.rt.interrupter();
    let pressed = std::thread::spawn(move || {
        // Once the script runs, as a user pressing Ctrl-C would.
        assert_eq!(lines.recv().unwrap(), "spinning");
        std::thread::sleep(Duration::from_millis(50));
        interrupter.interrupt();
        lines
    });
    let err = fails_within(
        &f,
        Duration::from_secs(5),
        "spin.rhai",
        "let x = 0;\nprint(\"spinning\");\nloop { x += 1; }\n",
    );
    let lines = pressed.join().unwrap();
    assert!(err.starts_with("spin.rhai:3:"), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    // The interrupt was spent on the call it stopped.
    f.load("after.rhai", "print(\"ran\");\n");
    assert_eq!(lines.try_recv().unwrap(), "ran");
}

#[test]
fn an_interrupt_while_no_call_runs_stops_the_next_call_only() {
    let f = Fixture::new();
    f.rt.interrupter().interrupt();
    let err = f.load_err("first.rhai", "print(\"first\");\n");
    assert!(err.contains("interrupted"), "{err}");
    f.load("second.rhai", "print(\"second\");\n");
    assert_eq!(f.printed(), vec!["second"]);
}

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
    guard::within(std::time::Duration::from_secs(5), move || {
        let f = small(|o| o.mod_dir = Some(dir));
        let object = f.spawn();
        match f.rt.load_script("main.rhai", script, object) {
            Ok(_) => Ok(f.printed()),
            Err(e) => Err(e.to_string()),
        }
    })
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
    guard::mkfifo(&dir.path().join("pipe.rhai"));
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
