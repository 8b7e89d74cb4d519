//! The sandbox's limits against a script that tries to get round them: a
//! spent instruction budget that `pcall` cannot swallow, finalizers the
//! budget cannot reach, the memory limit's line, `string.dump` through the
//! string metatable.

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::Fixture;
use gantry_host::Source;
use gantry_lua::runtime::RuntimeOptions;

fn budget_options() -> RuntimeOptions {
    RuntimeOptions {
        instruction_budget: 200_000,
        watchdog_interval: Duration::from_millis(2),
        ..RuntimeOptions::default()
    }
}

// ------------------------------------------------------------ rule 1: budget

#[test]
fn the_instruction_budget_cannot_be_swallowed_by_pcall() {
    let f = Fixture::with(budget_options());
    let started = Instant::now();
    let err =
        f.rt.load_script(
            "escape.lua",
            "local caught = 0\n\
             for i = 1, 2000 do\n\
               pcall(function() while true do end end)\n\
               caught = caught + 1\n\
             end\n\
             print('escaped the budget', caught)\n",
            f.spawn(),
        )
        .unwrap_err()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(f.printed().is_empty());
    assert!(err.contains("escape.lua:"), "{err}");
    assert!(err.contains("instruction budget"), "{err}");
}

#[test]
fn the_spent_budget_is_not_swallowed_by_an_endless_pcall_loop_or_xpcall_handlers() {
    let f = Fixture::with(budget_options());
    // Unbounded: only a budget that stays spent ends this.
    let err =
        f.rt.load_script(
            "forever.lua",
            "while true do\n\
               xpcall(function() while true do end end, function(m) return m end)\n\
               pcall(function() while true do end end)\n\
             end\n",
            f.spawn(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("forever.lua:"), "{err}");
    assert!(err.contains("instruction budget"), "{err}");
}

#[test]
fn the_spent_budget_is_not_swallowed_by_coroutines_and_the_next_call_runs_normally() {
    let f = Fixture::with(budget_options());
    f.load(
        "co.lua",
        "ListenMessage('Go', nil, function()\n\
           while true do\n\
             local co = coroutine.wrap(function() while true do end end)\n\
             pcall(co)\n\
             coroutine.resume(coroutine.create(function() while true do end end))\n\
           end\n\
         end)\n\
         ListenMessage('Fine', nil, function()\n\
           local co = coroutine.wrap(function() local x = 0 for i = 1, 10000 do x = x + i end return x end)\n\
           print('fine', co())\n\
         end)\n",
    );
    let go = f.hub.key("Go").unwrap();
    let fine = f.hub.key("Fine").unwrap();
    f.hub.send(go, Source::Global, ()).unwrap();
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("co.lua:"), "{failures:?}");
    assert!(failures[0].contains("instruction budget"), "{failures:?}");
    // A new call gets a new budget: the coroutines and the main thread run
    // again at full length (well under the budget, longer than a STEP).
    for _ in 0..3 {
        f.hub.send(fine, Source::Global, ()).unwrap();
    }
    assert_eq!(f.failures(), Vec::<String>::new());
    assert_eq!(f.printed(), vec!["fine\t50005000"; 3]);
}

#[test]
fn a_sender_cannot_swallow_its_spent_budget_through_a_lane_listener() {
    let f = Fixture::with(budget_options());
    let err =
        f.rt.load_script(
            "lane.lua",
            "ListenMessage('K', nil, function() while true do end end)\n\
             while true do NotifyMessage('K') end\n",
            f.spawn(),
        )
        .unwrap_err()
        .to_string();
    // The stop names where the budget ran out (the listener's loop); the
    // traceback, where the sender was stopped.
    assert!(err.starts_with("lane.lua:1: instruction budget"), "{err}");
    assert!(err.contains("lane.lua:2:"), "{err}");
    // The first stopped listeners were their own stops, the sender going
    // on with half a budget each time; then the sender's loop is stopped
    // too (one outermost call runs a bounded number of budgets).
    let failures = f.failures();
    assert_eq!(failures.len(), 5, "{failures:?}");
    assert!(
        failures.iter().all(|m| m.starts_with("lane.lua:1:")),
        "{failures:?}"
    );
}

// ------------------------------------------------------------ rule 2: finalizers

#[test]
fn a_runaway_gc_finalizer_does_not_hang_the_host_at_exit() {
    // The runtime is dropped (the state closes) on another thread, so a
    // hang fails the test instead of stalling it.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let f = Fixture::new();
        let err =
            f.rt.load_script(
                "a.lua",
                "\nkeep = setmetatable({}, { __gc = function() while true do end end })\nprint('loaded')\n",
                f.spawn(),
            )
            .unwrap_err()
            .to_string();
        // Lua ignores a `__gc` added after `setmetatable`: harmless.
        f.load(
            "b.lua",
            "local mt = {}\nkeep = setmetatable({}, mt)\nmt.__gc = function() while true do end end\n\
             collectgarbage()\nprint('b loaded')\n",
        );
        let printed = f.printed();
        drop(f);
        let _ = tx.send((err, printed));
    });
    let (err, printed) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the runtime closed: no finalizer ran away");
    assert!(err.contains("a.lua:2:"), "{err}");
    assert!(err.contains("__gc"), "{err}");
    assert_eq!(printed, vec!["b loaded"]);
}

