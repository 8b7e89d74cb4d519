//! The dispatch log (`gantry_host::dispatch_log`): one call per dispatch,
//! in order, saying which came from outside any listener; typed sends
//! that would skip the hub are logged too; a lane handed to a runtime
//! carries the log, and turning it on or off moves the epoch.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    Delivery, DispatchLog, HookOptions, Hub, Logged, LoggedArgs, Source, TraceEvent, Value,
};

/// Keeps each dispatch as `key outermost args` (`*` marks the outermost).
#[derive(Default)]
struct Kept {
    hub: Hub,
    lines: RefCell<Vec<String>>,
}

impl DispatchLog for Kept {
    fn dispatch(&self, d: &Logged<'_>) {
        let args = match d.args {
            LoggedArgs::Values(values) => format!("{values:?}"),
            LoggedArgs::Plain(plain) => format!("{plain:?}"),
        };
        let mark = if d.outermost { "*" } else { "" };
        let kind = if d.delivery == Delivery::Hook {
            " hook"
        } else {
            ""
        };
        self.lines
            .borrow_mut()
            .push(format!("{mark}{}{kind} {args}", self.hub.key_name(d.key)));
    }
}

fn kept(hub: &Hub) -> Rc<Kept> {
    let kept = Rc::new(Kept {
        hub: hub.clone(),
        ..Kept::default()
    });
    hub.set_dispatch_log(Some(kept.clone()));
    kept
}

#[test]
fn a_dispatch_log_hears_each_send_in_order_and_which_came_from_outside_any_listener() {
    let hub = Hub::new();
    let inner = hub.clone();
    let _a = hub
        .listen("A", Source::Global, move |n: i64| {
            inner.send_str("B", Source::Global, (n + 1,)).unwrap();
            let mut payload = Value::Int(n);
            inner.run_hook("H", &mut payload).unwrap();
        })
        .unwrap();
    let _b = hub.listen("B", Source::Global, |_: i64| {}).unwrap();
    let inner = hub.clone();
    let _h = hub
        .listen_hook("H", HookOptions::new(), move |_| {
            inner.send_str("B", Source::Global, (9i64,)).unwrap();
        })
        .unwrap();
    let log = kept(&hub);
    hub.send_str("A", Source::Global, (1i64,)).unwrap();
    hub.send_str("B", Source::Global, (5i64,)).unwrap();
    hub.set_dispatch_log(None);
    hub.send_str("B", Source::Global, (6i64,)).unwrap();
    assert_eq!(
        *log.lines.borrow(),
        [
            "*A [Int(1)]",
            "B [Int(2)]",
            "H hook [Int(1)]",
            "B [Int(9)]",
            "*B [Int(5)]",
        ]
    );
}

#[test]
fn typed_sends_are_logged_every_time_though_their_direct_lane_skips_the_hub() {
    let hub = Hub::new();
    let _l = hub.listen("Tick", Source::Global, |_: i64| {}).unwrap();
    let key = hub.typed_key::<(i64,)>("Tick").unwrap();
    // The direct lane is taken before the log comes.
    for n in 0..3 {
        hub.send(key, Source::Global, (n,)).unwrap();
    }
    let log = kept(&hub);
    for n in 3..6 {
        hub.send(key, Source::Global, (n,)).unwrap();
    }
    assert_eq!(
        *log.lines.borrow(),
        ["*Tick [Int(3)]", "*Tick [Int(4)]", "*Tick [Int(5)]"]
    );
}

#[test]
fn a_lane_handed_to_a_runtime_carries_the_log_and_a_tracer_still_refuses_it() {
    let hub = Hub::new();
    hub.send_str("K", Source::Global, (1i64,)).unwrap();
    let key = hub.key("K").unwrap();
    assert!(
        hub.lane_snapshot(key, Source::Global)
            .unwrap()
            .log
            .is_none()
    );
    let before = hub.epoch();
    let log = kept(&hub);
    assert_ne!(hub.epoch(), before, "kept lanes are taken again");
    let lane = hub.lane_snapshot(key, Source::Global).unwrap();
    let handle = lane.log.expect("the lane logs its sends");
    // What a runtime does with a send it delivers itself.
    handle.begin_send(key, Source::Global, &[gantry_host::PlainArg::Int(7)]);
    handle.end();
    assert_eq!(*log.lines.borrow(), ["*K [Int(7)]"]);
    hub.set_tracer(Some(Rc::new(|_: &TraceEvent<'_>| {})));
    assert!(
        hub.lane_snapshot(key, Source::Global).is_err(),
        "traced: no lane"
    );
}
