//! The tag-channel router as a Rhai script sees it, beside Rust listeners on
//! the same keys: exact and partial matching, owners, hooks with priority
//! (ties by registration, partial above included), handled and cancel;
//! with baking on and off (baking must not change behaviour).

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{HookOptions, ListenOptions, Source, StructValue, Value};

use crate::support::both_ways;

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
/// exact listener hears its own key only — from Rhai sends and Rust sends.
#[test]
fn partial_match_hears_every_depth_below_but_not_text_prefixes() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenMessage("A", (), |n| print(`A* ${n}`), #{ "match": "partial" });
            ListenMessage("A.B", (), |n| print(`A.B* ${n}`), #{ "match": "partial" });
            ListenMessage("A.B", (), |n| print(`A.B= ${n}`));
            NotifyMessage("A", 1);
            NotifyMessage("A.B", 2);
            NotifyMessage("A.B.C", 3);
            NotifyMessage("A.BC", 4);
            NotifyMessage("AB", 5);
            NotifyMessage("A.B.C.D", 6);
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "A* 1", "A.B* 2", "A.B= 2", "A* 2", "A.B* 3", "A* 3", "A* 4", "A.B* 6", "A* 6"
            ],
            "rewrite {rewrite}"
        );
        for (key, n) in [("A.B.C", 3i64), ("A.BC", 4)] {
            f.hub.send_str(key, Source::Global, (n,)).unwrap();
        }
        assert_eq!(f.printed(), ["A.B* 3", "A* 3", "A* 4"], "rewrite {rewrite}");
    });
}

/// "listeners on the exact channel first, in registration order, then
/// Partial listeners on each channel above it", partial ones registered
/// first (in Rust and in Rhai).
#[test]
fn exact_listeners_run_before_partial_listeners_above_registered_earlier() {
    both_ways(|f, rewrite| {
        let log = Rc::new(RefCell::new(Vec::new()));
        let l = log.clone();
        let _rust_partial = f
            .hub
            .listen_message(
                "Inv",
                Source::Global,
                ListenOptions::new().partial(),
                move |m| l.borrow_mut().push(format!("rust Inv* {}", m.args[0])),
            )
            .unwrap();
        f.load(
            "a.rhai",
            r#"
            ListenMessage("Inv.Items", (), |n| print(`Inv.Items* ${n}`), #{ "match": "partial" });
            ListenMessage("Inv.Items.Sword", (), |n| print(`exact 1 ${n}`));
            ListenMessage("Inv.Items.Sword", (), |n| print(`exact 2 ${n}`));
            NotifyMessage("Inv.Items.Sword", 7);
            "#,
        );
        assert_eq!(
            f.printed(),
            ["exact 1 7", "exact 2 7", "Inv.Items* 7"],
            "rewrite {rewrite}"
        );
        assert_eq!(*log.borrow(), ["rust Inv* 7"], "rewrite {rewrite}");
    });
}

/// "While being called, a listener may add or remove listeners": a Rhai
/// listener unbound by an earlier one of the same send is not called, nor
/// one whose owner object the earlier one destroyed (exact or partial).
#[test]
fn listener_unbound_or_owner_destroyed_mid_send_is_not_called() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            let armed = false;
            let victim = 0;
            let owner = GMP::Spawn();
            ListenMessage("Tick.Frame", (), |n| {
                print(`killer ${n}`);
                if armed {
                    UnbindMessage("Tick.Frame", victim);
                    GMP::Destroy(owner);
                    armed = false;
                }
            });
            victim = ListenMessage("Tick.Frame", (), |n| print(`unbound ${n}`));
            ListenMessage("Tick.Frame", owner, |n| print(`owned ${n}`));
            ListenMessage("Tick", owner, |n| print(`owned partial ${n}`), #{ "match": "partial" });
            ListenMessage("Tick.Frame", (), |n| print(`last ${n}`));
            NotifyMessage("Tick.Frame", 1);
            armed = true;
            NotifyMessage("Tick.Frame", 2);
            NotifyMessage("Tick.Frame", 3);
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "killer 1",
                "unbound 1",
                "owned 1",
                "last 1",
                "owned partial 1",
                "killer 2",
                "last 2",
                "killer 3",
                "last 3",
            ],
            "rewrite {rewrite}"
        );
        let failures = f.failures();
        assert!(failures.is_empty(), "rewrite {rewrite}: {failures:?}");
    });
}

/// Hook listeners of Rust and Rhai on one key (and partially above it) run
/// in one order — highest priority first — each seeing the changes before
/// it, whether the hook is run from Rhai or from Rust; both callers read
/// the final payload and the result back.
#[test]
fn hooks_of_rust_and_rhai_share_one_priority_order_and_chain_their_changes() {
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
            "a.rhai",
            r#"
            ListenHook("Combat.Damage", (), |p, ctx| { print(`rhai 10 saw ${p.amount}`); p.amount *= 2; }, #{ priority: 10 });
            ListenHook("Combat", (), |p, ctx| { print(`rhai partial 0 saw ${p.amount}`); p.amount -= 1; }, #{ "match": "partial" });
            let r = RunHook("Combat.Damage", #{ __struct: "Hit", amount: 5 });
            print(`${r.ran} ${r.handled} ${r.cancelled} ${r.payload.amount}`);
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "rhai 10 saw 5",
                "rhai partial 0 saw 110",
                "4 true false 109"
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
            ["rhai 10 saw 1", "rhai partial 0 saw 102"],
            "rewrite {rewrite}"
        );
    });
}

