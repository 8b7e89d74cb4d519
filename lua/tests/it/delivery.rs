//! Lua listeners' order, `times`, owners and re-entrancy: ties keep
//! registration order across scripts, re-entrant calls count, a listener
//! may unbind itself, listen and send; one whose object is destroyed mid
//! dispatch is skipped, and an owner already destroyed is an error at the
//! line.

use crate::support::Fixture;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

/// "Destroying an object drops everything it owns and everything
/// sourced from it" — mid-dispatch, on the fast lane too: listeners of the
/// object destroyed by an earlier listener are not called.
#[test]
fn destroying_the_source_object_mid_dispatch_skips_its_lua_listeners() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local o = GMP.Spawn()
            ListenMessage("Boom", nil, function() print("killer"); GMP.Destroy(o) end, {order = -1})
            ListenObjectMessage(o, "Boom", o, function() print("object tier: never") end)
            ListenMessage("Boom", o, function() print("owned by o: never") end)
            ListenWorldMessage(GMP.World(), "Boom", nil, function() print("world") end)
            NotifyObjectMessage(o, "Boom")
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed, ["killer", "world"], "rewrite {rewrite}");
        assert!(f.failures().is_empty(), "rewrite {rewrite}");
    });
}

/// "Set N and the listener unlistens itself after N calls" — a Lua
/// `{times = 1}` listener sending its own key is called once.
#[test]
fn listen_options_times_counts_a_lua_listeners_reentrant_calls() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenMessage("Echo", nil, function(n)
                print("called", n)
                if n < 3 then NotifyMessage("Echo", n + 1) end
            end, {times = 1})
            NotifyMessage("Echo", 0)
            NotifyMessage("Echo", 10)
            "#,
        );
        assert_eq!(f.printed(), ["called\t0"], "rewrite {rewrite}");
    });
}

/// "Order defaults to 0, lower runs first; equal orders keep
/// registration order" — Lua listeners of two scripts and the three tiers,
/// through the fast lane and without it.
#[test]
fn listen_options_order_ties_keep_registration_order_across_lua_scripts() {
    both_ways(|f, rewrite| {
        let (_, first) = f.load(
            "one.lua",
            r#"
            ListenObjectMessage(self, "Tie", nil, function() print("one object 0") end)
            ListenMessage("Tie", nil, function() print("one global 0") end)
            ListenMessage("Tie", nil, function() print("one global -1") end, {order = -1})
            "#,
        );
        let _ = first;
        f.load(
            "two.lua",
            r#"
            ListenWorldMessage(GMP.World(), "Tie", nil, function() print("two world 0") end)
            ListenMessage("Tie", nil, function() print("two global -1") end, {order = -1})
            "#,
        );
        let key = f.hub.key("Tie").unwrap();
        f.hub.send(key, first, ()).unwrap();
        assert_eq!(
            f.printed(),
            [
                "one global -1",
                "two global -1",
                "one object 0",
                "one global 0",
                "two world 0"
            ],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn owner_already_destroyed_is_an_error_at_the_line_not_a_listener_kept_forever() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local o = GMP.Spawn()
            GMP.Destroy(o)
            print(pcall(ListenMessage, "Late", o, function() end))
            print(pcall(ListenObjectMessage, o, "Late", nil, function() end))
            print(pcall(StoreObjectMessage, o, "Late", 1))
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed.len(), 3);
        for line in &printed {
            assert!(
                line.starts_with("false") && line.contains("does not exist"),
                "rewrite {rewrite}: {line}"
            );
        }
        assert_eq!(f.hub.listener_count(), 0);
    });
}

#[test]
fn reentrancy_a_lua_listener_may_unbind_itself_listen_and_send() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local id
            id = ListenMessage("Outer", nil, function()
                print("outer")
                UnbindMessage("Outer", id)
                ListenMessage("Inner", nil, function(n) print("inner", n) end)
                NotifyMessage("Inner", 1)
            end)
            NotifyMessage("Outer")
            NotifyMessage("Outer")
            NotifyMessage("Inner", 2)
            "#,
        );
        assert_eq!(
            f.printed(),
            vec!["outer", "inner\t1", "inner\t2"],
            "rewrite {rewrite}"
        );
    });
}

/// A send from an object that is gone is an error at the line, in the
/// words listening there gives — through a warm fast lane too (the same
/// send made before the object went) — while a global send goes on.
#[test]
fn a_send_from_a_destroyed_object_is_an_error_at_the_line_like_listening_there() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenMessage("Ping", nil, function() print("heard") end)
            local o = GMP.Spawn()
            for _ = 1, 3 do NotifyObjectMessage(o, "Ping") end
            GMP.Destroy(o)
            local function words(e) return tostring(e):match("a%.lua:%d+: ([^\n]*)") end
            local _, listen = pcall(ListenObjectMessage, o, "Ping", nil, function() end)
            local ok, send = pcall(NotifyObjectMessage, o, "Ping")
            print(ok, words(send) == words(listen), send)
            local key = "Ping"
            print(pcall(NotifyObjectMessage, o, key))
            NotifyMessage("Ping")
            "#,
        );
        let printed = f.printed();
        assert_eq!(
            printed[..3],
            ["heard", "heard", "heard"],
            "rewrite {rewrite}"
        );
        assert!(
            printed[3].starts_with("false\ttrue\t")
                && printed[3].contains("a.lua:8: object#2 does not exist"),
            "rewrite {rewrite}: {printed:?}"
        );
        assert!(
            printed[4].starts_with("false\t")
                && printed[4].contains("a.lua:11: object#2 does not exist"),
            "rewrite {rewrite}: {printed:?}"
        );
        assert_eq!(printed[5..], ["heard"], "rewrite {rewrite}");
    });
}
