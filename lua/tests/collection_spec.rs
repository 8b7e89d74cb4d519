//! Collections from Lua, audited against references `001_…`/`004_…` and
//! issue 4: the send (transient) path from a script, and a writer length
//! no table can hold (an error, never a crash).

mod common;

use common::Fixture;
use gantry_host::Source;
use gantry_lua::runtime::LuaOptions;

/// A fixture whose table declares `Inv.Items` as a collection of `Item`.
fn inventory() -> Fixture {
    common::inventory(LuaOptions::default())
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
    let f = common::inventory(LuaOptions {
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
    let f = common::inventory(LuaOptions {
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
