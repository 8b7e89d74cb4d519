//! Baked sends to Lua listeners are delivered from Lua (the fast lane)
//! while the hub's epoch stands. Every rule of the hub's delivery must
//! still hold without the send crossing into Rust: order, removal and
//! addition during a send, failures with their sites, conversions and
//! refusals, other languages joining, tracing, sources, coroutines and the
//! instruction budget. Sends here run inside a call the host made (a top
//! level or a `Go` message from Rust), where the lane is taken.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use gantry_host::{Report, Source, TraceEvent};
use gantry_lua::runtime::LuaOptions;

use crate::support::Fixture;

fn go(f: &Fixture) {
    let key = f.hub.key("Go").unwrap();
    f.hub.send(key, Source::Global, ()).unwrap();
}

#[test]
fn lane_delivers_by_order_option_then_registration_order() {
    let f = Fixture::new();
    f.load(
        "order.lua",
        r#"
        ListenMessage("K", nil, function(i) print("late", i) end, {order = 1})
        ListenMessage("K", nil, function(i) print("first", i) end)
        ListenMessage("K", nil, function(i) print("early", i) end, {order = -1})
        ListenMessage("K", nil, function(i) print("second", i) end)
        ListenMessage("Go", nil, function()
            for i = 1, 2 do NotifyMessage("K", i) end
        end)
        "#,
    );
    go(&f);
    go(&f);
    let mut expected = Vec::new();
    for _ in 0..2 {
        for i in 1..=2 {
            for l in ["early", "first", "second", "late"] {
                expected.push(format!("{l}\t{i}"));
            }
        }
    }
    assert_eq!(f.printed(), expected);
    assert!(f.failures().is_empty());
}

#[test]
fn lane_skips_a_listener_removed_during_the_send() {
    let f = Fixture::new();
    f.load(
        "unbind.lua",
        r#"
        local victim
        ListenMessage("K", nil, function(i)
            print("remover", i)
            if victim then UnbindMessage("K", victim); victim = nil end
        end)
        victim = ListenMessage("K", nil, function(i) print("victim", i) end)
        ListenMessage("K", nil, function(i) print("last", i) end)
        ListenMessage("Go", nil, function()
            NotifyMessage("K", 1)
            NotifyMessage("K", 2)
        end)
        "#,
    );
    go(&f);
    assert_eq!(
        f.printed(),
        vec!["remover\t1", "last\t1", "remover\t2", "last\t2"]
    );
}

#[test]
fn lane_calls_a_listener_added_during_the_send_from_the_next_send_on() {
    let f = Fixture::new();
    f.load(
        "add.lua",
        r#"
        local added = false
        ListenMessage("K", nil, function(i)
            print("adder", i)
            if not added then
                added = true
                ListenMessage("K", nil, function(j) print("added", j) end)
            end
        end)
        ListenMessage("Go", nil, function()
            NotifyMessage("K", 1)
            NotifyMessage("K", 2)
        end)
        "#,
    );
    go(&f);
    assert_eq!(f.printed(), vec!["adder\t1", "adder\t2", "added\t2"]);
}

#[test]
fn lane_reports_a_failing_listener_with_its_site_and_runs_the_rest() {
    let f = Fixture::new();
    f.load(
        "fail.lua",
        "ListenMessage('K', nil, function(i) print('a', i) end)\n\
         ListenMessage('K', nil, function(i)\n  if i == 1 then error('boom') end\n  print('b', i)\nend)\n\
         ListenMessage('K', nil, function(i) print('c', i) end)\n\
         ListenMessage('Go', nil, function()\n  NotifyMessage('K', 1)\n  NotifyMessage('K', 2)\n  print('sender goes on')\nend)\n",
    );
    go(&f);
    assert_eq!(
        f.printed(),
        vec!["a\t1", "c\t1", "a\t2", "b\t2", "c\t2", "sender goes on"]
    );
    let reports = f.hub.take_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let Report::ListenerFailed { key, message, site } = &reports[0] else {
        panic!("{reports:?}");
    };
    assert_eq!(key, "K");
    assert!(message.starts_with("fail.lua:3: boom"), "{message}");
    assert!(message.contains("stack traceback"), "{message}");
    let site = site.as_ref().expect("the listener's site");
    assert_eq!((site.file.as_str(), site.line), ("fail.lua", 2));
}

