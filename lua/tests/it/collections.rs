//! Collections from Lua: row listeners (1-based, the `~` rule on Lua's row
//! numbers), slots, removal and its default-valued stand-ins, the
//! `GMP.StoredArray` writer (its spans and the eight-span limit, a length no
//! table can hold), the send path, late replay, the whole-table listener
//! with its update — and both directions with Rust.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::collection::{ALL_ROWS, Update};
use gantry_host::face::ScriptRuntime;
use gantry_host::{KeyDecl, Kind, ListenOptions, Param, Serde, Source, StructDef, Type};
use gantry_lua::runtime::LuaOptions;

use crate::support::{Fixture, Item};

fn item(name: &str, count: i64) -> Item {
    Item {
        name: name.into(),
        count,
    }
}

/// A fixture whose table declares `Inv.Items` as a collection of `Item`.
fn inventory() -> Fixture {
    crate::support::inventory(LuaOptions::default())
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
fn a_writer_never_closed_is_reported_at_the_line_that_opened_it_and_its_edits_dropped() {
    let f = inventory();
    let (_, object) = f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenObjectMessage(self, "Inv.Items", nil, function(items) print("published", #items) end)
            function forget()
              local items = GMP.StoredArray(self, "Inv.Items")
              items:Add({{ name = "lost", count = 1 }})
            end
            ListenMessage("Forget", nil, forget)
            "#
        ),
    );
    assert_eq!(f.printed(), ["published\t3"]);
    f.hub
        .send(f.hub.key("Forget").unwrap(), Source::Global, ())
        .unwrap();
    // Nothing is told until the collector frees the writer.
    assert!(f.rt.take_errors().is_empty());
    f.rt.collect_garbage().unwrap();
    let errors: Vec<String> = f.rt.take_errors().iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        [
            "inv.lua:10: StoredArray `Inv.Items` opened here was never closed, so its edits \
          were dropped when it was collected: declare it \
          `local items <close> = GMP.StoredArray(...)` or call `items:Commit()`"
        ]
    );
    // Dropped: neither published nor kept.
    assert!(f.printed().is_empty());
    let stored = f
        .hub
        .stored(f.hub.key("Inv.Items").unwrap(), Source::Object(object))
        .unwrap();
    let gantry_host::Value::Array(rows) = &stored[0] else {
        panic!("{stored:?}");
    };
    assert_eq!(rows.len(), 3);
}

#[test]
fn set_replaces_a_row_counted_from_one_and_publishes_that_row() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
              print(row, item.name, item.count)
            end)
            print("--")
            do
              local items <close> = GMP.StoredArray(self, "Inv.Items")
              items:Set(2, {{ __struct = "Item", name = "elixir", count = 1 }})
              print(items:Num(), items:Get(2).name)
            end
            "#
        ),
    );
    assert_eq!(after_marker(f.printed()), ["3\telixir", "2\telixir\t1"]);
}

#[test]
fn set_after_get_mutable_of_the_same_row_keeps_the_new_row() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            do
              local items <close> = GMP.StoredArray(self, "Inv.Items")
              local row = items:GetMutable(1)
              row.count = 99
              items:Set(1, {{ __struct = "Item", name = "axe", count = 5 }})
              print(items:Get(1).name, items:Get(1).count)
            end
            "#
        ),
    );
    assert_eq!(f.printed(), ["axe\t5"]);
}

#[test]
fn set_refuses_a_row_that_is_not_there_or_does_not_fit_at_its_line() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            print(pcall(items.Set, items, 4, {{ __struct = "Item", name = "x", count = 1 }}))
            print(pcall(items.Set, items, 0, {{ __struct = "Item", name = "x", count = 1 }}))
            print(pcall(items.Set, items, 1, {{ __struct = "Item", name = "x", count = "many" }}))
            print(items:Get(1).name)
            "#
        ),
    );
    let printed = f.printed();
    assert!(
        printed[0].contains(
            "StoredArray `Inv.Items`:Set(4): no such row (the table has 3; rows count from 1)"
        ),
        "{printed:?}"
    );
    assert!(printed[1].contains(":Set(0): no such row"), "{printed:?}");
    assert!(
        printed[2].contains("StoredArray `Inv.Items` Set(1)") && printed[2].contains("count"),
        "{printed:?}"
    );
    assert_eq!(printed[3], "sword");
}

