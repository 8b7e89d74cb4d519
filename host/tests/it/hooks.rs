//! Stored messages, requests and hooks, rule by rule (issue 3; references 002
//! and 003).

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    HookOptions, Hub, KeyDecl, ListenOptions, Match, Owner, Reply, Report, Responder, Router,
    Source, StructDef, StructValue, Type, Value,
};

mod support;

use support::log::{Log, log, taken};

fn listen_ints(
    hub: &Hub,
    key: &str,
    scope: impl Into<Source>,
    log: &Log,
    name: &'static str,
) -> gantry_host::ListenerHandle {
    let l = log.clone();
    hub.listen(key, scope, move |n: i64| {
        l.borrow_mut().push(format!("{name} {n}"))
    })
    .unwrap()
}

// ----- store and once ------------------------------------------------------------

#[test]
fn store_late_replay_delivers_exactly_once() {
    let hub = Hub::new();
    let key = hub.key("Game.Ready").unwrap();
    hub.store(key, Source::Global, (7i64,)).unwrap();
    let log = log();
    let _h = listen_ints(&hub, "Game.Ready", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["late 7"]);
    let _h2 = listen_ints(&hub, "Game.Ready", Source::Global, &log, "later");
    assert_eq!(
        taken(&log),
        ["later 7"],
        "each late listener gets its own single replay"
    );
}

#[test]
fn store_is_delivered_live_and_newer_store_overwrites() {
    let hub = Hub::new();
    let key = hub.key("Score").unwrap();
    let log = log();
    let _live = listen_ints(&hub, "Score", Source::Global, &log, "live");
    hub.store(key, Source::Global, (1i64,)).unwrap();
    hub.store(key, Source::Global, (2i64,)).unwrap();
    assert_eq!(taken(&log), ["live 1", "live 2"]);
    let _late = listen_ints(&hub, "Score", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["late 2"]);
}

#[test]
fn once_consumed_live() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    let log = log();
    let _live = listen_ints(&hub, "Boot.Done", Source::Global, &log, "live");
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let _late = listen_ints(&hub, "Boot.Done", Source::Global, &log, "late");
    assert_eq!(taken(&log), ["live 1"]);
}

#[test]
fn once_consumed_by_replay_and_second_late_listener_gets_nothing() {
    let hub = Hub::new();
    let key = hub.key("Boot.Done").unwrap();
    hub.once(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let _a = listen_ints(&hub, "Boot.Done", Source::Global, &log, "first");
    let _b = listen_ints(&hub, "Boot.Done", Source::Global, &log, "second");
    assert_eq!(taken(&log), ["first 1"]);
    assert!(hub.stored(key, Source::Global).is_none());
}

#[test]
fn store_dies_with_source_and_can_be_removed() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let key = hub.key("Hp").unwrap();
    hub.store(key, obj, (10i64,)).unwrap();
    hub.store(key, Source::Global, (5i64,)).unwrap();
    assert!(hub.remove_stored(key, Source::Global));
    assert!(!hub.remove_stored(key, Source::Global));
    hub.destroy(obj).unwrap();
    assert!(hub.stored(key, obj).is_none());
}

#[test]
fn store_per_source_isolation() {
    let hub = Hub::new();
    let world = hub.create_world();
    let a = hub.spawn(world).unwrap();
    let b = hub.spawn(world).unwrap();
    let key = hub.key("Hp").unwrap();
    hub.store(key, a, (10i64,)).unwrap();
    hub.store(key, b, (20i64,)).unwrap();
    let log = log();
    let _a = listen_ints(&hub, "Hp", a, &log, "a");
    let _b = listen_ints(&hub, "Hp", b, &log, "b");
    assert_eq!(taken(&log), ["a 10", "b 20"]);
}

