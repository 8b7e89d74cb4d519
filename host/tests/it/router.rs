//! The tag-channel router: exact and partial matching (the channel and every
//! depth below, never a text prefix), owners, hooks with priority, handled
//! and cancel, listeners coming and going during a run, and invalid keys
//! refused at every registration.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::Faced;
use gantry_host::{
    HookOptions, HookResult, Hub, HubError, ListenOptions, ListenerId, Match, Owner, Report,
    Router, Source, StructDef, StructValue, Value,
};
use gantry_test_support::log::{Log, log, taken};

#[test]
fn router_exact_listeners_first_then_partial_above_nearest_first_and_typed_filter_warns() {
    let router = Router::new();
    router.declare_struct("Msg", StructDef::default());
    let log = log();
    let push = |name: &'static str| {
        let l = log.clone();
        move |channel: &str, _: &Value| l.borrow_mut().push(format!("{name} {channel}"))
    };
    let ids = [
        router
            .register("A", None, Match::Partial, None, push("A partial"))
            .unwrap(),
        router
            .register("A.B.C", None, Match::Exact, None, push("exact 1"))
            .unwrap(),
        router
            .register("A.B", None, Match::Partial, None, push("A.B partial"))
            .unwrap(),
        router
            .register("A.B.C", None, Match::Exact, None, push("exact 2"))
            .unwrap(),
        router
            .register("A.B.C", Some("Msg"), Match::Exact, None, push("typed"))
            .unwrap(),
        router
            .register("A.B", None, Match::Exact, None, push("never"))
            .unwrap(),
    ];
    assert!(ids.iter().all(|id| *id != 0));
    let delivered = router.broadcast("A.B.C", Value::Int(1)).unwrap();
    assert_eq!(delivered, 4);
    assert_eq!(
        taken(&log),
        [
            "exact 1 A.B.C",
            "exact 2 A.B.C",
            "A.B partial A.B.C",
            "A partial A.B.C"
        ]
    );
    assert!(
        router
            .hub()
            .take_reports()
            .iter()
            .any(|r| matches!(r, Report::HookPayloadSkipped { .. })),
        "a payload of another struct is skipped with a warning"
    );
}

#[test]
fn router_owner_gone_is_counted_until_the_next_message_drops_it() {
    let router = Router::new();
    let owner = Rc::new(());
    router
        .register("Ch", None, Match::Exact, Some(Owner::of(&owner)), |_, _| {})
        .unwrap();
    drop(owner);
    assert_eq!(router.num(), 1, "owners not yet checked");
    assert_eq!(router.broadcast("Ch", Value::Nil).unwrap(), 0);
    assert_eq!(router.num(), 0);
}

#[test]
fn router_reset_removes_hook_listeners_and_num_does_not_count_them() {
    let router = Router::new();
    router
        .register_hook("Hk", None, Match::Exact, 0, None, |_| {})
        .unwrap();
    router
        .register("Ch", None, Match::Exact, None, |_, _| {})
        .unwrap();
    assert_eq!(router.num(), 1);
    assert!(router.has_hook_listeners("Hk") && !router.has_hook_listeners("Other"));
    router.reset();
    assert!(!router.has_hook_listeners("Hk"));
    assert_eq!(router.num(), 0);
    router.unregister_hook("Hk", 12345);
}

#[test]
fn router_listener_may_register_unregister_and_broadcast_while_called() {
    let router = Rc::new(Router::new());
    let log = log();
    let (r, l) = (Rc::downgrade(&router), log.clone());
    let first = router
        .register("Ch", None, Match::Exact, None, move |_, payload| {
            l.borrow_mut().push(format!("first {payload}"));
            if let (Some(router), Value::Int(1)) = (r.upgrade(), payload) {
                let l2 = l.clone();
                router
                    .register("Ch", None, Match::Exact, None, move |_, p| {
                        l2.borrow_mut().push(format!("added {p}"))
                    })
                    .unwrap();
                router.broadcast("Ch", Value::Int(2)).unwrap();
            }
        })
        .unwrap();
    router.broadcast("Ch", Value::Int(1)).unwrap();
    // The nested broadcast already reaches the listener added before it;
    // the outer one does not (it was added during its delivery).
    assert_eq!(taken(&log), ["first 1", "first 2", "added 2"]);
    router.unregister("Ch", first);
    router.broadcast("Ch", Value::Int(3)).unwrap();
    assert_eq!(taken(&log), ["added 3"]);
}

