//! Plain tables are structs: a record with named fields and no struct name
//! (what a script's table or map without `__struct` converts to) is named
//! by the hub — inferred from the key where nothing is known, taken as the
//! parameter's struct where one is — and later sends are held to it.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::types::plain::{field_struct_name, param_struct_name, reply_struct_name};
use gantry_host::{
    HookOptions, Hub, HubError, KeyDecl, Kind, ListenOptions, Param, Report, SignatureTable,
    Source, StructDef, StructValue, Type, Value,
};

/// A plain record: `plain(&[("name", "x".into())])`.
fn plain(fields: &[(&str, Value)]) -> Value {
    let mut record = StructValue::plain();
    for (name, value) in fields {
        record.fields.push((Rc::from(*name), value.clone()));
    }
    Value::structure(record)
}

fn reward(name: &str, count: i64) -> Value {
    plain(&[("count", Value::Int(count)), ("name", Value::str(name))])
}

/// What a dynamic listener on `key` heard, each message's values.
fn heard(hub: &Hub, key: &str) -> Rc<RefCell<Vec<Vec<Value>>>> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let sink = log.clone();
    hub.listen_message(key, Source::Global, ListenOptions::default(), move |m| {
        sink.borrow_mut().push(m.args.to_vec())
    })
    .unwrap()
    .detach();
    log
}

fn field_types(table: &SignatureTable, name: &str) -> Vec<(String, String)> {
    table
        .structs
        .get(name)
        .unwrap_or_else(|| panic!("struct {name} recorded"))
        .fields
        .iter()
        .map(|p| (p.name.clone(), p.ty.to_string()))
        .collect()
}

fn mismatch_text(hub: &Hub) -> String {
    let reports = hub.take_reports();
    let found = reports
        .iter()
        .find(|r| matches!(r, Report::Mismatch { .. }))
        .unwrap_or_else(|| panic!("a mismatch reported, got {reports:?}"));
    found.to_string()
}

#[test]
fn a_plain_table_sent_first_is_a_struct_named_after_the_key() {
    let hub = Hub::new();
    let log = heard(&hub, "Quest.Reward");
    hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
        .unwrap();
    let table = hub.table_snapshot();
    let entry = table.get("Quest.Reward").unwrap();
    assert_eq!(entry.params[0].ty, Type::Struct("QuestReward".into()));
    assert_eq!(
        field_types(&table, "QuestReward"),
        [
            ("count".into(), "int".into()),
            ("name".into(), "string".into())
        ]
    );
    let log = log.borrow();
    let got = log[0][0].as_struct().expect("the listener gets a struct");
    assert_eq!(&*got.name, "QuestReward");
    assert_eq!(got.get("name"), Some(&Value::str("gold")));
    assert_eq!(got.get("count"), Some(&Value::Int(2)));
}

#[test]
fn a_later_plain_table_without_a_field_is_refused_naming_key_parameter_and_field() {
    let hub = Hub::new();
    hub.declare(
        "Quest.Reward",
        KeyDecl::event().param("reward", Type::Struct("Prize".into())),
    )
    .unwrap();
    hub.edit_table(|t| {
        t.declare_struct(
            "Prize",
            StructDef {
                fields: vec![
                    Param::new("name", Type::String),
                    Param::new("count", Type::Int),
                ],
                ..Default::default()
            },
        )
    });
    let log = heard(&hub, "Quest.Reward");
    let err = hub
        .send_str(
            "Quest.Reward",
            Source::Global,
            (plain(&[("name", Value::str("gold"))]),),
        )
        .unwrap_err();
    assert!(matches!(err, HubError::Mismatch { .. }), "{err:?}");
    let text = mismatch_text(&hub);
    for part in [
        "`Quest.Reward`",
        "argument 1",
        "`reward`",
        "`count",
        "without",
    ] {
        assert!(text.contains(part), "{part:?} in {text}");
    }
    assert!(log.borrow().is_empty(), "the dispatch is aborted");
}

#[test]
fn a_later_plain_table_missing_a_field_of_an_inferred_struct_is_refused() {
    let hub = Hub::new();
    hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
        .unwrap();
    let log = heard(&hub, "Quest.Reward");
    let sent = hub.send_str(
        "Quest.Reward",
        Source::Global,
        (plain(&[("name", Value::str("gold"))]),),
    );
    assert!(sent.is_err());
    let text = mismatch_text(&hub);
    assert!(
        text.contains("QuestReward") && text.contains("`count"),
        "{text}"
    );
    assert!(log.borrow().is_empty());
}

