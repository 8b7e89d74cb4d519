//! Rhai send → 1 and 8 Rhai listeners, three ways, in one run:
//! - `baked`: literal-key calls baked into per-key functions;
//! - `hand_bus`: the baseline — a hand-written Rhai bus, an object map of
//!   key → array of function pointers, looped over;
//! - `generic`: the generic string-key call (key not a literal).
//!
//! Each iteration runs one Rhai call that sends 100 messages. The Rhai
//! runtime's goal: baked ≤ 0.9× the hand-written bus at 1 and 8 listeners,
//! every listener still isolated (the baked send takes the runtime's lane:
//! see `runtime::lane`).

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

/// `GANTRY_BENCH_BUS_SENDS=N`: runs only the baked sends and the
/// hand-written bus at 1 and 8 listeners, N sends each, outside criterion,
/// for an instruction count under callgrind (the inclusive cost of
/// `bus_hand_1` and its siblings, divided by N; or, one per run, the
/// total of a run with `--toggle-collect=rhai_bus::bus_baked_8`).
fn bus_sends_only() -> bool {
    let Some(sends) = std::env::var("GANTRY_BENCH_BUS_SENDS")
        .ok()
        .and_then(|n| n.parse::<i64>().ok())
    else {
        return false;
    };
    // `GANTRY_BENCH_BUS_ONLY=baked_8`: that one alone.
    let only = std::env::var("GANTRY_BENCH_BUS_ONLY").ok();
    let run = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if run("hand_1") {
        bus_hand_1(&setup(false, &hand_bus(1)), sends);
    }
    if run("baked_1") {
        bus_baked_1(&setup(true, &baked(1)), sends);
    }
    if run("hand_8") {
        bus_hand_8(&setup(false, &hand_bus(8)), sends);
    }
    if run("baked_8") {
        bus_baked_8(&setup(true, &baked(8)), sends);
    }
    true
}

/// `GANTRY_BENCH_BUS_INTERLEAVE=ROUNDS`: the baked sends and the
/// hand-written bus at 1 and 8 listeners by wall time, in batches of
/// [`INTERLEAVED_BATCH`] calls of [`SENDS`] sends taken in turn, ROUNDS
/// each, outside criterion; prints each one's fastest batches and their
/// ratios (see `gantry_test_support::interleave` for why).
fn bus_interleaved() -> bool {
    use gantry_test_support::interleave::{Side, interleave, print, rounds};
    let Some(rounds) = rounds("GANTRY_BENCH_BUS_INTERLEAVE") else {
        return false;
    };
    for n in [1, 8] {
        let hand = setup(false, &hand_bus(n));
        let baked = setup(true, &baked(n));
        let batch = |setup: &(RhaiRuntime, ScriptId)| {
            let start = std::time::Instant::now();
            for _ in 0..INTERLEAVED_BATCH {
                fire(setup, SENDS);
            }
            start.elapsed()
        };
        let results = interleave(
            rounds,
            &mut [
                Side::new("hand_bus", || batch(&hand)),
                Side::new("baked", || batch(&baked)),
            ],
        );
        print(
            &format!("rhai_send/{n}"),
            INTERLEAVED_BATCH * SENDS as u64,
            &results,
        );
    }
    true
}

/// Calls of [`SENDS`] sends per interleaved batch: 1,000 sends, as the
/// Lua bench's batches.
const INTERLEAVED_BATCH: u64 = 10;

fn fire(setup: &(RhaiRuntime, ScriptId), sends: i64) {
    let (rt, id) = setup;
    let _sent = rt
        .call(*id, "fire", vec![Dynamic::from_int(black_box(sends))])
        .unwrap();
}

#[inline(never)]
fn bus_hand_1(setup: &(RhaiRuntime, ScriptId), sends: i64) {
    black_box(1u8); // Each body its own: never folded into one symbol.
    fire(setup, sends);
    black_box(()); // No tail call: callgrind counts each body apart.
}

#[inline(never)]
fn bus_baked_1(setup: &(RhaiRuntime, ScriptId), sends: i64) {
    black_box(2u8); // Each body its own: never folded into one symbol.
    fire(setup, sends);
    black_box(()); // No tail call: callgrind counts each body apart.
}

#[inline(never)]
fn bus_hand_8(setup: &(RhaiRuntime, ScriptId), sends: i64) {
    black_box(3u8); // Each body its own: never folded into one symbol.
    fire(setup, sends);
    black_box(()); // No tail call: callgrind counts each body apart.
}

#[inline(never)]
fn bus_baked_8(setup: &(RhaiRuntime, ScriptId), sends: i64) {
    black_box(4u8); // Each body its own: never folded into one symbol.
    fire(setup, sends);
    black_box(()); // No tail call: callgrind counts each body apart.
}

fn bench(c: &mut Criterion) {
    if bus_sends_only() || bus_interleaved() {
        return;
    }
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
