//! Collections across languages: one table, three faces — a Lua script
//! stores and edits it, a Rhai slot listener and Rust row listeners follow
//! it; a Lua plain send reaches only the all-rows listeners of the other
//! two; a Rust writer's spans read the same from Lua (1-based) and Rhai
//! (0-based); an identical table stored by each language in turn publishes
//! nothing.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{TableView, Update};
use gantry_host::face::Faced;
use gantry_host::face::ScriptRuntime;
use gantry_host::{
    ALL_ROWS, Hub, KeyDecl, Kind, ListenOptions, Param, Source, StructDef, StructValue, Type,
    Value, WorldId, with_removal,
};
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime};

const KEY: &str = "Inv.Items";

struct World {
    hub: Hub,
    lua: LuaRuntime,
    rhai: RhaiRuntime,
    printed: Rc<RefCell<Vec<String>>>,
    world: WorldId,
}

impl World {
    /// A hub declaring `Item { id: int, name: string, count: int }` and
    /// `Inv.Items` as a table of them, with a Lua and a Rhai runtime.
    fn new() -> Self {
        let hub = Hub::new();
        hub.edit_table(|t| {
            t.declare_struct(
                "Item",
                StructDef {
                    parent: None,
                    doc: String::new(),
                    fields: vec![
                        Param::new("id", Type::Int),
                        Param::new("name", Type::String),
                        Param::new("count", Type::Int),
                    ],
                },
            )
        });
        hub.declare(
            KEY,
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
        let world = hub.create_world();
        let lua = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
        let rhai = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).unwrap();
        let printed = Rc::new(RefCell::new(Vec::new()));
        let sink = printed.clone();
        lua.on_print(move |l| sink.borrow_mut().push(format!("lua: {l}")));
        let sink = printed.clone();
        rhai.on_print(move |l| sink.borrow_mut().push(format!("rhai: {l}")));
        Self {
            hub,
            lua,
            rhai,
            printed,
            world,
        }
    }