#[test]
fn a_later_plain_table_with_a_field_of_another_type_is_refused_naming_the_field() {
    let hub = Hub::new();
    hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
        .unwrap();
    let log = heard(&hub, "Quest.Reward");
    let wrong = plain(&[("count", Value::str("two")), ("name", Value::str("gold"))]);
    assert!(
        hub.send_str("Quest.Reward", Source::Global, (wrong,))
            .is_err()
    );
    let text = mismatch_text(&hub);
    assert!(
        text.contains("`Quest.Reward`") && text.contains("field `count` is string"),
        "{text}"
    );
    assert!(log.borrow().is_empty());
}

#[test]
fn a_later_plain_table_with_an_extra_field_extends_the_observed_struct() {
    let hub = Hub::new();
    hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
        .unwrap();
    let log = heard(&hub, "Quest.Reward");
    let more = plain(&[
        ("count", Value::Int(1)),
        ("name", Value::str("gem")),
        ("rare", Value::Bool(true)),
    ]);
    hub.send_str("Quest.Reward", Source::Global, (more,))
        .unwrap();
    assert!(hub.take_reports().is_empty());
    let table = hub.table_snapshot();
    assert_eq!(
        field_types(&table, "QuestReward"),
        [
            ("count".into(), "int".into()),
            ("name".into(), "string".into()),
            ("rare".into(), "bool".into())
        ]
    );
    assert_eq!(log.borrow().len(), 1);
    // From now on the new field is part of the struct: leaving it out is
    // a mismatch.
    assert!(
        hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
            .is_err()
    );
}

fn declared_prize_hub() -> Hub {
    let hub = Hub::new();
    hub.edit_table(|t| {
        t.declare_struct(
            "Prize",
            StructDef {
                fields: vec![
                    Param::new("name", Type::String),
                    Param::new("count", Type::Int),
                ],
                ..Default::default()
            },
        )
    });
    hub.declare(
        "Quest.Reward",
        KeyDecl::event().param("reward", Type::Struct("Prize".into())),
    )
    .unwrap();
    hub
}

#[test]
fn a_plain_table_sent_where_a_declared_struct_is_expected_is_that_struct() {
    let hub = declared_prize_hub();
    let log = heard(&hub, "Quest.Reward");
    hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
        .unwrap();
    let log = log.borrow();
    let got = log[0][0].as_struct().unwrap();
    assert_eq!(&*got.name, "Prize");
    let order: Vec<&str> = got.fields.iter().map(|(f, _)| &**f).collect();
    assert_eq!(order, ["name", "count"], "the declared field order");
    assert!(hub.table().structs.get("QuestReward").is_none());
}

#[test]
fn a_plain_table_with_a_field_a_declared_struct_lacks_is_refused() {
    let hub = declared_prize_hub();
    let more = plain(&[
        ("count", Value::Int(1)),
        ("name", Value::str("gem")),
        ("rare", Value::Bool(true)),
    ]);
    assert!(
        hub.send_str("Quest.Reward", Source::Global, (more,))
            .is_err()
    );
    let text = mismatch_text(&hub);
    assert!(text.contains("`rare`") && text.contains("Prize"), "{text}");
    assert_eq!(hub.table().structs.get("Prize").unwrap().fields.len(), 2);
}

#[test]
fn a_later_parameter_and_a_nested_table_are_named_by_position_and_field() {
    let hub = Hub::new();
    let nested = plain(&[("item", plain(&[("id", Value::Int(7))]))]);
    hub.send_str("Quest.Start", Source::Global, ("q1", nested))
        .unwrap();
    let table = hub.table_snapshot();
    let entry = table.get("Quest.Start").unwrap();
    assert_eq!(entry.params[1].ty, Type::Struct("QuestStartArg2".into()));
    assert_eq!(
        field_types(&table, "QuestStartArg2"),
        [("item".into(), "QuestStartArg2Item".into())]
    );
    assert_eq!(
        field_types(&table, "QuestStartArg2Item"),
        [("id".into(), "int".into())]
    );
}

