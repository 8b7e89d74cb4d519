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

/// The head of each record a lane writes in [`Lending`]'s sink.
const HEAD: &[u8; 16] = b"HEAD of 16 bytes";

/// A log that lends every lane one sink and keeps what comes to it.
struct Lending {
    kept: Rc<Kept>,
    sink: Rc<gantry_host::SendSink>,
}

impl DispatchLog for Lending {
    fn dispatch(&self, d: &Logged<'_>) {
        self.kept.dispatch(d);
    }

    fn lane_sink(
        &self,
        _key: gantry_host::Key,
        _source: Source,
        params: usize,
    ) -> Option<gantry_host::LaneSink> {
        Some(gantry_host::LaneSink::new(self.sink.clone(), *HEAD, params))
    }
}

#[test]
fn a_nested_lane_send_writes_its_record_into_the_lent_sink_and_the_rest_go_to_the_log() {
    use gantry_host::PlainArg;
    use gantry_host::dispatch_log::plain_tag;
    let hub = Hub::new();
    hub.send_str("K", Source::Global, (1i64,)).unwrap();
    let key = hub.key("K").unwrap();
    let clock = Rc::new(std::cell::Cell::new(0u32));
    let sink = gantry_host::SendSink::new(clock.clone(), 64, 64);
    let kept = Rc::new(Kept {
        hub: hub.clone(),
        ..Kept::default()
    });
    hub.set_dispatch_log(Some(Rc::new(Lending {
        kept: kept.clone(),
        sink: sink.clone(),
    })));
    let handle = hub.lane_snapshot(key, Source::Global).unwrap().log.unwrap();
    let lane = handle.lane_sink(key, Source::Global, 2).expect("lent");
    assert!(
        handle.lane_record(&lane).is_none(),
        "an outermost send goes to the log"
    );
    handle.begin_send(key, Source::Global, &[PlainArg::Int(1)]);
    // Nested: written into the sink, not heard by the log.
    let mut record = handle
        .lane_record(&lane)
        .expect("nested: the sink takes it");
    // SAFETY (here and below): the lane has 2 parameters; each record
    // holds fewer values at each write.
    unsafe { record.int(-2) };
    record.str("é");
    record.finish();
    let mut nested = handle.lane_record(&lane).expect("nested deeper");
    unsafe { nested.bool(true) };
    unsafe { nested.float(0.5) };
    nested.finish();
    // An argument that does not fit: the record is taken back whole.
    let mut refused = handle.lane_record(&lane).unwrap();
    unsafe { refused.int(9) };
    drop(refused);
    let mut expected = HEAD.to_vec();
    expected.push(plain_tag::INT);
    expected.extend_from_slice(&(-2i64).to_le_bytes());
    expected.extend_from_slice(&[plain_tag::STR, 2, 0, 0, 0]);
    expected.extend_from_slice("é".as_bytes());
    expected.extend_from_slice(HEAD);
    expected.push(plain_tag::TRUE);
    expected.push(plain_tag::FLOAT);
    expected.extend_from_slice(&0.5f64.to_le_bytes());
    assert_eq!(*sink.bytes().unwrap(), expected);
    // The clock moved: the log has to stamp the next record first.
    clock.set(1);
    assert!(handle.lane_record(&lane).is_none(), "the clock moved");
    sink.stamp(1);
    assert!(handle.lane_record(&lane).is_some(), "stamped again");
    // Full (64 bytes of room), then closed: to the log. A finished
    // record counted no dispatch: the log's count is the one send's.
    sink.bytes().unwrap().resize(64, 0);
    assert!(handle.lane_record(&lane).is_none(), "full");
    let taken = sink.replace(Vec::new());
    assert_eq!(taken.len(), 64);
    assert!(handle.lane_record(&lane).is_some(), "emptied");
    sink.close();
    assert!(handle.lane_record(&lane).is_none(), "closed");
    handle.end();
    assert_eq!(*kept.lines.borrow(), ["*K [Int(1)]"]);
}

/// A string that outgrows the lent buffer (made with no room to spare)
/// is copied whole, and the values after it are written whole after it:
/// the room for them is made again once the string's bytes are in.
#[test]
fn a_lane_record_whose_string_outgrows_the_buffer_keeps_every_later_value_whole() {
    use gantry_host::PlainArg;
    use gantry_host::dispatch_log::write_plain;
    let hub = Hub::new();
    hub.send_str("K", Source::Global, (1i64,)).unwrap();
    let key = hub.key("K").unwrap();
    let clock = Rc::new(std::cell::Cell::new(0u32));
    let sink = gantry_host::SendSink::new(clock, 1 << 20, 0);
    hub.set_dispatch_log(Some(Rc::new(Lending {
        kept: Rc::new(Kept {
            hub: hub.clone(),
            ..Kept::default()
        }),
        sink: sink.clone(),
    })));
    let handle = hub.lane_snapshot(key, Source::Global).unwrap().log.unwrap();
    let lane = handle.lane_sink(key, Source::Global, 4).expect("lent");
    handle.begin_send(key, Source::Global, &[PlainArg::Int(1)]);
    let long = "s".repeat(5000);
    let mut expected = Vec::new();
    for round in 0..3i64 {
        let mut record = handle.lane_record(&lane).expect("nested");
        record.str(&long);
        // SAFETY: the lane has 4 parameters; the record holds fewer at
        // each write.
        unsafe {
            record.int(round);
            record.bool(round == 1);
            record.float(-0.25);
        }
        record.finish();
        expected.extend_from_slice(HEAD);
        for arg in [
            PlainArg::Str(&long),
            PlainArg::Int(round),
            PlainArg::Bool(round == 1),
            PlainArg::Float(-0.25),
        ] {
            write_plain(&mut expected, arg);
        }
    }
    handle.end();
    assert_eq!(*sink.bytes().unwrap(), expected);
}
