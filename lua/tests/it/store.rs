//! Stored messages and `once` from Lua: replayed to late listeners (partial
//! ones included) of every language once, `once` using one of a listener's
//! `times`, removal.

use crate::support::Fixture;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

/// Once + Times from Lua: a once message replayed to a `{times = 2}`
/// listener uses one call; one more live send and the listener is gone.
#[test]
fn store_once_replay_uses_one_of_a_lua_listeners_times() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            OnceObjectMessage(self, "Boot.Done", 1)
            ListenObjectMessage(self, "Boot.Done", nil, function(n) print("got", n) end, {times = 2})
            ListenObjectMessage(self, "Boot.Done", nil, function(n) print("second", n) end)
            NotifyObjectMessage(self, "Boot.Done", 2)
            NotifyObjectMessage(self, "Boot.Done", 3)
            "#,
        );
        assert_eq!(
            f.printed(),
            ["got\t1", "got\t2", "second\t2", "second\t3"],
            "rewrite {rewrite}"
        );
    });
}

/// Store + partial matching from Lua: a partial listener arriving after
/// a store under its key gets the replay with the stored arguments.
#[test]
fn store_replays_to_a_late_partial_lua_listener() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            StoreObjectMessage(self, "Game.Ready", 7, "map")
            ListenObjectMessage(self, "Game", nil, function(n, s) print("partial", n, s) end, {match = "partial"})
            ListenObjectMessage(self, "Game", nil, function() print("exact parent: never") end)
            "#,
        );
        assert_eq!(f.printed(), ["partial\t7\tmap"], "rewrite {rewrite}");
    });
}

#[test]
fn store_once_and_remove_reach_listeners_of_every_language_once() {
    both_ways(|f, rewrite| {
        let got = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let (_, object) = f.load(
            "a.lua",
            r#"
            StoreObjectMessage(self, "Door.State", "open")
            OnceObjectMessage(self, "Door.Built", 1)
            "#,
        );
        let sink = got.clone();
        let _a = f
            .hub
            .listen("Door.Built", object, move |n: i64| {
                sink.borrow_mut().push(format!("built {n}"))
            })
            .unwrap();
        let sink = got.clone();
        let _b = f
            .hub
            .listen("Door.Built", object, move |n: i64| {
                sink.borrow_mut().push(format!("again {n}"))
            })
            .unwrap();
        let sink = got.clone();
        let _c = f
            .hub
            .listen("Door.State", object, move |s: String| {
                sink.borrow_mut().push(format!("state {s}"))
            })
            .unwrap();
        assert_eq!(
            *got.borrow(),
            ["built 1", "state open"],
            "rewrite {rewrite}"
        );
    });
}