/// Several listeners run in one protected call; after a failure the next
/// call starts at the listener after it. Whichever fail — the first, two
/// in a row, the last — each is reported once with its site and every
/// other listener runs once, in order.
#[test]
fn lane_reports_each_failing_listener_once_and_runs_every_other_once_in_order() {
    let f = Fixture::new();
    f.load(
        "fails.lua",
        "for n = 1, 6 do\n\
           ListenMessage('K', nil, function(i)\n\
             if n == 1 or n == 3 or n == 4 or n == 6 then error('boom ' .. n) end\n\
             print(n, i)\n\
           end)\n\
         end\n\
         ListenMessage('Go', nil, function()\n  NotifyMessage('K', 7)\n  print('sender goes on')\nend)\n",
    );
    go(&f);
    assert_eq!(f.printed(), vec!["2\t7", "5\t7", "sender goes on"]);
    let reports = f.hub.take_reports();
    let failed: Vec<(String, u32)> = reports
        .iter()
        .map(|r| match r {
            Report::ListenerFailed { message, site, .. } => (
                message.lines().next().unwrap().to_string(),
                site.as_ref().unwrap().line,
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        failed,
        ["1", "3", "4", "6"]
            .map(|n| (format!("fails.lua:3: boom {n}"), 2))
            .to_vec()
    );
}

/// A key with one listener: its failure is reported, the sender goes on.
#[test]
fn lane_reports_a_lone_failing_listener_and_the_sender_goes_on() {
    let f = Fixture::new();
    f.load(
        "lone.lua",
        "ListenMessage('K', nil, function(i) error('lone ' .. i) end)\n\
         ListenMessage('Go', nil, function()\n  NotifyMessage('K', 1)\n  NotifyMessage('K', 2)\n  print('sender goes on')\nend)\n",
    );
    go(&f);
    assert_eq!(f.printed(), vec!["sender goes on"]);
    let failures = f.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(
        failures[0].starts_with("lone.lua:1: lone 1"),
        "{failures:?}"
    );
    assert!(
        failures[1].starts_with("lone.lua:1: lone 2"),
        "{failures:?}"
    );
}

#[test]
fn lane_converts_an_integer_for_a_float_parameter() {
    let f = Fixture::new();
    f.load(
        "float.lua",
        r#"
        ListenMessage("K", nil, function(i, x) print(math.type(i), math.type(x), x) end)
        NotifyMessage("K", 1, 2.5)
        NotifyMessage("K", 2, 3)
        "#,
    );
    assert_eq!(
        f.printed(),
        vec!["integer\tfloat\t2.5", "integer\tfloat\t3.0"]
    );
}

#[test]
fn lane_refuses_a_wrong_type_as_the_hub_does_naming_the_script_line() {
    let f = Fixture::new();
    let (_, _) = f.load(
        "wrong.lua",
        "ListenMessage('K', nil, function(i) print('got', i) end)\n\
         NotifyMessage('K', 1)\n\
         local ok, err = pcall(function()\n  NotifyMessage('K', 'one')\nend)\n\
         print(ok, err)\n\
         ok, err = pcall(function()\n  NotifyMessage('K', 1.5)\nend)\n\
         print(ok, err)\n",
    );
    let printed = f.printed();
    assert_eq!(printed[0], "got\t1");
    assert!(
        printed[1].contains("wrong.lua:4: `K` argument 1: expected int, got string"),
        "{printed:?}"
    );
    assert!(
        printed[2].contains("wrong.lua:8: `K` argument 1: expected int, got float"),
        "{printed:?}"
    );
    assert_eq!(printed.len(), 3, "no listener heard a refused send");
}

#[test]
fn lane_hands_extra_and_missing_arguments_to_the_hub() {
    let f = Fixture::new();
    f.load(
        "arity.lua",
        r##"
        ListenMessage("K", nil, function(...) print(select("#", ...), ...) end)
        NotifyMessage("K", 1, 2)
        print(pcall(function() NotifyMessage("K", 3) end))
        NotifyMessage("K", 4, 5, 6)
        "##,
    );
    // A send missing a recorded argument is refused by the hub; a send
    // with more records the wider signature.
    let printed = f.printed();
    assert_eq!(printed.len(), 3, "{printed:?}");
    assert_eq!(printed[0], "2\t1\t2");
    assert!(
        printed[1].starts_with("false") && printed[1].contains("expected int, got nothing"),
        "{printed:?}"
    );
    assert_eq!(printed[2], "3\t4\t5\t6");
    assert_eq!(f.hub.table().get("K").unwrap().params.len(), 3);
}

#[test]
fn lane_reaches_a_rust_listener_that_joins_later_in_order() {
    let f = Fixture::new();
    f.load(
        "mixed.lua",
        r#"
        ListenMessage("K", nil, function(i) print("lua", i) end)
        ListenMessage("Go", nil, function() NotifyMessage("K", 7) end)
        "#,
    );
    go(&f);
    let heard = Rc::new(RefCell::new(Vec::new()));
    let h = heard.clone();
    f.hub
        .listen("K", Source::Global, move |i: i64| h.borrow_mut().push(i))
        .unwrap()
        .detach();
    go(&f);
    assert_eq!(f.printed(), vec!["lua\t7", "lua\t7"]);
    assert_eq!(*heard.borrow(), vec![7]);
}

#[test]
fn lane_sends_are_traced_once_a_tracer_is_installed() {
    let f = Fixture::new();
    f.load(
        "trace.lua",
        r#"
        ListenMessage("K", nil, function(i) end)
        ListenMessage("Go", nil, function() NotifyMessage("K", 1) end)
        "#,
    );
    go(&f);
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    f.hub
        .set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
            if let TraceEvent::Dispatch { key, .. } = event {
                s.borrow_mut().push(key.to_string());
            }
        })));
    go(&f);
    assert_eq!(*seen.borrow(), vec!["Go", "K"]);
}

