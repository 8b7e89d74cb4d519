//! Stored messages and `once` from Rhai: replayed to late (partial)
//! listeners, `once` using one of a listener's `times`.

use crate::support::both_ways;

/// Once + Times from Rhai: a once message replayed to a `times: 2`
/// listener uses one call; one more live send and the listener is gone.
#[test]
fn store_once_replay_uses_one_of_a_rhai_listeners_times() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            OnceObjectMessage(SELF, "Boot.Done", 1);
            ListenObjectMessage(SELF, "Boot.Done", (), |n| print(`got ${n}`), #{ times: 2 });
            ListenObjectMessage(SELF, "Boot.Done", (), |n| print(`second ${n}`));
            NotifyObjectMessage(SELF, "Boot.Done", 2);
            NotifyObjectMessage(SELF, "Boot.Done", 3);
            "#,
        );
        assert_eq!(
            f.printed(),
            ["got 1", "got 2", "second 2", "second 3"],
            "rewrite {rewrite}"
        );
    });
}

/// Store + partial matching from Rhai.
#[test]
fn store_replays_to_a_late_partial_rhai_listener() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            StoreObjectMessage(SELF, "Game.Ready", 7, "map");
            ListenObjectMessage(SELF, "Game", (), |n, s| print(`partial ${n} ${s}`), #{ "match": "partial" });
            ListenObjectMessage(SELF, "Game", (), || print("exact parent: never"));
            "#,
        );
        assert_eq!(f.printed(), ["partial 7 map"], "rewrite {rewrite}");
    });
}
