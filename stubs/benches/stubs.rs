//! Generating stubs for a table of 10,000 keys (goal: ≤ 100 ms for the Lua
//! meta file), with the baseline measured in the same run: serializing the
//! same table to JSON with serde_json, the cost of merely walking and
//! printing it.

use criterion::{Criterion, criterion_group, criterion_main};
use gantry_host::{KeyDecl, Kind, Param, SignatureTable, StructDef, Type};

/// 10,000 keys: mostly events, with stores, collections, hooks and requests
/// mixed in, two to four parameters each.
fn big_table() -> SignatureTable {
    let mut t = SignatureTable::new();
    t.declare_struct(
        "Item",
        StructDef {
            parent: None,
            doc: String::new(),
            fields: vec![
                Param::new("id", Type::Int),
                Param::new("name", Type::String),
            ],
        },
    );
    for i in 0..10_000 {
        let key = format!("Area{}.Thing{}.Event{}", i % 37, i % 101, i);
        let decl = match i % 10 {
            0 => KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
            1 => KeyDecl::event()
                .kind(Kind::Store)
                .param("score", Type::Int)
                .param("name", Type::String),
            2 => KeyDecl::event()
                .kind(Kind::Hook)
                .param("item", Type::Struct("Item".into())),
            3 => KeyDecl::event()
                .param("item", Type::Struct("Item".into()))
                .response("ok", Type::Bool),
            _ => KeyDecl::event()
                .doc("Something happened")
                .param("dmg", Type::Float)
                .param("causer", Type::Object)
                .param("tags", Type::Array(Box::new(Type::String)))
                .param("crit", Type::Bool),
        };
        t.declare(&key, decl, None).expect("valid key");
    }
    t
}

fn bench(c: &mut Criterion) {
    let table = big_table();
    let mut group = c.benchmark_group("stubs_10k_keys");
    group.sample_size(10);
    group.bench_function("baseline_serde_json", |b| {
        b.iter(|| serde_json::to_string(&table).expect("serializes"))
    });
    group.bench_function("lua_stubs", |b| b.iter(|| gantry_stubs::lua_stubs(&table)));
    group.bench_function("rhai_definitions", |b| {
        b.iter(|| gantry_stubs::rhai_definitions(&table))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
