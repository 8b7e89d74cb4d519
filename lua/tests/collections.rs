//! Collections from Lua: row listeners (1-based, the `~` rule on Lua's row
//! numbers), the whole-table listener with its update, and the
//! `GMP.StoredArray` writer — and both directions with Rust.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{Fixture, Item};
use gantry_host::collection::{ALL_ROWS, Update};
use gantry_host::{ListenOptions, Serde, Source};
use gantry_lua::runtime::LuaOptions;

fn item(name: &str, count: i64) -> Item {
    Item {
        name: name.into(),
        count,
    }
}

/// A fixture whose table declares `Inv.Items` as a collection of `Item`.
fn inventory() -> Fixture {
    common::inventory(LuaOptions::default())
}

/// Stores three items on the script's object from Lua.
const STORE_THREE: &str = r#"
    StoreObjectMessage(self, "Inv.Items", {
        { __struct = "Item", name = "sword", count = 1 },
        { __struct = "Item", name = "potion", count = 2 },
        { __struct = "Item", name = "arrow", count = 20 },
    })
"#;

#[test]
fn row_listener_rows_count_from_one_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
                print(row, item.name, item.count)
            end)
            "#
        ),
    );
    assert_eq!(
        f.printed(),
        ["1\tsword\t1", "2\tpotion\t2", "3\tarrow\t20"],
        "a late row listener is replayed every row, numbered from 1"
    );
    assert!(f.failures().is_empty());
}

#[test]
fn slot_listener_fires_for_its_row_only_through_the_writer() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenRowMessage(self, "Inv.Items", nil, 2, function(row, item)
                print("slot", row, item.name, item.count)
            end)
            do
                local items <close> = GMP.StoredArray(self, "Inv.Items")
                items:GetMutable(2).count = 5     -- the slot's row
            end
            do
                local items <close> = GMP.StoredArray(self, "Inv.Items")
                items:GetMutable(3).count = 21    -- another row: quiet
                print("read", items:Get(2).count, items:Num())
            end
            "#
        ),
    );
    assert_eq!(
        f.printed(),
        ["slot\t2\tpotion\t2", "slot\t2\tpotion\t5", "read\t5\t3"]
    );
}

#[test]
fn with_removal_tells_a_removed_row_as_tilde_row_with_a_default_item() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenRowMessage(self, "Inv.Items", nil, GMP.WithRemoval(3), function(row, item)
                print(row, item.name, item.count, row == GMP.WithRemoval(3))
            end)
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:SetNum(2)
            "#
        ),
    );
    assert_eq!(
        f.printed(),
        ["3\tarrow\t20\tfalse", "-4\t\t0\ttrue"],
        "Lua row 3 gone arrives as ~3 = -4 with a default Item"
    );
}

#[test]
fn a_slot_without_removal_stays_quiet_when_shrunk_past() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenRowMessage(self, "Inv.Items", nil, 3, function(row, item)
                print(row, item.name)
            end)
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:RemoveAt(1)
            "#
        ),
    );
    // Removing row 1 moves "arrow" out of slot 3 (the table shrinks to 2):
    // the slot was shrunk past and did not ask for removal.
    assert_eq!(f.printed(), ["3\tarrow"]);
}

#[test]
fn writer_publishes_once_at_the_end_of_its_close_scope() {
    let f = inventory();
    let (_, object) = f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenObjectMessage(self, "Inv.Items", nil, function(items)
                print("published", #items)
            end)
            do
                local items <close> = GMP.StoredArray(self, "Inv.Items")
                items:Add({{ name = "shield", count = 1 }})
                items:Insert(1, {{ name = "torch", count = 3 }})
                items:GetMutable(2).count = 9
                print("inside", items:Num())
            end
            print("after")
            "#
        ),
    );
    assert_eq!(
        f.printed(),
        ["published\t3", "inside\t5", "published\t5", "after"]
    );
    let stored = f
        .hub
        .stored(f.hub.key("Inv.Items").unwrap(), Source::Object(object))
        .expect("stored");
    let rows: Vec<Item> = gantry_host::from_value(&stored[0]).unwrap();
    assert_eq!(
        rows.iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
        ["torch", "sword", "potion", "arrow", "shield"]
    );
}

