//! Audit 11: rules of reference 000 (parameter compatibility) and 002 (the
//! system overview) and their DESIGN.md contracts, probed at the edges and
//! interactions the earlier audits leave open: reordering, insertion in the
//! middle, extreme orders, `times` against re-entrant sends and replays,
//! once + times, store + partial + times, the request's sequence and
//! one-shot callback, objects destroyed mid-dispatch, and what the table
//! learns from a compatible send.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    Hub, HubError, KeyDecl, ListenOptions, Owner, Reply, Report, Source, Type, Value,
};

mod support;

use support::log::{Log, log, pusher, taken};

fn ints(log: &Log, name: &'static str) -> impl Fn(i64) + 'static {
    let log = log.clone();
    move |n: i64| log.borrow_mut().push(format!("{name} {n}"))
}

fn mismatch_position(err: &HubError) -> Option<usize> {
    match err {
        HubError::Mismatch { mismatch, .. } | HubError::ListenRejected { mismatch, .. } => {
            Some(mismatch.position)
        }
        _ => None,
    }
}

// ----- 000: parameter compatibility --------------------------------------------------

/// 000: "Removing or reordering is always breaking. Only appending is safe."
#[test]
fn compat_reordering_the_parameters_of_a_declared_message_is_a_mismatch() {
    let hub = Hub::new();
    hub.declare(
        "ABC",
        KeyDecl::event()
            .param("a", Type::Int)
            .param("b", Type::String)
            .param("c", Type::Bool),
    )
    .unwrap();
    let log = log();
    let _h = hub
        .listen("ABC", Source::Global, pusher(&log, "zero-arg"))
        .unwrap();
    // Reordered: b, a, c.
    let err = hub
        .send_str("ABC", Source::Global, ("b", 1i64, true))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(0), "{err}");
    // Removed from the middle: a, c.
    let err = hub
        .send_str("ABC", Source::Global, (1i64, true))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(1), "{err}");
    assert!(taken(&log).is_empty(), "no listener hears a refused send");
    // Appending on a declared key is not allowed from the send side either
    // (the declaration is the whole truth), but a prefix is.
    hub.send_str("ABC", Source::Global, (1i64, "b")).unwrap();
    assert_eq!(taken(&log), ["zero-arg"]);
}

/// 000: "A parameter inserted in the middle is a breaking change ... the
/// mismatch surfaces as a validation failure at runtime" — on an observed
/// (undeclared) key too: the old listener is not called with a shifted value.
#[test]
fn compat_a_parameter_inserted_in_the_middle_of_an_observed_key_breaks_the_old_listener() {
    let hub = Hub::new();
    hub.send_str("Hurt", Source::Global, (5i64, "sword"))
        .unwrap();
    let log = log();
    let l = log.clone();
    let _old = hub
        .listen("Hurt", Source::Global, move |dmg: i64, weapon: String| {
            l.borrow_mut().push(format!("{dmg} {weapon}"))
        })
        .unwrap();
    let err = hub
        .send_str("Hurt", Source::Global, (5i64, true, "sword"))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(1), "{err}");
    assert!(taken(&log).is_empty());
    // Appending is the migration path: the old listener keeps working.
    hub.send_str("Hurt", Source::Global, (6i64, "axe", true))
        .unwrap();
    assert_eq!(taken(&log), ["6 axe"]);
    assert_eq!(
        hub.table().get("Hurt").unwrap().param_types(),
        [Type::Int, Type::String, Type::Bool],
        "a compatible send updates the table"
    );
}

/// 002: "a signature that contradicts the recorded one warns and aborts that
/// dispatch; a compatible one updates the table" — an int sent where an
/// observed float sits is compatible, and does not narrow the float to int.
#[test]
fn signature_a_compatible_int_send_never_narrows_an_observed_float() {
    let hub = Hub::new();
    hub.send_str("Speed", Source::Global, (2.5f64,)).unwrap();
    hub.send_str("Speed", Source::Global, (3i64,)).unwrap();
    assert_eq!(
        hub.table().get("Speed").unwrap().param_types(),
        [Type::Float]
    );
    // And the reverse is still refused.
    hub.send_str("Count", Source::Global, (3i64,)).unwrap();
    let err = hub
        .send_str("Count", Source::Global, (2.5f64,))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(0));
    assert_eq!(hub.table().get("Count").unwrap().param_types(), [Type::Int]);
}

