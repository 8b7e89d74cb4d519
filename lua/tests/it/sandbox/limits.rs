//! The sandbox's limits against a script that tries to get round them: a
//! spent instruction budget that `pcall` cannot swallow, finalizers the
//! budget cannot reach, the memory limit's line, `string.dump` through the
//! string metatable, the time limit (costly C calls, message handlers,
//! comparators, coroutines, `__close`), the host's interrupt, and the
//! library functions whose one C call a script could make run long.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use gantry_host::Source;
use gantry_host::face::ScriptRuntime;
use gantry_lua::runtime::LuaOptions;

use crate::support::Fixture;

fn budget_options() -> LuaOptions {
    LuaOptions {
        budget: Some(200_000),
        watchdog_interval: Duration::from_millis(2),
        ..LuaOptions::default()
    }
}

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
    let f = Fixture::with(LuaOptions {
        memory_limit: Some(16 * 1024 * 1024),
        watchdog_interval: Duration::from_millis(1),
        ..LuaOptions::default()
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

/// A time limit short enough for a test, the instruction budget out of
/// the way: what stops a call here is the clock.
fn time_options(limit: Duration) -> LuaOptions {
    LuaOptions {
        budget: None,
        time_limit: Some(limit),
        watchdog_interval: Duration::from_millis(5),
        ..LuaOptions::default()
    }
}

/// Loads `source` and returns its top level's error and how long it ran.
fn stopped_top_level(f: &Fixture, file: &str, source: &str) -> (String, Duration) {
    let started = Instant::now();
    let err =
        f.rt.load_script(file, source, f.spawn())
            .expect_err("the script was stopped")
            .to_string();
    (err, started.elapsed())
}

#[test]
fn a_loop_of_costly_c_calls_is_stopped_by_the_time_limit_at_its_line() {
    let f = Fixture::with(time_options(Duration::from_secs(5)));
    f.load(
        "costly.lua",
        "local t = {}\n\
         for i = 1, 200000 do t[i] = i end\n\
         ListenMessage('Go', nil, function()\n\
           for i = 1, 1e9 do table.insert(t, 1, 0); table.remove(t, 1) end\n\
         end)\n\
         ListenMessage('Go', nil, function() print('next listener') end)\n",
    );
    f.rt.set_time_limit(Some(Duration::from_millis(200)));
    let go = f.hub.key("Go").unwrap();
    let started = Instant::now();
    f.hub.send(go, Source::Global, ()).unwrap();
    let elapsed = started.elapsed();
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0]
            .starts_with("costly.lua:4: time limit exceeded: the call ran longer than 200ms"),
        "{failures:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
    // The stop was that listener's: the next one ran.
    assert_eq!(f.printed(), vec!["next listener"]);
}

#[test]
fn a_pcall_loop_cannot_swallow_the_time_limit() {
    let f = Fixture::with(time_options(Duration::from_millis(200)));
    let (err, elapsed) = stopped_top_level(
        &f,
        "swallow.lua",
        "local caught = 0\n\
         while true do\n\
           local ok, e = pcall(function() while true do end end)\n\
           caught = caught + 1\n\
           if caught % 100000 == 0 then print('still running', e) end\n\
         end\n",
    );
    assert!(
        err.starts_with("swallow.lua:3: time limit exceeded"),
        "{err}"
    );
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
    assert!(f.printed().is_empty());
}

#[test]
fn an_xpcall_message_handler_that_loops_does_not_run_after_a_stop() {
    for (options, stop) in [
        (budget_options(), "instruction budget"),
        (
            time_options(Duration::from_millis(200)),
            "time limit exceeded",
        ),
    ] {
        let f = Fixture::with(options);
        // An ordinary error still reaches the handler, and a coroutine
        // still yields across xpcall.
        f.load(
            "handled.lua",
            "print(xpcall(function() error('boom', 0) end, function(e) return 'handled ' .. e end))\n\
             local co = coroutine.wrap(function()\n\
               return xpcall(function() return coroutine.yield('out') .. '!' end, print)\n\
             end)\n\
             print(co(), co('back'))\n",
        );
        assert_eq!(f.printed(), vec!["false\thandled boom", "out\ttrue\tback!"]);
        let (err, elapsed) = stopped_top_level(
            &f,
            "handler.lua",
            "xpcall(function() while true do end end,\n\
             function(e) while true do end end)\n",
        );
        assert!(err.starts_with("handler.lua:1: "), "{err}");
        assert!(err.contains(stop), "{err}");
        assert!(elapsed < Duration::from_secs(5), "ran {elapsed:?}");
    }
}

#[test]
fn a_sort_comparator_that_loops_is_stopped() {
    let f = Fixture::with(time_options(Duration::from_millis(200)));
    let (err, elapsed) = stopped_top_level(
        &f,
        "sort.lua",
        "local t = { 3, 1, 2 }\n\
         table.sort(t, function(a, b)\n\
           while true do end\n\
         end)\n",
    );
    assert!(err.starts_with("sort.lua:3: time limit exceeded"), "{err}");
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
}

#[test]
fn a_long_sort_with_a_c_comparator_stops_at_the_time_limit() {
    // `math.ult` compares in C: without a Lua comparison between the
    // sort's steps, sorting millions of rows would be one long C call.
    let f = Fixture::with(time_options(Duration::from_secs(5)));
    f.load(
        "rows.lua",
        "rows = {}\nfor i = 1, 2000000 do rows[i] = (i * 7919) % 2000003 end\n\
         ListenMessage('Sort', nil, function() table.sort(rows, math.ult) end)\n\
         ListenMessage('Small', nil, function()\n\
           local t = { 5, 3, 9, 1 }\n\
           table.sort(t, math.ult)\n\
           local u = { 'b', 'c', 'a' }\n\
           table.sort(u)\n\
           print(table.concat(t, ' '), table.concat(u, ' '))\n\
         end)\n",
    );
    f.rt.set_time_limit(Some(Duration::from_millis(100)));
    let started = Instant::now();
    f.hub
        .send(f.hub.key("Sort").unwrap(), Source::Global, ())
        .unwrap();
    let elapsed = started.elapsed();
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("rows.lua:3: time limit exceeded"),
        "{failures:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
    // Short sorts sort as they always did.
    f.hub
        .send(f.hub.key("Small").unwrap(), Source::Global, ())
        .unwrap();
    assert_eq!(f.failures(), Vec::<String>::new());
    assert_eq!(f.printed(), vec!["1 3 5 9\ta b c"]);
}

#[test]
fn a_coroutine_that_loops_is_stopped_by_the_time_limit() {
    let f = Fixture::with(time_options(Duration::from_millis(200)));
    // Few instructions, costly C calls, inside a coroutine.
    let (err, elapsed) = stopped_top_level(
        &f,
        "co.lua",
        "local t = {}\nfor i = 1, 100000 do t[i] = i end\n\
         local co = coroutine.wrap(function()\n\
           for i = 1, 1e9 do table.insert(t, 1, 0); table.remove(t, 1) end\n\
         end)\n\
         co()\n",
    );
    assert!(err.starts_with("co.lua:4: time limit exceeded"), "{err}");
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
    let (err, elapsed) = stopped_top_level(
        &f,
        "co2.lua",
        "local co = coroutine.create(function() while true do end end)\n\
         print(coroutine.resume(co))\n\
         while true do end\n",
    );
    assert!(err.starts_with("co2.lua:1: time limit exceeded"), "{err}");
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
    assert!(f.printed().is_empty());
}

#[test]
fn a_close_handler_that_loops_is_stopped_by_the_time_limit() {
    let f = Fixture::with(time_options(Duration::from_millis(200)));
    let (err, elapsed) = stopped_top_level(
        &f,
        "close.lua",
        "local t = {}\nfor i = 1, 100000 do t[i] = i end\n\
         do\n\
           local c <close> = setmetatable({}, { __close = function()\n\
             for i = 1, 1e9 do table.insert(t, 1, 0); table.remove(t, 1) end\n\
           end })\n\
         end\n",
    );
    assert!(err.starts_with("close.lua:5: time limit exceeded"), "{err}");
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
}

#[test]
fn closing_a_coroutine_stopped_by_a_limit_runs_none_of_its_close_handlers() {
    // Lua leaves a coroutine killed inside the budget's hook with its hooks
    // off: its `__close` would run unbounded. On another thread, so that a
    // hang fails the test instead of stalling it.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let f = Fixture::with(budget_options());
        f.load(
            "co.lua",
            "co = coroutine.create(function()\n\
               local c <close> = setmetatable({}, { __close = function() while true do end end })\n\
               while true do end\n\
             end)\n\
             ListenMessage('Run', nil, function() coroutine.resume(co) end)\n\
             ListenMessage('Close', nil, function() print(coroutine.close(co)) end)\n",
        );
        f.hub
            .send(f.hub.key("Run").unwrap(), Source::Global, ())
            .unwrap();
        let stopped = f.failures();
        f.hub
            .send(f.hub.key("Close").unwrap(), Source::Global, ())
            .unwrap();
        let _ = tx.send((stopped, f.failures(), f.printed()));
    });
    let (stopped, failures, printed) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("coroutine.close returned: the __close handler did not run away");
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    assert!(stopped[0].contains("instruction budget"), "{stopped:?}");
    assert_eq!(failures, Vec::<String>::new());
    assert_eq!(printed.len(), 1, "{printed:?}");
    assert!(
        printed[0].starts_with("false\tthe coroutine was stopped by a sandbox limit"),
        "{printed:?}"
    );
}

