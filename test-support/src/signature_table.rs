//! The table every stub test generates from (the stubs crate's unit and
//! integration tests both): every type (any, nil, bool, int,
//! float, string, object, struct, array, nested array) and every kind (event,
//! store, collection with struct rows, hook, request with a response), and a
//! struct with a parent.

#![allow(dead_code)]

use gantry_host::{KeyDecl, Kind, Param, SignatureTable, StructDef, Type};

pub fn array(inner: Type) -> Type {
    Type::Array(Box::new(inner))
}

pub fn strukt(name: &str) -> Type {
    Type::Struct(name.into())
}

pub fn sample_table() -> SignatureTable {
    let mut t = SignatureTable::new();
    t.declare_struct(
        "Item",
        StructDef {
            parent: None,
            doc: "One thing in an inventory.".into(),
            fields: vec![
                Param::new("id", Type::Int),
                Param::new("name", Type::String),
            ],
        },
    );
    t.declare_struct(
        "Weapon",
        StructDef {
            parent: Some("Item".into()),
            doc: String::new(),
            fields: vec![Param::new("damage", Type::Float)],
        },
    );
    t.declare_struct(
        "Hit",
        StructDef {
            parent: None,
            doc: "What a hit does, before armour.".into(),
            fields: vec![
                Param::new("dmg", Type::Float),
                Param::new("target", Type::Object),
                Param::new("tags", array(Type::String)),
            ],
        },
    );
    let decls = [
        (
            "Player.Hurt",
            KeyDecl::event()
                .doc("Damage taken")
                .param("dmg", Type::Float)
                .param("causer", Type::Object),
        ),
        (
            "Game.Tick",
            KeyDecl::event()
                .param("n", Type::Int)
                .param("dt", Type::Float),
        ),
        (
            "Player.Score",
            KeyDecl::event()
                .kind(Kind::Store)
                .doc("The current score")
                .param("score", Type::Int)
                .param("name", Type::String),
        ),
        (
            "Inv.Items",
            KeyDecl::event()
                .kind(Kind::Collection)
                .doc("Items carried")
                .param("items", array(strukt("Item"))),
        ),
        (
            "Shop.Buy",
            KeyDecl::event()
                .doc("Asks the shop for an item")
                .param("item", strukt("Item"))
                .param("count", Type::Int)
                .response("ok", Type::Bool)
                .response("price", Type::Int),
        ),
        (
            "Combat.Hit",
            KeyDecl::event()
                .kind(Kind::Hook)
                .doc("Lets armour change a hit")
                .param("hit", strukt("Hit")),
        ),
        (
            "Debug.Dump",
            KeyDecl::event()
                .param("value", Type::Any)
                .param("nothing", Type::Nil)
                .param("flag", Type::Bool)
                .param("grid", array(array(Type::Float))),
        ),
        (
            "Fx.Equip",
            KeyDecl::event()
                .param("weapon", strukt("Weapon"))
                .param("end", Type::String),
        ),
    ];
    for (key, decl) in decls {
        t.declare(key, decl, None).expect("valid key");
    }
    t
}
