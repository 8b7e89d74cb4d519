//! The tag-channel router as a Lua script sees it, beside Rust listeners on
//! the same keys: exact and partial matching, owners, hooks of both
//! languages in one priority order chaining their changes, handled and
//! cancel, listeners coming and going, invalid keys; with load-time
//! rewriting on and off (a baked send of a declared key takes the fast
//! lane, which keeps its own delivery loop).

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{HookOptions, KeyDecl, StructValue, Type, Value};

use crate::support::Fixture;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

fn declare_int(f: &Fixture, keys: &[&str]) {
    for key in keys {
        f.hub
            .declare(key, KeyDecl::event().param("n", Type::Int))
            .unwrap();
    }
}

fn hit(amount: i64) -> Value {
    Value::structure(StructValue::new("Hit").with("amount", amount))
}

fn amount(v: &Value) -> i64 {
    v.as_struct()
        .and_then(|s| s.get("amount"))
        .and_then(Value::as_int)
        .expect("a Hit payload")
}

/// "Match: Exact, or the channel and every channel under it": `A` partial
/// hears `A.B.C`; `A.B` partial hears `A.B.C.D` but not `A.BC` nor `A`; an
/// exact listener hears its own key only. Sends of declared keys from Lua
/// (the fast lane when baked) and from Rust agree.
#[test]
fn partial_match_hears_every_depth_below_but_not_text_prefixes() {
    both_ways(|f, rewrite| {
        declare_int(f, &["A", "A.B", "A.B.C", "A.BC", "AB", "A.B.C.D"]);
        f.load(
            "a.lua",
            r#"
            ListenMessage("A", nil, function(n) print("A*", n) end, {match = "partial"})
            ListenMessage("A.B", nil, function(n) print("A.B*", n) end, {match = "partial"})
            ListenMessage("A.B", nil, function(n) print("A.B=", n) end)
            function send_all()
                NotifyMessage("A", 1)
                NotifyMessage("A.B", 2)
                NotifyMessage("A.B.C", 3)
                NotifyMessage("A.BC", 4)
                NotifyMessage("AB", 5)
                NotifyMessage("A.B.C.D", 6)
            end
            send_all()
            send_all()
            "#,
        );
        let once = [
            "A*\t1", "A.B*\t2", "A.B=\t2", "A*\t2", "A.B*\t3", "A*\t3", "A*\t4", "A.B*\t6", "A*\t6",
        ];
        let twice: Vec<&str> = once.iter().chain(once.iter()).copied().collect();
        assert_eq!(f.printed(), twice, "rewrite {rewrite}");
        for (key, n) in [("A.B.C", 3i64), ("A.BC", 4), ("A", 1)] {
            f.hub
                .send_str(key, gantry_host::Source::Global, (n,))
                .unwrap();
        }
        assert_eq!(
            f.printed(),
            ["A.B*\t3", "A*\t3", "A*\t4", "A*\t1"],
            "rewrite {rewrite}"
        );
    });
}

/// "listeners on the exact channel first, in registration order, then
/// Partial listeners on each channel above it" — with the partial ones
/// registered first, in Lua and in Rust, on the fast lane and off it.
#[test]
fn exact_listeners_run_before_partial_listeners_above_registered_earlier() {
    both_ways(|f, rewrite| {
        declare_int(f, &["Inv.Items.Sword"]);
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = log.clone();
        let _rust_partial = f
            .hub
            .listen_message(
                "Inv",
                gantry_host::Source::Global,
                gantry_host::ListenOptions::new().partial(),
                move |m| l.borrow_mut().push(format!("rust Inv* {}", m.args[0])),
            )
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenMessage("Inv.Items", nil, function(n) print("Inv.Items*", n) end, {match = "partial"})
            ListenMessage("Inv.Items.Sword", nil, function(n) print("exact 1", n) end)
            ListenMessage("Inv.Items.Sword", nil, function(n) print("exact 2", n) end)
            NotifyMessage("Inv.Items.Sword", 7)
            "#,
        );
        assert_eq!(
            f.printed(),
            ["exact 1\t7", "exact 2\t7", "Inv.Items*\t7"],
            "rewrite {rewrite}"
        );
        assert_eq!(*log.borrow(), ["rust Inv* 7"], "rewrite {rewrite}");
    });
}