#[test]
fn an_interrupter_stops_a_running_loop_from_another_thread() {
    fn shareable<T: Send + Sync + Clone + 'static>(_: &T) {}
    let f = Fixture::with(time_options(Duration::from_secs(60)));
    let interrupter = f.rt.interrupter();
    shareable(&interrupter);
    assert!(!interrupter.is_interrupted());
    let remote = interrupter.clone();
    let ctrl_c = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        remote.interrupt();
    });
    let (err, elapsed) = stopped_top_level(
        &f,
        "spin.lua",
        "local caught = 0\n\
         while true do\n\
           pcall(function() while true do end end)\n\
           caught = caught + 1\n\
         end\n",
    );
    ctrl_c.join().unwrap();
    assert!(err.starts_with("spin.lua:"), "{err}");
    assert!(err.contains("interrupted by the host"), "{err}");
    assert!(elapsed < Duration::from_secs(5), "ran {elapsed:?}");
    assert!(interrupter.is_interrupted());
    // The interrupt stays: a call after it is stopped too.
    // (It may be stopped at its very first instruction, before Lua gives
    // that a line: the script is named either way.)
    let (err, _) = stopped_top_level(&f, "after.lua", "while true do end\n");
    assert!(err.starts_with("after.lua"), "{err}");
    assert!(err.contains("interrupted by the host"), "{err}");
}