#[test]
fn set_past_the_hub_memory_limit_is_refused_and_the_row_kept() {
    let f = crate::support::inventory(LuaOptions {
        hub_memory_limit: Some(1 << 20),
        ..LuaOptions::default()
    });
    f.load(
        "inv.lua",
        &format!(
            r#"{STORE_THREE}
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            local big = string.rep("x", 2 << 20)
            print(pcall(items.Set, items, 1, {{ __struct = "Item", name = big, count = 1 }}))
            print(items:Get(1).name)
            "#
        ),
    );
    let printed = f.printed();
    assert!(
        printed[0].starts_with("false") && printed[0].contains("hub memory limit"),
        "{printed:?}"
    );
    assert_eq!(printed[1], "sword");
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

#[test]
fn transient_send_reaches_all_rows_listeners_only_as_a_full_reload_and_keeps_nothing() {
    let f = inventory();
    let (_, object) = f.load(
        "radar.lua",
        r#"
        ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item, update)
            print("all", row, item.name, update.total, update.full_reload)
        end)
        ListenRowMessage(self, "Inv.Items", nil, 1, function(row, item)
            print("slot", row)
        end)
        ListenRowMessage(self, "Inv.Items", nil, GMP.WithRemoval(2), function(row, item)
            print("slot~", row)
        end)
        NotifyObjectMessage(self, "Inv.Items", {
            { __struct = "Item", name = "blip", count = 1 },
            { __struct = "Item", name = "dot", count = 2 },
        })
        ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
            print("late", row)
        end)
        "#,
    );
    assert_eq!(
        f.printed(),
        ["all\t1\tblip\t2\ttrue", "all\t2\tdot\t2\ttrue"],
        "slot listeners never fire on a send, and a late listener gets nothing"
    );
    let key = f.hub.key("Inv.Items").unwrap();
    assert!(f.hub.stored(key, Source::Object(object)).is_none());
    assert!(f.failures().is_empty());
}

/// `SetNum(n)` for each `n`, each in its own writer: whether it failed and
/// whether the error contains `expected`; then the table's length.
const GROW: &str = r#"
StoreObjectMessage(self, "Inv.Items", { { __struct = "Item", name = "sword", count = 1 } })
function grow(sizes, expected)
    for _, n in ipairs(sizes) do
        local ok, err = pcall(function()
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:SetNum(n)
        end)
        print(ok, string.find(tostring(err), expected, 1, true) ~= nil,
              string.find(tostring(err), "Inv.Items", 1, true) ~= nil)
    end
    local items <close> = GMP.StoredArray(self, "Inv.Items")
    print(items:Num())
end
"#;

#[test]
fn set_num_past_what_a_table_can_hold_is_an_error_not_a_crash() {
    let f = crate::support::inventory(LuaOptions {
        max_table_rows: None,
        ..LuaOptions::default()
    });
    f.load(
        "inv.lua",
        &format!("{GROW}\ngrow({{ 1 << 40, 1 << 62, math.maxinteger }}, 'no table can hold')"),
    );
    assert_eq!(
        f.printed(),
        [
            "false\ttrue\ttrue",
            "false\ttrue\ttrue",
            "false\ttrue\ttrue",
            "1"
        ]
    );
}

#[test]
fn set_num_past_the_runtimes_max_table_rows_is_an_error_naming_the_key() {
    let f = crate::support::inventory(LuaOptions {
        max_table_rows: Some(1_000),
        ..LuaOptions::default()
    });
    f.load(
        "inv.lua",
        &format!("{GROW}\ngrow({{ 1001, 1 << 40 }}, 'max_table_rows')\ngrow({{ 1000 }}, '')"),
    );
    assert_eq!(
        f.printed(),
        [
            "false\ttrue\ttrue",
            "false\ttrue\ttrue",
            "1",
            "true\ttrue\tfalse",
            "1000"
        ]
    );
}

/// `fill(n)`: the table of `n` items `r1..rn` (counts 1..n), and `store(n)`.
const FILL: &str = r#"
function fill(n)
    local rows = {}
    for i = 1, n do rows[i] = { name = "r" .. i, count = i } end
    return rows