#[test]
fn router_register_broadcast_unregister_num_reset() {
    let router = Router::new();
    router.declare_struct("Damage", StructDef::default());
    router.declare_struct(
        "Fire",
        StructDef {
            parent: Some("Damage".into()),
            ..Default::default()
        },
    );
    let log = log();
    let l = log.clone();
    let id = router
        .register(
            "Combat.Hit",
            Some("Damage"),
            Match::Exact,
            None,
            move |ch, _| l.borrow_mut().push(format!("exact {ch}")),
        )
        .unwrap();
    assert_ne!(id, 0);
    let l = log.clone();
    router
        .register("Combat", None, Match::Partial, None, move |ch, _| {
            l.borrow_mut().push(format!("partial {ch}"))
        })
        .unwrap();
    let fire = Value::structure(StructValue::new("Fire"));
    assert_eq!(router.broadcast("Combat.Hit", fire).unwrap(), 2);
    assert_eq!(taken(&log), ["exact Combat.Hit", "partial Combat.Hit"]);
    // A payload of another struct skips the typed listener.
    assert_eq!(
        router
            .broadcast("Combat.Hit", Value::structure(StructValue::new("Heal")))
            .unwrap(),
        1
    );
    assert_eq!(router.num(), 2);
    router.unregister("Combat.Hit", id);
    router.unregister("Combat.Hit", 9999);
    assert_eq!(router.num(), 1);
    router.reset();
    assert_eq!(router.num(), 0);
}

#[test]
fn router_hooks_share_the_dispatch_core() {
    let router = Router::new();
    let log = log();
    let l = log.clone();
    let id = router
        .register_hook("Door.Open", None, Match::Exact, 3, None, move |c| {
            l.borrow_mut().push("hook".into());
            c.handled();
        })
        .unwrap();
    assert!(router.has_hook_listeners("Door.Open"));
    let r = router.run_hook("Door.Open", &mut Value::Nil).unwrap();
    assert!(r.handled);
    router.unregister_hook("Door.Open", id);
    assert!(!router.has_hook_listeners("Door.Open"));
    assert_eq!(router.num(), 0, "hook listeners are not counted");
}