#[test]
fn setmetatable_refuses_any_gc_field_and_allows_other_metamethods() {
    let f = Fixture::new();
    f.load(
        "mt.lua",
        r#"
        print(pcall(setmetatable, {}, { __gc = true }))
        local ok, err = pcall(function() local t = setmetatable({}, { __gc = print }); return t end)
        print(ok, err)
        local t = setmetatable({}, { __index = function(_, k) return k .. "!" end })
        print(t.hi)
        do
          local closed = false
          do local c <close> = setmetatable({}, { __close = function() closed = true end }) end
          print("closed", closed)
        end
        "#,
    );
    let printed = f.printed();
    assert!(
        printed[0].starts_with("false") && printed[0].contains("__gc"),
        "{printed:?}"
    );
    assert!(
        printed[1].starts_with("false") && printed[1].contains("mt.lua:3:"),
        "{printed:?}"
    );
    assert_eq!(printed[2..], ["hi!", "closed\ttrue"]);
}

#[test]
fn the_userdata_the_sandbox_hands_out_have_protected_metatables() {
    let f = Fixture::new();
    f.load(
        "ud.lua",
        r#"
        ListenObjectMessage(self, "Q", nil, function(rsp) print(getmetatable(rsp)) end)
        ListenHook("H", nil, function(p, ctx) print(getmetatable(ctx)) end)
        print(getmetatable(self), getmetatable(GMP.World()), getmetatable(GMP.Named(self, "n")))
        SendObjectMessage(self, "Q", function() end)
        RunHook("H", {})
        print(pcall(setmetatable, self, {}))
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed[..3], ["false\tfalse\tfalse", "false", "false"]);
    assert!(printed[3].starts_with("false"), "{printed:?}");
}

#[test]
fn a_runaway_close_handler_is_stopped_by_the_budget() {
    let f = Fixture::with(budget_options());
    let err =
        f.rt.load_script(
            "close.lua",
            "do\n  local c <close> = setmetatable({}, { __close = function()\n    while true do end\n  end })\nend\n",
            f.spawn(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("close.lua:3:"), "{err}");
    assert!(err.contains("instruction budget"), "{err}");
}

// ------------------------------------------------------------ rule 3: memory

#[test]
fn memory_limit_at_a_top_level_names_the_script_and_line() {
    let f = Fixture::new();
    let err =
        f.rt.load_script(
            "hog.lua",
            "local x = 1\nlocal s = string.rep('x', 400 * 1024 * 1024)\nprint('after')\n",
            f.spawn(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("hog.lua:2:"), "{err}");
    assert!(err.contains("memory limit"), "{err}");
    assert!(f.printed().is_empty());
    // Through the string metatable as well, and with a separator.
    let err =
        f.rt.load_script(
            "hog2.lua",
            "local n = 300 * 1024 * 1024\n\nlocal s = ('x'):rep(n, ',')\n",
            f.spawn(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("hog2.lua:3:"), "{err}");
    // What fits is made, and `string.rep` keeps its own errors.
    f.load(
        "ok.lua",
        "print(#string.rep('ab', 3, '-'), string.rep('x', 0), string.rep(1.5, 2))\n\
         print(pcall(string.rep, 'x'))\n",
    );
    let printed = f.printed();
    assert_eq!(printed[0], "8\t\t1.51.5");
    assert!(
        printed[1].starts_with("false") && printed[1].contains("rep"),
        "{printed:?}"
    );
}

#[test]
fn memory_filling_up_in_a_long_handler_names_the_allocating_line() {
    let f = Fixture::with(RuntimeOptions {
        memory_limit: Some(16 * 1024 * 1024),
        watchdog_interval: Duration::from_millis(1),
        ..RuntimeOptions::default()
    });
    f.load(
        "grow.lua",
        "ListenMessage('Go', nil, function()\n\
           local x = 0\n\
           for i = 1, 3000000 do x = x + i end\n\
           local t = {}\n\
           for i = 1, 1e9 do\n\
             t[i] = { i }\n\
           end\n\
         end)\n\
         ListenMessage('Go', nil, function() print('next listener') end)\n",
    );
    let go = f.hub.key("Go").unwrap();
    f.hub.send(go, Source::Global, ()).unwrap();
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("grow.lua:5:") || failures[0].contains("grow.lua:6:"),
        "{failures:?}"
    );
    assert!(failures[0].contains("memory limit"), "{failures:?}");
    assert_eq!(f.printed(), vec!["next listener"]);
    // The garbage goes; the next call has its memory back.
    f.rt.collect_garbage().unwrap();
    assert!(f.rt.used_memory() < 8 * 1024 * 1024);
}

// ------------------------------------------------------------ rule 4: string.dump

#[test]
fn string_dump_is_not_reachable_through_the_string_metatable() {
    let f = Fixture::new();
    f.load(
        "dump.lua",
        "print(type(string.dump), type((\"\").dump), type(('x').rep), ('abc'):upper(), ('%d'):format(7))\n\
         string.upper = nil\n\
         print(('abc'):upper(), getmetatable(''))\n",
    );
    assert_eq!(
        f.printed(),
        vec!["nil\tnil\tfunction\tABC\t7", "ABC\tfalse"]
    );
    // A script changing its own `string` changes nothing for the others.
    f.load("other.lua", "print(string.upper('x'), ('y'):upper())");
    assert_eq!(f.printed(), vec!["X\tY"]);
}