    fn lua(&self, file: &str, source: &str) {
        let o = self.hub.spawn(self.world).unwrap();
        self.lua
            .load_script(file, source, o)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn rhai(&self, file: &str, source: &str) {
        let o = self.hub.spawn(self.world).unwrap();
        self.rhai
            .load_script(file, source, o)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn printed(&self) -> Vec<String> {
        std::mem::take(&mut *self.printed.borrow_mut())
    }

    fn failures(&self) -> Vec<String> {
        self.hub
            .take_reports()
            .iter()
            .filter(|r| matches!(r, gantry_host::Report::ListenerFailed { .. }))
            .map(|r| r.to_string())
            .collect()
    }
}

type Log = Rc<RefCell<Vec<String>>>;

fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

/// A Lua chunk storing `n` items (ids 0..n) on the world.
fn lua_store(n: i64) -> String {
    format!(
        r#"local rows = {{}}
        for i = 1, {n} do rows[i] = {{ id = i - 1, name = "n" .. (i - 1), count = 0 }} end
        StoreObjectMessage(self:World(), "Inv.Items", rows)"#
    )
}

/// A Lua chunk running `body` inside one writer scope on the world's table.
fn lua_write(body: &str) -> String {
    format!(
        r#"do local items <close> = GMP.StoredArray(self:World(), "Inv.Items")
        {body}
        end"#
    )
}

/// "A fixed row is a position, not an element", across languages:
/// Lua stores and edits the table (its rows 1-based), a Rhai slot listener
/// on position 5 (0-based) and Rust row listeners follow it — an edit of
/// the slot's row wakes it, an edit elsewhere does not, an insert before it
/// moves the old row 4 in, a shrink past it tells only the listeners that
/// asked for removals (a default item), and growing back calls it again.
#[test]
fn lua_table_followed_by_a_rhai_slot_listener_and_rust_row_listeners() {
    let w = World::new();
    w.rhai(
        "slot.rhai",
        r#"
        ListenRowMessage(SELF.World(), "Inv.Items", (), 5, |row, item| print(`slot5 ${row} id=${item.id} count=${item.count}`));
        ListenRowMessage(SELF.World(), "Inv.Items", (), GMP::WithRemoval(5), |row, item| print(`slot5~ ${row} id=${item.id} name="${item.name}"`));
        "#,
    );
    let rows: Log = Rc::new(RefCell::new(Vec::new()));
    let r = rows.clone();
    let _rows = w
        .hub
        .listen_rows(
            KEY,
            w.world,
            ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, id: i64| r.borrow_mut().push(format!("{row}:{id}")),
        )
        .unwrap();
    let slot: Log = Rc::new(RefCell::new(Vec::new()));
    let s = slot.clone();
    let _slot = w
        .hub
        .listen_slot(
            KEY,
            w.world,
            with_removal(5),
            ListenOptions::default(),
            move |id: i64, name: String, u: &Update| {
                s.borrow_mut().push(format!(
                    "{} removed={} id={id} name={name:?}",
                    u.get_row(),
                    u.is_row_removed()
                ))
            },
        )
        .unwrap();

    w.lua("store.lua", &lua_store(10));
    assert_eq!(
        w.printed(),
        [
            "rhai: slot5 5 id=5 count=0",
            "rhai: slot5~ 5 id=5 name=\"n5\""
        ]
    );
    assert_eq!(taken(&rows).len(), 10);
    assert_eq!(taken(&slot), ["5 removed=false id=5 name=\"n5\""]);

    // Lua row 6 is position 5.
    w.lua("edit.lua", &lua_write("items:GetMutable(6).count = 7"));
    assert_eq!(
        w.printed(),
        [
            "rhai: slot5 5 id=5 count=7",
            "rhai: slot5~ 5 id=5 name=\"n5\""
        ]
    );
    assert_eq!(taken(&rows), ["5:5"]);
    taken(&slot);

    // Lua row 4 is position 3: another row.
    w.lua("other.lua", &lua_write("items:GetMutable(4).count = 7"));
    assert!(w.printed().is_empty());
    assert_eq!(taken(&rows), ["3:3"]);
    assert!(taken(&slot).is_empty());

    // Insert at position 3: the old row 4 moves into position 5.
    w.lua(
        "insert.lua",
        &lua_write(r#"items:Insert(4, { id = 99, name = "n99", count = 0 })"#),
    );
    assert_eq!(
        w.printed(),
        [
            "rhai: slot5 5 id=4 count=0",
            "rhai: slot5~ 5 id=4 name=\"n4\""
        ]
    );
    assert_eq!(
        taken(&rows),
        ["3:99", "4:3", "5:4", "6:5", "7:6", "8:7", "9:8", "10:9"]
    );
    assert_eq!(taken(&slot), ["5 removed=false id=4 name=\"n4\""]);

    // Shrink to 3: position 5 is gone.
    w.lua("shrink.lua", &lua_write("items:SetNum(3)"));
    assert_eq!(w.printed(), ["rhai: slot5~ -6 id=0 name=\"\""]);
    assert!(taken(&rows).is_empty(), "no removal asked, none told");
    assert_eq!(taken(&slot), ["5 removed=true id=0 name=\"\""]);

    // Grow back to 7: the subscription was never invalidated.
    w.lua("grow.lua", &lua_write("items:SetNum(7)"));
    assert_eq!(
        w.printed(),
        [
            "rhai: slot5 5 id=0 count=0",
            "rhai: slot5~ 5 id=0 name=\"\""
        ]
    );
    assert_eq!(taken(&rows), ["3:0", "4:0", "5:0", "6:0"]);
    assert_eq!(taken(&slot), ["5 removed=false id=0 name=\"\""]);
    assert!(w.failures().is_empty(), "{:?}", w.failures());
}

/// "Not storing at all": a plain send of an array of structs from Lua
/// wakes only the all-rows (and whole-table) listeners of Rust and Rhai,
/// always as a full reload; slot listeners of either stay quiet; nothing is
/// kept, so a late Rhai listener gets nothing.
#[test]
fn lua_plain_send_reaches_only_all_rows_listeners_of_rust_and_rhai_as_a_full_reload() {
    let w = World::new();
    w.rhai(
        "watch.rhai",
        r#"
        ListenRowMessage(SELF.World(), "Inv.Items", (), GMP::ALL_ROWS, |row, item, u| print(`all ${row} id=${item.id} full=${u.full_reload}`));
        ListenRowMessage(SELF.World(), "Inv.Items", (), 0, |row, item| print(`slot ${row}`));
        ListenRowMessage(SELF.World(), "Inv.Items", (), GMP::WithRemoval(1), |row, item| print(`slot~ ${row}`));
        "#,
    );
    let log: Log = Rc::new(RefCell::new(Vec::new()));
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let _rows = w
        .hub
        .listen_rows(
            KEY,
            w.world,
            ALL_ROWS,
            ListenOptions::default(),
            move |row: i32, id: i64, u: &Update| {
                a.borrow_mut()
                    .push(format!("rows {row}:{id} full={}", u.is_full_reload()))
            },
        )
        .unwrap();
    let _slot = w
        .hub
        .listen_slot(KEY, w.world, 0, ListenOptions::default(), move |id: i64| {
            b.borrow_mut().push(format!("slot {id}"))
        })
        .unwrap();
    let _table = w
        .hub
        .listen_table(
            KEY,
            w.world,
            ListenOptions::default(),
            move |view: &TableView<'_>, u: &Update| {
                c.borrow_mut().push(format!(
                    "table {} total={} full={}",
                    view.len(),
                    u.total,
                    u.is_full_reload()
                ))
            },
        )
        .unwrap();
    w.lua(
        "radar.lua",
        r#"NotifyObjectMessage(self:World(), "Inv.Items", { { id = 7, name = "a", count = 0 }, { id = 8, name = "b", count = 0 } })"#,
    );
    assert_eq!(
        w.printed(),
        ["rhai: all 0 id=7 full=true", "rhai: all 1 id=8 full=true"]
    );
    assert_eq!(
        taken(&log),
        [
            "rows 0:7 full=true",
            "rows 1:8 full=true",
            "table 2 total=2 full=true"
        ]
    );
    let key = w.hub.key(KEY).unwrap();
    assert!(w.hub.stored(key, Source::World(w.world)).is_none());
    w.rhai(
        "late.rhai",
        r#"ListenRowMessage(SELF.World(), "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`late ${row}`));"#,
    );
    assert!(w.printed().is_empty(), "no late replay of a send");
}

/// "What a listener is told": one update, read the same in every
/// language — a Rust writer editing rows 2 and 7 of ten is two ranges,
/// `{3,1},{8,1}` in Lua's numbering and `2+1, 7+1` in Rhai's, total and
/// prev_total 10, not a full reload.
#[test]
fn a_rust_writers_ranges_read_the_same_from_lua_and_rhai() {
    let w = World::new();
    w.lua(
        "watch.lua",
        r#"ListenObjectMessage(self:World(), "Inv.Items", nil, function(items, u)
            local parts = {}
            for _, r in ipairs(u.ranges) do parts[#parts + 1] = r.index .. "+" .. r.count end
            print(#items, u.total, u.prev_total, table.concat(parts, ","), tostring(u.full_reload))
        end)"#,
    );
    w.rhai(
        "watch.rhai",
        r#"ListenObjectMessage(SELF.World(), "Inv.Items", (), |items, u| {
            let parts = [];
            for r in u.ranges { parts.push(`${r.index}+${r.count}`); }
            print(`${items.len()} ${u.total} ${u.prev_total} ${parts} ${u.full_reload}`);
        });"#,
    );
    w.lua("store.lua", &lua_store(10));
    w.printed();
    let key = w.hub.key(KEY).unwrap();
    {
        let mut arr = w.hub.stored_array(key, w.world);
        for row in [7usize, 2] {
            let item = arr.get_mut_struct(row).unwrap();
            *item.get_mut("count").unwrap() = Value::Int(1);
        }
    }
    assert_eq!(
        w.printed(),
        [
            "lua: 10\t10\t10\t3+1,8+1\tfalse",
            "rhai: 10 10 10 [\"2+1\", \"7+1\"] false"
        ]
    );
}

/// "an unchanged table publishes nothing", whichever language stores
/// it: Rust, then Lua (plain tables), then Rhai (maps), the same content —
/// only the first store is heard, by the listeners of all three; a change
/// of one row from Rhai is then one range.
#[test]
fn identical_table_stored_by_each_language_in_turn_publishes_nothing() {
    let w = World::new();
    let updates: Log = Rc::new(RefCell::new(Vec::new()));
    let u2 = updates.clone();
    let _u = w
        .hub
        .listen_update(KEY, w.world, ListenOptions::default(), move |u: &Update| {
            u2.borrow_mut().push(format!(
                "{}/{} {:?}",
                u.total,
                u.prev_total,
                u.ranges()
                    .iter()
                    .map(|r| (r.index, r.count))
                    .collect::<Vec<_>>()
            ))
        })
        .unwrap();
    w.lua(
        "watch.lua",
        r#"ListenRowMessage(self:World(), "Inv.Items", nil, GMP.AllRows, function(row) print(row) end)"#,
    );
    w.rhai(
        "watch.rhai",
        r#"ListenRowMessage(SELF.World(), "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`${row}`));"#,
    );
    let key = w.hub.key(KEY).unwrap();
    let row = |id: i64| {
        Value::structure(
            StructValue::new("Item")
                .with("id", id)
                .with("name", format!("n{id}").as_str())
                .with("count", 0i64),
        )
    };
    w.hub
        .store_values(
            key,
            Source::World(w.world),
            vec![Value::array(vec![row(0), row(1)])],
            false,
            gantry_host::Caller::Unrecorded,
        )
        .unwrap();
    assert_eq!(w.printed(), ["lua: 1", "lua: 2", "rhai: 0", "rhai: 1"]);
    assert_eq!(taken(&updates), ["2/0 [(0, 2)]"]);
    w.lua("same.lua", &lua_store(2));
    w.rhai(
        "same.rhai",
        r#"StoreObjectMessage(SELF.World(), "Inv.Items", [
            #{ __struct: "Item", name: "n0", id: 0, count: 0 },
            #{ __struct: "Item", count: 0, id: 1, name: "n1" },
        ]);"#,
    );
    assert!(w.printed().is_empty());
    assert!(taken(&updates).is_empty());
    w.rhai(
        "change.rhai",
        r#"StoreObjectMessage(SELF.World(), "Inv.Items", [
            #{ __struct: "Item", name: "n0", id: 0, count: 0 },
            #{ __struct: "Item", count: 5, id: 1, name: "n1" },
        ]);"#,
    );
    assert_eq!(w.printed(), ["lua: 2", "rhai: 1"]);
    assert_eq!(taken(&updates), ["2/2 [(1, 1)]"]);
}