#[test]
fn store_scope_of_replay_follows_the_listener() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let key = hub.key("Weather").unwrap();
    hub.store(key, obj, (1i64,)).unwrap();
    hub.store(key, world, (2i64,)).unwrap();
    hub.store(key, Source::Global, (3i64,)).unwrap();
    let log = log();
    let _g = listen_ints(&hub, "Weather", Source::Global, &log, "global");
    let _w = listen_ints(&hub, "Weather", world, &log, "world");
    let _o = listen_ints(&hub, "Weather", obj, &log, "object");
    assert_eq!(taken(&log), ["global 3", "world 2", "object 1"]);
}

#[test]
fn store_replay_uses_up_times_one() {
    let hub = Hub::new();
    let key = hub.key("S").unwrap();
    hub.store(key, Source::Global, (1i64,)).unwrap();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen_with(
            "S",
            Source::Global,
            ListenOptions::new().times(1),
            move |n: i64| l.borrow_mut().push(n.to_string()),
        )
        .unwrap();
    hub.store(key, Source::Global, (2i64,)).unwrap();
    assert_eq!(taken(&log), ["1"]);
    assert_eq!(hub.listener_count(), 0);
}

#[test]
fn store_replay_goes_through_the_compatibility_check() {
    let hub = Hub::new();
    let key = hub.key("S").unwrap();
    hub.store(key, Source::Global, (1i64,)).unwrap();
    // A listener wanting a string at position 0 is rejected outright.
    assert!(hub.listen("S", Source::Global, |_: String| {}).is_err());
    // One wanting more than was stored is not called and the mismatch is reported.
    hub.take_reports();
    let _h = hub.listen("S", Source::Global, |_: i64| {}).unwrap();
    assert!(hub.take_reports().is_empty());
}

// ----- request and response -----------------------------------------------------

fn answer_doubler(hub: &Hub) -> gantry_host::ListenerHandle {
    hub.listen_message("Math.Double", Source::Global, ListenOptions::new(), |m| {
        let n = m.args[0].as_int().unwrap();
        m.responder.unwrap().respond((n * 2,));
    })
    .unwrap()
}

fn collect_reply(out: &Rc<RefCell<Vec<String>>>) -> impl FnOnce(Reply<'_>) + 'static {
    let out = out.clone();
    move |reply| {
        out.borrow_mut().push(match reply {
            Reply::Answer(values) => values
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(","),
            Reply::Unanswered => "unanswered".into(),
        })
    }
}

#[test]
fn request_basic() {
    let hub = Hub::new();
    let _h = answer_doubler(&hub);
    let out = log();
    let key = hub.key("Math.Double").unwrap();
    hub.request(key, Source::Global, (21i64,), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["42"]);
    let t = hub.table();
    assert_eq!(
        t.get("Math.Double").unwrap().response.as_ref().unwrap()[0].ty,
        Type::Int
    );
}

#[test]
fn request_multi_argument() {
    let hub = Hub::new();
    let _h = hub
        .listen_message("Shop.Price", Source::Global, ListenOptions::new(), |m| {
            let item = m.args[0].as_str().unwrap().to_owned();
            let count = m.args[1].as_int().unwrap();
            m.responder
                .unwrap()
                .respond((format!("{item}x{count}"), count * 5, true));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Shop.Price").unwrap();
    hub.request(key, Source::Global, ("sword", 2i64), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["\"swordx2\",10,true"]);
}

#[test]
fn request_deferred_answer() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Option<Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Later", Source::Global, ListenOptions::new(), move |m| {
            *k.borrow_mut() = m.responder.cloned();
        })
        .unwrap();
    let out = log();
    let key = hub.key("Later").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert!(taken(&out).is_empty());
    kept.borrow_mut().take().unwrap().respond((1i64,));
    assert_eq!(taken(&out), ["1"]);
}