/// DESIGN: "an int is accepted for a float and converted" — inside an array
/// parameter too: a listener of `array<float>` sees floats.
#[test]
fn compat_int_elements_of_an_array_of_float_are_converted() {
    let hub = Hub::new();
    hub.declare(
        "Samples",
        KeyDecl::event().param("values", Type::Array(Box::new(Type::Float))),
    )
    .unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen_message("Samples", Source::Global, ListenOptions::new(), move |m| {
            let items = m.args[0].as_array().unwrap();
            g.borrow_mut()
                .extend(items.iter().map(|v| format!("{v:?}")))
        })
        .unwrap();
    hub.send_str(
        "Samples",
        Source::Global,
        (Value::array(vec![Value::Int(1), Value::Float(2.5)]),),
    )
    .unwrap();
    assert_eq!(taken(&got), ["Float(1.0)", "Float(2.5)"]);
}

/// 000 "A zero-argument listener matches everything on that tag" + DESIGN
/// "no listener is called with wrong types": a typed partial listener on a
/// parent key is not run with the arguments of a child key it cannot take,
/// and that is reported naming the key.
#[test]
fn compat_typed_partial_listener_is_never_called_with_a_child_keys_wrong_types() {
    let hub = Hub::new();
    let log = log();
    let _partial = hub
        .listen_with(
            "Inv",
            Source::Global,
            ListenOptions::new().partial(),
            ints(&log, "partial"),
        )
        .unwrap();
    let _zero = hub
        .listen_with(
            "Inv",
            Source::Global,
            ListenOptions::new().partial(),
            pusher(&log, "zero-arg partial"),
        )
        .unwrap();
    let _ = hub.send_str("Inv.Items", Source::Global, ("sword",));
    let heard = taken(&log);
    assert!(
        !heard.iter().any(|h| h.starts_with("partial ")),
        "{heard:?}"
    );
    let reports = hub.take_reports();
    assert!(
        reports.iter().any(|r| r.key() == "Inv.Items"),
        "{reports:?}"
    );
}

// ----- 002: listen options -------------------------------------------------------------

/// 002: "Order defaults to 0, lower runs first" — over the whole i32 range,
/// across the three tiers.
#[test]
fn listen_options_extreme_orders_sort_numerically_across_tiers() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let mut handles = Vec::new();
    for (scope, order, name) in [
        (Source::Object(obj), i32::MAX, "max"),
        (Source::Global, 0, "zero"),
        (Source::World(world), i32::MIN, "min"),
        (Source::Global, 1, "one"),
        (Source::Object(obj), -1, "minus one"),
        (Source::World(world), i32::MAX - 1, "max-1"),
    ] {
        handles.push(
            hub.listen_with(
                "Ord",
                scope,
                ListenOptions::new().order(order),
                pusher(&log, name),
            )
            .unwrap(),
        );
    }
    hub.send_str("Ord", obj, ()).unwrap();
    assert_eq!(
        taken(&log),
        ["min", "minus one", "zero", "one", "max-1", "max"]
    );
}

/// 002: "Set N and the listener unlistens itself after N calls" — a call
/// made re-entrantly (the listener sending its own key) counts too: a
/// `times = 1` listener is never called twice.
#[test]
fn listen_options_times_counts_reentrant_calls_of_the_same_listener() {
    let hub = Hub::new();
    let log = log();
    for times in [1, 2] {
        let (h, l) = (hub.clone(), log.clone());
        let handle = hub
            .listen_with(
                "Echo",
                Source::Global,
                ListenOptions::new().times(times),
                move |depth: i64| {
                    l.borrow_mut().push(format!("called {depth}"));
                    if depth < 5 {
                        h.send_str("Echo", Source::Global, (depth + 1,)).unwrap();
                    }
                },
            )
            .unwrap();
        hub.send_str("Echo", Source::Global, (0i64,)).unwrap();
        hub.send_str("Echo", Source::Global, (10i64,)).unwrap();
        let expected: Vec<String> = (0..times).map(|d| format!("called {d}")).collect();
        assert_eq!(taken(&log), expected, "times {times}");
        assert_eq!(hub.listener_count(), 0, "times {times}");
        drop(handle);
    }
}

/// 002 Once + Times: a once message replayed to a `times = 2` listener uses
/// one of its calls and is consumed; one more live call and it is gone.
#[test]
fn store_once_replay_uses_one_of_a_listeners_times() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let _h = hub
        .listen_with(
            "Boot.Done",
            Source::Global,
            ListenOptions::new().times(2),
            ints(&log, "got"),
        )
        .unwrap();
    assert_eq!(taken(&log), ["got 1"]);
    assert!(hub.stored(key, Source::Global).is_none(), "consumed");
    hub.send_str("Boot.Done", Source::Global, (2i64,)).unwrap();
    hub.send_str("Boot.Done", Source::Global, (3i64,)).unwrap();
    assert_eq!(taken(&log), ["got 2"]);
    assert_eq!(hub.listener_count(), 0);
}