/// "cancel it, which stops the rest": a Rhai listener that changes the
/// payload and cancels stops the lower-priority Rust and Rhai listeners;
/// the Rust caller sees the change, the cancel and the count up to it.
#[test]
fn a_rhai_cancel_stops_rust_and_rhai_listeners_after_it_and_the_rust_caller_sees_it() {
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
            "a.rhai",
            r#"
            ListenHook("Door.Open", (), |p, ctx| { print("handles"); ctx.Handled(); }, #{ priority: 30 });
            ListenHook("Door", (), |p, ctx| { print("cancels"); p.amount = 0; ctx.Cancel(); }, #{ priority: 20, "match": "partial" });
            ListenHook("Door.Open", (), |p, ctx| print("never"), #{ priority: 5 });
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

/// "each able to change it": a hook listener given as a named script
/// function (by name or `Fn`), or as a one-parameter closure, changes the
/// map payload just as a two-parameter closure does.
#[test]
fn hook_listeners_of_every_rhai_form_can_change_the_payload() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            fn double(p, ctx) { p.amount *= 2; }
            fn add_one(p) { p.amount += 1; }
            ListenHook("Calc", (), "double", #{ priority: 3 });
            ListenHook("Calc", (), Fn("add_one"), #{ priority: 2 });
            ListenHook("Calc", (), |p| { p.amount += 10; }, #{ priority: 1 });
            let r = RunHook("Calc", #{ __struct: "Hit", amount: 5 });
            print(`${r.ran} ${r.payload.amount}`);
            "#,
        );
        assert_eq!(f.printed(), ["3 21"], "rewrite {rewrite}");
        assert!(
            f.failures().is_empty(),
            "rewrite {rewrite}: {:?}",
            f.failures()
        );
    });
}

/// A hook listener added during a run waits for the next run; one unbound
/// (by id) or whose owner object was destroyed by an earlier listener is
/// not called and not counted.
#[test]
fn hook_listeners_added_or_removed_during_a_run() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            let added = false;
            let victim = 0;
            let owner = GMP::Spawn();
            ListenHook("Turn.Start", (), |p, ctx| {
                print("first");
                if !added {
                    added = true;
                    ListenHook("Turn.Start", (), |p, ctx| print("added"), #{ priority: 50 });
                    UnbindMessage("Turn.Start", victim);
                    GMP::Destroy(owner);
                }
            }, #{ priority: 100 });
            victim = ListenHook("Turn.Start", (), |p, ctx| print("unbound"));
            ListenHook("Turn", owner, |p, ctx| print("owned"), #{ "match": "partial" });
            ListenHook("Turn.Start", (), |p, ctx| print("last"), #{ priority: -1 });
            let r = RunHook("Turn.Start", 0);
            print(`ran ${r.ran}`);
            r = RunHook("Turn.Start", 0);
            print(`ran ${r.ran}`);
            "#,
        );
        assert_eq!(
            f.printed(),
            ["first", "last", "ran 2", "first", "added", "last", "ran 3"],
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
            "a.rhai",
            r#"
            let owner = GMP::Spawn();
            let id = ListenHook("Shop.Buy", (), |p, ctx| print("by id"));
            ListenHook("Shop.Buy", owner, |p, ctx| print("by owner"));
            ListenHook("Shop.Buy", (), |p, ctx| print("stays"));
            print(`${type_of(id)} ${RunHook("Shop.Buy", 1).ran}`);
            print(`${UnbindMessage("Shop.Buy", 999999)} ${UnbindMessage("Shop.Buy", id)} ${UnbindMessage("Shop.Buy", owner)}`);
            print(`${RunHook("Shop.Buy", 1).ran}`);
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "by id",
                "by owner",
                "stays",
                "Connection 3",
                "0 1 1",
                "stays",
                "1"
            ],
            "rewrite {rewrite}"
        );
    });
}

/// "A bad key is a clear error, never a panic": `ListenHook` and `RunHook`
/// with an empty segment or a trailing dot are errors naming the key at the
/// caller's line, literal (baked) or not.
#[test]
fn bad_hook_keys_are_errors_naming_the_key_at_the_callers_line() {
    both_ways(|f, rewrite| {
        for (source, line, key) in [
            ("\n\nListenHook(\"A..B\", (), |p, ctx| {});\n", 3, "A..B"),
            ("\nRunHook(\"Bad.\", 1);\n", 2, "Bad."),
            (
                "let k = \".A\";\nListenHook(k, (), |p, ctx| {});\n",
                2,
                ".A",
            ),
            ("let k = \"Trail.\";\n\nRunHook(k, 1);\n", 3, "Trail."),
        ] {
            let err = f.load_err("k.rhai", source);
            assert!(
                err.starts_with(&format!("k.rhai:{line}:")) && err.contains(key),
                "rewrite {rewrite}: {err}"
            );
        }
    });
}

#[test]
fn hooks_run_highest_priority_first_ties_by_registration_partial_above_included() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            ListenHook("Combat.Hit", (), |p, ctx| print("exact 0 first"));
            ListenHook("Combat", (), |p, ctx| print("partial 5"), #{ priority: 5, "match": "partial" });
            ListenHook("Combat.Hit", (), |p, ctx| print("exact 0 second"));
            ListenHook("Combat", (), |p, ctx| print("exact on parent: never"), #{ priority: 9 });
            ListenHook("Combat.Hit", (), |p, ctx| { print("exact -1 cancels"); ctx.Cancel(); }, #{ priority: -1 });
            ListenHook("Combat.Hit", (), |p, ctx| print("after cancel: never"), #{ priority: -2 });
            let r = RunHook("Combat.Hit", 1);
            print(`${r.ran} ${r.handled} ${r.cancelled}`);
            "#,
        );
        assert_eq!(
            f.printed(),
            [
                "partial 5",
                "exact 0 first",
                "exact 0 second",
                "exact -1 cancels",
                "4 false true"
            ],
            "rewrite {rewrite}"
        );
    });
}