/// "While being called, a listener may add or remove listeners": a Lua
/// listener unbound by an earlier one of the same send is not called — on
/// a warmed fast lane too — and neither is one whose owner object the
/// earlier one destroyed (exact or partial above).
#[test]
fn listener_unbound_or_owner_destroyed_mid_send_is_not_called() {
    both_ways(|f, rewrite| {
        declare_int(f, &["Tick.Frame"]);
        f.load(
            "a.lua",
            r#"
            local armed = false
            local victim, owner
            ListenMessage("Tick.Frame", nil, function(n)
                print("killer", n)
                if armed then
                    UnbindMessage("Tick.Frame", victim)
                    GMP.Destroy(owner)
                end
            end)
            victim = ListenMessage("Tick.Frame", nil, function(n) print("unbound", n) end)
            owner = GMP.Spawn()
            ListenMessage("Tick.Frame", owner, function(n) print("owned", n) end)
            ListenMessage("Tick", owner, function(n) print("owned partial", n) end, {match = "partial"})
            ListenMessage("Tick.Frame", nil, function(n) print("last", n) end)
            NotifyMessage("Tick.Frame", 1)
            armed = true
            NotifyMessage("Tick.Frame", 2)
            NotifyMessage("Tick.Frame", 3)
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "killer\t1",
                "unbound\t1",
                "owned\t1",
                "last\t1",
                "owned partial\t1",
                "killer\t2",
                "last\t2",
                "killer\t3",
                "last\t3",
            ],
            "rewrite {rewrite}"
        );
        assert!(f.failures().is_empty(), "rewrite {rewrite}");
    });
}

/// Hook listeners of Rust and Lua on one key (and partially above it) run in
/// one order — highest priority first — each seeing the changes before it,
/// whether the hook is run from Lua or from Rust; both callers read the
/// final payload and the result back.
#[test]
fn hooks_of_rust_and_lua_share_one_priority_order_and_chain_their_changes() {
    both_ways(|f, rewrite| {
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = log.clone();
        let _rust_high = f
            .hub
            .listen_hook("Combat.Damage", HookOptions::new().priority(7), move |c| {
                let n = amount(c.payload);
                l.borrow_mut().push(format!("rust 7 saw {n}"));
                *c.payload = hit(n + 100);
            })
            .unwrap();
        let l = log.clone();
        let _rust_low = f
            .hub
            .listen_hook("Combat.Damage", HookOptions::new().priority(-5), move |c| {
                let n = amount(c.payload);
                l.borrow_mut().push(format!("rust -5 saw {n}"));
                c.handled();
            })
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenHook("Combat.Damage", nil, function(p) print("lua 10 saw", p.amount); p.amount = p.amount * 2 end, {priority = 10})
            ListenHook("Combat", nil, function(p) print("lua partial 0 saw", p.amount); p.amount = p.amount - 1 end, {match = "partial"})
            local r, p = RunHook("Combat.Damage", {__struct = "Hit", amount = 5})
            print(r.ran, r.handled, r.cancelled, p.amount)
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "lua 10 saw\t5",
                "lua partial 0 saw\t110",
                "4\ttrue\tfalse\t109"
            ],
            "rewrite {rewrite}"
        );
        assert_eq!(
            std::mem::take(&mut *log.borrow_mut()),
            ["rust 7 saw 10", "rust -5 saw 109"],
            "rewrite {rewrite}"
        );
        let mut payload = hit(1);
        let r = f.hub.run_hook("Combat.Damage", &mut payload).unwrap();
        assert_eq!((r.ran, r.handled, r.cancelled), (4, true, false));
        assert_eq!(amount(&payload), 101);
        assert_eq!(
            f.printed(),
            ["lua 10 saw\t1", "lua partial 0 saw\t102"],
            "rewrite {rewrite}"
        );
    });
}

/// "cancel it, which stops the rest": a Lua listener that changes the
/// payload and cancels stops the lower-priority Rust and Lua listeners; the
/// Rust caller sees the change, the cancel and the count up to it; a Lua
/// `ctx:Handled()` before it is reported too.
#[test]
fn a_lua_cancel_stops_rust_and_lua_listeners_after_it_and_the_rust_caller_sees_it() {
    both_ways(|f, rewrite| {
        let called = Rc::new(RefCell::new(0));
        let c2 = called.clone();
        let _rust_after = f
            .hub
            .listen_hook("Door.Open", HookOptions::new().priority(1), move |_| {
                *c2.borrow_mut() += 1
            })
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenHook("Door.Open", nil, function(p, ctx) print("handles"); ctx:Handled() end, {priority = 30})
            ListenHook("Door", nil, function(p, ctx) print("cancels"); p.amount = 0; ctx:Cancel() end, {priority = 20, match = "partial"})
            ListenHook("Door.Open", nil, function(p) print("never") end, {priority = 5})
            "#,
        );
        let mut payload = hit(3);
        let r = f.hub.run_hook("Door.Open", &mut payload).unwrap();
        assert_eq!(f.printed(), ["handles", "cancels"], "rewrite {rewrite}");
        assert_eq!((r.ran, r.handled, r.cancelled), (2, true, true));
        assert_eq!(amount(&payload), 0);
        assert_eq!(*called.borrow(), 0);
    });
}