#[test]
fn lane_follows_the_source_of_each_send() {
    let f = Fixture::new();
    f.load(
        "sources.lua",
        r#"
        local a, b = GMP.Spawn(), GMP.Spawn()
        ListenObjectMessage(a, "K", nil, function(i) print("a", i) end)
        ListenObjectMessage(b, "K", nil, function(i) print("b", i) end)
        ListenMessage("Go", nil, function()
            NotifyObjectMessage(a, "K", 1)
            NotifyObjectMessage(b, "K", 2)
            NotifyObjectMessage(a, "K", 3)
            GMP.Destroy(b)
            print("from b, gone", (pcall(NotifyObjectMessage, b, "K", 4)))
            NotifyObjectMessage(a, "K", 5)
        end)
        "#,
    );
    go(&f);
    assert_eq!(
        f.printed(),
        vec!["a\t1", "b\t2", "a\t3", "from b, gone\tfalse", "a\t5"]
    );
}

#[test]
fn lane_listener_cannot_yield_the_senders_coroutine() {
    let f = Fixture::new();
    f.load(
        "co.lua",
        r#"
        ListenMessage("K", nil, function(i)
            print("listener", i)
            coroutine.yield("from the listener")
        end)
        NotifyMessage("K", 0)
        local co = coroutine.wrap(function()
            NotifyMessage("K", 1)
            print("sender goes on")
            return "done"
        end)
        print(co())
        "#,
    );
    assert_eq!(
        f.printed(),
        vec!["listener\t0", "listener\t1", "sender goes on", "done"]
    );
    let failures = f.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(failures.iter().all(|m| m.contains("yield")), "{failures:?}");
}

#[test]
fn lane_listener_is_stopped_by_the_instruction_budget() {
    let f = Fixture::with(LuaOptions {
        budget: Some(2_000_000),
        watchdog_interval: Duration::from_millis(5),
        ..LuaOptions::default()
    });
    f.load(
        "loop.lua",
        "ListenMessage('K', nil, function(i) print('first', i) end)\n\
         ListenMessage('K', nil, function(i)\n  if i == 1 then while true do end end\nend)\n\
         ListenMessage('Go', nil, function()\n  NotifyMessage('K', 0)\n  NotifyMessage('K', 1)\nend)\n",
    );
    go(&f);
    // The runaway listener is stopped (no `pcall` could swallow that) and
    // reported; its stop is its own: the sender goes on.
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("loop.lua:3:"), "{failures:?}");
    assert!(failures[0].contains("instruction budget"), "{failures:?}");
    assert_eq!(f.printed(), vec!["first\t0", "first\t1"]);
}

#[test]
fn lane_keeps_listeners_of_table_owners_collectable() {
    let f = Fixture::new();
    f.load(
        "owner.lua",
        r#"
        do
            local owner = {}
            ListenMessage("K", owner, function(i) print("owned", i, owner) end)
        end
        ListenMessage("Go", nil, function() NotifyMessage("K", 1) end)
        "#,
    );
    go(&f);
    assert_eq!(f.printed().len(), 1);
    f.rt.collect_garbage().unwrap();
    go(&f);
    assert!(f.printed().is_empty(), "the owner was collected");
    assert_eq!(f.hub.listener_count(), 1, "only Go is left");
}

/// A kept lane survives a full collection (its own bookkeeping is held
/// by the lane), yet does not keep a removed listener's function alive.
#[test]
fn lane_survives_a_collection_and_lets_a_removed_listeners_function_go() {
    let f = Fixture::new();
    f.load(
        "gc.lua",
        r#"
        -- Watches the victim's function without keeping it (scripts may not
        -- set finalizers).
        local probe = setmetatable({}, {__mode = "v"})
        local victim = ListenMessage("K", nil, (function()
            local f = function(i) print("victim", i) end
            probe[1] = f
            return f
        end)())
        ListenMessage("K", nil, function(i) print("stays", i) end)
        ListenMessage("Go", nil, function() NotifyMessage("K", 1) end)
        ListenMessage("Drop", nil, function()
            UnbindMessage("K", victim)
            victim = nil
        end)
        ListenMessage("Check", nil, function() print("alive", probe[1] ~= nil) end)
        "#,
    );
    let check = |f: &Fixture| {
        let key = f.hub.key("Check").unwrap();
        f.hub.send(key, Source::Global, ()).unwrap();
    };
    go(&f);
    f.rt.collect_garbage().unwrap();
    go(&f);
    check(&f);
    assert_eq!(
        f.printed(),
        vec![
            "victim\t1",
            "stays\t1",
            "victim\t1",
            "stays\t1",
            "alive\ttrue"
        ]
    );
    let drop = f.hub.key("Drop").unwrap();
    f.hub.send(drop, Source::Global, ()).unwrap();
    f.rt.collect_garbage().unwrap();
    f.rt.collect_garbage().unwrap();
    check(&f);
    assert_eq!(
        f.printed(),
        vec!["alive\tfalse"],
        "the lane let the function go"
    );
    go(&f);
    assert_eq!(f.printed(), vec!["stays\t1"]);
    assert!(f.failures().is_empty());
}

