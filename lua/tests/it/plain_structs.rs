//! Plain tables are structs in Lua: a table with named fields and no
//! `__struct` is a struct the hub names (after the key where nothing is
//! known, the declared one where there is), checked like any struct, in
//! sends, stored tables, row and slot listeners and the writer.

use gantry_host::Type;
use gantry_lua::runtime::LuaOptions;

use crate::support::Fixture;

#[test]
fn a_plain_table_sent_from_lua_is_a_struct_named_after_the_key() {
    let f = Fixture::new();
    f.load(
        "quest.lua",
        r#"
        ListenMessage("Quest.Reward", nil, function(reward)
            print(reward.name, reward.count, reward.__struct)
        end)
        NotifyMessage("Quest.Reward", { name = "gold", count = 2 })
        "#,
    );
    assert_eq!(f.printed(), ["gold\t2\tQuestReward"]);
    assert!(f.failures().is_empty());
    let table = f.hub.table();
    assert_eq!(
        table.get("Quest.Reward").unwrap().params[0].ty,
        Type::Struct("QuestReward".into())
    );
}

#[test]
fn a_plain_table_missing_a_field_aborts_the_send_naming_the_field() {
    let f = Fixture::new();
    f.load(
        "quest.lua",
        r#"
        ListenMessage("Quest.Reward", nil, function(reward) print("heard", reward.name) end)
        NotifyMessage("Quest.Reward", { name = "gold", count = 2 })
        local ok, err = pcall(NotifyMessage, "Quest.Reward", { name = "gem" })
        print(ok, err)
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed[0], "heard\tgold");
    assert_eq!(
        printed.len(),
        2,
        "the second send reaches nobody: {printed:?}"
    );
    assert!(
        printed[1].starts_with("false") && printed[1].contains("`count"),
        "{printed:?}"
    );
    let failures = f.failures();
    assert!(
        failures
            .iter()
            .any(|r| r.contains("`Quest.Reward` argument 1") && r.contains("without `count`")),
        "{failures:?}"
    );
}

#[test]
fn a_plain_table_with_a_field_of_another_type_is_refused() {
    let f = Fixture::new();
    f.load(
        "quest.lua",
        r#"
        NotifyMessage("Quest.Reward", { name = "gold", count = 2 })
        print(pcall(NotifyMessage, "Quest.Reward", { name = "gem", count = "many" }))
        "#,
    );
    let printed = f.printed();
    assert!(
        printed[0].starts_with("false") && printed[0].contains("field `count` is string"),
        "{printed:?}"
    );
}

#[test]
fn a_plain_table_with_a_new_field_extends_the_inferred_struct() {
    let f = Fixture::new();
    f.load(
        "quest.lua",
        r#"
        ListenMessage("Quest.Reward", nil, function(r) print(r.name, r.count, r.rare) end)
        NotifyMessage("Quest.Reward", { name = "gold", count = 2 })
        NotifyMessage("Quest.Reward", { name = "gem", count = 1, rare = true })
        "#,
    );
    assert_eq!(f.printed(), ["gold\t2\tnil", "gem\t1\ttrue"]);
    let fields: Vec<String> = f
        .hub
        .table()
        .structs
        .get("QuestReward")
        .unwrap()
        .fields
        .iter()
        .map(|p| format!("{}: {}", p.name, p.ty))
        .collect();
    assert_eq!(fields, ["count: int", "name: string", "rare: bool"]);
}

#[test]
fn plain_rows_make_a_collection_heard_by_row_and_slot_listeners() {
    let f = Fixture::new();
    f.load(
        "inv.lua",
        r#"
        StoreObjectMessage(self, "Inv.Items", {
            { name = "sword", count = 1 },
            { name = "potion", count = 2 },
        })
        ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
            print("row", row, item.name, item.count)
        end)
        ListenRowMessage(self, "Inv.Items", nil, 2, function(row, item)
            print("slot", row, item.name, item.count)
        end)
        do
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:GetMutable(2).count = 5
            items:Add({ name = "arrow", count = 20 })
        end
        "#,
    );
    let printed = f.printed();
    assert_eq!(
        printed,
        [
            "row\t1\tsword\t1",
            "row\t2\tpotion\t2",
            "slot\t2\tpotion\t2",
            "row\t2\tpotion\t5",
            "row\t3\tarrow\t20",
            "slot\t2\tpotion\t5",
        ]
    );
    assert!(f.failures().is_empty());
    assert_eq!(
        f.hub.table().get("Inv.Items").unwrap().params[0]
            .ty
            .to_string(),
        "array<InvItems>"
    );
}

#[test]
fn the_writer_takes_plain_rows_as_the_declared_struct_and_new_fields_extend_an_observed_one() {
    // Declared: `Inv.Items` carries `Item` rows.
    let f = crate::support::inventory(LuaOptions::default());
    f.load(
        "inv.lua",
        r#"
        do
            local items <close> = GMP.StoredArray(self, "Inv.Items")
            items:Add({ name = "sword", count = 1 })
        end
        ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
            print(row, item.__struct, item.name, item.count)
        end)
        "#,
    );
    assert_eq!(f.printed(), ["1\tItem\tsword\t1"]);
    assert!(f.failures().is_empty());

    // Observed: a row with a new field grows the inferred struct.
    let f = Fixture::new();
    f.load(
        "bag.lua",
        r#"
        StoreObjectMessage(self, "Bag.Items", { { name = "rope" } })
        do
            local items <close> = GMP.StoredArray(self, "Bag.Items")
            items:Add({ name = "lamp", lit = true })
        end
        ListenRowMessage(self, "Bag.Items", nil, GMP.AllRows, function(row, item)
            print(row, item.name, item.lit)
        end)
        "#,
    );
    assert_eq!(f.printed(), ["1\trope\tnil", "2\tlamp\ttrue"]);
    assert!(f.failures().is_empty());
    let fields: Vec<String> = f
        .hub
        .table()
        .structs
        .get("BagItems")
        .unwrap()
        .fields
        .iter()
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(fields, ["name", "lit"]);
}
