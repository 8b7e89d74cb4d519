//! Hooks: listeners run by priority (ties in registration order, partial
//! listeners above joining), each sees the changes of the ones before;
//! `handled` is reported and the rest still run, `cancel` stops them; a
//! listener of another struct is skipped with a warning.

use std::rc::Rc;

use gantry_host::{
    HookOptions, Hub, Kind, Owner, Report, Role, StructDef, StructValue, Type, Value,
};
use gantry_test_support::log::{log, taken};

fn base_and_child(hub: &Hub) {
    hub.edit_table(|t| {
        t.declare_struct(
            "Base",
            StructDef {
                fields: vec![gantry_host::Param::new("id", Type::Int)],
                ..Default::default()
            },
        );
        t.declare_struct(
            "Child",
            StructDef {
                parent: Some("Base".into()),
                fields: vec![gantry_host::Param::new("name", Type::String)],
                ..Default::default()
            },
        );
    });
}

fn child() -> Value {
    Value::structure(StructValue::new("Child").with("id", 1i64).with("name", "c"))
}

#[test]
fn hook_result_counts_listeners_that_ran_up_to_the_cancel() {
    let hub = Hub::new();
    let log = log();
    let mut handles = Vec::new();
    for (priority, name, cancel) in [(1, "low", false), (9, "high", false), (5, "mid", true)] {
        let l = log.clone();
        handles.push(
            hub.listen_hook("Gate", HookOptions::new().priority(priority), move |call| {
                l.borrow_mut().push(name.to_owned());
                if cancel {
                    call.cancel();
                }
            })
            .unwrap(),
        );
    }
    let mut payload = Value::Nil;
    let result = hub.run_hook("Gate", &mut payload).unwrap();
    assert_eq!(taken(&log), ["high", "mid"]);
    assert_eq!(
        result,
        gantry_host::HookResult {
            ran: 2,
            handled: false,
            cancelled: true
        }
    );
}

#[test]
fn hook_expecting_a_parent_struct_gets_a_child_payload() {
    let hub = Hub::new();
    base_and_child(&hub);
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen_hook("Hit", HookOptions::new().expects("Base"), move |call| {
            l.borrow_mut().push(call.payload.kind_name());
        })
        .unwrap();
    let mut payload = child();
    assert_eq!(hub.run_hook("Hit", &mut payload).unwrap().ran, 1);
    let mut payload = Value::Int(3);
    assert_eq!(hub.run_hook("Hit", &mut payload).unwrap().ran, 0);
    assert_eq!(taken(&log), ["Child"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::HookPayloadSkipped { .. }))
    );
}

#[test]
fn hook_run_from_rust_records_its_call_site_as_a_send() {
    let hub = Hub::new();
    let _h = hub
        .listen_hook("Combat.Damage", HookOptions::new(), |_| {})
        .unwrap();
    let mut payload = Value::Int(5);
    let line = line!() + 2;
    for _ in 0..2 {
        hub.run_hook("Combat.Damage", &mut payload).unwrap();
    }
    let table = hub.table();
    let entry = table.get("Combat.Damage").unwrap();
    assert_eq!(entry.kind, Kind::Hook);
    let sends: Vec<u32> = entry
        .sites_with_role(Role::Send)
        .filter(|s| s.file.ends_with("hooks.rs"))
        .map(|s| s.line)
        .collect();
    assert_eq!(sends, [line], "recorded once");
    assert_eq!(entry.sites_with_role(Role::Listen).count(), 1);
}

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