#[test]
fn lane_send_from_something_not_an_object_is_refused_at_the_script_line() {
    let f = Fixture::new();
    f.load(
        "source.lua",
        "ListenObjectMessage(self, 'K', nil, function(i) print('got', i) end)\n\
         NotifyObjectMessage(self, 'K', 1)\n\
         local ok, err = pcall(function()\n  NotifyObjectMessage(42, 'K', 2)\nend)\n\
         print(ok, err)\n",
    );
    let printed = f.printed();
    assert_eq!(printed[0], "got\t1");
    assert!(
        printed[1].contains("source.lua:4:") && printed[1].contains("argument 1 must be an object"),
        "{printed:?}"
    );
}

#[test]
fn lane_nesting_past_its_depth_goes_the_hub_way_and_stops_at_the_limit() {
    let f = Fixture::new();
    let (script, _) = f.load(
        "echo.lua",
        r#"
        calls = 0
        ListenMessage("Echo", nil, function(n)
            calls = calls + 1
            NotifyMessage("Echo", n + 1)
        end)
        ListenMessage("Go", nil, function() NotifyMessage("Echo", 1) end)
        "#,
    );
    go(&f);
    let failures = f.failures();
    assert!(
        failures.iter().any(|m| m.contains("nested")),
        "{failures:?}"
    );
    let calls: i64 = f.rt.global(script, "calls").unwrap();
    assert!(calls > 8, "the lane handed deep sends to the hub: {calls}");
    assert!(calls < 100, "and the hub's limit stopped them: {calls}");
}

/// A script cannot leave a finalizer to send on the lane while the state
/// closes (it would run with no budget and after the lane's bookkeeping):
/// setting one is refused at the script's line, and closing is safe.
#[test]
fn lane_send_from_a_finalizer_while_the_state_closes_is_refused() {
    let f = Fixture::new();
    let object = f.spawn();
    let err =
        f.rt.load_script(
            "gc.lua",
            "ListenMessage('K', nil, function(i) print('heard', i) end)\n\
             NotifyMessage('K', 1)\n\
             keep = setmetatable({}, {__gc = function() NotifyMessage('K', 2) end})\n",
            object,
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("gc.lua:3:") && err.contains("__gc"), "{err}");
    assert_eq!(f.printed(), vec!["heard\t1"]);
    drop(f);
}

/// A listener of two parameters registered before its key was known may
/// yet be a whole-table listener (`function(items, update)`); once the key
/// turns out to carry no table, the lane takes it as any message listener.
#[test]
fn lane_takes_a_two_parameter_listener_registered_before_its_key_was_known() {
    let f = Fixture::new();
    f.load(
        "early.lua",
        r#"
        ListenMessage("Hit", nil, function(a, b) print("hit", a, b) end)
        ListenMessage("Go", nil, function() NotifyMessage("Hit", 1, 2) end)
        "#,
    );
    go(&f);
    let key = f.hub.key("Hit").unwrap();
    let snapshot = f.hub.lane_snapshot(key, Source::Global).unwrap();
    assert_eq!(
        snapshot.listeners.len(),
        1,
        "the early listener is on the lane"
    );
    go(&f);
    assert_eq!(f.printed(), ["hit\t1\t2"; 2]);
    assert!(f.failures().is_empty());
}