/// A router callback that logs `name channel`.
fn push(log: &Log, name: &'static str) -> impl Fn(&str, &Value) + 'static {
    let log = log.clone();
    move |channel: &str, _: &Value| log.borrow_mut().push(format!("{name} {channel}"))
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

/// "Match: Exact, or the channel and every channel under it": a partial
/// listener on `A` hears `A`, `A.B` and `A.B.C`; one on `A.B` hears `A.B`
/// and `A.B.C` but neither its parent `A` nor the sibling-by-prefix `A.BC`;
/// an exact one hears its own channel only.
#[test]
fn partial_match_hears_the_channel_and_every_depth_below_but_not_text_prefixes() {
    let router = Router::new();
    let log = log();
    router
        .register("A", None, Match::Partial, None, push(&log, "A*"))
        .unwrap();
    router
        .register("A.B", None, Match::Partial, None, push(&log, "A.B*"))
        .unwrap();
    router
        .register("A.B", None, Match::Exact, None, push(&log, "A.B="))
        .unwrap();
    for channel in ["A", "A.B", "A.B.C", "A.BC", "AB", "A.B.C.D"] {
        router.broadcast(channel, Value::Nil).unwrap();
    }
    assert_eq!(
        taken(&log),
        [
            "A* A",
            "A.B* A.B",
            "A.B= A.B",
            "A* A.B",
            "A.B* A.B.C",
            "A* A.B.C",
            "A* A.BC",
            "A.B* A.B.C.D",
            "A* A.B.C.D",
        ]
    );
}

/// The same rule through the hub's own listen API, with a world tier and
/// an object tier: partial matching works at every depth in each tier.
#[test]
fn partial_match_at_every_depth_holds_in_every_tier() {
    let hub = Hub::new();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let log = log();
    let mut handles = Vec::new();
    for (scope, name) in [
        (Source::Global, "global"),
        (Source::World(world), "world"),
        (Source::Object(object), "object"),
    ] {
        let l = log.clone();
        handles.push(
            hub.listen_message("Ui", scope, ListenOptions::new().partial(), move |m| {
                l.borrow_mut().push(format!("{name} {}", m.key_name()))
            })
            .unwrap(),
        );
    }
    hub.send_str("Ui.Menu.Open", object, ()).unwrap();
    hub.send_str("UiX", object, ()).unwrap();
    hub.send_str("Ui.Menu", world, ()).unwrap();
    assert_eq!(
        taken(&log),
        [
            "global Ui.Menu.Open",
            "world Ui.Menu.Open",
            "object Ui.Menu.Open",
            "global Ui.Menu",
            "world Ui.Menu",
        ]
    );
}

/// "Delivery is immediate: listeners on the exact channel first, in
/// registration order, then Partial listeners on each channel above it."
/// A partial listener registered *on* the channel counts as one of the
/// channel's own (registration order), ahead of partial listeners above it
/// however early those were registered.
#[test]
fn partial_listener_on_the_channel_itself_runs_with_its_exact_ones_in_registration_order() {
    let router = Router::new();
    let log = log();
    router
        .register("Combat", None, Match::Partial, None, push(&log, "above"))
        .unwrap();
    router
        .register("Combat.Hit", None, Match::Exact, None, push(&log, "exact1"))
        .unwrap();
    router
        .register(
            "Combat.Hit",
            None,
            Match::Partial,
            None,
            push(&log, "own-partial"),
        )
        .unwrap();
    router
        .register("Combat.Hit", None, Match::Exact, None, push(&log, "exact2"))
        .unwrap();
    assert_eq!(router.broadcast("Combat.Hit", Value::Nil).unwrap(), 4);
    assert_eq!(
        taken(&log),
        [
            "exact1 Combat.Hit",
            "own-partial Combat.Hit",
            "exact2 Combat.Hit",
            "above Combat.Hit"
        ]
    );
}

/// An exact and a partial listener with the same owner are independent
/// listeners: both hear the channel, only the partial one hears below, and
/// the owner going away drops both at the next message.
#[test]
fn exact_and_partial_with_the_same_owner_are_two_listeners_dropped_together() {
    let router = Router::new();
    let owner = Rc::new(());
    let log = log();
    router
        .register(
            "Door",
            None,
            Match::Exact,
            Some(Owner::of(&owner)),
            push(&log, "exact"),
        )
        .unwrap();
    router
        .register(
            "Door",
            None,
            Match::Partial,
            Some(Owner::of(&owner)),
            push(&log, "partial"),
        )
        .unwrap();
    assert_eq!(router.broadcast("Door", Value::Nil).unwrap(), 2);
    assert_eq!(router.broadcast("Door.Open", Value::Nil).unwrap(), 1);
    assert_eq!(
        taken(&log),
        ["exact Door", "partial Door", "partial Door.Open"]
    );
    assert_eq!(router.num(), 2);
    drop(owner);
    assert_eq!(router.num(), 2, "owners not yet checked");
    assert_eq!(router.broadcast("Door", Value::Nil).unwrap(), 0);
    assert!(taken(&log).is_empty());
    assert_eq!(router.num(), 0);
}

/// "Broadcast — Returns: How many listeners it was delivered to", counting
/// partial listeners above and leaving out a listener whose struct does not
/// match (not delivered) and one whose owner is gone.
#[test]
fn broadcast_counts_exact_and_partial_deliveries_only() {
    let router = Router::new();
    router.declare_struct("Hit", StructDef::default());
    let owner = Rc::new(());
    let log = log();
    router
        .register("A.B", None, Match::Exact, None, push(&log, "exact"))
        .unwrap();
    router
        .register("A", None, Match::Partial, None, push(&log, "partial"))
        .unwrap();
    router
        .register("A.B", Some("Hit"), Match::Exact, None, push(&log, "typed"))
        .unwrap();
    router
        .register(
            "A.B",
            None,
            Match::Exact,
            Some(Owner::of(&owner)),
            push(&log, "owned"),
        )
        .unwrap();
    router
        .register("A.B.C", None, Match::Partial, None, push(&log, "below"))
        .unwrap();
    drop(owner);
    assert_eq!(router.broadcast("A.B", Value::Int(1)).unwrap(), 2);
    assert_eq!(router.broadcast("A.B", hit(1)).unwrap(), 3);
    assert_eq!(
        taken(&log),
        [
            "exact A.B",
            "partial A.B",
            "exact A.B",
            "typed A.B",
            "partial A.B"
        ]
    );
}

/// "Once the owner is gone, the listener is dropped at the next message" and
/// "a listener may remove listeners": an owner released by an earlier
/// listener of the same dispatch is not called in that dispatch, on the
/// first send (gathered) and on a later one (the kept lane) alike, exact or
/// partial above.
#[test]
fn owner_dropped_mid_dispatch_is_not_called_later_in_that_dispatch() {
    for partial_victim in [false, true] {
        for warm in [false, true] {
            let router = Router::new();
            let log = log();
            // The victim's owner lives only here, until the killer takes it.
            let owner: Rc<RefCell<Option<Rc<()>>>> = Rc::new(RefCell::new(None));
            let armed = Rc::new(std::cell::Cell::new(false));
            let (o, l, a) = (owner.clone(), log.clone(), armed.clone());
            router
                .register("Ch.Sub", None, Match::Exact, None, move |_, _| {
                    l.borrow_mut().push("killer".into());
                    if a.get() {
                        o.borrow_mut().take();
                    }
                })
                .unwrap();
            let victim_owner = Rc::new(());
            let (channel, matching) = if partial_victim {
                ("Ch", Match::Partial)
            } else {
                ("Ch.Sub", Match::Exact)
            };
            router
                .register(
                    channel,
                    None,
                    matching,
                    Some(Owner::of(&victim_owner)),
                    push(&log, "victim"),
                )
                .unwrap();
            *owner.borrow_mut() = Some(victim_owner);
            let case = format!("partial victim {partial_victim}, warm lane {warm}");
            if warm {
                // A send with the owner alive: both run (and the key's lane is kept).
                assert_eq!(router.broadcast("Ch.Sub", Value::Nil).unwrap(), 2, "{case}");
                assert_eq!(taken(&log), ["killer", "victim Ch.Sub"], "{case}");
            }
            armed.set(true);
            let delivered = router.broadcast("Ch.Sub", Value::Nil).unwrap();
            assert_eq!(
                (delivered, taken(&log)),
                (1, vec!["killer".to_string()]),
                "{case}"
            );
            assert_eq!(router.num(), 1, "{case}: the victim is dropped");
        }
    }
}

/// A listener unregistered by an earlier one of the same dispatch is not
/// called, whether it was exact on the channel or partial above; the count
/// leaves it out.
#[test]
fn listener_removed_mid_dispatch_is_not_called_and_not_counted() {
    let router = Rc::new(Router::new());
    let log = log();
    let victims: Rc<RefCell<Vec<(&str, u64)>>> = Rc::new(RefCell::new(Vec::new()));
    let (r, v, l) = (Rc::downgrade(&router), victims.clone(), log.clone());
    router
        .register("Ch.Sub", None, Match::Exact, None, move |_, _| {
            l.borrow_mut().push("remover".into());
            let router = r.upgrade().unwrap();
            for &(channel, id) in v.borrow().iter() {
                router.unregister(channel, id);
            }
        })
        .unwrap();
    // Warm the lane with no victims, then add them.
    assert_eq!(router.broadcast("Ch.Sub", Value::Nil).unwrap(), 1);
    taken(&log);
    let exact = router
        .register(
            "Ch.Sub",
            None,
            Match::Exact,
            None,
            push(&log, "exact victim"),
        )
        .unwrap();
    let partial = router
        .register(
            "Ch",
            None,
            Match::Partial,
            None,
            push(&log, "partial victim"),
        )
        .unwrap();
    victims
        .borrow_mut()
        .extend([("Ch.Sub", exact), ("Ch", partial)]);
    assert_eq!(router.broadcast("Ch.Sub", Value::Nil).unwrap(), 1);
    assert_eq!(taken(&log), ["remover"]);
    assert_eq!(router.num(), 1);
}

/// "highest priority first (registration order breaks ties, Partial
/// listeners on channels above included)": at equal priority a partial
/// listener above runs in its registration place among the exact ones,
/// not after them (hooks do not order by depth the way messages do).
#[test]
fn hook_equal_priority_runs_in_registration_order_partial_above_included() {
    let hub = Hub::new();
    let log = log();
    let mut handles = Vec::new();
    for (key, partial, name) in [
        ("Combat.Hit", false, "exact-1"),
        ("Combat", true, "partial-Combat"),
        ("Combat.Hit", false, "exact-2"),
        ("Combat.Hit", true, "partial-own"),
        ("Combat.Hit.Crit", true, "below: never"),
        ("Combat", false, "exact-parent: never"),
        ("Combat.Hit", false, "exact-3"),
    ] {
        let l = log.clone();
        let options = if partial {
            HookOptions::new().partial()
        } else {
            HookOptions::new()
        };
        handles.push(
            hub.listen_hook(key, options, move |_| l.borrow_mut().push(name.into()))
                .unwrap(),
        );
    }
    let r = hub.run_hook("Combat.Hit", &mut hit(1)).unwrap();
    assert_eq!(
        taken(&log),
        [
            "exact-1",
            "partial-Combat",
            "exact-2",
            "partial-own",
            "exact-3"
        ]
    );
    assert_eq!(r.ran, 5);
}

/// "Priority: Higher runs first" over the whole `i32` range: the lowest
/// priority runs after the second-lowest, whatever the registration order.
#[test]
fn hook_priority_higher_runs_first_across_the_whole_i32_range() {
    let hub = Hub::new();
    let log = log();
    let mut handles = Vec::new();
    for (priority, name) in [
        (i32::MIN, "min"),
        (i32::MIN + 1, "min+1"),
        (0, "zero"),
        (i32::MAX, "max"),
        (i32::MAX - 1, "max-1"),
    ] {
        let l = log.clone();
        handles.push(
            hub.listen_hook("Edge", HookOptions::new().priority(priority), move |_| {
                l.borrow_mut().push(name.into())
            })
            .unwrap(),
        );
    }
    hub.run_hook("Edge", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["max", "max-1", "zero", "min+1", "min"]);
}

/// "each able to change it": every listener sees the changes of those
/// before it, in priority order, exact and partial listeners interleaved by
/// priority, and the caller reads the final payload back.
#[test]
fn hook_changes_chain_through_every_listener_in_priority_order_partials_included() {
    let hub = Hub::new();
    let seen = log();
    let mut handles = Vec::new();
    /// Key, partial, priority, operation, name.
    type Step = (&'static str, bool, i32, fn(i64) -> i64, &'static str);
    let steps: [Step; 4] = [
        ("Player.Damage", false, 1, |n| n - 3, "exact 1: -3"),
        ("Player", true, 10, |n| n * 2, "partial 10: *2"),
        ("Player.Damage", false, 5, |n| n + 100, "exact 5: +100"),
        ("Player", true, -1, |n| n / 2, "partial -1: /2"),
    ];
    for (key, partial, priority, op, name) in steps {
        let s = seen.clone();
        let mut options = HookOptions::new().priority(priority);
        if partial {
            options = options.partial();
        }
        handles.push(
            hub.listen_hook(key, options, move |call| {
                let before = amount(call.payload);
                *call.payload = hit(op(before));
                s.borrow_mut().push(format!("{name} saw {before}"));
            })
            .unwrap(),
        );
    }
    let mut payload = hit(7);
    let r = hub.run_hook("Player.Damage", &mut payload).unwrap();
    assert_eq!(r.ran, 4);
    assert_eq!(
        taken(&seen),
        [
            "partial 10: *2 saw 7",
            "exact 5: +100 saw 14",
            "exact 1: -3 saw 114",
            "partial -1: /2 saw 111",
        ]
    );
    assert_eq!(amount(&payload), 55);
}

/// "mark it handled, or cancel it, which stops the rest": handled lets the
/// rest run; a later cancel stops what is after it; the result tells both,
/// counts the canceller, and the canceller's change reaches the caller.
#[test]
fn hook_handled_lets_the_rest_run_and_a_later_cancel_stops_them_both_reported() {
    let hub = Hub::new();
    let log = log();
    let mut handles = Vec::new();
    for (priority, name) in [
        (30, "handles"),
        (20, "plain"),
        (10, "cancels"),
        (0, "never"),
    ] {
        let l = log.clone();
        handles.push(
            hub.listen_hook(
                "Door.Open",
                HookOptions::new().priority(priority),
                move |call| {
                    l.borrow_mut().push(name.into());
                    match name {
                        "handles" => call.handled(),
                        "cancels" => {
                            assert!(!call.is_handled(), "handled is per listener call");
                            *call.payload = hit(99);
                            call.cancel();
                        }
                        _ => {}
                    }
                },
            )
            .unwrap(),
        );
    }
    let mut payload = hit(1);
    let r = hub.run_hook("Door.Open", &mut payload).unwrap();
    assert_eq!(taken(&log), ["handles", "plain", "cancels"]);
    assert_eq!(
        r,
        HookResult {
            ran: 3,
            handled: true,
            cancelled: true
        }
    );
    assert_eq!(amount(&payload), 99);
    // A run where only handled is set: everyone runs, not cancelled.
    drop(handles.remove(2));
    let r = hub.run_hook("Door.Open", &mut hit(1)).unwrap();
    assert_eq!(taken(&log), ["handles", "plain", "never"]);
    assert_eq!((r.ran, r.handled, r.cancelled), (3, true, false));
}

/// A partial listener above that cancels stops the exact listeners of lower
/// priority on the channel below.
#[test]
fn hook_cancel_by_a_partial_listener_above_stops_the_exact_ones_below() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _exact_low = hub
        .listen_hook("Shop.Buy", HookOptions::new().priority(1), move |_| {
            l.borrow_mut().push("exact low".into())
        })
        .unwrap();
    let l = log.clone();
    let _gate = hub
        .listen_hook("Shop", HookOptions::new().partial().priority(5), move |c| {
            l.borrow_mut().push("gate".into());
            c.cancel();
        })
        .unwrap();
    let l = log.clone();
    let _exact_high = hub
        .listen_hook("Shop.Buy", HookOptions::new().priority(9), move |_| {
            l.borrow_mut().push("exact high".into())
        })
        .unwrap();
    let r = hub.run_hook("Shop.Buy", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["exact high", "gate"]);
    assert_eq!((r.ran, r.cancelled), (2, true));
}

/// A listener skipped because its struct does not match neither runs nor
/// counts, and cannot cancel; the others run in order.
#[test]
fn hook_listener_of_another_struct_is_skipped_without_counting_and_the_rest_run() {
    let router = Router::new();
    router.declare_struct("Hit", StructDef::default());
    router.declare_struct("Heal", StructDef::default());
    let log = log();
    let l = log.clone();
    router
        .register_hook("Fx", Some("Heal"), Match::Partial, 9, None, move |c| {
            l.borrow_mut().push("heal canceller".into());
            c.cancel();
        })
        .unwrap();
    let l = log.clone();
    router
        .register_hook("Fx.Spark", Some("Hit"), Match::Exact, 0, None, move |c| {
            l.borrow_mut().push("hit".into());
            c.handled();
        })
        .unwrap();
    let r = router.run_hook("Fx.Spark", &mut hit(1)).unwrap();
    assert_eq!(taken(&log), ["hit"]);
    assert_eq!(
        r,
        HookResult {
            ran: 1,
            handled: true,
            cancelled: false
        }
    );
}

/// "While being called, a listener may add or remove listeners": a hook
/// listener added during a run (even at a higher priority, or partially
/// above) is not called by that run, and is by the next.
#[test]
fn hook_listener_registered_during_a_run_waits_for_the_next_run() {
    let hub = Hub::new();
    let log = log();
    let (h, l) = (hub.clone(), log.clone());
    let added = Rc::new(RefCell::new(Vec::new()));
    let a = added.clone();
    let _adder = hub
        .listen_hook("Turn.Start", HookOptions::new(), move |_| {
            l.borrow_mut().push("adder".into());
            if a.borrow().is_empty() {
                let l2 = l.clone();
                a.borrow_mut().push(
                    h.listen_hook("Turn.Start", HookOptions::new().priority(-5), move |_| {
                        l2.borrow_mut().push("added low".into())
                    })
                    .unwrap(),
                );
                let l3 = l.clone();
                a.borrow_mut().push(
                    h.listen_hook(
                        "Turn",
                        HookOptions::new().partial().priority(-9),
                        move |_| l3.borrow_mut().push("added partial".into()),
                    )
                    .unwrap(),
                );
            }
        })
        .unwrap();
    let r = hub.run_hook("Turn.Start", &mut Value::Nil).unwrap();
    assert_eq!((taken(&log), r.ran), (vec!["adder".to_string()], 1));
    let r = hub.run_hook("Turn.Start", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["adder", "added low", "added partial"]);
    assert_eq!(r.ran, 3);
}

/// A hook listener removed during a run by an earlier one (by id, by
/// dropping its handle, or because its owner went) is not called and not
/// counted; one that removes itself has still run.
#[test]
fn hook_listener_removed_during_a_run_is_not_called_and_not_counted() {
    let hub = Hub::new();
    let log = log();
    let victim_owner = Rc::new(());
    let owner_slot = Rc::new(RefCell::new(Some(victim_owner.clone())));
    let by_id: Rc<RefCell<Option<ListenerId>>> = Rc::new(RefCell::new(None));
    let by_handle = Rc::new(RefCell::new(None));
    let self_id: Rc<RefCell<Option<ListenerId>>> = Rc::new(RefCell::new(None));

    let (h, l, s) = (hub.clone(), log.clone(), self_id.clone());
    let id = hub
        .listen_hook("Spell.Cast", HookOptions::new().priority(10), move |_| {
            l.borrow_mut().push("self-remover".into());
            h.unlisten(s.borrow().unwrap());
        })
        .unwrap()
        .detach();
    *self_id.borrow_mut() = Some(id);

    let (h, l) = (hub.clone(), log.clone());
    let (i, bh, o) = (by_id.clone(), by_handle.clone(), owner_slot.clone());
    let _remover = hub
        .listen_hook(
            "Spell",
            HookOptions::new().partial().priority(5),
            move |_| {
                l.borrow_mut().push("remover".into());
                if let Some(id) = i.borrow_mut().take() {
                    h.unlisten(id);
                }
                bh.borrow_mut().take();
                o.borrow_mut().take();
            },
        )
        .unwrap();
    let l = log.clone();
    *by_id.borrow_mut() = Some(
        hub.listen_hook("Spell.Cast", HookOptions::new().priority(1), move |_| {
            l.borrow_mut().push("by id".into())
        })
        .unwrap()
        .detach(),
    );
    let l = log.clone();
    *by_handle.borrow_mut() = Some(
        hub.listen_hook("Spell", HookOptions::new().partial(), move |_| {
            l.borrow_mut().push("by handle".into())
        })
        .unwrap(),
    );
    let l = log.clone();
    hub.listen_hook(
        "Spell.Cast",
        HookOptions::new()
            .priority(-1)
            .owner(Owner::of(&victim_owner)),
        move |_| l.borrow_mut().push("by owner".into()),
    )
    .unwrap()
    .detach();
    drop(victim_owner);
    let l = log.clone();
    let _last = hub
        .listen_hook("Spell.Cast", HookOptions::new().priority(-10), move |_| {
            l.borrow_mut().push("last".into())
        })
        .unwrap();

    let r = hub.run_hook("Spell.Cast", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["self-remover", "remover", "last"]);
    assert_eq!(r.ran, 3);
    let r = hub.run_hook("Spell.Cast", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["remover", "last"]);
    assert_eq!(r.ran, 2);
}

/// A hook listener whose owner is gone counts for `has_hook_listeners`
/// only until the next run drops it, as `num` counts message listeners
/// "owners not yet checked"; the run itself calls nobody.
#[test]
fn hook_owner_gone_is_dropped_by_the_next_run_of_a_key_below_it() {
    let router = Router::new();
    let owner = Rc::new(());
    router
        .register_hook(
            "Ai",
            None,
            Match::Partial,
            0,
            Some(Owner::of(&owner)),
            |_| panic!("owner is gone"),
        )
        .unwrap();
    assert!(router.has_hook_listeners("Ai.Think"));
    drop(owner);
    let r = router.run_hook("Ai.Think", &mut Value::Nil).unwrap();
    assert_eq!(r, HookResult::default());
    assert!(!router.has_hook_listeners("Ai.Think"));
    assert!(!router.has_hook_listeners("Ai"));
}

/// "UnregisterHook: Removes a hook listener by the channel and id
/// RegisterHook gave"; unknown ids do nothing; `has_hook_listeners` follows,
/// partial listeners above included.
#[test]
fn unregister_hook_by_the_id_register_hook_gave() {
    let router = Router::new();
    let log = log();
    let l = log.clone();
    let partial = router
        .register_hook("Net", None, Match::Partial, 0, None, move |_| {
            l.borrow_mut().push("partial".into())
        })
        .unwrap();
    let l = log.clone();
    let exact = router
        .register_hook("Net.Packet", None, Match::Exact, 0, None, move |_| {
            l.borrow_mut().push("exact".into())
        })
        .unwrap();
    assert_ne!(partial, exact);
    assert!(partial != 0 && exact != 0);
    router.unregister_hook("Net.Packet", 0);
    router.unregister_hook("Net.Packet", 987_654);
    assert_eq!(
        router.run_hook("Net.Packet", &mut Value::Nil).unwrap().ran,
        2
    );
    router.unregister_hook("Net", partial);
    assert!(router.has_hook_listeners("Net.Packet"));
    assert!(!router.has_hook_listeners("Net.Other"));
    assert_eq!(
        router.run_hook("Net.Packet", &mut Value::Nil).unwrap().ran,
        1
    );
    router.unregister_hook("Net.Packet", exact);
    assert!(!router.has_hook_listeners("Net.Packet"));
    assert_eq!(
        router.run_hook("Net.Packet", &mut Value::Nil).unwrap().ran,
        0
    );
    // Equal priority: the partial listener above was registered first.
    assert_eq!(taken(&log), ["partial", "exact", "exact"]);
}

/// Message listeners and hook listeners are registered, counted and
/// removed separately ("Unregister" by the id "Register" gave,
/// "UnregisterHook" by the id "RegisterHook" gave): removing a hook by a
/// message listener's id, or a message listener by a hook's id, or either
/// on another channel than it was registered on, removes nothing.
#[test]
fn unregister_and_unregister_hook_only_remove_what_their_register_gave_on_that_channel() {
    let router = Router::new();
    let message = router
        .register("Ch", None, Match::Exact, None, |_, _| {})
        .unwrap();
    let hook = router
        .register_hook("Ch", None, Match::Exact, 0, None, |_| {})
        .unwrap();
    router.unregister_hook("Ch", message);
    assert_eq!(router.num(), 1, "a hook id space does not remove messages");
    router.unregister("Ch", hook);
    assert!(router.has_hook_listeners("Ch"), "nor the other way round");
    router.unregister("Other.Channel", message);
    assert_eq!(router.num(), 1, "wrong channel: nothing removed");
    router.unregister_hook("Other.Channel", hook);
    assert!(
        router.has_hook_listeners("Ch"),
        "wrong channel: nothing removed"
    );
}

/// A Rust hook listener handle unlistens on drop; a detached one stays
/// until unlistened by id.
#[test]
fn hook_listener_handle_unlistens_on_drop_and_detach_keeps_it() {
    let hub = Hub::new();
    let handle = hub.listen_hook("Tick", HookOptions::new(), |_| {}).unwrap();
    let id = handle.id();
    assert!(hub.has_hook_listeners("Tick"));
    drop(handle);
    assert!(!hub.has_hook_listeners("Tick"));
    assert!(!hub.unlisten(id), "already gone");
    let id = hub
        .listen_hook("Tick", HookOptions::new(), |_| {})
        .unwrap()
        .detach();
    assert_eq!(hub.run_hook("Tick", &mut Value::Nil).unwrap().ran, 1);
    assert!(hub.unlisten(id));
    assert_eq!(hub.run_hook("Tick", &mut Value::Nil).unwrap().ran, 0);
}

/// "A bad key is a clear error, never a panic": every registration entry
/// (messages and hooks, hub and router) refuses an empty segment, a leading
/// or trailing dot and a bad character with an error naming the key.
#[test]
fn invalid_keys_are_errors_naming_the_key_at_every_registration() {
    let hub = Hub::new();
    let router = Router::new();
    for bad in ["A..B", "A.", ".A", "A.B.", "A B", "A-B"] {
        let mut errors: Vec<String> = Vec::new();
        errors.push(
            hub.listen_hook(bad, HookOptions::new().partial(), |_| {})
                .unwrap_err()
                .to_string(),
        );
        errors.push(
            hub.listen_message(bad, Source::Global, ListenOptions::new().partial(), |_| {})
                .unwrap_err()
                .to_string(),
        );
        errors.push(
            router
                .register(bad, None, Match::Partial, None, |_, _| {})
                .unwrap_err()
                .to_string(),
        );
        errors.push(
            router
                .register_hook(bad, None, Match::Exact, 0, None, |_| {})
                .unwrap_err()
                .to_string(),
        );
        errors.push(router.broadcast(bad, Value::Nil).unwrap_err().to_string());
        for e in errors {
            assert!(e.contains(&format!("`{bad}`")), "{bad:?}: {e}");
        }
    }
    assert!(matches!(
        hub.listen_hook("", HookOptions::new(), |_| {}),
        Err(HubError::Key(_))
    ));
    assert_eq!(router.num(), 0);
    assert!(!router.has_hook_listeners("A"));
}

/// "A bad key is a clear error, never a panic" for RunHook too: running a
/// malformed hook key is an error naming it, whether or not anything
/// listens (today it is an error only when a partial listener above
/// happens to hear it, and `Ok` otherwise).
#[test]
fn run_hook_on_an_invalid_key_is_an_error_whether_or_not_anything_listens() {
    let hub = Hub::new();
    for bad in ["A..B", "A.", ".A", "Bad Key"] {
        let e = hub.run_hook(bad, &mut Value::Nil);
        assert!(
            matches!(&e, Err(HubError::Key(k)) if k.to_string().contains(bad)),
            "nobody listens, {bad:?}: {e:?}"
        );
    }
    let router = Router::new();
    let e = router.run_hook("Trailing.", &mut Value::Nil);
    assert!(matches!(e, Err(HubError::Key(_))), "{e:?}");
}

/// Listeners of every face on one hub share one priority order: a router-
/// style registration (through the hub's raw hook entry) and a closure
/// registration on the same key interleave by priority, then registration.
#[test]
fn hook_registrations_of_every_entry_share_one_order_on_a_key() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _a = hub
        .listen_hook("Mix", HookOptions::new().priority(1), move |_| {
            l.borrow_mut().push("closure 1".into())
        })
        .unwrap();
    let l = log.clone();
    let raw = hub
        .listen_hook_raw(
            "Mix",
            HookOptions::new().priority(1),
            None,
            Rc::new(move |_: &mut gantry_host::HookCall<'_>| {
                l.borrow_mut().push("raw 1".into());
                Ok(())
            }),
        )
        .unwrap();
    let l = log.clone();
    let _c = hub
        .listen_hook("Mix", HookOptions::new().priority(2), move |_| {
            l.borrow_mut().push("closure 2".into())
        })
        .unwrap();
    hub.run_hook("Mix", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["closure 2", "closure 1", "raw 1"]);
    assert!(hub.unlisten(raw));
    hub.run_hook("Mix", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["closure 2", "closure 1"]);
}

