//! Order holds across every listener of a dispatch: ordinary and
//! collection listeners (row, slot, whole table) of one table run by
//! `order`, ties in registration order, whoever calls them.

use gantry_host::{ALL_ROWS, Hub, ListenOptions, ListenerHandle, Serde, Source};
use gantry_test_support::log::{Log, log, taken};

use crate::support::collections::{Item, KEY, hub, items, store};

/// The listener forms a dispatch of a table reaches.
#[derive(Clone, Copy)]
enum Form {
    Ordinary,
    Row,
    Slot,
    Table,
}

/// Registers a listener of `form` at `order` on `scope` that logs `name`
/// once per row (a row listener) or once per dispatch (the others).
fn listen(
    hub: &Hub,
    form: Form,
    scope: Source,
    order: i32,
    name: &str,
    log: &Log,
) -> ListenerHandle {
    let (l, name) = (log.clone(), name.to_owned());
    let options = ListenOptions::new().order(order);
    match form {
        Form::Ordinary => hub.listen_with(KEY, scope, options, move |_: Serde<Vec<Item>>| {
            l.borrow_mut().push(name.clone())
        }),
        Form::Row => hub.listen_rows(KEY, scope, ALL_ROWS, options, move |_: i32, _: i64| {
            l.borrow_mut().push(name.clone())
        }),
        Form::Slot => hub.listen_slot(KEY, scope, 0, options, move |_: i64| {
            l.borrow_mut().push(name.clone())
        }),
        Form::Table => hub.listen_table(KEY, scope, options, move |_, _| {
            l.borrow_mut().push(name.clone())
        }),
    }
    .unwrap()
}

/// Registers `first` then `second` at their orders, stores a one-row
/// table and says who heard it, in order.
fn heard_store(first: (Form, i32), second: (Form, i32)) -> Vec<String> {
    let (hub, key) = hub();
    let log = log();
    let _a = listen(&hub, first.0, Source::Global, first.1, "first", &log);
    let _b = listen(&hub, second.0, Source::Global, second.1, "second", &log);
    store(&hub, key, &items(1));
    taken(&log)
}

/// Each pairing, with the orders both ways and equal.
fn assert_ordered(a: Form, b: Form) {
    assert_eq!(
        heard_store((a, 0), (b, 1)),
        ["first", "second"],
        "lower order first"
    );
    assert_eq!(
        heard_store((a, 1), (b, -1)),
        ["second", "first"],
        "lower order first"
    );
    assert_eq!(
        heard_store((a, 0), (b, 0)),
        ["first", "second"],
        "equal order: registration"
    );
    assert_eq!(
        heard_store((b, 0), (a, 0)),
        ["first", "second"],
        "equal order: registration"
    );
}

#[test]
fn an_ordinary_listener_and_a_row_listener_run_by_order_then_registration() {
    assert_ordered(Form::Ordinary, Form::Row);
}

#[test]
fn an_ordinary_listener_and_a_slot_listener_run_by_order_then_registration() {
    assert_ordered(Form::Ordinary, Form::Slot);
}

#[test]
fn an_ordinary_listener_and_a_whole_table_listener_run_by_order_then_registration() {
    assert_ordered(Form::Ordinary, Form::Table);
}

#[test]
fn a_row_listener_and_a_slot_listener_run_by_order_then_registration() {
    assert_ordered(Form::Row, Form::Slot);
}

#[test]
fn a_whole_table_listener_and_a_slot_listener_run_by_order_then_registration() {
    assert_ordered(Form::Table, Form::Slot);
}

#[test]
fn a_collection_listener_with_a_lower_order_runs_between_ordinary_ones() {
    let (hub, key) = hub();
    let log = log();
    let _a = listen(
        &hub,
        Form::Ordinary,
        Source::Global,
        -5,
        "ordinary -5",
        &log,
    );
    let _b = listen(&hub, Form::Ordinary, Source::Global, 5, "ordinary 5", &log);
    let _c = listen(&hub, Form::Table, Source::Global, 0, "table 0", &log);
    let _d = listen(&hub, Form::Row, Source::Global, 10, "row 10", &log);
    let _e = listen(&hub, Form::Slot, Source::Global, -10, "slot -10", &log);
    store(&hub, key, &items(1));
    assert_eq!(
        taken(&log),
        ["slot -10", "ordinary -5", "table 0", "ordinary 5", "row 10"]
    );
}

#[test]
fn a_table_sent_again_and_again_keeps_the_order_across_listener_kinds() {
    let (hub, key) = hub();
    let log = log();
    let _a = listen(&hub, Form::Ordinary, Source::Global, 1, "ordinary 1", &log);
    let _b = listen(&hub, Form::Table, Source::Global, 0, "table 0", &log);
    let _c = listen(&hub, Form::Row, Source::Global, 2, "row 2", &log);
    let _d = listen(
        &hub,
        Form::Ordinary,
        Source::Global,
        -1,
        "ordinary -1",
        &log,
    );
    // The first send merges the key's lane, the second goes down it.
    for _ in 0..2 {
        hub.send(key, Source::Global, (Serde(items(1)),)).unwrap();
        assert_eq!(
            taken(&log),
            ["ordinary -1", "table 0", "ordinary 1", "row 2"]
        );
    }
}

#[test]
fn order_holds_across_kinds_and_tiers_of_a_stored_table() {
    let (hub, key) = hub();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let log = log();
    let _a = listen(&hub, Form::Row, Source::Global, 0, "global row 0", &log);
    let _b = listen(
        &hub,
        Form::Ordinary,
        Source::Object(object),
        0,
        "object ordinary 0",
        &log,
    );
    let _c = listen(
        &hub,
        Form::Table,
        Source::World(world),
        -1,
        "world table -1",
        &log,
    );
    let _d = listen(
        &hub,
        Form::Ordinary,
        Source::Global,
        1,
        "global ordinary 1",
        &log,
    );
    hub.store(key, object, (Serde(items(1)),)).unwrap();
    assert_eq!(
        taken(&log),
        [
            "world table -1",
            "global row 0",
            "object ordinary 0",
            "global ordinary 1"
        ]
    );
}