#[test]
fn a_pattern_with_many_lazy_quantifiers_is_stopped_in_time() {
    // The time limit out of the way: the pattern's own step limit stops it.
    let f = Fixture::with(time_options(Duration::from_secs(60)));
    for (i, call) in [
        "string.find(s, p)",
        "s:match(p)",
        "for m in s:gmatch(p) do end",
        "s:gsub(p, 'x')",
    ]
    .iter()
    .enumerate()
    {
        let file = format!("bomb{i}.lua");
        let (err, elapsed) = stopped_top_level(
            &f,
            &file,
            &format!("local s, p = ('a'):rep(20000), ('a-'):rep(12) .. 'b'\n{call}\n"),
        );
        assert!(err.starts_with(&format!("{file}:2: string.")), "{err}");
        assert!(err.contains("pattern too complex"), "{err}");
        assert!(elapsed < Duration::from_secs(5), "{call} ran {elapsed:?}");
    }
    // A script may catch it, as Lua's own pattern errors.
    f.load(
        "caught.lua",
        "print(pcall(string.find, ('a'):rep(20000), ('a-'):rep(12) .. 'b'))",
    );
    let printed = f.printed();
    assert!(
        printed[0].starts_with("false\tstring.find: pattern too complex"),
        "{printed:?}"
    );
}