/// "RunHook hands every hook listener the payload itself (not a copy) ...
/// The caller reads the payload back": a Lua caller passing a table reads
/// the listeners' changes back from that same table (besides the second
/// return value).
#[test]
fn run_hook_changes_the_callers_own_table() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenHook("Heal", nil, function(p) p.hp = p.hp + 10 end)
            local mine = {__struct = "Hp", hp = 1}
            local r, back = RunHook("Heal", mine)
            print(back.hp, mine.hp)
            "#,
        );
        assert_eq!(f.printed(), ["11\t11"], "rewrite {rewrite}");
    });
}

/// A hook listener added during a run waits for the next run; one unbound
/// (by id) or whose owner object was destroyed by an earlier listener is
/// not called, and not counted.
#[test]
fn hook_listeners_added_or_removed_during_a_run() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local added = false
            local victim, owner
            ListenHook("Turn.Start", nil, function(p)
                print("first")
                if not added then
                    added = true
                    ListenHook("Turn.Start", nil, function() print("added") end, {priority = 50})
                    UnbindMessage("Turn.Start", victim)
                    GMP.Destroy(owner)
                end
            end, {priority = 100})
            victim = ListenHook("Turn.Start", nil, function() print("unbound") end)
            owner = GMP.Spawn()
            ListenHook("Turn", owner, function() print("owned") end, {match = "partial"})
            ListenHook("Turn.Start", nil, function() print("last") end, {priority = -1})
            local r = RunHook("Turn.Start", 0)
            print("ran", r.ran)
            r = RunHook("Turn.Start", 0)
            print("ran", r.ran)
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "first", "last", "ran\t2", "first", "added", "last", "ran\t3"
            ],
            "rewrite {rewrite}"
        );
    });
}

/// Unregistering a hook listener by its handle: `UnbindMessage(key, id)`
/// with the id `ListenHook` returned, or `UnbindMessage(key, owner)`; an
/// unknown id removes nothing.
#[test]
fn unbind_message_removes_a_hook_listener_by_id_or_owner() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local id = ListenHook("Shop.Buy", nil, function() print("by id") end)
            local owner = {}
            ListenHook("Shop.Buy", owner, function() print("by owner") end)
            ListenHook("Shop.Buy", nil, function() print("stays") end)
            print(math.type(id:Id()), RunHook("Shop.Buy", 1).ran)
            print(UnbindMessage("Shop.Buy", 999999), UnbindMessage("Shop.Buy", id), UnbindMessage("Shop.Buy", owner))
            print(RunHook("Shop.Buy", 1).ran)
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "by id",
                "by owner",
                "stays",
                "integer\t3",
                "0\t1\t1",
                "stays",
                "1"
            ],
            "rewrite {rewrite}"
        );
    });
}

/// "A bad key is a clear error, never a panic": `ListenHook` and `RunHook`
/// with an empty segment or a trailing dot are errors naming the key at the
/// caller's line, whether the key is a literal (baked at load) or not.
#[test]
fn bad_hook_keys_are_errors_naming_the_key() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local bad = {"A..B", "A.", ".A"}
            for _, k in ipairs(bad) do
                print(pcall(ListenHook, k, nil, function() end))
                print(pcall(RunHook, k, 1))
            end
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed.len(), 6, "rewrite {rewrite}: {printed:?}");
        for (line, key) in printed.iter().zip(["A..B", "A..B", "A.", "A.", ".A", ".A"]) {
            assert!(
                line.starts_with("false") && line.contains(&format!("`{key}`")),
                "rewrite {rewrite}: {line}"
            );
        }
        for (source, key) in [
            ("\nListenHook('Bad.', nil, function() end)\n", "Bad."),
            ("\nRunHook('Bad..Hook', 1)\n", "Bad..Hook"),
        ] {
            let err =
                f.rt.load_script("b.lua", source, f.spawn())
                    .unwrap_err()
                    .to_string();
            assert!(
                err.contains("b.lua:2:") && err.contains(key),
                "rewrite {rewrite}: {err}"
            );
        }
    });
}