/// "a listener may ... send further messages" for hooks: a listener that
/// runs the same hook again (with a payload of its own) sees a complete
/// nested run, and the outer run then goes on where it was.
#[test]
fn hook_run_again_from_its_own_listener_nests_and_the_outer_run_goes_on() {
    let hub = Hub::new();
    let log = log();
    let (h, l) = (hub.clone(), log.clone());
    let _outer = hub
        .listen_hook("Chain", HookOptions::new().priority(10), move |c| {
            let n = amount(c.payload);
            l.borrow_mut().push(format!("first {n}"));
            if n == 1 {
                let mut inner = hit(2);
                let r = h.run_hook("Chain", &mut inner).unwrap();
                l.borrow_mut()
                    .push(format!("inner ran {} -> {}", r.ran, amount(&inner)));
            }
            *c.payload = hit(n * 10);
        })
        .unwrap();
    let l = log.clone();
    let _second = hub
        .listen_hook("Chain", HookOptions::new(), move |c| {
            l.borrow_mut().push(format!("second {}", amount(c.payload)))
        })
        .unwrap();
    let mut payload = hit(1);
    let r = hub.run_hook("Chain", &mut payload).unwrap();
    assert_eq!(
        taken(&log),
        [
            "first 1",
            "first 2",
            "second 20",
            "inner ran 2 -> 20",
            "second 10"
        ]
    );
    assert_eq!((r.ran, amount(&payload)), (2, 10));
}

/// Hooks and messages are separate on one channel: `broadcast` calls no
/// hook listener, `run_hook` no message listener, `num` counts only the
/// message listeners and `has_hook_listeners` only the hook ones.
#[test]
fn hooks_and_messages_on_one_channel_are_separate() {
    let router = Router::new();
    let log = log();
    router
        .register("Gate", None, Match::Partial, None, push(&log, "message"))
        .unwrap();
    assert!(!router.has_hook_listeners("Gate.Open"));
    let l = log.clone();
    router
        .register_hook("Gate", None, Match::Partial, 0, None, move |_| {
            l.borrow_mut().push("hook".into())
        })
        .unwrap();
    assert_eq!(router.broadcast("Gate.Open", Value::Nil).unwrap(), 1);
    assert_eq!(
        router.run_hook("Gate.Open", &mut Value::Nil).unwrap().ran,
        1
    );
    assert_eq!(taken(&log), ["message Gate.Open", "hook"]);
    assert_eq!(router.num(), 1);
}
