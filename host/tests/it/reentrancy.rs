//! Listening, unlistening and sending from inside a listener: a listener
//! added during a dispatch is not called by it (a stored message is replayed
//! to it at once), one removed before its turn is not called.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{HookOptions, Hub, ListenOptions, Source, Value};
use gantry_test_support::log::{Log, log, taken};

fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

#[test]
fn reentrancy_listener_added_during_dispatch_is_not_called_by_it() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let hub2 = hub.clone();
    let _h = hub
        .listen_with(
            "R",
            Source::Global,
            ListenOptions::new().times(1),
            move || {
                let l2 = l.clone();
                push(&l, "first");
                hub2.listen("R", Source::Global, move || push(&l2, "added"))
                    .unwrap()
                    .detach();
            },
        )
        .unwrap();
    hub.send_str("R", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["first"]);
    hub.send_str("R", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["added"]);
}

#[test]
fn reentrancy_listener_removed_before_its_turn_is_not_called() {
    let hub = Hub::new();
    let log = log();
    let victim = Rc::new(RefCell::new(None));
    let (l, v, hub2) = (log.clone(), victim.clone(), hub.clone());
    let _first = hub
        .listen("R", Source::Global, move || {
            push(&l, "first");
            if let Some(id) = v.borrow_mut().take() {
                hub2.unlisten(id);
            }
        })
        .unwrap();
    let l = log.clone();
    *victim.borrow_mut() = Some(
        hub.listen("R", Source::Global, move || push(&l, "second"))
            .unwrap()
            .detach(),
    );
    hub.send_str("R", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["first"]);
}

#[test]
fn reentrancy_listener_may_unlisten_itself_and_send() {
    let hub = Hub::new();
    let log = log();
    let me = Rc::new(RefCell::new(None));
    let (l, m, hub2) = (log.clone(), me.clone(), hub.clone());
    *me.borrow_mut() = Some(
        hub.listen("Outer", Source::Global, move || {
            push(&l, "outer");
            if let Some(id) = *m.borrow() {
                hub2.unlisten(id);
            }
            hub2.send_str("Inner", Source::Global, (3i64,)).unwrap();
        })
        .unwrap()
        .detach(),
    );
    let l = log.clone();
    let _inner = hub
        .listen("Inner", Source::Global, move |n: i64| {
            push(&l, format!("inner {n}"))
        })
        .unwrap();
    hub.send_str("Outer", Source::Global, ()).unwrap();
    hub.send_str("Outer", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["outer", "inner 3"]);
}

#[test]
fn reentrancy_listener_listening_during_dispatch_gets_a_stored_replay_at_once() {
    let hub = Hub::new();
    let key = hub.key("Stored").unwrap();
    hub.store(key, Source::Global, (9i64,)).unwrap();
    let log = log();
    let (hub2, l) = (hub.clone(), log.clone());
    let _outer = hub
        .listen_with(
            "Go",
            Source::Global,
            ListenOptions::new().times(1),
            move || {
                let l2 = l.clone();
                hub2.listen("Stored", Source::Global, move |n: i64| {
                    l2.borrow_mut().push(format!("replayed {n}"))
                })
                .unwrap()
                .detach();
                l.borrow_mut().push("outer done".into());
            },
        )
        .unwrap();
    hub.send_str("Go", Source::Global, ()).unwrap();
    assert_eq!(taken(&log), ["replayed 9", "outer done"]);
}

#[test]
fn reentrancy_hook_listener_may_unlisten_itself_and_run_other_hooks() {
    let hub = Hub::new();
    let log = log();
    let me: Rc<RefCell<Option<gantry_host::ListenerId>>> = Rc::default();
    let (m, hub2, l) = (me.clone(), hub.clone(), log.clone());
    *me.borrow_mut() = Some(
        hub.listen_hook("Outer", HookOptions::new(), move |call| {
            l.borrow_mut().push("outer".into());
            if let Some(id) = *m.borrow() {
                hub2.unlisten(id);
            }
            let mut inner = Value::Int(1);
            let r = hub2.run_hook("Inner", &mut inner).unwrap();
            l.borrow_mut().push(format!("inner ran {}", r.ran));
            call.handled();
        })
        .unwrap()
        .detach(),
    );
    let _inner = hub
        .listen_hook("Inner", HookOptions::new(), |_| {})
        .unwrap();
    let mut payload = Value::Nil;
    let r = hub.run_hook("Outer", &mut payload).unwrap();
    assert!(r.handled && r.ran == 1);
    let r = hub.run_hook("Outer", &mut payload).unwrap();
    assert_eq!(r.ran, 0);
    assert_eq!(taken(&log), ["outer", "inner ran 1"]);
}