/// 002 Store + partial matching + times: a partial `times = 1` listener that
/// arrives after two stores under its key hears exactly one replay.
#[test]
fn store_partial_late_listener_with_times_one_hears_one_replay_only() {
    let hub = Hub::new();
    let (a, b) = (hub.key("Game.A").unwrap(), hub.key("Game.B").unwrap());
    hub.store(a, Source::Global, (1i64,)).unwrap();
    hub.store(b, Source::Global, (2i64,)).unwrap();
    let log = log();
    let _once = hub
        .listen_with(
            "Game",
            Source::Global,
            ListenOptions::new().partial().times(1),
            ints(&log, "times1"),
        )
        .unwrap();
    assert_eq!(taken(&log).len(), 1);
    assert_eq!(hub.listener_count(), 0);
    let _all = hub
        .listen_with(
            "Game",
            Source::Global,
            ListenOptions::new().partial(),
            ints(&log, "all"),
        )
        .unwrap();
    let mut all = taken(&log);
    all.sort();
    assert_eq!(all, ["all 1", "all 2"], "each stored key is replayed once");
    // Stores stay for the next late listener (they are not once).
    assert!(hub.stored(a, Source::Global).is_some() && hub.stored(b, Source::Global).is_some());
}

/// 002 "Once is consumed by the first listener": a listener that cannot
/// take the once message (it wants more than was stored) does not consume
/// it; the next listener that can, does.
#[test]
fn store_once_is_not_consumed_by_a_late_listener_that_refuses_it() {
    let hub = Hub::new();
    let key = hub.key("Ready").unwrap();
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let l = log.clone();
    let _greedy = hub.listen("Ready", Source::Global, move |n: i64, s: String| {
        l.borrow_mut().push(format!("greedy {n} {s}"))
    });
    assert!(taken(&log).is_empty());
    assert!(hub.stored(key, Source::Global).is_some(), "still waiting");
    let _fit = hub
        .listen("Ready", Source::Global, ints(&log, "fit"))
        .unwrap();
    assert_eq!(taken(&log), ["fit 1"]);
    assert!(hub.stored(key, Source::Global).is_none());
}

/// DESIGN "once the owner is gone it is dropped before the next delivery"
/// and "Once is consumed by its first delivery": a once message whose only
/// live listener's owner is gone was delivered to nobody, so it is kept for
/// the next listener.
#[test]
fn store_once_sent_to_a_listener_whose_owner_is_gone_is_kept() {
    let hub = Hub::new();
    let owner = Rc::new(());
    let log = log();
    hub.listen_with(
        "Ready",
        Source::Global,
        ListenOptions::new().owner(Owner::of(&owner)),
        ints(&log, "dead"),
    )
    .unwrap()
    .detach();
    drop(owner);
    let key = hub.key("Ready").unwrap();
    let delivered = hub.once(key, Source::Global, (4i64,)).unwrap();
    assert_eq!(delivered.listeners, 0);
    let _late = hub
        .listen("Ready", Source::Global, ints(&log, "late"))
        .unwrap();
    assert_eq!(taken(&log), ["late 4"]);
}

// ----- 002: request / response ---------------------------------------------------------

/// 002: "Request and reply are matched by an incrementing Seq".
#[test]
fn request_sequence_numbers_increment_and_name_the_responder() {
    let hub = Hub::new();
    let seen: Rc<RefCell<Vec<u64>>> = Rc::default();
    let s = seen.clone();
    let _h = hub
        .listen_message("Ask", Source::Global, ListenOptions::new(), move |m| {
            let responder = m.responder.unwrap();
            s.borrow_mut().push(responder.seq());
            responder.respond((responder.seq() as i64,));
        })
        .unwrap();
    let key = hub.key("Ask").unwrap();
    let replies = log();
    let mut seqs = Vec::new();
    for _ in 0..3 {
        let r = replies.clone();
        seqs.push(
            hub.request(key, Source::Global, (), move |reply| {
                if let Reply::Answer(v) = reply {
                    r.borrow_mut().push(v[0].to_string());
                }
            })
            .unwrap(),
        );
    }
    assert_eq!(seqs[1], seqs[0] + 1);
    assert_eq!(seqs[2], seqs[1] + 1);
    assert_eq!(*seen.borrow(), seqs);
    let expected: Vec<String> = seqs.iter().map(|s| s.to_string()).collect();
    assert_eq!(taken(&replies), expected);
}