/// Many listeners on one lane: each failure (one of them the last) is
/// reported once and the rest run, and listeners removed during the send
/// by one before them are skipped, after a restart past a failure too.
#[test]
fn lane_with_twenty_listeners_reports_each_failure_once_and_skips_removed_ones() {
    let f = Fixture::new();
    f.load(
        "many.lua",
        "local ids = {}\n\
         for n = 1, 20 do\n\
           ids[n] = ListenMessage('K', nil, function(i)\n\
             if n == 4 or n == 20 then error('boom ' .. n) end\n\
             if n == 6 then UnbindMessage('K', ids[9]); UnbindMessage('K', ids[15]) end\n\
             print(n)\n\
           end)\n\
         end\n\
         ListenMessage('Go', nil, function() NotifyMessage('K', 1); print('sender goes on') end)\n",
    );
    go(&f);
    let mut expected: Vec<String> = (1..=19)
        .filter(|n| ![4, 9, 15].contains(n))
        .map(|n| n.to_string())
        .collect();
    expected.push("sender goes on".into());
    assert_eq!(f.printed(), expected);
    let failed: Vec<String> = f
        .hub
        .take_reports()
        .iter()
        .map(|r| match r {
            Report::ListenerFailed { message, .. } => message.lines().next().unwrap().to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(failed, ["many.lua:4: boom 4", "many.lua:4: boom 20"]);
}

/// Keeps each logged dispatch as `key args`, the args as the log got
/// them: `Plain` from the lane, `Values` from the hub.
struct KeptLog {
    hub: gantry_host::Hub,
    lines: RefCell<Vec<String>>,
}

impl KeptLog {
    /// A log kept of `f`'s hub (not installed).
    fn new(f: &Fixture) -> KeptLog {
        KeptLog {
            hub: f.hub.clone(),
            lines: RefCell::new(Vec::new()),
        }
    }

    /// A log kept of `f`'s hub, installed as its dispatch log.
    fn install(f: &Fixture) -> Rc<KeptLog> {
        let log = Rc::new(KeptLog::new(f));
        f.hub.set_dispatch_log(Some(log.clone()));
        log
    }
}

impl gantry_host::DispatchLog for KeptLog {
    fn dispatch(&self, d: &gantry_host::Logged<'_>) {
        let args = match d.args {
            gantry_host::LoggedArgs::Values(v) => format!("Values{v:?}"),
            gantry_host::LoggedArgs::Plain(p) => format!("Plain{p:?}"),
        };
        let mark = if d.outermost { "*" } else { "" };
        self.lines
            .borrow_mut()
            .push(format!("{mark}{} {args}", self.hub.key_name(d.key)));
    }
}

#[test]
fn lane_stays_on_under_a_dispatch_log_and_logs_each_send_with_its_values_in_order() {
    let f = Fixture::new();
    f.load(
        "log.lua",
        r#"
        ListenMessage("K", nil, function(i, x, s, b)
          if i == 2 then NotifyMessage("N", s) end
        end)
        ListenMessage("N", nil, function(s) end)
        ListenMessage("Go", nil, function()
          for i = 1, 3 do NotifyMessage("K", i, 0.5, "s" .. i, i ~= 2) end
        end)
        "#,
    );
    go(&f);
    let log = KeptLog::install(&f);
    go(&f);
    go(&f);
    let one_go = [
        "*Go Values[]",
        r#"K Plain[Int(1), Float(0.5), Str("s1"), Bool(true)]"#,
        r#"K Plain[Int(2), Float(0.5), Str("s2"), Bool(false)]"#,
        r#"N Plain[Str("s2")]"#,
        r#"K Plain[Int(3), Float(0.5), Str("s3"), Bool(true)]"#,
    ];
    assert_eq!(*log.lines.borrow(), [one_go, one_go].concat());
    assert!(f.failures().is_empty());
}

#[test]
fn lane_logs_each_send_from_the_object_it_was_sent_from() {
    let f = Fixture::new();
    f.load(
        "objects.lua",
        r#"
        local a, b = GMP.Spawn(), GMP.Spawn()
        ListenObjectMessage(a, "K", nil, function(i) end)
        ListenObjectMessage(b, "K", nil, function(i) end)
        ListenMessage("Go", nil, function()
            for i = 1, 2 do
                NotifyObjectMessage(a, "K", i)
                NotifyObjectMessage(b, "K", i)
            end
        end)
        "#,
    );
    go(&f);
    let sources = Rc::new(RefCell::new(Vec::new()));
    struct Sources(Rc<RefCell<Vec<(gantry_host::Source, bool)>>>);
    impl gantry_host::DispatchLog for Sources {
        fn dispatch(&self, d: &gantry_host::Logged<'_>) {
            let plain = matches!(d.args, gantry_host::LoggedArgs::Plain(_));
            self.0.borrow_mut().push((d.source, plain));
        }
    }
    f.hub
        .set_dispatch_log(Some(Rc::new(Sources(sources.clone()))));
    go(&f);
    let seen = sources.borrow();
    assert_eq!(seen.len(), 5, "Go and four sends: {seen:?}");
    let (a, b) = (seen[1].0, seen[2].0);
    assert_ne!(a, b);
    assert!(matches!(a, Source::Object(_)) && matches!(b, Source::Object(_)));
    assert_eq!(seen[3].0, a);
    assert_eq!(seen[4].0, b);
    assert!(
        seen[1..].iter().all(|(_, plain)| *plain),
        "the lane logged them"
    );
}

/// Lends each lane one byte sink, each record headed by its key's name
/// ([`head_of`]); what comes to the log itself is kept as [`KeptLog`] does.
struct LendingLog {
    kept: KeptLog,
    sink: Rc<gantry_host::SendSink>,
}

impl gantry_host::DispatchLog for LendingLog {
    fn dispatch(&self, d: &gantry_host::Logged<'_>) {
        gantry_host::DispatchLog::dispatch(&self.kept, d);
    }

    fn lane_sink(
        &self,
        key: gantry_host::Key,
        _source: Source,
        params: usize,
    ) -> Option<gantry_host::LaneSink> {
        let head = head_of(&self.kept.hub.key_name(key));
        Some(gantry_host::LaneSink::new(self.sink.clone(), head, params))
    }
}

/// A record's head in [`LendingLog`]'s sink: the key's name, a colon and
/// spaces.
fn head_of(key: &str) -> [u8; gantry_host::LaneSink::HEAD] {
    let mut head = [b' '; gantry_host::LaneSink::HEAD];
    head[..key.len()].copy_from_slice(key.as_bytes());
    head[key.len()] = b':';
    head
}

#[test]
fn lane_writes_nested_sends_into_a_lent_sink_in_order_with_integers_for_floats_made_floats() {
    use gantry_host::PlainArg;
    use gantry_host::dispatch_log::write_plain;
    let f = Fixture::new();
    f.load(
        "sink.lua",
        r#"
        ListenMessage("K", nil, function(i, x, s, b)
          if i == 2 then NotifyMessage("N", s) end
          if i == 3 then print(math.type(x), x) end
        end)
        ListenMessage("N", nil, function(s) end)
        ListenMessage("Go", nil, function()
          for i = 1, 3 do NotifyMessage("K", i, i == 3 and 7 or 0.5, "s" .. i, i ~= 2) end
        end)
        "#,
    );
    go(&f);
    let (log, sink) = lend_a_sink(&f);
    go(&f);
    let mut expected = Vec::new();
    let mut record = |key: &str, args: &[PlainArg<'_>]| {
        expected.extend_from_slice(&head_of(key));
        for arg in args {
            write_plain(&mut expected, *arg);
        }
    };
    let k = |i: i64, x: f64, s: &'static str, b: bool| {
        [
            PlainArg::Int(i),
            PlainArg::Float(x),
            PlainArg::Str(s),
            PlainArg::Bool(b),
        ]
    };
    record("K", &k(1, 0.5, "s1", true));
    record("K", &k(2, 0.5, "s2", false));
    record("N", &[PlainArg::Str("s2")]);
    record("K", &k(3, 7.0, "s3", true));
    assert_eq!(*sink.bytes().unwrap(), expected);
    assert_eq!(*log.kept.lines.borrow(), ["*Go Values[]"]);
    assert_eq!(
        f.printed(),
        ["float\t7.0", "float\t7.0"],
        "with and without"
    );
    assert!(f.failures().is_empty());
}

impl LendingLog {
    /// A log of `f`'s hub that lends the lanes a sink of 64 KiB, stamped
    /// 0 (not installed).
    fn new(f: &Fixture) -> LendingLog {
        LendingLog {
            kept: KeptLog::new(f),
            sink: gantry_host::SendSink::new(Rc::new(std::cell::Cell::new(0)), 1 << 16, 1 << 16),
        }
    }
}

/// Installs a log that lends the lanes a sink of 64 KiB, stamped 0.
fn lend_a_sink(f: &Fixture) -> (Rc<LendingLog>, Rc<gantry_host::SendSink>) {
    let log = Rc::new(LendingLog::new(f));
    let sink = log.sink.clone();
    f.hub.set_dispatch_log(Some(log.clone()));
    (log, sink)
}

/// Sends `sends` from a script of their own, before any listener of
/// theirs is there: the keys' types are then known, so the first sends
/// of the scripts loaded next take the lane (a key's first send, whose
/// types are still being learned, goes the hub's way).
fn learn(f: &Fixture, sends: &str) {
    f.load("learn.lua", sends);
}

/// The first line of each listener failure, with its site's line.
fn failures_with_lines(f: &Fixture) -> Vec<(String, String, u32)> {
    f.hub
        .take_reports()
        .iter()
        .map(|r| match r {
            Report::ListenerFailed { key, message, site } => (
                key.clone(),
                message.lines().next().unwrap().to_string(),
                site.as_ref().map_or(0, |s| s.line),
            ),
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Several listeners run in one protected call; a listener that fails
/// after a send of its own whose listener failed is still reported at its
/// own site, and the one after it runs once.
#[test]
fn lane_reports_a_listener_failing_after_its_nested_send_failed_at_its_own_site() {
    let f = Fixture::new();
    learn(&f, "NotifyMessage('K', 0); NotifyMessage('N')");
    f.load(
        "nested.lua",
        "ListenMessage('N', nil, function() error('inner') end)\n\
         ListenMessage('K', nil, function(i) print('one', i) end)\n\
         ListenMessage('K', nil, function(i)\n  NotifyMessage('N')\n  error('outer')\nend)\n\
         ListenMessage('K', nil, function(i) print('three', i) end)\n\
         ListenMessage('Go', nil, function() NotifyMessage('K', 1); print('sender goes on') end)\n",
    );
    go(&f);
    assert_eq!(f.printed(), vec!["one\t1", "three\t1", "sender goes on"]);
    assert_eq!(
        failures_with_lines(&f),
        vec![
            ("N".into(), "nested.lua:1: inner".into(), 1),
            ("K".into(), "nested.lua:5: outer".into(), 3),
        ]
    );
}

/// A listener removed during a send by a listener of another key (a send
/// nested in it) is not called by the send under way, nor by later ones.
#[test]
fn lane_skips_a_listener_removed_by_a_nested_send() {
    let f = Fixture::new();
    learn(&f, "NotifyMessage('K', 0); NotifyMessage('Drop')");
    f.load(
        "remote.lua",
        "local victim\n\
         ListenMessage('Drop', nil, function() UnbindMessage('K', victim) end)\n\
         ListenMessage('K', nil, function(i) print('first', i); if i == 1 then NotifyMessage('Drop') end end)\n\
         ListenMessage('K', nil, function(i) print('second', i) end)\n\
         victim = ListenMessage('K', nil, function(i) print('victim', i) end)\n\
         ListenMessage('Go', nil, function() NotifyMessage('K', 1); NotifyMessage('K', 2) end)\n",
    );
    go(&f);
    assert_eq!(
        f.printed(),
        vec!["first\t1", "second\t1", "first\t2", "second\t2"]
    );
    assert!(f.failures().is_empty(), "{:?}", f.failures());
}

/// A listener removed from inside a coroutine a listener runs is skipped
/// too: the send under way learns of it wherever the removal happens.
#[test]
fn lane_skips_a_listener_removed_inside_a_coroutine_of_an_earlier_listener() {
    let f = Fixture::new();
    learn(&f, "NotifyMessage('K', 0)");
    f.load(
        "co.lua",
        "local victim\n\
         ListenMessage('K', nil, function(i)\n  print('first', i)\n  coroutine.wrap(function() UnbindMessage('K', victim) end)()\nend)\n\
         victim = ListenMessage('K', nil, function(i) print('victim', i) end)\n\
         ListenMessage('K', nil, function(i) print('last', i) end)\n\
         ListenMessage('Go', nil, function() NotifyMessage('K', 1) end)\n",
    );
    go(&f);
    assert_eq!(f.printed(), vec!["first\t1", "last\t1"]);
    assert!(f.failures().is_empty(), "{:?}", f.failures());
}

/// What a modder reads of a failing listener's error names the mod's
/// lines only, never the runtime's own code that called the listener.
#[test]
fn lane_failure_traceback_shows_only_the_mods_frames() {
    let f = Fixture::new();
    learn(&f, "NotifyMessage('K')");
    f.load(
        "trace.lua",
        "local function helper() error('deep') end\n\
         ListenMessage('K', nil, function() end)\n\
         ListenMessage('K', nil, function() helper() end)\n\
         ListenMessage('K', nil, function() end)\n\
         ListenMessage('Go', nil, function() NotifyMessage('K') end)\n",
    );
    go(&f);
    let reports = f.hub.take_reports();
    let Report::ListenerFailed { message, .. } = &reports[0] else {
        panic!("{reports:?}");
    };
    assert!(message.starts_with("trace.lua:1: deep"), "{message}");
    assert!(message.contains("trace.lua:3:"), "{message}");
    assert!(!message.contains("gantry-"), "{message}");
}

/// Lanes of every length deliver alike: in order, a failure reported once
/// at its site with the rest run, a listener removed mid-send skipped —
/// the shortest a runner calls, the longest, and one past it.
#[test]
fn lane_of_any_length_reports_failures_and_skips_removed_listeners() {
    for count in [2, 3, 64, 65, 100] {
        let f = Fixture::new();
        let fails = if count == 2 { 1 } else { count / 2 + 1 };
        learn(&f, "NotifyMessage('K', 0)");
        f.load(
            "len.lua",
            &format!(
                "local ids = {{}}\n\
                 for n = 1, {count} do\n\
                   ids[n] = ListenMessage('K', nil, function(i)\n\
                     if n == 1 then UnbindMessage('K', ids[{count}]) end\n\
                     if n == {fails} then error('boom ' .. n) end\n\
                     print(n)\n\
                   end)\n\
                 end\n\
                 ListenMessage('Go', nil, function() NotifyMessage('K', 1); print('sender goes on') end)\n"
            ),
        );
        go(&f);
        let mut expected: Vec<String> = (1..count)
            .filter(|n| *n != fails)
            .map(|n| n.to_string())
            .collect();
        expected.push("sender goes on".into());
        assert_eq!(f.printed(), expected, "{count} listeners");
        assert_eq!(
            failures_with_lines(&f),
            vec![("K".into(), format!("len.lua:5: boom {fails}"), 3)],
            "{count} listeners"
        );
    }
}

/// A listener that runs out of memory is reported, with the key, and the
/// sender goes on.
#[test]
fn lane_listener_out_of_memory_is_reported_and_the_sender_goes_on() {
    let f = Fixture::with(LuaOptions {
        memory_limit: Some(16 * 1024 * 1024),
        ..LuaOptions::default()
    });
    learn(&f, "NotifyMessage('K')");
    f.load(
        "hoard.lua",
        "ListenMessage('K', nil, function() print('before') end)\n\
         ListenMessage('K', nil, function() local t = {} for i = 1, 1e8 do t[i] = {} end end)\n\
         ListenMessage('Go', nil, function() NotifyMessage('K'); print('sender goes on') end)\n",
    );
    go(&f);
    assert_eq!(f.printed(), vec!["before", "sender goes on"]);
    let reports = f.hub.take_reports();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let Report::ListenerFailed { key, message, .. } = &reports[0] else {
        panic!("{reports:?}");
    };
    assert_eq!(key, "K");
    assert!(message.contains("memory"), "{message}");
}

#[test]
fn lane_takes_back_the_record_of_a_send_whose_argument_does_not_fit() {
    use gantry_host::PlainArg;
    use gantry_host::dispatch_log::write_plain;
    let f = Fixture::new();
    f.load(
        "refused.lua",
        r#"
        ListenMessage("K", nil, function(i, s) end)
        ListenMessage("Go", nil, function()
          NotifyMessage("K", 1, "a")
          print(pcall(NotifyMessage, "K", 2, {}))
          NotifyMessage("K", 3, "c")
        end)
        "#,
    );
    go(&f);
    let (_, sink) = lend_a_sink(&f);
    go(&f);
    let mut expected = Vec::new();
    for (i, s) in [(1, "a"), (3, "c")] {
        expected.extend_from_slice(&head_of("K"));
        write_plain(&mut expected, PlainArg::Int(i));
        write_plain(&mut expected, PlainArg::Str(s));
    }
    assert_eq!(*sink.bytes().unwrap(), expected);
    let printed = f.printed();
    assert_eq!(printed.len(), 2, "{printed:?}");
    assert!(printed[1].starts_with("false"), "refused: {printed:?}");
}

/// A listener that fails deep in its own calls (here 1,000 levels down)
/// is still reported at its own site, and the listeners after it run.
#[test]
fn lane_reports_a_listener_failing_deep_in_its_calls_and_runs_the_rest() {
    let f = Fixture::new();
    learn(&f, "NotifyMessage('K', 0)");
    f.load(
        "deep.lua",
        "local function down(n) if n == 0 then error('deep') end return 1 + down(n - 1) end\n\
         ListenMessage('K', nil, function(i) print('first', i) end)\n\
         ListenMessage('K', nil, function(i) down(20000) end)\n\
         ListenMessage('K', nil, function(i) print('last', i) end)\n\
         ListenMessage('Go', nil, function() NotifyMessage('K', 1) end)\n",
    );
    go(&f);
    assert_eq!(f.printed(), vec!["first\t1", "last\t1"]);
    assert_eq!(
        failures_with_lines(&f),
        vec![("K".into(), "deep.lua:1: deep".into(), 3)]
    );
}

/// The lane reads each argument straight from the Lua stack: every value
/// of its kinds arrives as sent (the integers' extremes, signed zeros and
/// infinities, an empty and a long string), an integer for a float as the
/// float the hub makes of it, and a value of any other kind (a float for
/// an integer, a numeric string for a number, a number for a string) goes
/// the hub's way.
#[test]
fn lane_takes_each_value_of_its_kinds_as_sent_and_hands_the_rest_to_the_hub() {
    let f = Fixture::new();
    learn(&f, "NotifyMessage('K', 0, 0.5, 's', true)");
    f.load(
        "values.lua",
        r#"
        ListenMessage("K", nil, function(i, x, s, b) end)
        local long = string.rep("long ", 20)
        ListenMessage("Go", nil, function()
          NotifyMessage("K", math.mininteger, -0.0, "", false)
          NotifyMessage("K", math.maxinteger, 1/0, long, true)
          NotifyMessage("K", -1, -1/0, "é", false)
          NotifyMessage("K", 1, math.maxinteger, "x", true)
          pcall(NotifyMessage, "K", 2.0, 0.5, "x", true)
          pcall(NotifyMessage, "K", "3", 0.5, "x", true)
          pcall(NotifyMessage, "K", 4, "0.5", "x", true)
          pcall(NotifyMessage, "K", 5, 0.5, 6, true)
          pcall(NotifyMessage, "K", 6, 0.5, "x", 0)
        end)
        "#,
    );
    go(&f);
    let log = KeptLog::install(&f);
    go(&f);
    f.hub.take_reports();
    let lines = log.lines.borrow();
    let long = "long ".repeat(20);
    assert_eq!(
        lines[..5],
        [
            "*Go Values[]".to_string(),
            r#"K Plain[Int(-9223372036854775808), Float(-0.0), Str(""), Bool(false)]"#.into(),
            format!(r#"K Plain[Int(9223372036854775807), Float(inf), Str("{long}"), Bool(true)]"#),
            r#"K Plain[Int(-1), Float(-inf), Str("é"), Bool(false)]"#.into(),
            r#"K Plain[Int(1), Float(9.223372036854776e18), Str("x"), Bool(true)]"#.into(),
        ]
    );
    assert!(
        lines[5..].iter().all(|l| l.starts_with("K Values")),
        "the hub's way: {lines:?}"
    );
}

/// A log that lends a lane a share of its buffer made for another number
/// of values than the lane's sends have: the lane writes nothing there
/// (its values' room would be wrong) and each send comes to the log.
#[test]
fn lane_writes_no_record_into_a_sink_made_for_another_count_of_values() {
    struct Miscounted(LendingLog);
    impl gantry_host::DispatchLog for Miscounted {
        fn dispatch(&self, d: &gantry_host::Logged<'_>) {
            self.0.dispatch(d);
        }
        fn lane_sink(
            &self,
            key: gantry_host::Key,
            source: Source,
            params: usize,
        ) -> Option<gantry_host::LaneSink> {
            self.0.lane_sink(key, source, params - 1)
        }
    }
    let f = Fixture::new();
    f.load(
        "miscounted.lua",
        r#"
        ListenMessage("K", nil, function(i, x) end)
        ListenMessage("Go", nil, function()
          for i = 1, 2 do NotifyMessage("K", i, 0.5) end
        end)
        "#,
    );
    go(&f);
    let log = Rc::new(Miscounted(LendingLog::new(&f)));
    let sink = log.0.sink.clone();
    f.hub.set_dispatch_log(Some(log.clone()));
    go(&f);
    assert!(sink.bytes().unwrap().is_empty());
    assert_eq!(
        *log.0.kept.lines.borrow(),
        [
            "*Go Values[]",
            "K Plain[Int(1), Float(0.5)]",
            "K Plain[Int(2), Float(0.5)]",
        ]
    );
}