#[test]
fn request_answer_twice_is_ignored_and_reported() {
    let hub = Hub::new();
    let _h = hub
        .listen_message("Twice", Source::Global, ListenOptions::new(), |m| {
            let r = m.responder.unwrap();
            assert!(r.respond((1i64,)));
            assert!(!r.respond((2i64,)));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Twice").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["1"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::AnsweredTwice { .. }))
    );
}

#[test]
fn request_chained_reply_callback_issues_another_request() {
    let hub = Hub::new();
    let _h = answer_doubler(&hub);
    let out = log();
    let key = hub.key("Math.Double").unwrap();
    let (hub2, out2) = (hub.clone(), out.clone());
    hub.request(key, Source::Global, (1i64,), move |reply| {
        let Reply::Answer(v) = reply else {
            panic!("no answer")
        };
        let n = v[0].as_int().unwrap();
        hub2.request(key, Source::Global, (n,), collect_reply(&out2))
            .unwrap();
    })
    .unwrap();
    assert_eq!(taken(&out), ["4"]);
}

#[test]
fn request_concurrent_requests_never_cross_talk() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Vec<(i64, Responder)>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Slow", Source::Global, ListenOptions::new(), move |m| {
            k.borrow_mut()
                .push((m.args[0].as_int().unwrap(), m.responder.unwrap().clone()));
        })
        .unwrap();
    let key = hub.key("Slow").unwrap();
    let (a, b) = (log(), log());
    let seq_a = hub
        .request(key, Source::Global, (1i64,), collect_reply(&a))
        .unwrap();
    let seq_b = hub
        .request(key, Source::Global, (2i64,), collect_reply(&b))
        .unwrap();
    assert_ne!(seq_a, seq_b);
    // Answer in reverse order.
    let mut pending = kept.borrow_mut().drain(..).collect::<Vec<_>>();
    pending.reverse();
    for (n, r) in pending {
        r.respond((n * 100,));
    }
    assert_eq!(taken(&a), ["100"]);
    assert_eq!(taken(&b), ["200"]);
}

#[test]
fn request_source_isolation() {
    let hub = Hub::new();
    let world = hub.create_world();
    let a = hub.spawn(world).unwrap();
    let b = hub.spawn(world).unwrap();
    let _ha = hub
        .listen_message("Ask", a, ListenOptions::new(), |m| {
            m.responder.unwrap().respond(("a",));
        })
        .unwrap();
    let _hb = hub
        .listen_message("Ask", b, ListenOptions::new(), |m| {
            m.responder.unwrap().respond(("b",));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Ask").unwrap();
    hub.request(key, b, (), collect_reply(&out)).unwrap();
    assert_eq!(taken(&out), ["\"b\""]);
}

#[test]
fn request_unanswered_is_reported_to_the_requester() {
    let hub = Hub::new();
    let out = log();
    let key = hub.key("Nobody").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["unanswered"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::Unanswered { .. }))
    );
    // A kept responder dropped without answering also counts.
    let kept: Rc<RefCell<Option<Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Nobody", Source::Global, ListenOptions::new(), move |m| {
            *k.borrow_mut() = m.responder.cloned();
        })
        .unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert!(taken(&out).is_empty());
    kept.borrow_mut().take();
    assert_eq!(taken(&out), ["unanswered"]);
}

#[test]
fn request_plain_listener_sees_request_arguments() {
    let hub = Hub::new();
    let _answer = answer_doubler(&hub);
    let seen = log();
    let _plain = listen_ints(&hub, "Math.Double", Source::Global, &seen, "plain");
    let out = log();
    let key = hub.key("Math.Double").unwrap();
    hub.request(key, Source::Global, (5i64,), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&seen), ["plain 5"]);
    assert_eq!(taken(&out), ["10"]);
}