/// 002: "the callback is one-shot and destroyed when used".
#[test]
fn request_reply_callback_is_destroyed_once_used_even_while_responders_live() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Vec<gantry_host::Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Ask", Source::Global, ListenOptions::new(), move |m| {
            let responder = m.responder.unwrap().clone();
            responder.respond((1i64,));
            k.borrow_mut().push(responder);
        })
        .unwrap();
    let captured = Rc::new(());
    let inside = captured.clone();
    let calls = Rc::new(RefCell::new(0));
    let c = calls.clone();
    let key = hub.key("Ask").unwrap();
    hub.request(key, Source::Global, (), move |_| {
        let _keep = &inside;
        *c.borrow_mut() += 1;
    })
    .unwrap();
    assert_eq!(*calls.borrow(), 1);
    assert_eq!(
        Rc::strong_count(&captured),
        1,
        "the callback (and what it captured) is gone though a responder is kept"
    );
    assert!(!kept.borrow()[0].respond((2i64,)));
    assert_eq!(*calls.borrow(), 1);
}

/// DESIGN: "an unanswered request is reported, not silently lost" — with no
/// listener at all, the requester hears `Unanswered` once, before the
/// request returns.
#[test]
fn request_with_nobody_listening_calls_back_unanswered_once_before_returning() {
    let hub = Hub::new();
    let key = hub.key("Nobody").unwrap();
    let got = log();
    let g = got.clone();
    hub.request(key, Source::Global, (1i64,), move |reply| {
        g.borrow_mut().push(format!("{reply:?}"))
    })
    .unwrap();
    assert_eq!(taken(&got), ["Unanswered"]);
    let reports = hub.take_reports();
    assert_eq!(
        reports
            .iter()
            .filter(|r| matches!(r, Report::Unanswered { .. }))
            .count(),
        1
    );
}

// ----- lifetime and re-entrancy ------------------------------------------------------

/// DESIGN "Destroying an object drops everything it owns and everything
/// sourced from it" — mid-dispatch: listeners of the destroyed object, and
/// listeners it owns on other tiers, are not called later in that dispatch.
#[test]
fn destroying_the_source_object_mid_dispatch_skips_its_remaining_listeners() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let log = log();
    let (h, l) = (hub.clone(), log.clone());
    let _killer = hub
        .listen_with(
            "Boom",
            Source::Global,
            ListenOptions::new().order(-1),
            move || {
                l.borrow_mut().push("killer".into());
                h.destroy(obj).unwrap();
            },
        )
        .unwrap();
    hub.listen("Boom", obj, pusher(&log, "object tier"))
        .unwrap()
        .detach();
    hub.listen_with(
        "Boom",
        Source::Global,
        ListenOptions::new().owner(Owner::Object(obj)),
        pusher(&log, "owned by the object"),
    )
    .unwrap()
    .detach();
    let _world = hub
        .listen("Boom", world, pusher(&log, "world tier"))
        .unwrap();
    hub.send_str("Boom", obj, ()).unwrap();
    assert_eq!(taken(&log), ["killer", "world tier"]);
    assert_eq!(hub.listener_count(), 2);
}

/// The same, during a stored replay: a partial listener that destroys its
/// own source object on the first replay gets no more replays.
#[test]
fn destroying_the_source_object_during_a_replay_stops_the_remaining_replays() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    for (key, n) in [("Door.A", 1i64), ("Door.B", 2), ("Door.C", 3)] {
        let key = hub.key(key).unwrap();
        hub.store(key, obj, (n,)).unwrap();
    }
    let log = log();
    let (h, l) = (hub.clone(), log.clone());
    let _h = hub
        .listen_with(
            "Door",
            obj,
            ListenOptions::new().partial(),
            move |n: i64| {
                l.borrow_mut().push(format!("replay {n}"));
                let _ = h.destroy(obj);
            },
        )
        .unwrap();
    assert_eq!(taken(&log).len(), 1);
    assert_eq!(hub.listener_count(), 0);
}

/// DESIGN: "an int is accepted for a float and converted" — in a struct's
/// float field too (what a Lua table `{x = 1}` of a declared struct is).
#[test]
fn compat_int_in_a_float_field_of_a_struct_is_converted() {
    let hub = Hub::new();
    hub.edit_table(|t| {
        t.declare_struct(
            "Pos",
            gantry_host::StructDef {
                fields: vec![gantry_host::Param::new("x", Type::Float)],
                ..Default::default()
            },
        )
    });
    hub.declare(
        "Moved",
        KeyDecl::event().param("to", Type::Struct("Pos".into())),
    )
    .unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen_message("Moved", Source::Global, ListenOptions::new(), move |m| {
            let pos = m.args[0].as_struct().unwrap();
            g.borrow_mut().push(format!("{:?}", pos.get("x").unwrap()))
        })
        .unwrap();
    hub.send_str(
        "Moved",
        Source::Global,
        (Value::structure(
            gantry_host::StructValue::new("Pos").with("x", 1i64),
        ),),
    )
    .unwrap();
    assert_eq!(taken(&got), ["Float(1.0)"]);
}