#[test]
fn a_plain_find_of_a_long_needle_runs_in_linear_time() {
    let f = Fixture::new();
    let started = Instant::now();
    f.load(
        "needle.lua",
        "local hay, needle = ('a'):rep(1000000), ('a'):rep(500000) .. 'b'\n\
         print(hay:find(needle, 1, true), (hay .. 'b'):find(needle, 1, true))\n",
    );
    assert_eq!(f.printed(), vec!["nil\t500001\t1000001"]);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn repeating_an_empty_string_a_huge_number_of_times_returns_at_once() {
    let f = Fixture::new();
    let started = Instant::now();
    f.load(
        "rep.lua",
        "print(#string.rep('', math.maxinteger), #(''):rep(math.maxinteger, ''), #string.rep('', 2^53))\n\
         print(pcall(string.rep, '', math.maxinteger, {}))\n",
    );
    let printed = f.printed();
    assert_eq!(printed[0], "0\t0\t0");
    // Wrong arguments are still Lua's errors.
    assert!(
        printed[1].starts_with("false\t") && printed[1].contains("#3"),
        "{printed:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn table_functions_refuse_a_range_no_table_can_hold() {
    let f = Fixture::new();
    let started = Instant::now();
    let (err, _) = stopped_top_level(
        &f,
        "move.lua",
        "local t = {}\ntable.move({}, 1, math.maxinteger - 1, 1, {})\n",
    );
    assert!(
        err.starts_with("move.lua:2: table.move: a range of 9223372036854775806 elements"),
        "{err}"
    );
    // A length a `__len` makes up, with C metamethods that no hook stops.
    let (err, _) = stopped_top_level(
        &f,
        "insert.lua",
        "local t = setmetatable({}, { __len = function() return math.maxinteger - 1 end,\n\
           __index = table.concat, __newindex = rawequal })\n\
         table.insert(t, 1, 0)\n",
    );
    assert!(
        err.starts_with("insert.lua:3: table.insert: a range of"),
        "{err}"
    );
    let (err, _) = stopped_top_level(
        &f,
        "concat.lua",
        "print(table.concat({}, '', 1, math.maxinteger))\n",
    );
    assert!(
        err.starts_with("concat.lua:1: table.concat: a range of"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // What a table holds works as in Lua, errors included.
    f.load(
        "fine.lua",
        "local t = table.move({ 1, 2, 3 }, 1, 3, 2)\n\
         table.insert(t, 1, 0)\n\
         print(table.concat(t, ','), table.remove(t, 1), table.remove(t), #t)\n\
         print(pcall(table.insert, t, 9, 1))\n\
         print(pcall(table.concat, { 1, {}, 3 }))\n\
         print(pcall(table.insert, t))\n",
    );
    assert_eq!(
        f.printed(),
        vec![
            "0,1,1,2,3\t0\t3\t3",
            "false\tbad argument #2 to 'table.insert' (position out of bounds)",
            "false\tinvalid value (table) at index 2 in table for 'concat'",
            "false\twrong number of arguments to 'insert'",
        ]
    );
}

#[test]
fn a_table_loop_of_c_metamethods_stops_at_the_time_limit() {
    // `__index = table.concat` gives "" for any index in one C call each:
    // concatenating two billion of them runs no instruction at all.
    let f = Fixture::with(time_options(Duration::from_millis(200)));
    let (err, elapsed) = stopped_top_level(
        &f,
        "virtual.lua",
        "local t = setmetatable({}, { __index = table.concat })\n\
         print(#table.concat(t, '', 1, 2^31))\n",
    );
    assert!(
        err.starts_with("virtual.lua:2: time limit exceeded"),
        "{err}"
    );
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
}

#[test]
fn load_refuses_a_chunk_larger_than_a_script_may_be() {
    // Compiling is one C call as long as the text.
    let f = Fixture::new();
    let started = Instant::now();
    f.load(
        "big.lua",
        "local chunk = ('x = 1 '):rep(3 * 1024 * 1024)\n\
         print(load(chunk))\n\
         print(load('return 1 + 1')())\n",
    );
    let printed = f.printed();
    assert_eq!(
        printed[0],
        "nil\tload: a chunk of 18874368 bytes is larger than a script may be (16777216 bytes)"
    );
    assert_eq!(printed[1], "2");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn an_error_inside_a_sandboxed_library_function_shows_only_the_scripts_frames() {
    let f = Fixture::with(LuaOptions {
        memory_limit: Some(16 << 20),
        ..LuaOptions::default()
    });
    let object = f.spawn();
    let error =
        f.rt.load_script(
            "hoard.lua",
            "local t = {}\nfor i = 1, 1e9 do\n  t[i] = string.rep('x', 1000) .. i\nend\n",
            object,
        )
        .unwrap_err()
        .to_string();
    assert!(error.contains("hoard.lua:3: memory limit"), "{error}");
    assert!(error.contains("hoard.lua:3: in main chunk"), "{error}");
    assert!(!error.contains("gantry-"), "a sandbox frame shows: {error}");
    assert!(
        !error.contains("in hook"),
        "the budget's hook shows: {error}"
    );
}

#[test]
fn a_coroutine_resumed_by_a_late_answer_is_stopped_by_the_time_limit_at_its_line() {
    let f = Fixture::with(time_options(Duration::from_millis(200)));
    f.load(
        "late.lua",
        "local pending\n\
         ListenObjectMessage(self, 'Quest.Ask', nil, function(rsp) pending = rsp end)\n\
         ListenMessage('Answer.Now', nil, function() pending:Response(1) end)\n\
         local t = {}\nfor i = 1, 100000 do t[i] = i end\n\
         coroutine.wrap(function()\n\
           GMP.Request(self, 'Quest.Ask')\n\
           for i = 1, 1e9 do table.insert(t, 1, 0); table.remove(t, 1) end\n\
         end)()\n",
    );
    let key = f.hub.key("Answer.Now").unwrap();
    let started = Instant::now();
    f.hub.send(key, Source::Global, ()).unwrap();
    let elapsed = started.elapsed();
    let errors: Vec<String> = f.rt.take_errors().iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("late.lua:8: time limit exceeded"),
        "{errors:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "ran {elapsed:?}");
}
