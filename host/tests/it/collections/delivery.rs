//! Collection listeners beside ordinary ones: both hear a store, and those
//! of a key and its ancestor run in delivery order.

use gantry_host::{ALL_ROWS, ListenOptions, Serde, Source};
use gantry_test_support::log::{log, taken};

use crate::support::collections::{Item, KEY, hub, items, store};

#[test]
fn ordinary_and_collection_listeners_of_one_key_both_hear_a_store() {
    let (hub, key) = hub();
    let log = log();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _plain = hub
        .listen(KEY, Source::Global, move |rows: Serde<Vec<Item>>| {
            a.borrow_mut().push(format!("plain {}", rows.0.len()))
        })
        .unwrap();
    let _table = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, update| {
                b.borrow_mut()
                    .push(format!("table {} of {}", view.len(), update.total))
            },
        )
        .unwrap();
    let _slot = hub
        .listen_slot(
            KEY,
            Source::Global,
            1,
            ListenOptions::default(),
            move |id: i64| c.borrow_mut().push(format!("slot {id}")),
        )
        .unwrap();
    store(&hub, key, &items(3));
    assert_eq!(taken(&log), ["plain 3", "table 3 of 3", "slot 1"]);
    // A writer's edit elsewhere: the ordinary listener hears the store,
    // the slot listener does not wake.
    {
        let mut arr = hub.stored_array_of::<Item>(key, Source::Global);
        arr.get_mut(2).unwrap().unwrap().name = "two".into();
    }
    assert_eq!(taken(&log), ["plain 3", "table 3 of 3"]);
}

#[test]
fn collection_listeners_of_a_key_and_its_ancestor_run_in_delivery_order() {
    let (hub, key) = hub();
    let log = log();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _ancestor = hub
        .listen_table(
            "Inv",
            Source::Global,
            ListenOptions::default().partial(),
            move |view, _| a.borrow_mut().push(format!("Inv {}", view.len())),
        )
        .unwrap();
    let _late = hub
        .listen_rows(
            KEY,
            Source::Global,
            ALL_ROWS,
            ListenOptions::default().order(5),
            move |row: i32, id: i64| c.borrow_mut().push(format!("row {row}={id}")),
        )
        .unwrap();
    let _exact = hub
        .listen_table(
            KEY,
            Source::Global,
            ListenOptions::default(),
            move |view, _| b.borrow_mut().push(format!("Inv.Items {}", view.len())),
        )
        .unwrap();
    store(&hub, key, &items(2));
    // Lower order first; at equal order the exact listener before the
    // ancestor's partial one.
    assert_eq!(taken(&log), ["Inv.Items 2", "Inv 2", "row 0=0", "row 1=1"]);
}
