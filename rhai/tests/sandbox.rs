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
