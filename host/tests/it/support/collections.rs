//! The collection tests' fixture: an `Item` element struct, the
//! `Inv.Items` collection key declared for it, and listeners that log.
//! Shared by the `collections` modules (each uses a part).
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::Update;
use gantry_host::{Hub, Key, KeyDecl, Kind, ListenOptions, Serde, Source, Type, struct_def_of};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct Item {
    pub id: i64,
    pub name: String,
    pub count: i64,
}

// `Item` rows stored from Rust can be read at compiled offsets (the mirror).
gantry_host::table_row!(Item { id, name, count });

pub fn item(id: i64) -> Item {
    Item {
        id,
        name: format!("n{id}"),
        count: id * 10,
    }
}

pub fn items(n: i64) -> Vec<Item> {
    (0..n).map(item).collect()
}

use gantry_test_support::log::Log;

pub const KEY: &str = "Inv.Items";

pub fn hub() -> (Hub, Key) {
    let hub = Hub::new();
    let (name, def) = struct_def_of::<Item>().unwrap();
    hub.edit_table(|t| t.declare_struct(&name, def));
    let key = hub
        .declare(
            KEY,
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
    (hub, key)
}

pub fn store(hub: &Hub, key: Key, rows: &[Item]) {
    hub.store(key, Source::Global, (Serde(rows.to_vec()),))
        .unwrap();
}

/// A slot listener logging `"<row> id=<id>"`, or `"gone <row> id=<id>"`
/// for a removed row.
pub fn watch_slot(hub: &Hub, index: i32, log: &Log) -> gantry_host::ListenerHandle {
    let l = log.clone();
    hub.listen_slot(
        KEY,
        Source::Global,
        index,
        ListenOptions::default(),
        move |id: i64, u: &Update| {
            let text = if u.is_row_removed() {
                format!("gone {} id={id}", u.get_row())
            } else {
                format!("{} id={id}", u.row)
            };
            l.borrow_mut().push(text);
        },
    )
    .unwrap()
}

/// A row listener logging `"<row>:<id>"` (the row `!r` when removed).
pub fn watch_rows(hub: &Hub, index: i32, log: &Log) -> gantry_host::ListenerHandle {
    let l = log.clone();
    hub.listen_rows(
        KEY,
        Source::Global,
        index,
        ListenOptions::default(),
        move |row: i32, id: i64| l.borrow_mut().push(format!("{row}:{id}")),
    )
    .unwrap()
}

/// What an update-only listener on [`KEY`] heard, in order.
pub type Updates = Rc<RefCell<Vec<Update>>>;

/// An update-only listener on [`KEY`] that keeps every update.
pub fn watch_updates(hub: &Hub) -> (Updates, gantry_host::ListenerHandle) {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let h = hub
        .listen_update(KEY, Source::Global, ListenOptions::default(), move |u| {
            s.borrow_mut().push(u.clone())
        })
        .unwrap();
    (seen, h)
}
