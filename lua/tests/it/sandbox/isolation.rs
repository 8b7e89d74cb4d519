//! Isolation, each sandbox limit, error isolation and owner collection.

use std::time::{Duration, Instant};

use gantry_host::Source;
use gantry_lua::runtime::LuaOptions;
use gantry_test_support::guard;

use crate::support::Fixture;

#[test]
fn each_script_has_its_own_globals_and_library_tables() {
    let f = Fixture::new();
    let (a, _) = f.load(
        "a.lua",
        "secret = 42\nstring.upper = nil\nGMP.NotifyMessage = nil\nfunction helper() return 1 end",
    );
    let (b, _) = f.load(
        "b.lua",
        "print(secret, helper, string.upper('x'), type(GMP.NotifyMessage), getmetatable(''))",
    );
    assert_eq!(f.printed(), vec!["nil\tnil\tX\tfunction\tfalse"]);
    assert_eq!(f.rt.global::<i64>(a, "secret").unwrap(), 42);
    assert_eq!(f.rt.global::<Option<i64>>(b, "secret").unwrap(), None);
}

#[test]
fn sandbox_has_no_io_os_debug_package_or_file_loading() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        print(io, debug, package, dofile, loadfile, string.dump)
        print(os.execute, os.exit, os.getenv, os.remove, type(os.clock), type(os.time), type(os.date))
        "#,
    );
    assert_eq!(
        f.printed(),
        vec![
            "nil\tnil\tnil\tnil\tnil\tnil",
            "nil\tnil\tnil\tnil\tfunction\tfunction\tfunction"
        ]
    );
}

#[test]
fn sandbox_load_refuses_binary_chunks_and_runs_text_in_the_script_env() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        mine = "here"
        print(load("return mine")())
        print(pcall(load, "\27Lua", "x", "b"))
        local fn, err = load("\27LuaT\0")
        print(fn, err ~= nil)
        print(pcall(collectgarbage, "stop"))
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed[0], "here");
    assert!(
        printed[1].starts_with("false") && printed[1].contains("text chunks"),
        "{printed:?}"
    );
    assert!(printed[2].starts_with("nil\ttrue"), "{printed:?}");
    assert!(
        printed[3].starts_with("false") && printed[3].contains("not allowed"),
        "{printed:?}"
    );
}

#[test]
fn require_loads_scripts_of_the_mod_folder_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::write(
        dir.path().join("lib/util.lua"),
        "local M = {}\nfunction M.twice(x) return x * 2 end\nM.owner = self\nreturn M",
    )
    .unwrap();
    let f = Fixture::with(LuaOptions {
        mod_dir: Some(dir.path().to_path_buf()),
        ..LuaOptions::default()
    });
    f.load(
        "a.lua",
        r#"
        local util = require("lib.util")
        print(util.twice(21), util.owner == self, require("lib.util") == util)
        print(pcall(require, "../secret"))
        print(pcall(require, "/etc/passwd"))
        print(pcall(require, "os"))
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed[0], "42\ttrue\ttrue");
    for line in &printed[1..] {
        assert!(line.starts_with("false"), "{printed:?}");
    }
}

#[test]
fn memory_limit_stops_the_script_and_the_host_goes_on() {
    let f = Fixture::with(LuaOptions {
        memory_limit: Some(8 * 1024 * 1024),
        ..LuaOptions::default()
    });
    f.load(
        "ok.lua",
        "ListenMessage('After', nil, function() print('still alive') end)",
    );
    let err =
        f.rt.load_script(
            "hog.lua",
            "local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 1024) .. i end",
            f.spawn(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("hog.lua"), "{err}");
    assert!(err.to_string().contains("memory"), "{err}");
    f.rt.collect_garbage().unwrap();
    let key = f.hub.key("After").unwrap();
    f.hub.send(key, Source::Global, ()).unwrap();
    assert_eq!(f.printed(), vec!["still alive"]);
}

fn budget_options() -> LuaOptions {
    LuaOptions {
        budget: Some(2_000_000),
        watchdog_interval: Duration::from_millis(5),
        ..LuaOptions::default()
    }
}

#[test]
fn instruction_budget_stops_a_runaway_top_level_with_file_and_line() {
    let f = Fixture::with(budget_options());
    let started = Instant::now();
    let err =
        f.rt.load_script(
            "loop.lua",
            "local x = 0\n\nwhile true do x = x + 1 end\n",
            f.spawn(),
        )
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20));
    let text = err.to_string();
    assert!(text.contains("loop.lua:3:"), "{text}");
    assert!(text.contains("instruction budget"), "{text}");
}