#[test]
fn request_response_types_are_checked() {
    let hub = Hub::new();
    hub.declare("Q", KeyDecl::event().response("answer", Type::Int))
        .unwrap();
    let _h = hub
        .listen_message("Q", Source::Global, ListenOptions::new(), |m| {
            assert!(!m.responder.unwrap().respond(("not an int",)));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Q").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["unanswered"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::Mismatch { .. }))
    );
}

// ----- hooks ------------------------------------------------------------------------

fn damage(amount: i64) -> Value {
    Value::structure(StructValue::new("Damage").with("amount", amount))
}

fn amount(v: &Value) -> i64 {
    v.as_struct()
        .unwrap()
        .get("amount")
        .unwrap()
        .as_int()
        .unwrap()
}

#[test]
fn hook_priority_order_with_ties_in_registration_order() {
    let hub = Hub::new();
    let log = log();
    let mut handles = Vec::new();
    for (name, priority) in [("low", -5), ("high-a", 10), ("mid", 0), ("high-b", 10)] {
        let l = log.clone();
        handles.push(
            hub.listen_hook(
                "Combat.Damage",
                HookOptions::new().priority(priority),
                move |_| l.borrow_mut().push(name.into()),
            )
            .unwrap(),
        );
    }
    let mut payload = damage(10);
    let result = hub.run_hook("Combat.Damage", &mut payload).unwrap();
    assert_eq!(result.ran, 4);
    assert_eq!(taken(&log), ["high-a", "high-b", "mid", "low"]);
}

#[test]
fn hook_partial_listeners_above_join_the_priority_order() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _a = hub
        .listen_hook(
            "Combat",
            HookOptions::new().partial().priority(5),
            move |_| l.borrow_mut().push("Combat partial 5".into()),
        )
        .unwrap();
    let l = log.clone();
    let _b = hub
        .listen_hook("Combat.Damage", HookOptions::new().priority(1), move |_| {
            l.borrow_mut().push("exact 1".into())
        })
        .unwrap();
    let l = log.clone();
    let _c = hub
        .listen_hook("Combat", HookOptions::new().priority(9), move |_| {
            l.borrow_mut().push("Combat exact (not heard)".into())
        })
        .unwrap();
    hub.run_hook("Combat.Damage", &mut damage(1)).unwrap();
    assert_eq!(taken(&log), ["Combat partial 5", "exact 1"]);
}

#[test]
fn hook_handled_is_reported_and_later_listeners_still_run() {
    let hub = Hub::new();
    let _a = hub
        .listen_hook("H", HookOptions::new().priority(1), |c| c.handled())
        .unwrap();
    let _b = hub.listen_hook("H", HookOptions::new(), |_| {}).unwrap();
    let r = hub.run_hook("H", &mut Value::Nil).unwrap();
    assert_eq!((r.ran, r.handled, r.cancelled), (2, true, false));
}

#[test]
fn hook_cancelled_stops_the_rest() {
    let hub = Hub::new();
    let log = log();
    let _a = hub
        .listen_hook("H", HookOptions::new().priority(1), |c| c.cancel())
        .unwrap();
    let l = log.clone();
    let _b = hub
        .listen_hook("H", HookOptions::new(), move |_| {
            l.borrow_mut().push("ran".into())
        })
        .unwrap();
    let r = hub.run_hook("H", &mut Value::Nil).unwrap();
    assert_eq!((r.ran, r.cancelled), (1, true));
    assert!(taken(&log).is_empty());
}

#[test]
fn hook_payload_changes_visible_to_caller_and_later_listeners() {
    let hub = Hub::new();
    let seen = log();
    let _armour = hub
        .listen_hook("Player.Damage", HookOptions::new().priority(10), |c| {
            let n = amount(c.payload);
            *c.payload = damage(n / 2);
        })
        .unwrap();
    let s = seen.clone();
    let _after = hub
        .listen_hook("Player.Damage", HookOptions::new(), move |c| {
            s.borrow_mut().push(amount(c.payload).to_string())
        })
        .unwrap();
    let mut payload = damage(30);
    hub.run_hook("Player.Damage", &mut payload).unwrap();
    assert_eq!(taken(&seen), ["15"]);
    assert_eq!(amount(&payload), 15);
}

#[test]
fn hook_wrong_struct_not_delivered_with_a_warning() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen_hook("H", HookOptions::new().expects("Damage"), move |_| {
            l.borrow_mut().push("x".into())
        })
        .unwrap();
    let mut other = Value::structure(StructValue::new("Heal"));
    let r = hub.run_hook("H", &mut other).unwrap();
    assert_eq!(r.ran, 0);
    assert!(taken(&log).is_empty());
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::HookPayloadSkipped { .. }))
    );
    hub.run_hook("H", &mut damage(1)).unwrap();
    assert_eq!(taken(&log), ["x"]);
}