/// "The caller reads the payload back", in place: the caller's table
/// keeps its metatable, a nested table the caller holds reads the change
/// too, fields the payload no longer has are cleared (a listener that
/// replaces the payload with another struct), and a hook nobody listens to
/// leaves the table exactly as it was (no recorded defaults filled in). An
/// array payload is written back element by element, shrinking with it.
#[test]
fn run_hook_writes_back_in_place_clearing_removed_fields_and_keeping_the_metatable() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenHook("Move", nil, function(p)
                p.pos.x = p.pos.x + 1
                p.added = "yes"
            end)
            ListenHook("Swap", nil, function(p) return {__struct = "Other", y = p.x + 1} end)
            ListenHook("List", nil, function(p) p[1] = p[1] * 10; p[3] = nil end)
            local meta = {__index = function(_, k) return "meta:" .. k end}
            local pos = {__struct = "Pos", x = 1}
            local mine = setmetatable({__struct = "Mv", pos = pos}, meta)
            RunHook("Move", mine)
            print(mine.added, mine.pos == pos, pos.x, getmetatable(mine) == meta, mine.gone)
            local swapped = setmetatable({__struct = "Xs", x = 1}, meta)
            RunHook("Swap", swapped)
            print(swapped.__struct, swapped.y, rawget(swapped, "x"), getmetatable(swapped) == meta)
            local untouched = {__struct = "Mv", pos = {__struct = "Pos", x = 5}}
            RunHook("Nobody.Listens", untouched)
            local n = 0
            for _ in pairs(untouched) do n = n + 1 end
            print(n, untouched.pos.x)
            local list = {1, 2, 3}
            RunHook("List", list)
            print(#list, list[1], list[2], list[3])
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "yes	true	2	true	meta:gone",
                "Other	2	nil	true",
                "2	5",
                "2	10	2	nil"
            ],
            "rewrite {rewrite}"
        );
        assert!(f.failures().is_empty(), "rewrite {rewrite}");
    });
}

/// "A bad key is a clear error" has a sibling for options: Lua message
/// listens and the Rhai face refuse an options argument that is not a
/// table, naming the call and the key at the caller's line; `ListenHook`
/// does the same (`nil` is the defaults), and so for a `priority` or
/// `match` option of the wrong kind. Nothing is registered by a refused
/// call.
#[test]
fn listen_hook_refuses_options_that_are_not_a_table_naming_the_key() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            print(pcall(ListenHook, "Opt.Hook", nil, function() print("ran") end, 5))
            print(pcall(ListenHook, "Opt.Hook", nil, function() print("ran") end, "high"))
            print(pcall(ListenHook, "Opt.Hook", nil, function() print("ran") end, {priority = "high"}))
            print(pcall(ListenHook, "Opt.Hook", nil, function() print("ran") end, {priority = 1.5}))
            print(pcall(ListenHook, "Opt.Hook", nil, function() print("ran") end, {match = "some"}))
            print(RunHook("Opt.Hook", 1).ran)
            ListenHook("Opt.Hook", nil, function() print("ran") end, nil)
            ListenHook("Opt.Hook", nil, function() print("ran high") end, {priority = 2.0})
            print(RunHook("Opt.Hook", 1).ran)
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed.len(), 9, "rewrite {rewrite}: {printed:?}");
        for (line, what) in printed[..5].iter().zip([
            "options must be a table",
            "options must be a table",
            "`priority` must be a 32-bit integer, got \"high\"",
            "`priority` must be a 32-bit integer, got a number (1.5)",
            "`match` must be \"exact\" or \"partial\", got \"some\"",
        ]) {
            assert!(
                line.starts_with("false")
                    && line.contains("a.lua:")
                    && line.contains("ListenHook `Opt.Hook`")
                    && line.contains(what),
                "rewrite {rewrite}: {line}"
            );
        }
        assert!(printed[0].contains("got an integer (5)"), "{}", printed[0]);
        assert!(printed[0].contains("a.lua:2: "), "{}", printed[0]);
        assert_eq!(
            printed[5..],
            ["0", "ran high", "ran", "2"],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn hooks_run_highest_priority_first_ties_by_registration_partial_above_included() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenHook("Combat.Hit", nil, function(p) print("exact 0 first") end)
            ListenHook("Combat", nil, function(p) print("partial 5") end, {priority = 5, match = "partial"})
            ListenHook("Combat.Hit", nil, function(p) print("exact 0 second") end)
            ListenHook("Combat", nil, function(p) print("exact on parent: never") end, {priority = 9})
            ListenHook("Combat.Hit", nil, function(p, ctx) print("exact -1 cancels"); ctx:Cancel() end, {priority = -1})
            ListenHook("Combat.Hit", nil, function(p) print("after cancel: never") end, {priority = -2})
            local r = RunHook("Combat.Hit", 1)
            print(r.ran, r.handled, r.cancelled)
            "#,
        );
        assert_eq!(
            f.printed(),
            vec![
                "partial 5",
                "exact 0 first",
                "exact 0 second",
                "exact -1 cancels",
                "4\tfalse\ttrue"
            ],
            "rewrite {rewrite}"
        );
    });
}