#[test]
fn instruction_budget_stops_a_runaway_handler_and_other_listeners_still_run() {
    let f = Fixture::with(budget_options());
    f.load(
        "a.lua",
        r#"
        ListenMessage("Tick", nil, function() print("first") end)
        ListenMessage("Tick", nil, function()
            while true do end
        end)
        ListenMessage("Tick", nil, function() print("third") end)
        "#,
    );
    let key = f.hub.key("Tick").unwrap();
    f.hub.send(key, Source::Global, ()).unwrap();
    assert_eq!(f.printed(), vec!["first", "third"]);
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("a.lua:4:"), "{failures:?}");
    // The next dispatch runs normally (the hook was disarmed).
    f.hub.send(key, Source::Global, ()).unwrap();
    assert_eq!(f.printed().len(), 2);
}

#[test]
fn instruction_budget_stops_a_runaway_coroutine() {
    let f = Fixture::with(budget_options());
    let err =
        f.rt.load_script(
            "co.lua",
            "local co = coroutine.wrap(function()\n  while true do end\nend)\nco()\n",
            f.spawn(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("co.lua:2:"), "{err}");
}

#[test]
fn an_error_in_one_handler_is_reported_with_line_and_traceback_and_others_run() {
    let f = Fixture::new();
    f.load(
        "err.lua",
        "ListenMessage('Boom', nil, function() print('a') end)\n\
         ListenMessage('Boom', nil, function(n)\n  local t = nil\n  return t.field\nend)\n\
         ListenMessage('Boom', nil, function() print('c') end)\n",
    );
    let key = f.hub.key("Boom").unwrap();
    f.hub.send(key, Source::Global, (1i64,)).unwrap();
    assert_eq!(f.printed(), vec!["a", "c"]);
    let failures = f.failures();
    assert_eq!(failures.len(), 1);
    assert!(failures[0].contains("err.lua:4:"), "{failures:?}");
    assert!(failures[0].contains("stack traceback"), "{failures:?}");
    f.hub.send(key, Source::Global, (2i64,)).unwrap();
    assert_eq!(f.printed(), vec!["a", "c"]);
}

#[test]
fn a_listener_owned_by_a_table_goes_when_the_owner_is_collected() {
    let f = Fixture::new();
    f.load(
        "owner.lua",
        r#"
        do
            local owner = { name = "buff" }
            -- the closure captures its owner: it must not keep it alive
            ListenMessage("Tick", owner, function() print("alive", owner.name) end)
        end
        kept = { name = "kept" }
        ListenMessage("Tick", kept, function() print("alive", kept.name) end)
        "#,
    );
    let key = f.hub.key("Tick").unwrap();
    f.hub.send(key, Source::Global, ()).unwrap();
    assert_eq!(f.printed(), vec!["alive\tbuff", "alive\tkept"]);
    assert_eq!(f.hub.listener_count(), 2);
    f.rt.collect_garbage().unwrap();
    f.hub.send(key, Source::Global, ()).unwrap();
    assert_eq!(f.printed(), vec!["alive\tkept"]);
    assert_eq!(f.hub.listener_count(), 1);
}

#[test]
fn destroying_the_scripts_object_drops_its_listeners() {
    let f = Fixture::new();
    let (_, object) = f.load(
        "a.lua",
        "ListenMessage('Tick', nil, function() print('tick') end)",
    );
    assert_eq!(f.hub.listener_count(), 1);
    f.hub.destroy(object).unwrap();
    assert_eq!(f.hub.listener_count(), 0);
}

#[test]
fn a_listener_sending_its_own_key_stops_at_the_nesting_limit() {
    let f = Fixture::new();
    f.load(
        "echo.lua",
        "depth = 0\nListenMessage('Echo', nil, function()\n  depth = depth + 1\n  NotifyMessage('Echo')\nend)\n",
    );
    let key = f.hub.key("Echo").unwrap();
    f.hub.send(key, Source::Global, ()).unwrap();
    let failures = f.failures();
    assert!(
        failures.iter().any(|m| m.contains("nested")),
        "{failures:?}"
    );
}

/// Loads `script` in a runtime whose mod folder is `dir`, on its own thread,
/// and returns what it printed; fails if that takes over five seconds (a
/// `require` that blocks on a FIFO shows as a failure, not a hang).
fn printed_by_script_in(dir: &std::path::Path, script: &'static str) -> Vec<String> {
    let dir = dir.to_path_buf();
    guard::within(Duration::from_secs(5), move || {
        let f = Fixture::with(LuaOptions {
            mod_dir: Some(dir),
            ..LuaOptions::default()
        });
        f.load("main.lua", script);
        f.printed()
    })
}

fn assert_refused(printed: &[String], needle: &str) {
    assert_eq!(printed.len(), 1, "{printed:?}");
    assert!(
        printed[0].starts_with("false") && printed[0].contains(needle),
        "{printed:?}"
    );
}

#[cfg(unix)]
#[test]
fn require_refuses_a_module_that_links_out_of_the_mod_folder() {
    let root = tempfile::tempdir().unwrap();
    let mod_dir = root.path().join("mod");
    std::fs::create_dir_all(&mod_dir).unwrap();
    std::fs::write(root.path().join("secret.lua"), "return 'secret'").unwrap();
    std::os::unix::fs::symlink("../secret.lua", mod_dir.join("evil.lua")).unwrap();
    // A folder link out is refused the same way.
    std::os::unix::fs::symlink("..", mod_dir.join("up")).unwrap();
    let printed = printed_by_script_in(&mod_dir, "print(pcall(require, 'evil'))");
    assert_refused(&printed, "evil.lua leads outside");
    let printed = printed_by_script_in(&mod_dir, "print(pcall(require, 'up.secret'))");
    assert_refused(&printed, "up/secret.lua leads outside");
}

#[cfg(unix)]
#[test]
fn require_follows_a_link_that_stays_inside_the_mod_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/util.lua"), "return 42").unwrap();
    std::os::unix::fs::symlink("real/util.lua", dir.path().join("util.lua")).unwrap();
    let printed = printed_by_script_in(dir.path(), "print(require('util'))");
    assert_eq!(printed, ["42"]);
}

