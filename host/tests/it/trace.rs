//! Dispatch tracing (`--trace`): what a tracer sees, and that
//! nothing is traced without one.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{HookOptions, Hub, ListenOptions, Source, TraceEvent, Value};

/// Installs a tracer that writes one short line per event.
fn traced(hub: &Hub) -> Rc<RefCell<Vec<String>>> {
    let lines = Rc::new(RefCell::new(Vec::new()));
    let sink = lines.clone();
    hub.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
        let line = match event {
            TraceEvent::Dispatch {
                key,
                args,
                delivery,
                ..
            } => format!("{delivery} {key} {} args", args.len()),
            TraceEvent::Called {
                key, order, site, ..
            } => {
                format!("called {key} order {order} site {}", site.is_some())
            }
            TraceEvent::Aborted { key, reason } => format!("aborted {key}: {reason}"),
            TraceEvent::End { key, listeners } => format!("end {key} {listeners}"),
            TraceEvent::HookDone {
                key,
                ran,
                handled,
                cancelled,
            } => format!("hook {key} ran {ran} handled {handled} cancelled {cancelled}"),
            // Lifecycle events have their own test below.
            TraceEvent::Listened { .. } | TraceEvent::Dropped { .. } => return,
        };
        sink.borrow_mut().push(line);
    })));
    lines
}

#[test]
fn trace_names_each_dispatch_and_each_listener_called_in_order() {
    let hub = Hub::new();
    let lines = traced(&hub);
    let _a = hub
        .listen_with(
            "Player.Hurt",
            Source::Global,
            gantry_host::ListenOptions::new().order(5),
            |_: f64| {},
        )
        .unwrap();
    let _b = hub
        .listen_with(
            "Player.Hurt",
            Source::Global,
            gantry_host::ListenOptions::new().order(-3),
            |_: f64| {},
        )
        .unwrap();
    hub.send_str("Player.Hurt", Source::Global, (2.5,)).unwrap();
    assert_eq!(
        *lines.borrow(),
        vec![
            "send Player.Hurt 1 args",
            "called Player.Hurt order -3 site true",
            "called Player.Hurt order 5 site true",
            "end Player.Hurt 2",
        ]
    );
}

#[test]
fn trace_shows_stores_replays_and_aborted_dispatches() {
    let hub = Hub::new();
    let lines = traced(&hub);
    let key = hub.key("Arena.Size").unwrap();
    hub.store(key, Source::Global, (20_i64,)).unwrap();
    let _late = hub
        .listen("Arena.Size", Source::Global, |_: i64| {})
        .unwrap();
    // A wrong type aborts the dispatch before any listener runs.
    let _ = hub.send(key, Source::Global, ("twenty",));
    let lines = lines.borrow();
    assert_eq!(lines[0], "store Arena.Size 1 args");
    assert_eq!(lines[1], "end Arena.Size 0");
    assert_eq!(lines[2], "replay Arena.Size 1 args");
    assert_eq!(lines[3], "called Arena.Size order 0 site true");
    assert_eq!(lines[4], "end Arena.Size 1");
    assert!(
        lines[5].starts_with("aborted Arena.Size: argument 1: expected int"),
        "{lines:?}"
    );
    assert_eq!(lines.len(), 6);
}

#[test]
fn trace_shows_hook_runs_and_their_result() {
    let hub = Hub::new();
    let lines = traced(&hub);
    let _h = hub
        .listen_hook("Combat.Damage", HookOptions::default(), |call| {
            call.cancel()
        })
        .unwrap();
    let mut payload = Value::Int(3);
    hub.run_hook("Combat.Damage", &mut payload).unwrap();
    assert_eq!(
        *lines.borrow(),
        vec![
            "hook Combat.Damage 1 args",
            "called Combat.Damage order 0 site true",
            "hook Combat.Damage ran 1 handled false cancelled true",
        ]
    );
}

#[test]
fn without_a_tracer_nothing_is_traced_and_removing_it_stops_tracing() {
    let hub = Hub::new();
    assert!(!hub.is_tracing());
    let lines = traced(&hub);
    assert!(hub.is_tracing());
    hub.set_tracer(None);
    assert!(!hub.is_tracing());
    let _l = hub.listen("K", Source::Global, |_: i64| {}).unwrap();
    hub.send_str("K", Source::Global, (1_i64,)).unwrap();
    assert!(lines.borrow().is_empty());
}

/// A tracer that keeps only listener lifecycle events.
fn lifecycle(hub: &Hub) -> Rc<RefCell<Vec<String>>> {
    let lines = Rc::new(RefCell::new(Vec::new()));
    let sink = lines.clone();
    hub.set_tracer(Some(Rc::new(move |event: &TraceEvent<'_>| {
        let line = match event {
            TraceEvent::Listened {
                key,
                scope,
                kind,
                partial,
                ..
            } => format!("listened {key} on {scope} {kind:?} partial {partial}"),
            TraceEvent::Dropped { reason, .. } => format!("dropped: {reason}"),
            _ => return,
        };
        sink.borrow_mut().push(line);
    })));
    lines
}

#[test]
fn trace_tells_each_listener_joining_and_why_it_left() {
    let hub = Hub::new();
    let lines = lifecycle(&hub);
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    // Used up by its one call.
    let _once = hub
        .listen_with(
            "A",
            Source::Global,
            ListenOptions::new().times(1),
            |_: i64| {},
        )
        .unwrap();
    hub.send_str("A", Source::Global, (1,)).unwrap();
    // Gone with the object it listens on.
    let _on_object = hub
        .listen("B", Source::Object(object), |_: i64| {})
        .unwrap();
    hub.destroy(object).unwrap();
    // Unbound by dropping its handle.
    let hook = hub
        .listen_hook("C", HookOptions::new().priority(7), |_| {})
        .unwrap();
    drop(hook);
    assert_eq!(
        *lines.borrow(),
        [
            "listened A on global Message partial false",
            "dropped: its `times` were used up",
            format!(
                "listened B on object#{} Message partial false",
                object.get()
            )
            .as_str(),
            "dropped: its object was destroyed",
            "listened C on global Hook { priority: 7 } partial false",
            "dropped: it was unbound",
        ]
    );
}

/// A table sent to ordinary and collection listeners: every listener is
/// traced inside its dispatch, in the one delivery order, and the end
/// counts them all.
#[test]
fn trace_shows_collection_listeners_in_order_inside_their_dispatch() {
    let hub = Hub::new();
    let lines = traced(&hub);
    let _plain = hub
        .listen_with(
            "Radar.Blips",
            Source::Global,
            ListenOptions::new().order(1),
            |_: Value| {},
        )
        .unwrap();
    let _table = hub
        .listen_table(
            "Radar.Blips",
            Source::Global,
            ListenOptions::new().order(-1),
            |_, _| {},
        )
        .unwrap();
    let blip = Value::structure(gantry_host::StructValue::new("Blip"));
    let table = Value::array(vec![blip]);
    hub.send_str("Radar.Blips", Source::Global, (table,))
        .unwrap();
    assert_eq!(
        *lines.borrow(),
        vec![
            "send Radar.Blips 1 args",
            "called Radar.Blips order -1 site true",
            "called Radar.Blips order 1 site true",
            "end Radar.Blips 2",
        ]
    );
}