#[test]
fn writer_commit_publishes_now_and_keeps_writing() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item, update)
                print(row, item.count, update.total, update.full_reload and "full" or update.ranges[1].index)
            end)
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            print("--")
            items:GetMutable(1).count = 7
            print("heard", items:Commit())
            items:GetMutable(3).count = 8
            print("end of chunk")
            "#
        ),
    );
    assert_eq!(
        f.printed(),
        [
            "1\t1\t3\tfull",
            "2\t2\t3\tfull",
            "3\t20\t3\tfull",
            "--",
            "1\t7\t3\t1",
            "heard\t1",
            "end of chunk",
            "3\t8\t3\t3",
        ]
    );
}

#[test]
fn whole_table_listener_with_one_more_parameter_gets_the_update() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenObjectMessage(self, "Inv.Items", nil, function(items, update)
                print(#items, update.total, update.prev_total, #update.ranges, update.full_reload)
            end)
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:RemoveAt(2)
            "#
        ),
    );
    // The late replay is a full reload (no ranges); the removal one range.
    assert_eq!(f.printed(), ["3\t3\t0\t0\ttrue", "2\t2\t3\t1\tfalse"]);
}

#[test]
fn row_zero_is_an_error_naming_the_key() {
    let f = inventory();
    let object = f.spawn();
    let err =
        f.rt.load_script(
            "bad.lua",
            r#"ListenRowMessage(self, "Inv.Items", nil, 0, function() end)"#,
            object,
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("Inv.Items"), "{err}");
    assert!(err.contains("rows count from 1"), "{err}");
    assert!(err.contains("bad.lua:1"), "{err}");
}

#[test]
fn a_writer_never_closed_is_reported_not_published_by_the_collector() {
    let f = inventory();
    let (_, _) = f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenObjectMessage(self, "Inv.Items", nil, function(items) print("published", #items) end)
            local items = GMP.StoredArray(self, "Inv.Items")
            items:Add({{ name = "lost", count = 1 }})
            items = nil
            collectgarbage("collect")
            "#
        ),
    );
    assert_eq!(f.printed(), ["published\t3"]);
    let errors = f.rt.take_errors();
    assert!(
        errors
            .iter()
            .any(|e| e.to_string().contains("never closed") && e.to_string().contains("Inv.Items")),
        "{errors:?}"
    );
}

#[test]
fn lua_row_listener_hears_a_rust_store_and_rust_hears_a_lua_writer() {
    let f = inventory();
    let (_, object) = f.load(
        "inv.lua",
        r#"
        ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
            print("lua", row, item.name)
        end)
        function give(name)
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:Add({ name = name, count = 1 })
        end
        ListenMessage("Give", nil, give)
        "#,
    );
    f.hub
        .store(
            f.hub.key("Inv.Items").unwrap(),
            Source::Object(object),
            (Serde(vec![item("sword", 1)]),),
        )
        .unwrap();
    assert_eq!(f.printed(), ["lua\t1\tsword"]);

    let heard = Rc::new(RefCell::new(Vec::new()));
    let h = heard.clone();
    let _l = f
        .hub
        .listen_rows(
            "Inv.Items",
            Source::Object(object),
            ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, name: String, _u: &Update| h.borrow_mut().push(format!("{row}:{name}")),
        )
        .unwrap();
    heard.borrow_mut().clear(); // the replay
    f.hub.send_str("Give", Source::Global, ("bow",)).unwrap();
    assert_eq!(*heard.borrow(), ["1:bow"], "Rust rows are 0-based");
    assert_eq!(f.printed(), ["lua\t2\tbow"]);
}