#[cfg(unix)]
#[test]
fn require_of_a_fifo_fails_at_once_instead_of_blocking() {
    let dir = tempfile::tempdir().unwrap();
    guard::mkfifo(&dir.path().join("pipe.lua"));
    let printed = printed_by_script_in(dir.path(), "print(pcall(require, 'pipe'))");
    assert_refused(
        &printed,
        "pipe.lua is a FIFO (named pipe), not a regular file",
    );
}

#[cfg(unix)]
#[test]
fn require_of_a_module_linked_to_dev_zero_fails_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.lua")).unwrap();
    let printed = printed_by_script_in(dir.path(), "print(pcall(require, 'zero'))");
    assert_refused(&printed, "zero.lua is a character device");
}

#[test]
fn require_refuses_a_module_larger_than_the_script_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("huge.lua")).unwrap();
    file.set_len(gantry_host::files::MAX_SCRIPT_BYTES + 1)
        .unwrap();
    drop(file);
    let printed = printed_by_script_in(dir.path(), "print(pcall(require, 'huge'))");
    assert_refused(&printed, "huge.lua is larger than 16 MiB");
}

#[test]
fn require_loads_a_module_starting_with_a_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bom.lua"), "\u{FEFF}return 'read'").unwrap();
    let printed = printed_by_script_in(dir.path(), "print(require('bom'))");
    assert_eq!(printed, ["read"]);
}