end
function store(n) StoreObjectMessage(self, "Inv.Items", fill(n)) end
"#;

/// The printed lines after the `--` marker (what the listeners heard after
/// the replays).
fn after_marker(lines: Vec<String>) -> Vec<String> {
    let at = lines
        .iter()
        .position(|l| l == "--")
        .unwrap_or_else(|| panic!("no marker in {lines:?}"));
    lines[at + 1..].to_vec()
}

/// `GMP::AllRowsWithRemoval (= ~MAX_int32)` and `GMP::WithRemoval(5)
/// (= ~5)` — one `~` rule, so `WithRemoval(AllRows)` is `AllRowsWithRemoval`.
#[test]
fn with_removal_of_all_rows_is_all_rows_with_removal_in_lua() {
    let f = inventory();
    f.load(
        "c.lua",
        r#"
        print(GMP.AllRows, math.type(GMP.AllRows), GMP.AllRowsWithRemoval, GMP.AllRowsWithRemoval == ~GMP.AllRows)
        print(pcall(GMP.WithRemoval, GMP.AllRows))
        "#,
    );
    assert_eq!(
        f.printed(),
        [
            "2147483647\tinteger\t-2147483648\ttrue",
            "true\t-2147483648",
        ]
    );
}

/// The other side of the one `~` rule: rows count from 1, so 0, a
/// negative row, a fractional number or a non-number is an error naming
/// the call at the script's line (never a panic); an integral float is its
/// integer.
#[test]
fn with_removal_refuses_what_is_not_a_row_in_lua() {
    let f = inventory();
    f.load(
        "c.lua",
        r#"
        for _, n in ipairs({0, -3, 1.5, "5"}) do print(pcall(GMP.WithRemoval, n)) end
        print(GMP.WithRemoval(5.0), GMP.WithRemoval(5))
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 5, "{printed:?}");
    for line in &printed[..4] {
        assert!(
            line.starts_with("false") && line.contains("c.lua:2: GMP.WithRemoval"),
            "{line}"
        );
    }
    assert_eq!(printed[4], "-6\t-6");
}

/// "shrinking a table from 10 rows to 3 calls a subscriber that wanted
/// [removals] 7 times"; each arrives as `~row` with a default item, an
/// all-rows listener without removal is not called, and the whole-table
/// update reads 3 of 10 with the range widened to the old tail.
#[test]
fn shrinking_10_to_3_calls_an_all_rows_with_removal_listener_7_times_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(10)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRowsWithRemoval, function(row, item)
                print("rm", row, item.name, item.count)
            end)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row) print("all", row) end)
            ListenObjectMessage(self, "Inv.Items", nil, function(items, u)
                print("table", #items, u.total, u.prev_total, #u.ranges, u.ranges[1] and u.ranges[1].index, u.ranges[1] and u.ranges[1].count)
            end)
            print("--")
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:SetNum(3)
            "#
        ),
    );
    let mut expected: Vec<String> = (4..=10).map(|r| format!("rm\t{}\t\t0", !r)).collect();
    expected.push("table\t3\t3\t10\t1\t4\t7".into());
    assert_eq!(after_marker(f.printed()), expected);
    assert!(f.failures().is_empty());
}

