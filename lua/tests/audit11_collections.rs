//! Audit 11: collections from Lua against references `001_…`/`004_…`, for
//! what `collections.rs` and `collection_spec.rs` leave open — the `~`
//! constants as a script sees them, removal reporting past a shrink,
//! default-valued stand-ins field by field, the §11 span counter-examples
//! and the eight-span limit seen through a script's writer, the send path
//! between stores, late replay past the end, and a whole-table listener
//! registered before the key is known. Rows are 1-based in Lua (README).

mod common;

use common::Fixture;
use gantry_host::{KeyDecl, Kind, Param, StructDef, Type};
use gantry_lua::runtime::LuaOptions;

fn inventory() -> Fixture {
    common::inventory(LuaOptions::default())
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

/// 004: `GMP::AllRowsWithRemoval (= ~MAX_int32)` and `GMP::WithRemoval(5)
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

/// 004: "shrinking a table from 10 rows to 3 calls a subscriber that wanted
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

/// 004 "a removed row arrives with a negative row and a default-constructed
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

/// 001 §11, second counter-example, from a script: spans
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

/// 001 §11, first counter-example, from a script: `[{0,5},{5,1}]` and
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

/// 004 limits: "at most 8 spans, merging adjacent or overlapping ones, and
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

/// 001 §3/§10: a plain send between two stores reaches the all-rows
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

/// 004: an unchanged table publishes nothing — from Lua, through the table
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

/// 004: a stored table is replayed to a late listener; "a row widget is not
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

/// 004 "Lifetime is an ordinary GMP listener registered by that shared
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

/// 004 "A lambda ending in const FGMPStoreUpdate& opts into the collection;
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

/// DESIGN checked mode ("a mismatch is reported with key, position,
/// expected/got and call site") with 004 "The element must be a USTRUCT":
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