#[test]
fn hook_owner_gone_drops_listener() {
    let hub = Hub::new();
    let owner = Rc::new(());
    let log = log();
    let l = log.clone();
    hub.listen_hook(
        "H",
        HookOptions::new().owner(Owner::of(&owner)),
        move |_| l.borrow_mut().push("x".into()),
    )
    .unwrap()
    .detach();
    drop(owner);
    let r = hub.run_hook("H", &mut Value::Nil).unwrap();
    assert_eq!(r.ran, 0);
    assert!(!hub.has_hook_listeners("H"));
}

#[test]
fn hook_listener_may_register_unregister_and_run_hooks() {
    let hub = Hub::new();
    let log = log();
    let (hub2, l) = (hub.clone(), log.clone());
    let _h = hub
        .listen_hook("Outer", HookOptions::new(), move |c| {
            l.borrow_mut().push("outer".into());
            let l2 = l.clone();
            hub2.listen_hook("Inner", HookOptions::new(), move |_| {
                l2.borrow_mut().push("inner".into())
            })
            .unwrap()
            .detach();
            hub2.run_hook("Inner", c.payload).unwrap();
        })
        .unwrap();
    hub.run_hook("Outer", &mut Value::Nil).unwrap();
    assert_eq!(taken(&log), ["outer", "inner"]);
}

#[test]
fn hook_no_listeners_answers_without_interning() {
    let hub = Hub::new();
    assert!(!hub.has_hook_listeners("Never.Heard.Of"));
    let r = hub.run_hook("Never.Heard.Of", &mut Value::Nil).unwrap();
    assert_eq!(r.ran, 0);
    let _h = hub
        .listen_hook("Never", HookOptions::new().partial(), |_| {})
        .unwrap();
    assert!(hub.has_hook_listeners("Never.Heard.Of"));
}

// ----- the router as a private bus ------------------------------------------------

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

#[test]
fn hook_first_run_records_its_payload_type() {
    let hub = Hub::new();
    let _l = hub
        .listen_hook("Combat.Damage", HookOptions::new(), |_| {})
        .unwrap();
    hub.run_hook("Combat.Damage", &mut damage(3)).unwrap();
    let table = hub.table();
    let entry = table.get("Combat.Damage").expect("recorded");
    assert_eq!(entry.kind, gantry_host::Kind::Hook);
    assert_eq!(entry.params.len(), 1, "the payload is the hook's parameter");
    assert!(
        matches!(&entry.params[0].ty, gantry_host::Type::Struct(name) if &**name == "Damage"),
        "{:?}",
        entry.params
    );
}

#[test]
fn unheard_hook_is_unheard_again_once_its_listeners_left() {
    let hub = Hub::new();
    let a = hub
        .listen_hook("Combat.Damage", HookOptions::new(), |_| {})
        .unwrap();
    let b = hub
        .listen_hook("Combat.Damage", HookOptions::new(), |_| {})
        .unwrap();
    assert!(hub.has_hook_listeners("Combat.Damage"));
    assert!(
        !hub.has_hook_listeners("Combat.Heal"),
        "a sibling is not heard"
    );
    drop(a);
    assert!(hub.has_hook_listeners("Combat.Damage"), "one listener left");
    drop(b);
    assert!(!hub.has_hook_listeners("Combat.Damage"));
    assert_eq!(
        hub.run_hook("Combat.Damage", &mut damage(1)).unwrap().ran,
        0
    );
    // A partial listener above still hears the keys below.
    let _p = hub
        .listen_hook("Combat", HookOptions::new().partial(), |_| {})
        .unwrap();
    assert!(hub.has_hook_listeners("Combat.Heal"));
    assert!(!hub.has_hook_listeners("Shop.Buy"));
}