/// "a removed row arrives with a negative row and a default-constructed
/// item": every declared member is present at its type's default — int 0,
/// float 0.0, false, "", an empty array, a nested struct of defaults, no
/// object — and the item still names its struct.
#[test]
fn removed_row_stand_in_has_every_declared_field_at_its_default_in_lua() {
    let f = Fixture::new();
    f.hub.edit_table(|t| {
        t.declare_struct(
            "Inner",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![Param::new("x", Type::Int)],
            },
        );
        t.declare_struct(
            "Rich",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![
                    Param::new("i", Type::Int),
                    Param::new("f", Type::Float),
                    Param::new("b", Type::Bool),
                    Param::new("s", Type::String),
                    Param::new("list", Type::Array(Box::new(Type::Int))),
                    Param::new("inner", Type::Struct("Inner".into())),
                    Param::new("o", Type::Object),
                ],
            },
        );
    });
    f.hub
        .declare(
            "Rich.Rows",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("rows", Type::Array(Box::new(Type::Struct("Rich".into())))),
        )
        .unwrap();
    f.load(
        "rich.lua",
        r#"
        local function row(n)
            return { i = n, f = n + 0.5, b = true, s = "s" .. n, list = { n, n }, inner = { x = n }, o = self }
        end
        StoreObjectMessage(self, "Rich.Rows", { row(1), row(2) })
        ListenRowMessage(self, "Rich.Rows", nil, GMP.WithRemoval(2), function(r, item)
            print(r, item.__struct, math.type(item.i), item.i, math.type(item.f), item.f,
                  tostring(item.b), "[" .. item.s .. "]", type(item.list), #item.list,
                  item.inner.__struct, item.inner.x, tostring(item.o))
        end)
        print("--")
        local rows <close> = GMP.StoredArray(self, "Rich.Rows")
        rows:RemoveAt(2)
        "#,
    );
    assert_eq!(
        after_marker(f.printed()),
        ["-3\tRich\tinteger\t0\tfloat\t0.0\tfalse\t[]\ttable\t0\tInner\t0\tnil"]
    );
    assert!(f.failures().is_empty(), "{:?}", f.failures());
}

/// The span merge's second counter-example, from a script: spans
/// `[{0,6},{6,1},{20,1},{7,13}]` (Lua rows 1-6, 7, 21, 8-20) converge to one
/// span; each row is visited once, ascending.
#[test]
fn span_merge_backward_sweep_counter_example_visits_each_row_once_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(25)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row) print(row) end)
            ListenObjectMessage(self, "Inv.Items", nil, function(items, u)
                local parts = {{}}
                for _, r in ipairs(u.ranges) do parts[#parts + 1] = r.index .. "+" .. r.count end
                print("ranges", table.concat(parts, ","), tostring(u.full_reload))
            end)
            print("--")
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            for i = 1, 6 do items:GetMutable(i).count = 100 end
            items:GetMutable(7).count = 100
            items:GetMutable(21).count = 100
            for i = 8, 20 do items:GetMutable(i).count = 100 end
            "#
        ),
    );
    let mut expected: Vec<String> = (1..=21).map(|r| r.to_string()).collect();
    expected.push("ranges\t1+21\tfalse".into());
    assert_eq!(after_marker(f.printed()), expected);
}

/// The span merge's first counter-example, from a script: `[{0,5},{5,1}]` and
/// another `(5,1)` (Lua rows 1-5, an `Add`, then the added row again) is one
/// span; the new row is visited once, not twice.
#[test]
fn span_merge_adjacent_then_bridging_counter_example_visits_each_row_once_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(5)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item) print(row, item.name) end)
            ListenObjectMessage(self, "Inv.Items", nil, function(items, u)
                print("update", u.total, u.prev_total, #u.ranges, u.ranges[1].index, u.ranges[1].count)
            end)
            print("--")
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            for i = 1, 5 do items:GetMutable(i).count = 0 end
            items:Add({{ name = "new", count = 1 }})
            items:GetMutable(6).count = 2
            "#
        ),
    );
    let mut expected: Vec<String> = (1..=5).map(|r| format!("{r}\tr{r}")).collect();
    expected.push("6\tnew".into());
    expected.push("update\t6\t5\t1\t1\t6".into());
    assert_eq!(after_marker(f.printed()), expected);
}

/// "at most 8 spans, merging adjacent or overlapping ones, and
/// degrades to reload everything past that". Eight disjoint spans from a
/// script's writer are eight ranges; nine are a full reload, which every
/// row and every live slot (even one no write touched) hears.
#[test]
fn eight_disjoint_spans_are_eight_ranges_and_nine_a_full_reload_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(20)
            local heard = 0
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function() heard = heard + 1 end)
            ListenRowMessage(self, "Inv.Items", nil, 2, function(row) print("slot", row) end)
            ListenObjectMessage(self, "Inv.Items", nil, function(items, u)
                print("update", #u.ranges, tostring(u.full_reload), heard)
            end)
            function mark(n)
                heard = 0
                local items <close> = GMP.StoredArray(self, "Inv.Items")
                for k = 1, n do items:GetMutable(2 * k + 1).count = 0 end
            end
            print("--")
            mark(8)
            print("rows", heard)
            mark(9)
            print("rows", heard)
            "#
        ),
    );
    assert_eq!(
        after_marker(f.printed()),
        [
            "update\t8\tfalse\t8",
            "rows\t8",
            "slot\t2",
            "update\t0\ttrue\t20",
            "rows\t20",
        ]
    );
}

