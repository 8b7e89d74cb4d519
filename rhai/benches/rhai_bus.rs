//! Rhai send → 1 and 8 Rhai listeners, three ways, in one run:
//! - `baked`: literal-key calls baked into per-key functions;
//! - `hand_bus`: the baseline — a hand-written Rhai bus, an object map of
//!   key → array of function pointers, looped over;
//! - `generic`: the generic string-key call (key not a literal).
//!
//! Each iteration runs one Rhai call that sends 100 messages. The Rhai
//! runtime's goal: baked ≤ 1.0× the hand-written bus.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gantry_host::Hub;
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime, ScriptId};
use rhai::Dynamic;

const SENDS: i64 = 100;

fn listeners(n: usize, listen: &str) -> String {
    (0..n).map(|_| format!("{listen}\n")).collect()
}

fn setup(rewrite: bool, source: &str) -> (RhaiRuntime, ScriptId) {
    let hub = Hub::new();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let rt = RhaiRuntime::new(
        hub,
        RhaiOptions {
            rewrite,
            budget: None,
            top_level_budget: None,
            ..RhaiOptions::default()
        },
    )
    .unwrap();
    let id = rt.load_script("bench.rhai", source, object).unwrap();
    (rt, id)
}

fn baked(n: usize) -> String {
    format!(
        "let total = 0;\n{}let fire = |count| {{ for i in 0..count {{ NotifyMessage(\"Bench.Hit\", i); }} }};\n",
        listeners(n, "ListenMessage(\"Bench.Hit\", (), |v| { total += v; });")
    )
}

fn generic(n: usize) -> String {
    format!(
        "let total = 0;\nlet key = \"Bench.Hit\";\n{}let fire = |count| {{ for i in 0..count {{ NotifyMessage(key, i); }} }};\n",
        listeners(n, "ListenMessage(key, (), |v| { total += v; });")
    )
}

fn hand_bus(n: usize) -> String {
    format!(
        "let total = 0;\nlet bus = #{{}};\nlet listen = |key, f| {{ if !(key in bus) {{ bus[key] = []; }} bus[key].push(f); }};\n{}let fire = |count| {{ for i in 0..count {{ for f in bus[\"Bench.Hit\"] {{ f.call(i); }} }} }};\n",
        listeners(n, "listen.call(\"Bench.Hit\", |v| { total += v; });")
    )
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("rhai_send");
    for n in [1usize, 8] {
        let cases = [
            ("hand_bus", false, hand_bus(n)),
            ("baked", true, baked(n)),
            ("generic", false, generic(n)),
        ];
        for (name, rewrite, source) in cases {
            let (rt, id) = setup(rewrite, &source);
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    rt.call(id, "fire", vec![Dynamic::from_int(black_box(SENDS))])
                        .unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
