//! A table stored from Rust rows (`Hub::store_rows`, read at compiled
//! offsets) reaches Lua and Rhai listeners as the same table any other
//! store makes; an edit from Lua drops the Rust rows, and the Rust visitor
//! then reads the edited values.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::ScriptRuntime;
use gantry_host::{Hub, KeyDecl, Kind, Param, RowPath, StructDef, Type, table_row};
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime};

#[derive(Clone)]
struct Item {
    id: i64,
    name: String,
    count: i64,
}

table_row!(Item { id, name, count });

fn items(n: i64) -> Vec<Item> {
    (0..n)
        .map(|id| Item {
            id,
            name: format!("n{id}"),
            count: id * 10,
        })
        .collect()
}

#[test]
fn rust_rows_reach_lua_and_rhai_and_a_lua_edit_is_what_rust_reads_next() {
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
    let key = hub
        .declare(
            "Inv.Items",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
    let world = hub.create_world();
    let printed = Rc::new(RefCell::new(Vec::<String>::new()));
    let lua = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
    let rhai = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).unwrap();
    let sink = printed.clone();
    lua.on_print(move |l| sink.borrow_mut().push(format!("lua: {l}")));
    let sink = printed.clone();
    rhai.on_print(move |l| sink.borrow_mut().push(format!("rhai: {l}")));
    lua.load_script(
        "rows.lua",
        r#"ListenRowMessage(self:World(), "Inv.Items", nil, GMP.AllRows,
            function(row, item) print(row .. " " .. item.id .. " " .. item.name .. " " .. item.count) end)"#,
        hub.spawn(world).unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    rhai.load_script(
        "table.rhai",
        r#"ListenObjectMessage(SELF.World(), "Inv.Items", (), |items, u| print(`${items.len()} rows, last ${items[items.len() - 1].name}`));"#,
        hub.spawn(world).unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e}"));

    hub.store_rows(key, world, items(3)).unwrap();
    assert_eq!(
        std::mem::take(&mut *printed.borrow_mut()),
        [
            "lua: 1 0 n0 0",
            "lua: 2 1 n1 10",
            "lua: 3 2 n2 20",
            "rhai: 3 rows, last n2"
        ]
    );
    let read = |hub: &Hub| {
        hub.read_table(key, world, |view| {
            let seen = RefCell::new(Vec::new());
            let path = view
                .for_each(|_row: i32, id: i64, name: &str, count: i64| {
                    seen.borrow_mut().push(format!("{id} {name} {count}"))
                })
                .unwrap();
            (seen.into_inner(), path)
        })
        .unwrap()
    };
    let (rows, path) = read(&hub);
    assert_eq!(path, RowPath::Compiled);
    assert_eq!(rows, ["0 n0 0", "1 n1 10", "2 n2 20"]);

    // Lua's row 2 is position 1.
    lua.load_script(
        "edit.lua",
        r#"do local items <close> = GMP.StoredArray(self:World(), "Inv.Items")
           items:GetMutable(2).count = 99 end"#,
        hub.spawn(world).unwrap(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        std::mem::take(&mut *printed.borrow_mut()),
        ["lua: 2 1 n1 99", "rhai: 3 rows, last n2"]
    );
    let (rows, path) = read(&hub);
    assert_eq!(path, RowPath::Fast);
    assert_eq!(rows, ["0 n0 0", "1 n1 99", "2 n2 20"]);
}