/// a plain send between two stores reaches the all-rows
/// listener as a full reload of the sent rows (no removal told for the
/// rows it lacks), and the store's previous table is untouched — the same
/// table stored again publishes nothing, one row fewer tells one removal.
#[test]
fn send_between_stores_is_a_full_reload_and_does_not_disturb_the_diff_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(5)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRowsWithRemoval, function(row, item, u)
                print(row, item.name, tostring(u.full_reload), u.total)
            end)
            print("--")
            NotifyObjectMessage(self, "Inv.Items", {{ {{ name = "x", count = 1 }}, {{ name = "y", count = 2 }} }})
            print("same")
            store(5)
            print("fewer")
            StoreObjectMessage(self, "Inv.Items", fill(4))
            "#
        ),
    );
    assert_eq!(
        after_marker(f.printed()),
        [
            "1\tx\ttrue\t2",
            "2\ty\ttrue\t2",
            "same",
            "fewer",
            "-6\t\tfalse\t4",
        ]
    );
}

/// an unchanged table publishes nothing — from Lua, through the table
/// conversion, to every collection listener form a script can hold.
#[test]
fn identical_store_from_lua_publishes_nothing_to_any_script_collection_listener() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(3)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row) print("all", row) end)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRowsWithRemoval, function(row) print("all~", row) end)
            ListenRowMessage(self, "Inv.Items", nil, 2, function(row) print("slot", row) end)
            ListenRowMessage(self, "Inv.Items", nil, GMP.WithRemoval(3), function(row) print("slot~", row) end)
            ListenObjectMessage(self, "Inv.Items", nil, function(items, u) print("table", #items) end)
            print("--")
            store(3)
            StoreObjectMessage(self, "Inv.Items", {{
                {{ __struct = "Item", count = 1, name = "r1" }},
                {{ name = "r2", count = 2 }},
                {{ count = 3, name = "r3" }},
            }})
            "#
        ),
    );
    assert!(after_marker(f.printed()).is_empty());
}

/// a stored table is replayed to a late listener; "a row widget is not
/// called once its position is past the end" (with or without removal: the
/// position never existed for it), a late removal listener is told no
/// removal, and growing the table back calls the slots with default rows.
#[test]
fn late_replay_skips_slots_past_the_end_and_growing_back_calls_them_with_defaults_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(3)
            ListenRowMessage(self, "Inv.Items", nil, 5, function(row, item) print("slot", row, item.name, item.count) end)
            ListenRowMessage(self, "Inv.Items", nil, GMP.WithRemoval(5), function(row) print("slot~", row) end)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRowsWithRemoval, function(row, item, u)
                print("all~", row, item.name, u.total, u.prev_total)
            end)
            print("--")
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:SetNum(5)
            "#
        ),
    );
    let printed = f.printed();
    let at = printed.iter().position(|l| l == "--").unwrap();
    assert_eq!(
        printed[..at],
        [
            "all~\t1\tr1\t3\t0",
            "all~\t2\tr2\t3\t0",
            "all~\t3\tr3\t3\t0"
        ],
        "replay: no slot past the end, no removal"
    );
    assert_eq!(
        printed[at + 1..],
        [
            "slot\t5\t\t0",
            "slot~\t5",
            "all~\t4\t\t5\t3",
            "all~\t5\t\t5\t3"
        ]
    );
}

/// "Lifetime is an ordinary GMP listener registered by that shared
/// entry": `times` counts the listener's calls per dispatch (a replay of
/// three rows is one call), then it is gone.
#[test]
fn row_listener_times_counts_dispatches_not_rows_in_lua() {
    let f = inventory();
    f.load(
        "inv.lua",
        &format!(
            r#"{FILL}
            store(3)
            ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row) print(row) end, {{ times = 1 }})
            print("--")
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:GetMutable(2).count = 9
            "#
        ),
    );
    assert_eq!(f.printed(), ["1", "2", "3", "--"]);
}