#[test]
fn require_of_a_module_that_is_not_utf8_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("latin1.lua"), b"-- ok\nreturn '\xE9t\xE9'").unwrap();
    let printed = printed_by_script_in(dir.path(), "print(pcall(require, 'latin1'))");
    assert_refused(&printed, "latin1.lua is not valid UTF-8 text (line 2)");
}

/// Calls one library function the same way in a script of the sandbox and
/// in a plain Lua state (Lua's own C functions), and describes what it
/// gave: each value with its type, or the error (whatever line it names).
const LIBRARY_CALL: &str = r#"
function library_call(kind, s, p, a, b)
  local function pack(...) return { n = select('#', ...), ... } end
  local r
  if kind == "find" then r = pack(pcall(string.find, s, p, a, b))
  elseif kind == "match" then r = pack(pcall(string.match, s, p, a))
  elseif kind == "gmatch" then
    r = pack(pcall(function()
      local out = {}
      for x, y, z in string.gmatch(s, p, a) do
        out[#out + 1] = tostring(x) .. "|" .. tostring(y) .. "|" .. tostring(z)
        if #out > 50 then break end
      end
      return table.concat(out, ",")
    end))
  elseif kind == "gsub" then r = pack(pcall(string.gsub, s, p, a, b))
  elseif kind == "gsub_function" then
    r = pack(pcall(string.gsub, s, p, function(x, y)
      if x == "b" then return nil end
      return "<" .. tostring(x) .. "," .. tostring(y) .. ">"
    end, b))
  elseif kind == "gsub_table" then
    r = pack(pcall(string.gsub, s, p, { a = "A", b = false, [1] = "one" }, b))
  elseif kind == "sort_long" then
    r = pack(pcall(function()
      local t = {}
      for i = 1, 20000 do t[i] = (i * 7919) % 20011 end
      if a == "mixed" then t[10000] = "x" end
      table.sort(t, b and function(x, y) return x > y end or nil)
      return t[1], t[2], t[20000], #t
    end))
  else
    -- table[kind](t, a, b, s as a number), trailing nils left out.
    local f = table[kind]
    local t = { 1, 2, 3, "x", 5 }
    local args = pack(a, b, tonumber(s))
    local n = args.n
    while n > 0 and args[n] == nil do n = n - 1 end
    r = pack(pcall(function()
      local v = f(t, table.unpack(args, 1, n))
      return v, table.concat(t, ",", 1, #t)
    end))
  end
  local out = {}
  for i = 1, r.n do
    local v = r[i]
    if type(v) == "string" then v = v:gsub("^[%w%.]+:%d+: ", "") end
    if type(v) == "table" then v = "" end
    out[i] = type(r[i]) .. ":" .. tostring(v)
  end
  return table.concat(out, " ")
end
"#;

/// The same [`LIBRARY_CALL`] in a sandboxed script and in plain Lua.
struct LibraryPair {
    f: Fixture,
    sandboxed: mlua::Function,
    plain: mlua::Lua,
    original: mlua::Function,
}

impl LibraryPair {
    fn new() -> Self {
        let f = Fixture::new();
        let (id, _) = f.load("library.lua", LIBRARY_CALL);
        let sandboxed = f.rt.global::<mlua::Function>(id, "library_call").unwrap();
        let plain = mlua::Lua::new();
        plain
            .load(LIBRARY_CALL)
            .set_name("@library.lua")
            .exec()
            .unwrap();
        let original = plain.globals().get("library_call").unwrap();
        Self {
            f,
            sandboxed,
            plain,
            original,
        }
    }

    /// Both sides' description of `kind(s, p, a, b)`: (sandboxed, Lua's).
    fn both(&self, kind: &str, s: &[u8], p: &[u8], a: &Arg, b: &Arg) -> (String, String) {
        let call = |function: &mlua::Function, lua: &mlua::Lua| -> String {
            let args = (
                kind,
                lua.create_string(s).unwrap(),
                lua.create_string(p).unwrap(),
                a.value(lua),
                b.value(lua),
            );
            let described = function
                .call::<mlua::LuaString>(args)
                .unwrap_or_else(|e| panic!("{kind}({s:?}, {p:?}, {a:?}, {b:?}): {e}"));
            described.as_bytes().escape_ascii().to_string()
        };
        (
            call(&self.sandboxed, self.f.rt.lua()),
            call(&self.original, &self.plain),
        )
    }

    fn assert_same(&self, kind: &str, s: &[u8], p: &[u8], a: &Arg, b: &Arg) {
        let (sandboxed, original) = self.both(kind, s, p, a, b);
        assert_eq!(
            sandboxed,
            original,
            "{kind}({:?}, {:?}, {a:?}, {b:?})",
            String::from_utf8_lossy(s),
            String::from_utf8_lossy(p)
        );
    }
}

/// An optional argument of a library call.
#[derive(Debug, Clone)]
enum Arg {
    None,
    Int(i64),
    Bool(bool),
    Text(&'static str),
}

impl Arg {
    fn value(&self, lua: &mlua::Lua) -> mlua::Value {
        match self {
            Arg::None => mlua::Value::Nil,
            Arg::Int(i) => mlua::Value::Integer(*i),
            Arg::Bool(b) => mlua::Value::Boolean(*b),
            Arg::Text(t) => mlua::Value::String(lua.create_string(t).unwrap()),
        }
    }
}

#[test]
fn bounded_pattern_functions_give_what_lua_gives_on_chosen_cases() {
    use Arg::{Bool, Int, None as No, Text};
    let pair = LibraryPair::new();
    let subjects: [&[u8]; 6] = [
        b"hello world from Lua",
        b"key = value; other=1",
        b"(a(b)c) [x] {y}",
        b"THE (quick) fox",
        b"aaa\0bbb\x0b\xff",
        b"",
    ];
    let patterns: [&[u8]; 40] = [
        b"o",
        b"o w",
        b"^h",
        b"^w",
        b"d$",
        b"$",
        b"^$",
        b"%w+",
        b"(%w+)%s*=%s*(%w+)",
        b"%a+",
        b"%A+",
        b"%d",
        b"%s",
        b"%S+",
        b"%p",
        b"%c",
        b"%x+",
        b"%u",
        b"%l+",
        b"%g+",
        b"[aeiou]",
        b"[^aeiou ]+",
        b"[a-f]+",
        b"[%a_][%w_]*",
        b"[]]",
        b"[^]]",
        b"%b()",
        b"%b[]",
        b"%f[%w]%w+",
        b"%f[%W]",
        b"()o()",
        b"(l)(l)",
        b"(%w)%1",
        b"a-b",
        b".-",
        b".*",
        b"x?y",
        b"(h)(e)(l)",
        b"\0",
        b"[%z]",
    ];
    for s in subjects {
        for p in patterns {
            for kind in ["find", "match", "gmatch", "gsub_function", "gsub_table"] {
                pair.assert_same(kind, s, p, &No, &No);
            }
            pair.assert_same("find", s, p, &Int(3), &No);
            pair.assert_same("find", s, p, &Int(-4), &Bool(true));
            pair.assert_same("match", s, p, &Int(100), &No);
            pair.assert_same("gmatch", s, p, &Int(-3), &No);
            pair.assert_same("gsub", s, p, &Text("[%0|%1]%%"), &No);
            pair.assert_same("gsub", s, p, &Int(7), &Int(2));
        }
    }
    // Lua's errors, word for word.
    for p in [
        &b"%"[..],
        b"[a",
        b"[^",
        b"%b",
        b"%b(",
        b"%f",
        b"%fa",
        b"(()",
        b"a)",
        b"%1",
        b"(a)%2",
        b"%0",
        b"((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))",
    ] {
        for kind in ["find", "match", "gmatch", "gsub_function"] {
            pair.assert_same(kind, b"aa(b)", p, &No, &No);
        }
    }
    for repl in ["%2", "%", "x%y", "%9"] {
        pair.assert_same("gsub", b"abc", b"(b)", &Text(repl), &No);
    }
    pair.assert_same("gsub", b"abc", b"b", &Bool(true), &No);
    pair.assert_same("gsub", b"abc", b"b", &Text("x"), &Text("2"));
    pair.assert_same("gsub", b"abc", b"b", &Text("x"), &Text("z"));
    pair.assert_same("find", b"abc", b"b", &Text("2"), &No);
    pair.assert_same("find", b"abc", b"b", &Text("two"), &No);
    // Deep recursion is Lua's "pattern too complex".
    pair.assert_same("match", &[b'a'; 300], &b"a?".repeat(300), &No, &No);
}

#[test]
fn bounded_table_functions_give_what_lua_gives() {
    use Arg::{Bool, Int, None as No, Text};
    let pair = LibraryPair::new();
    // table[kind](t, a, b, s) on t = { 1, 2, 3, "x", 5 }.
    let cases: [(&str, Arg, Arg, &[u8]); 26] = [
        ("insert", Int(9), No, b""),
        ("insert", Int(1), Text("new"), b""),
        ("insert", Int(6), Text("new"), b""),
        ("insert", Int(7), Text("new"), b""),
        ("insert", Int(0), Text("new"), b""),
        ("insert", Int(1), Text("new"), b"3"),
        ("insert", Text("x"), Text("new"), b""),
        ("remove", No, No, b""),
        ("remove", Int(1), No, b""),
        ("remove", Int(6), No, b""),
        ("remove", Int(7), No, b""),
        ("remove", Text("x"), No, b""),
        ("move", Int(1), Int(3), b"2"),
        ("move", Int(2), Int(5), b"1"),
        ("move", Int(3), Int(1), b"1"),
        ("move", Int(0), Int(i64::MAX), b"1"),
        ("move", Int(1), Int(3), b"9223372036854775807"),
        ("concat", Text("-"), Int(2), b"4"),
        ("concat", Text("-"), Int(0), b""),
        ("concat", Text(","), Int(4), b"9"),
        ("concat", No, No, b""),
        ("sort", No, No, b""),
        ("sort_long", No, No, b""),
        ("sort_long", No, Bool(true), b""),
        ("sort_long", Text("mixed"), No, b""),
        ("sort_long", Text("mixed"), Bool(true), b""),
    ];
    for (kind, a, b, s) in &cases {
        pair.assert_same(kind, s, b"", a, b);
    }
}

std::thread_local! {
    /// One pair for all the random cases (a runtime per case is slow).
    static RANDOM_PAIR: LibraryPair = LibraryPair::new();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

    #[test]
    fn bounded_pattern_functions_give_what_lua_gives_on_random_patterns(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "a", "b", ".", "%a", "%d", "%s", "%w", "%W", "[ab]", "[^a]", "[a-c]", "[%d)]",
            "%%", "(", ")", "()", "*", "+", "-", "?", "^", "$", "%b()", "%f[%w]", "%f[%W]",
            "%1", "%2", "]", "[", "%",
        ]), 0..8),
        subject in proptest::collection::vec(
            proptest::sample::select(b"aab()[] 1,x%\0".to_vec()), 0..24),
        init in -6i64..30,
    ) {
        let p = pieces.concat();
        let p = p.as_bytes();
        RANDOM_PAIR.with(|pair| {
            for kind in ["find", "match", "gmatch", "gsub_function", "gsub_table"] {
                pair.assert_same(kind, &subject, p, &Arg::None, &Arg::None);
            }
            pair.assert_same("find", &subject, p, &Arg::Int(init), &Arg::None);
            pair.assert_same("gmatch", &subject, p, &Arg::Int(init), &Arg::None);
            pair.assert_same("gsub", &subject, p, &Arg::Text("<%0%1>"), &Arg::Int(init));
        });
    }
}

#[test]
fn a_script_handed_over_with_a_byte_order_mark_runs() {
    let f = Fixture::new();
    f.load(
        "bom.lua",
        "\u{FEFF}print('ran')\nNotifyMessage('Bom.Sent', 1)\n",
    );
    assert_eq!(f.printed(), ["ran"]);
    assert!(f.failures().is_empty());
}
