//! Typed hooks: a hook whose payload is a Rust struct, run with `&mut`
//! the struct; typed listeners change it in place or cancel, and the
//! caller sees the result. The payload's struct is declared from the type.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{HookOptions, Hub, Kind, Param, Report, StructValue, Type, Value};

/// A hit about to land: listeners may soften it or stop it.
#[derive(gantry_host::Message, Debug, Clone, PartialEq)]
#[message(key = "Combat.Hit", kind = "hook")]
struct Hit {
    damage: f64,
    blocked: bool,
}

fn hit() -> Hit {
    Hit {
        damage: 10.0,
        blocked: false,
    }
}

#[test]
fn a_typed_hook_declares_its_payload_struct() {
    let hub = Hub::new();
    hub.declare_message::<Hit>().unwrap();
    let table = hub.table();
    let entry = &table.keys["Combat.Hit"];
    assert_eq!(entry.kind, Kind::Hook);
    assert_eq!(
        entry.params,
        vec![Param::new("payload", Type::Struct("Hit".into()))]
    );
    assert_eq!(
        table.structs.get("Hit").unwrap().fields,
        vec![
            Param::new("damage", Type::Float),
            Param::new("blocked", Type::Bool)
        ]
    );
}

#[test]
fn a_typed_hook_listener_changes_the_payload_the_caller_sees() {
    let hub = Hub::new();
    let key = hub.declare_message::<Hit>().unwrap();
    let _armour = key
        .listen_hook(&hub, HookOptions::new(), |hit| hit.damage /= 2.0)
        .unwrap();
    let _shield = key
        .listen_hook(&hub, HookOptions::new(), |hit| hit.damage -= 1.0)
        .unwrap();
    let mut payload = hit();
    let result = key.run_hook(&hub, &mut payload).unwrap();
    assert_eq!(result.ran, 2);
    assert!(!result.cancelled);
    assert_eq!(payload.damage, 4.0);
}

#[test]
fn a_typed_hook_listener_that_cancels_stops_the_rest_and_the_caller_knows() {
    let hub = Hub::new();
    let key = hub.declare_message::<Hit>().unwrap();
    let _parry = key
        .listen_hook(&hub, HookOptions::new().priority(10), |hit| {
            hit.blocked = true;
            hit.cancel();
        })
        .unwrap();
    let later = Rc::new(RefCell::new(0));
    let count = later.clone();
    let _after = key
        .listen_hook(&hub, HookOptions::new(), move |_hit| {
            *count.borrow_mut() += 1
        })
        .unwrap();
    let mut payload = hit();
    let result = key.run_hook(&hub, &mut payload).unwrap();
    assert!(result.cancelled);
    assert_eq!(result.ran, 1);
    assert!(payload.blocked);
    assert_eq!(*later.borrow(), 0);
}

#[test]
fn a_typed_hook_nobody_listens_to_leaves_the_payload_as_is() {
    let hub = Hub::new();
    let key = hub.declare_message::<Hit>().unwrap();
    let mut payload = hit();
    let result = key.run_hook(&hub, &mut payload).unwrap();
    assert_eq!(result.ran, 0);
    assert_eq!(payload, hit());
}

#[test]
fn an_untyped_hook_listener_sees_and_changes_the_typed_payload_as_its_struct() {
    let hub = Hub::new();
    let key = hub.declare_message::<Hit>().unwrap();
    let _dynamic = hub
        .listen_hook("Combat.Hit", HookOptions::new(), |call| {
            let Value::Struct(hit) = &*call.payload else {
                panic!("a struct payload");
            };
            assert_eq!(&*hit.name, "Hit");
            let mut changed = StructValue::clone(hit);
            changed.set("damage", Value::Float(1.0));
            *call.payload = Value::structure(changed);
        })
        .unwrap();
    let mut payload = hit();
    key.run_hook(&hub, &mut payload).unwrap();
    assert_eq!(payload.damage, 1.0);
}

#[test]
fn a_payload_left_with_a_wrong_field_type_is_kept_as_it_was_and_reported() {
    let hub = Hub::new();
    let key = hub.declare_message::<Hit>().unwrap();
    let _broken = hub
        .listen_hook("Combat.Hit", HookOptions::new(), |call| {
            *call.payload = Value::structure(
                StructValue::new("Hit")
                    .with("damage", "lots")
                    .with("blocked", false),
            );
        })
        .unwrap();
    let mut payload = hit();
    key.run_hook(&hub, &mut payload).unwrap();
    assert_eq!(payload, hit());
    let reports = hub.take_reports();
    assert!(
        reports
            .iter()
            .any(|r| matches!(r, Report::ListenerFailed { key, message, .. }
            if key == "Combat.Hit" && message.contains("not a Hit"))),
        "{reports:?}"
    );
}

#[test]
fn a_typed_hook_listener_err_is_reported_and_its_change_kept() {
    let hub = Hub::new();
    let key = hub.declare_message::<Hit>().unwrap();
    let line = line!() + 2;
    let _grumpy = key
        .listen_hook(&hub, HookOptions::new(), |hit| {
            hit.damage = 0.0;
            Err("out of mana")
        })
        .unwrap();
    let mut payload = hit();
    key.run_hook(&hub, &mut payload).unwrap();
    assert_eq!(payload.damage, 0.0);
    let reports = hub.take_reports();
    let Some(Report::ListenerFailed { message, site, .. }) = reports.first() else {
        panic!("expected a listener failure, got {reports:?}");
    };
    assert_eq!(message, "out of mana");
    let site = site.as_ref().unwrap();
    assert!(site.file.ends_with("typed_hooks.rs"), "{site}");
    assert_eq!(site.line, line);
}