/// "A lambda ending in const FGMPStoreUpdate& opts into the collection;
/// ... a collection is recognised from the stored parameter, not from a new
/// entry point". A Lua whole-table listener taking one parameter more than
/// the table (`function(items, update)`) gets the update even when it was
/// registered before anything told the hub the key carries a table.
#[test]
fn whole_table_listener_registered_before_the_key_is_known_gets_the_update_in_lua() {
    let f = Fixture::new();
    f.load(
        "radar.lua",
        r#"
        ListenObjectMessage(self, "Radar.Blips", nil, function(items, update)
            print(#items, type(update), update and update.total, update and tostring(update.full_reload))
        end)
        StoreObjectMessage(self, "Radar.Blips", {
            { __struct = "Blip", x = 1 },
            { __struct = "Blip", x = 2 },
        })
        "#,
    );
    // A first table, to a listener there all along: its rows as one range
    // (as for a key known to carry a table), not a reload.
    assert_eq!(f.printed(), ["2\ttable\t2\tfalse"]);
}

/// checked mode ("a mismatch is reported with key, position,
/// expected/got and call site") with "The element must be a USTRUCT":
/// a row listen on a key declared to carry one int is refused (an error or
/// a rejected-listen report naming the key), as the Rust row listen is —
/// not accepted to stay silent forever.
#[test]
fn row_listen_on_a_key_declared_without_a_table_is_refused_in_lua() {
    let f = Fixture::new();
    f.hub
        .declare("Player.HP", KeyDecl::event().param("hp", Type::Int))
        .unwrap();
    let rust = f.hub.listen_rows(
        "Player.HP",
        gantry_host::Source::Global,
        gantry_host::ALL_ROWS,
        gantry_host::ListenOptions::default(),
        |_row: i32, _id: i64| {},
    );
    assert!(rust.is_err(), "the Rust row listen is refused");
    f.hub.take_reports();
    f.load(
        "hp.lua",
        r#"print(pcall(ListenRowMessage, self, "Player.HP", nil, GMP.AllRows, function() end))"#,
    );
    let printed = f.printed();
    let reports = f.hub.take_reports();
    let errored = printed[0].starts_with("false") && printed[0].contains("Player.HP");
    let reported = reports.iter().any(
        |r| matches!(r, gantry_host::Report::ListenRejected { key, .. } if key == "Player.HP"),
    );
    assert!(
        errored || reported,
        "printed {printed:?}, reports {reports:?}"
    );
}

#[test]
fn an_empty_table_stored_reaches_whole_table_listeners_including_the_initial_one() {
    let f = inventory();
    f.load(
        "inv.lua",
        r#"
        ListenObjectMessage(self, "Inv.Items", nil, function(items, update)
            print("early", #items, update.total, update.prev_total)
        end)
        StoreObjectMessage(self, "Inv.Items", {})
        ListenObjectMessage(self, "Inv.Items", nil, function(items, update)
            print("late", #items, update.total)
        end)
        "#,
    );
    assert_eq!(f.printed(), ["early\t0\t0\t0", "late\t0\t0"]);
    assert!(f.failures().is_empty(), "{:?}", f.failures());
}

/// A modder who declares nothing and stores an empty list first: a
/// whole-table listener registered after it still hears the table and its
/// update, the empty one replayed and every later one.
#[test]
fn a_whole_table_listener_after_an_empty_first_store_of_an_undeclared_key_hears_tables() {
    let f = Fixture::new();
    f.load(
        "radar.lua",
        r#"
        StoreObjectMessage(self, "Radar.Blips", {})
        ListenObjectMessage(self, "Radar.Blips", nil, function(items, update)
            print(#items, update and update.total)
        end)
        StoreObjectMessage(self, "Radar.Blips", { { __struct = "Blip", x = 1 } })
        "#,
    );
    assert_eq!(f.printed(), ["0\t0", "1\t1"]);
    assert!(f.failures().is_empty(), "{:?}", f.failures());
}