#[test]
fn an_inferred_name_another_struct_has_takes_a_suffix() {
    let hub = Hub::new();
    hub.edit_table(|t| t.declare_struct("QuestReward", StructDef::default()));
    hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
        .unwrap();
    let table = hub.table_snapshot();
    assert_eq!(
        table.get("Quest.Reward").unwrap().params[0].ty,
        Type::Struct("QuestReward_2".into())
    );
    assert!(table.structs.get("QuestReward").unwrap().fields.is_empty());
}

#[test]
fn inferred_names_are_identifiers_that_never_take_a_stub_class_name() {
    assert_eq!(param_struct_name("quest.reward_item", 0), "QuestRewardItem");
    assert_eq!(param_struct_name("Shop.Buy", 2), "ShopBuyArg3");
    assert_eq!(param_struct_name("2d.pos", 0), "_2dPos");
    assert_eq!(reply_struct_name("Shop.Price", 0), "ShopPriceReply");
    assert_eq!(
        field_struct_name("QuestReward", "item_list"),
        "QuestRewardItemList"
    );
    assert_eq!(field_struct_name("Quest", "é"), "Quest");
    let hub = Hub::new();
    hub.send_str("GMP", Source::Global, (reward("x", 1),))
        .unwrap();
    hub.send_str("Gantry.Object", Source::Global, (reward("x", 1),))
        .unwrap();
    let table = hub.table();
    assert_eq!(table.get("GMP").unwrap().params[0].ty.to_string(), "GMP_2");
    assert_eq!(
        table.get("Gantry.Object").unwrap().params[0].ty.to_string(),
        "GantryObject_2"
    );
}

#[test]
fn a_stored_array_of_plain_rows_is_a_collection_of_an_inferred_struct() {
    let hub = Hub::new();
    let key = hub.key("Inv.Items").unwrap();
    let rows = Value::array(vec![reward("sword", 1), reward("potion", 3)]);
    hub.store(key, Source::Global, (rows,)).unwrap();
    let table = hub.table_snapshot();
    let entry = table.get("Inv.Items").unwrap();
    assert_eq!(entry.kind, Kind::Collection);
    assert_eq!(entry.params[0].ty.to_string(), "array<InvItems>");
    let stored = hub.stored(key, Source::Global).unwrap();
    let rows = stored[0].as_array().unwrap();
    assert!(
        rows.iter()
            .all(|r| &*r.as_struct().unwrap().name == "InvItems")
    );
    drop(table);
    // A later row without a field is refused, naming the row.
    let bad = Value::array(vec![
        reward("sword", 1),
        plain(&[("name", Value::str("x"))]),
    ]);
    assert!(hub.store(key, Source::Global, (bad,)).is_err());
    let text = mismatch_text(&hub);
    assert!(text.contains("row 2") && text.contains("`count"), "{text}");
}

#[test]
fn a_plain_hook_payload_is_a_struct_named_after_the_key() {
    let hub = Hub::new();
    let names = Rc::new(RefCell::new(Vec::new()));
    let sink = names.clone();
    hub.listen_hook("Combat.Damage", HookOptions::new(), move |call| {
        sink.borrow_mut()
            .push(call.payload.as_struct().map(|s| s.name.to_string()))
    })
    .unwrap()
    .detach();
    let mut payload = plain(&[("amount", Value::Int(5)), ("target", Value::str("ann"))]);
    hub.run_hook("Combat.Damage", &mut payload).unwrap();
    assert_eq!(
        hub.table().get("Combat.Damage").unwrap().params[0].ty,
        Type::Struct("CombatDamage".into())
    );
    assert_eq!(*names.borrow(), [Some("CombatDamage".to_owned())]);
}

#[test]
fn saving_and_loading_the_table_keeps_inferred_structs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signatures.json");
    let hub = Hub::new();
    hub.send_str("Quest.Reward", Source::Global, (reward("gold", 2),))
        .unwrap();
    hub.table_snapshot().save(&path).unwrap();
    let loaded = SignatureTable::load(&path).unwrap();
    assert_eq!(loaded, hub.table_snapshot());
    // The loaded table holds later sends to the struct it inferred.
    let again = Hub::with_table(loaded);
    let log = heard(&again, "Quest.Reward");
    again
        .send_str("Quest.Reward", Source::Global, (reward("gem", 1),))
        .unwrap();
    assert_eq!(
        &*log.borrow()[0][0].as_struct().unwrap().name,
        "QuestReward"
    );
    assert!(
        again
            .send_str(
                "Quest.Reward",
                Source::Global,
                (plain(&[("name", Value::str("x"))]),)
            )
            .is_err()
    );
}
