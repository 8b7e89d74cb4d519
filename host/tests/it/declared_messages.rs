//! Keys declared by their Rust type (`#[derive(Message)]`, `#[derive(Struct)]`,
//! `table_row!`): the table shows the names, types and docs written once on
//! the struct; sends and listeners take the struct; the structs a message
//! carries declare themselves.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{
    Hub, HubError, Kind, ObjectId, Origin, Param, Role, Source, StructValue, Type, Value,
};

/// A player got hurt.
#[derive(gantry_host::Message, Debug, Clone, PartialEq)]
#[message(key = "Player.Hurt")]
struct Hurt {
    /// Damage dealt, after armour.
    dmg: f64,
    /// Who dealt it.
    causer: ObjectId,
}

/// An item in an inventory.
#[derive(gantry_host::Struct, Debug, Clone, PartialEq)]
struct Item {
    id: i64,
    name: String,
    tags: Vec<String>,
}

/// Someone picked items up.
#[derive(gantry_host::Message, Debug, Clone, PartialEq)]
#[message(key = "Inv.PickedUp", kind = "store")]
struct PickedUp {
    items: Vec<Item>,
    total: i64,
}

/// A shop's price for an item.
#[derive(gantry_host::Message)]
#[message(key = "Shop.Price", kind = "request", response(price = f64, known = bool))]
struct Price(#[gantry(name = "item")] String);

fn world_object(hub: &Hub) -> ObjectId {
    let world = hub.create_world();
    hub.spawn(world).unwrap()
}

#[test]
fn a_derived_message_declares_its_key_with_names_types_and_docs() {
    let hub = Hub::new();
    hub.declare_message::<Hurt>().unwrap();
    let table = hub.table();
    let entry = &table.keys["Player.Hurt"];
    assert_eq!(entry.kind, Kind::Event);
    assert_eq!(entry.origin, Origin::Declared);
    assert_eq!(entry.doc, "A player got hurt.");
    assert_eq!(
        entry.params,
        vec![
            Param::new("dmg", Type::Float),
            Param::new("causer", Type::Object)
        ]
    );
    let site = entry.declaration_site().expect("a declaring site");
    assert!(site.file.ends_with("declared_messages.rs"), "{site}");
    assert_eq!(site.role, Role::Declare);
    assert_eq!(
        <Hurt as gantry_host::MessageType>::PARAM_DOCS,
        &[
            ("dmg", "Damage dealt, after armour."),
            ("causer", "Who dealt it.")
        ]
    );
}

#[test]
fn a_derived_message_is_sent_and_heard_as_its_struct() {
    let hub = Hub::new();
    let hurt = hub.declare_message::<Hurt>().unwrap();
    let player = world_object(&hub);
    let heard = Rc::new(RefCell::new(Vec::new()));
    let into = heard.clone();
    let _listening = hurt
        .listen(&hub, player, move |h: Hurt| into.borrow_mut().push(h))
        .unwrap();
    let sent = Hurt {
        dmg: 12.5,
        causer: player,
    };
    let delivered = hurt.send(&hub, player, sent.clone()).unwrap();
    assert_eq!(delivered.listeners, 1);
    assert_eq!(*heard.borrow(), vec![sent]);
}

#[test]
fn a_plain_listener_of_the_fields_hears_a_derived_send() {
    let hub = Hub::new();
    let hurt = hub.declare_message::<Hurt>().unwrap();
    let heard = Rc::new(RefCell::new(Vec::new()));
    let into = heard.clone();
    let _listening = hub
        .listen("Player.Hurt", Source::Global, move |dmg: f64| {
            into.borrow_mut().push(dmg)
        })
        .unwrap();
    let causer = world_object(&hub);
    hurt.send(&hub, Source::Global, Hurt { dmg: 3.0, causer })
        .unwrap();
    assert_eq!(*heard.borrow(), vec![3.0]);
}

#[test]
fn a_send_by_text_that_contradicts_the_derived_declaration_is_refused() {
    let hub = Hub::new();
    hub.declare_message::<Hurt>().unwrap();
    let refused = hub.send_str("Player.Hurt", Source::Global, ("a lot", 5i64));
    match refused {
        Err(HubError::Mismatch { key, mismatch }) => {
            assert_eq!(key, "Player.Hurt");
            assert_eq!(mismatch.position, 0);
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[test]
fn a_message_with_a_struct_field_declares_that_struct_too() {
    let hub = Hub::new();
    hub.declare_message::<PickedUp>().unwrap();
    let table = hub.table();
    let entry = &table.keys["Inv.PickedUp"];
    assert_eq!(entry.kind, Kind::Store);
    assert_eq!(
        entry.params[0],
        Param::new("items", Type::Array(Box::new(Type::Struct("Item".into()))))
    );
    let item = table.structs.get("Item").expect("Item declared");
    assert_eq!(item.doc, "An item in an inventory.");
    assert_eq!(
        item.fields,
        vec![
            Param::new("id", Type::Int),
            Param::new("name", Type::String),
            Param::new("tags", Type::Array(Box::new(Type::String))),
        ]
    );
    assert!(table.structs.is_declared("Item"));
}

#[test]
fn a_stored_derived_message_is_replayed_to_a_late_listener_as_its_struct() {
    let hub = Hub::new();
    let picked = hub.declare_message::<PickedUp>().unwrap();
    let message = PickedUp {
        items: vec![Item {
            id: 7,
            name: "rope".into(),
            tags: vec!["tool".into()],
        }],
        total: 1,
    };
    picked.store(&hub, Source::Global, message.clone()).unwrap();
    let heard = Rc::new(RefCell::new(Vec::new()));
    let into = heard.clone();
    let _late = picked
        .listen(&hub, Source::Global, move |p: PickedUp| {
            into.borrow_mut().push(p)
        })
        .unwrap();
    assert_eq!(*heard.borrow(), vec![message.clone()]);
    assert_eq!(picked.stored(&hub, Source::Global), Some(message));
}

#[test]
fn a_derived_struct_converts_to_its_value_and_back() {
    use gantry_host::{FromValue, IntoValue};
    let item = Item {
        id: 3,
        name: "lamp".into(),
        tags: vec![],
    };
    let value = item.clone().into_value();
    let expected = StructValue::new("Item")
        .with("id", 3i64)
        .with("name", "lamp")
        .with("tags", Value::array(vec![]));
    assert_eq!(value, Value::structure(expected));
    assert_eq!(Item::from_value(&value), Some(item));
    // A script's table names its fields in any order.
    let shuffled = StructValue::new("Item")
        .with("tags", Value::array(vec![Value::str("x")]))
        .with("name", "torch")
        .with("id", 4i64);
    assert_eq!(
        Item::from_value(&Value::structure(shuffled)),
        Some(Item {
            id: 4,
            name: "torch".into(),
            tags: vec!["x".into()]
        })
    );
}

#[test]
fn a_derived_request_declares_its_response_and_is_answered() {
    let hub = Hub::new();
    let price = hub.declare_message::<Price>().unwrap();
    {
        let table = hub.table();
        let entry = &table.keys["Shop.Price"];
        assert_eq!(entry.params, vec![Param::new("item", Type::String)]);
        assert_eq!(
            entry.response,
            Some(vec![
                Param::new("price", Type::Float),
                Param::new("known", Type::Bool)
            ])
        );
    }
    let answer = Rc::new(RefCell::new(Vec::new()));
    let into = answer.clone();
    price
        .request(&hub, Source::Global, Price("rope".into()), move |reply| {
            into.borrow_mut().push(reply)
        })
        .unwrap();
    let _shop = price
        .answer(&hub, Source::Global, |Price(item)| {
            (if item == "rope" { 2.5 } else { 0.0 }, true)
        })
        .unwrap();
    let into = answer.clone();
    price
        .request(&hub, Source::Global, Price("rope".into()), move |reply| {
            into.borrow_mut().push(reply)
        })
        .unwrap();
    // The first found nobody to answer; the second, the shop.
    assert_eq!(*answer.borrow(), vec![None, Some((2.5, true))]);
}

#[derive(Clone)]
struct Slot {
    index: i64,
    label: String,
}
gantry_host::table_row!(Slot { index, label });

#[test]
fn a_table_row_declares_its_struct_with_the_types_of_its_fields() {
    let hub = Hub::new();
    hub.declare_struct::<Slot>();
    let table = hub.table();
    let slot = table.structs.get("Slot").expect("Slot declared");
    assert_eq!(
        slot.fields,
        vec![
            Param::new("index", Type::Int),
            Param::new("label", Type::String)
        ]
    );
}

/// Someone dropped an item.
#[derive(gantry_host::Message, Debug, Clone, PartialEq)]
#[message(key = "Inv.Dropped")]
struct Dropped {
    item: Item,
    at: Option<ObjectId>,
}

#[test]
fn a_derived_message_carrying_a_struct_is_sent_and_heard_whole() {
    let hub = Hub::new();
    let dropped = hub.declare_message::<Dropped>().unwrap();
    let heard = Rc::new(RefCell::new(Vec::new()));
    let into = heard.clone();
    let _listening = dropped
        .listen(&hub, Source::Global, move |d: Dropped| {
            into.borrow_mut().push(d)
        })
        .unwrap();
    let message = Dropped {
        item: Item {
            id: 1,
            name: "coin".into(),
            tags: vec![],
        },
        at: None,
    };
    dropped.send(&hub, Source::Global, message.clone()).unwrap();
    assert_eq!(*heard.borrow(), vec![message]);
    assert_eq!(
        hub.table().keys["Inv.Dropped"].params[1],
        Param::new("at", Type::Any)
    );
}

/// A round began.
#[derive(gantry_host::Message)]
#[message(key = "Round.Began")]
struct RoundBegan;

/// A score changed: a tuple struct names its parameters with `gantry(name)`.
#[derive(gantry_host::Message)]
#[message(key = "Score.Changed")]
struct ScoreChanged(
    #[gantry(name = "player")] ObjectId,
    #[gantry(name = "score")] i64,
);

#[test]
fn unit_and_tuple_messages_carry_nothing_and_their_named_fields() {
    let hub = Hub::new();
    let began = hub.declare_message::<RoundBegan>().unwrap();
    let changed = hub.declare_message::<ScoreChanged>().unwrap();
    let rounds = Rc::new(RefCell::new(0));
    let count = rounds.clone();
    let _rounds = began
        .listen(&hub, Source::Global, move |_: RoundBegan| {
            *count.borrow_mut() += 1
        })
        .unwrap();
    let scores = Rc::new(RefCell::new(Vec::new()));
    let into = scores.clone();
    let _scores = changed
        .listen(&hub, Source::Global, move |ScoreChanged(_, score)| {
            into.borrow_mut().push(score)
        })
        .unwrap();
    began.send(&hub, Source::Global, RoundBegan).unwrap();
    let player = world_object(&hub);
    changed
        .send(&hub, Source::Global, ScoreChanged(player, 30))
        .unwrap();
    assert_eq!(*rounds.borrow(), 1);
    assert_eq!(*scores.borrow(), vec![30]);
    let table = hub.table();
    assert!(table.keys["Round.Began"].params.is_empty());
    assert_eq!(
        table.keys["Score.Changed"].params,
        vec![
            Param::new("player", Type::Object),
            Param::new("score", Type::Int)
        ]
    );
}

/// A slot of a hotbar: a struct of the table and a Rust row at once.
#[derive(gantry_host::Struct, Debug, Clone, PartialEq)]
#[gantry(row, name = "HotbarSlot")]
struct Hotbar {
    index: i64,
    #[gantry(name = "label")]
    name: String,
}

/// The hotbar's slots.
#[derive(gantry_host::Message)]
#[message(key = "Ui.Hotbar", kind = "store")]
struct HotbarTable {
    slots: Vec<Hotbar>,
}

#[test]
fn a_derived_row_struct_is_stored_as_rows_and_read_back_as_rust() {
    let hub = Hub::new();
    let table = hub.declare_message::<HotbarTable>().unwrap();
    let slots = vec![
        Hotbar {
            index: 0,
            name: "sword".into(),
        },
        Hotbar {
            index: 1,
            name: "bow".into(),
        },
    ];
    hub.store_rows(table.key(), Source::Global, slots.clone())
        .unwrap();
    let labels: Vec<String> = hub
        .read_table(table.key(), Source::Global, |view| {
            assert_eq!(view.typed_rows::<Hotbar>(), Some(slots.as_slice()));
            (0..view.len())
                .map(|i| view.row(i).unwrap().get("label").unwrap().to_string())
                .collect()
        })
        .unwrap();
    assert_eq!(labels, ["\"sword\"", "\"bow\""]);
    assert_eq!(
        hub.table().structs.get("HotbarSlot").unwrap().fields,
        vec![
            Param::new("index", Type::Int),
            Param::new("label", Type::String)
        ]
    );
}
