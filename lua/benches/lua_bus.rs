//! Lua send → Lua listeners through the hub (baked and generic), against a
//! hand-written pure-Lua event bus, plus Lua → Rust and Rust → Lua; all in
//! one criterion run so the baselines share the machine's state.
//!
//! Each Lua measurement is a Lua loop of `iters` sends (`iter_custom`),
//! started by hub messages of 1,000 sends each, so the cost of entering Lua
//! from Rust is paid once per 1,000 sends, as in a game where a handler sends
//! many messages. The `budget/*` benches measure the instruction budget's
//! cost on the same loop, the `grants/*` pairs a send's cost with its
//! mod's grants checked against the same send without.

use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use gantry_host::face::{ModGrants, ScriptRuntime};
use gantry_host::manifest::{Grant, Grants};
use gantry_host::{Hub, Key, Source};
use gantry_lua::runtime::{LuaOptions, LuaRuntime, ScriptId};
use mlua::{Function, HookTriggers, VmState};

const PURE_BUS: &str = r#"
local bus = { listeners = {} }
function bus.listen(key, fn)
  local list = bus.listeners[key]
  if not list then list = {}; bus.listeners[key] = list end
  list[#list + 1] = fn
end
function bus.emit(key, ...)
  local list = bus.listeners[key]
  if list then
    for i = 1, #list do list[i](...) end
  end
end
count = 0
for i = 1, LISTENERS do bus.listen("Bench.Hit", function(a, b) count = count + 1 end) end
function run(n)
  for i = 1, n do bus.emit("Bench.Hit", i, 1.5) end
end
"#;

const HUB_BAKED: &str = r#"
count = 0
for i = 1, LISTENERS do ListenMessage("Bench.Hit", nil, function(a, b) count = count + 1 end) end
function run(n)
  for i = 1, n do NotifyMessage("Bench.Hit", i, 1.5) end
end
"#;

const HUB_GENERIC: &str = r#"
count = 0
local key = "Bench.Hit"
for i = 1, LISTENERS do ListenMessage(key, nil, function(a, b) count = count + 1 end) end
function run(n)
  for i = 1, n do NotifyMessage(key, i, 1.5) end
end
"#;

/// A table send named by `__struct`, against the same table without it
/// (a plain table: the hub names its struct after the key).
const TABLE_NAMED: &str = r#"
count = 0
for i = 1, LISTENERS do ListenMessage("Bench.Reward", nil, function(r) count = count + 1 end) end
function run(n)
  for i = 1, n do NotifyMessage("Bench.Reward", { __struct = "Reward", name = "gold", count = i }) end
end
"#;

const TABLE_PLAIN: &str = r#"
count = 0
for i = 1, LISTENERS do ListenMessage("Bench.Reward", nil, function(r) count = count + 1 end) end
function run(n)
  for i = 1, n do NotifyMessage("Bench.Reward", { name = "gold", count = i }) end
end
"#;

const SEND_ONLY: &str = r#"
function run(n)
  for i = 1, n do NotifyMessage("Bench.ToRust", i, 1.5) end
end
"#;

const LISTEN_ONLY: &str = r#"
count = 0
ListenMessage("Bench.FromRust", nil, function(a, b) count = count + 1 end)
"#;

struct Setup {
    rt: Rc<LuaRuntime>,
    script: ScriptId,
    run: Option<Key>,
}

/// Every script's `run(n)` is started by a hub message, as a game's tick
/// starts its scripts: the loop then runs inside a call the host made into
/// Lua (the instruction budget running), as script code does in a game.
/// A handler runs at most `CHUNK` sends, so that no call runs long enough
/// for the budget's watchdog to arm its instruction hook (a game's frame
/// is milliseconds; an armed hook would make any Lua code twice as slow).
const RUN_BY_MESSAGE: &str = r#"
if run then ListenMessage(RUN_KEY, nil, function(n) run(n) end) end
"#;

const CHUNK: u64 = 1000;

fn setup(source: &str, listeners: usize) -> Setup {
    setup_with(source, listeners, None, LuaOptions::default())
}

/// [`setup`] with the script loaded as a mod's with `grants`.
fn setup_granted(source: &str, listeners: usize, grants: Option<Rc<ModGrants>>) -> Setup {
    setup_with(source, listeners, grants, LuaOptions::default())
}

fn setup_with(
    source: &str,
    listeners: usize,
    grants: Option<Rc<ModGrants>>,
    options: LuaOptions,
) -> Setup {
    let hub = Hub::new();
    let rt = Rc::new(LuaRuntime::new(hub, options).unwrap());
    load_into(&rt, source, listeners, grants, "Bench.Run")
}

/// The pure-Lua bus and the baked sends at `listeners` listeners, in one
/// runtime: one Lua state, so one string-hash seed. Each state's seed
/// puts the scripts' global names (`count`, which every listener reads
/// and writes) in its own places; with a state each, the two sides of one
/// process drew theirs apart, which moved their ratio by some 4% from one
/// process to the next.
fn setup_pair(listeners: usize, options: LuaOptions) -> (Setup, Setup) {
    let rt = Rc::new(LuaRuntime::new(Hub::new(), options).unwrap());
    (
        load_into(&rt, PURE_BUS, listeners, None, "Bench.RunPure"),
        load_into(&rt, HUB_BAKED, listeners, None, "Bench.RunBaked"),
    )
}

/// [`setup_pair`] for an instruction count or an interleaved timing.
/// Under callgrind a call runs some 50 times slower, so the watchdog would
/// arm the instruction hook after a fraction of a chunk (a game's call
/// never runs that long) and count every VM instruction of both sides; it
/// is kept off.
fn setup_counted_pair(listeners: usize) -> (Setup, Setup) {
    let options = LuaOptions {
        watchdog_interval: Duration::from_secs(3600),
        time_limit: None,
        ..LuaOptions::default()
    };
    setup_pair(listeners, options)
}

/// Loads `source` (with `LISTENERS` listeners) into `rt` as a script of
/// its own, whose `run(n)` the message `run_key` starts.
fn load_into(
    rt: &Rc<LuaRuntime>,
    source: &str,
    listeners: usize,
    grants: Option<Rc<ModGrants>>,
    run_key: &str,
) -> Setup {
    let hub = rt.hub();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let source = source.replace("LISTENERS", &listeners.to_string())
        + &RUN_BY_MESSAGE.replace("RUN_KEY", &format!("{run_key:?}"));
    let id = rt
        .load_granted("bench.lua", &source, object, grants)
        .unwrap();
    let has_run = rt.global::<Option<Function>>(id, "run").unwrap().is_some();
    let run = has_run.then(|| rt.hub().key(run_key).unwrap());
    let setup = Setup {
        rt: rt.clone(),
        script: id,
        run,
    };
    if listeners > 0 {
        // Every listener hears every send, whichever way it is delivered.
        lua_loop(&setup, 10);
        let count: i64 = setup.rt.global(id, "count").unwrap();
        assert_eq!(count, 10 * listeners as i64);
    }
    setup
}

fn lua_loop(setup: &Setup, iters: u64) -> Duration {
    let run = setup.run.expect("run()");
    let hub = setup.rt.hub();
    let start = Instant::now();
    let mut left = iters;
    while left > 0 {
        let chunk = left.min(CHUNK);
        hub.send(run, Source::Global, (chunk as i64,)).unwrap();
        left -= chunk;
    }
    let elapsed = start.elapsed();
    assert!(hub.take_reports().is_empty(), "the bench script failed");
    elapsed
}

/// `run(iters)` called by the host directly, in one call.
fn direct_loop(run: &Function, iters: u64) -> Duration {
    let start = Instant::now();
    run.call::<()>(iters as i64).unwrap();
    start.elapsed()
}

/// A send with grants off and on: the same script, the second loaded as
/// a mod's that may send and listen to `Bench`. Each side runs through a
/// function of its own, so that callgrind counts each apart.
struct GrantsPair {
    off_setup: Setup,
    on_setup: Setup,
    off: fn(&Setup, u64) -> Duration,
    on: fn(&Setup, u64) -> Duration,
}

fn grants_pairs() -> [(&'static str, GrantsPair); 2] {
    let grants = || {
        ModGrants::of(
            "bench",
            Some(
                Grants::none()
                    .with(Grant::Send, ["Bench"])
                    .with(Grant::Listen, ["Bench"]),
            ),
        )
    };
    let pair =
        |source, off: fn(&Setup, u64) -> Duration, on: fn(&Setup, u64) -> Duration| GrantsPair {
            off_setup: setup(source, 1),
            on_setup: setup_granted(source, 1, grants()),
            off,
            on,
        };
    [
        (
            "hub_baked",
            pair(HUB_BAKED, baked_grants_off, baked_grants_on),
        ),
        (
            "hub_generic",
            pair(HUB_GENERIC, generic_grants_off, generic_grants_on),
        ),
    ]
}

#[inline(never)]
fn baked_grants_off(setup: &Setup, iters: u64) -> Duration {
    black_box(0u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

#[inline(never)]
fn baked_grants_on(setup: &Setup, iters: u64) -> Duration {
    black_box(1u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

#[inline(never)]
fn generic_grants_off(setup: &Setup, iters: u64) -> Duration {
    black_box(2u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

#[inline(never)]
fn generic_grants_on(setup: &Setup, iters: u64) -> Duration {
    black_box(3u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

/// `GANTRY_BENCH_GRANTS_SENDS=N`: runs only the `grants/*` pairs, N sends
/// each, outside criterion, for an instruction count under callgrind
/// (`valgrind --tool=callgrind`, then the inclusive cost of
/// `baked_grants_off` and its siblings, divided by N).
fn grants_sends_only() -> bool {
    let Some(sends) = std::env::var("GANTRY_BENCH_GRANTS_SENDS")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
    else {
        return false;
    };
    for (_, pair) in grants_pairs() {
        (pair.off)(&pair.off_setup, sends);
        (pair.on)(&pair.on_setup, sends);
    }
    true
}

/// `GANTRY_BENCH_BUS_SENDS=N`: runs only the baked sends and the pure-Lua
/// bus at 1 and 8 listeners, N sends each, outside criterion, for an
/// instruction count under callgrind (the inclusive cost of `bus_pure_1`
/// and its siblings, divided by N).
fn bus_sends_only() -> bool {
    let Some(sends) = std::env::var("GANTRY_BENCH_BUS_SENDS")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
    else {
        return false;
    };
    // `GANTRY_BENCH_BUS_ONLY=baked_8`: that one alone (for a CPU-time
    // count of one cell, `perf stat -e task-clock`).
    let only = std::env::var("GANTRY_BENCH_BUS_ONLY").ok();
    let run = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let (pure, baked) = setup_counted_pair(1);
    if run("pure_1") {
        bus_pure_1(&pure, sends);
    }
    if run("baked_1") {
        bus_baked_1(&baked, sends);
    }
    let (pure, baked) = setup_counted_pair(8);
    if run("pure_8") {
        bus_pure_8(&pure, sends);
    }
    if run("baked_8") {
        bus_baked_8(&baked, sends);
    }
    true
}

/// `GANTRY_BENCH_BUS_INTERLEAVE=ROUNDS`: the baked sends and the pure-Lua
/// bus at 1 and 8 listeners by wall time, in batches of
/// `INTERLEAVED_BATCH` sends taken in turn, ROUNDS each, outside
/// criterion; prints each one's fastest batches and their ratios (see
/// `gantry_test_support::interleave` for why).
fn bus_interleaved() -> bool {
    use gantry_test_support::interleave::{Side, interleave, print, rounds};
    let Some(rounds) = rounds("GANTRY_BENCH_BUS_INTERLEAVE") else {
        return false;
    };
    for listeners in [1, 8] {
        let (pure, baked) = setup_counted_pair(listeners);
        let results = interleave(
            rounds,
            &mut [
                Side::new("pure_lua_bus", || lua_loop(&pure, INTERLEAVED_BATCH)),
                Side::new("hub_baked", || lua_loop(&baked, INTERLEAVED_BATCH)),
            ],
        );
        print(&format!("lua_bus/{listeners}"), INTERLEAVED_BATCH, &results);
    }
    true
}

/// Sends per interleaved batch: [`CHUNK`], as in the criterion cells, so
/// that entering Lua from Rust weighs on a batch as it does there (some
/// 70 µs to 350 µs a batch here, whole between most of this machine's
/// stalls).
const INTERLEAVED_BATCH: u64 = CHUNK;

#[inline(never)]
fn bus_pure_1(setup: &Setup, iters: u64) -> Duration {
    black_box(4u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

#[inline(never)]
fn bus_baked_1(setup: &Setup, iters: u64) -> Duration {
    black_box(5u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

#[inline(never)]
fn bus_pure_8(setup: &Setup, iters: u64) -> Duration {
    black_box(6u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

#[inline(never)]
fn bus_baked_8(setup: &Setup, iters: u64) -> Duration {
    black_box(7u8); // Each body its own: never folded into one symbol.
    lua_loop(setup, iters)
}

fn bench(c: &mut Criterion) {
    if grants_sends_only() || bus_sends_only() || bus_interleaved() {
        return;
    }
    let mut group = c.benchmark_group("lua_bus");
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    for listeners in [1usize, 8] {
        let (pure, baked) = setup_pair(listeners, LuaOptions::default());
        group.bench_function(format!("pure_lua_bus/{listeners}"), |b| {
            b.iter_custom(|iters| lua_loop(&pure, iters))
        });
        group.bench_function(format!("hub_baked/{listeners}"), |b| {
            b.iter_custom(|iters| lua_loop(&baked, iters))
        });
        let generic = setup(HUB_GENERIC, listeners);
        group.bench_function(format!("hub_generic/{listeners}"), |b| {
            b.iter_custom(|iters| lua_loop(&generic, iters))
        });
    }

    // A send's cost with grants on (#28: within 5% of grants off): the
    // script's mod may send and listen to `Bench`, decided at bake (baked)
    // or at the key's first use (generic), not per send.
    for (name, pair) in grants_pairs() {
        group.bench_function(format!("grants/off/{name}/1"), |b| {
            b.iter_custom(|iters| (pair.off)(&pair.off_setup, iters))
        });
        group.bench_function(format!("grants/on/{name}/1"), |b| {
            b.iter_custom(|iters| (pair.on)(&pair.on_setup, iters))
        });
    }

    // A table send costs the same named by `__struct` or plain.
    let named = setup(TABLE_NAMED, 1);
    group.bench_function("table_send/struct_field/1", |b| {
        b.iter_custom(|iters| lua_loop(&named, iters))
    });
    let plain = setup(TABLE_PLAIN, 1);
    group.bench_function("table_send/plain/1", |b| {
        b.iter_custom(|iters| lua_loop(&plain, iters))
    });

    let to_rust = setup(SEND_ONLY, 0);
    to_rust
        .rt
        .hub()
        .listen("Bench.ToRust", Source::Global, |a: i64, b: f64| {
            black_box((a, b));
        })
        .unwrap()
        .detach();
    group.bench_function("lua_to_rust/1", |b| {
        b.iter_custom(|iters| lua_loop(&to_rust, iters))
    });

    // The instruction budget's cost (#5: at most 10% on normal dispatch).
    // The same pure-Lua loop (8 listeners) called by the host directly —
    // outside any budget — against `pure_lua_bus/8` above (started by hub
    // messages, so under the budget's watchdog) and against the loop under
    // a plain count hook, the naive budget, every 1000 instructions.
    let direct = setup(PURE_BUS, 8);
    let run: Function = direct.rt.global(direct.script, "run").unwrap();
    group.bench_function("budget/none/8", |b| {
        b.iter_custom(|iters| direct_loop(&run, iters))
    });
    let hooked = setup(PURE_BUS, 8);
    let run_hooked: Function = hooked.rt.global(hooked.script, "run").unwrap();
    hooked
        .rt
        .lua()
        .set_hook(HookTriggers::new().every_nth_instruction(1000), |_, _| {
            Ok(VmState::Continue)
        })
        .unwrap();
    group.bench_function("budget/count_hook/8", |b| {
        b.iter_custom(|iters| direct_loop(&run_hooked, iters))
    });
    hooked.rt.lua().remove_hook();

    // A runaway listener under a per-call budget of 2 ms (#33: it costs
    // at most 3 ms of its tick): one tick is one host send reaching a
    // listener that loops forever and one that returns at once; the
    // baseline in the same run is the same tick without the runaway.
    let (runaway, runaway_key) = budget_tick(true);
    let (calm, calm_key) = budget_tick(false);
    group.sample_size(20);
    group.bench_function("call_budget/tick_with_runaway_listener_2ms", |b| {
        b.iter(|| runaway.send(runaway_key, Source::Global, (1i64,)))
    });
    group.bench_function("call_budget/tick_without_it", |b| {
        b.iter(|| calm.send(calm_key, Source::Global, (1i64,)))
    });
    group.sample_size(100);

    let from_rust = setup(LISTEN_ONLY, 0);
    let hub = from_rust.rt.hub().clone();
    let key = hub.key("Bench.FromRust").unwrap();
    group.bench_function("rust_to_lua/1", |b| {
        b.iter(|| {
            hub.send(key, Source::Global, (black_box(1i64), 1.5f64))
                .unwrap()
        })
    });
    group.finish();
}

/// A hub whose `Bench.Tick` reaches a Lua listener that returns at once
/// and, with `runaway`, one that loops forever, under a 2 ms call budget.
/// The runtime is leaked: it must outlive the bench's closures.
fn budget_tick(runaway: bool) -> (Hub, Key) {
    let hub = Hub::new();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let rt = LuaRuntime::new(
        hub.clone(),
        LuaOptions {
            call_budget: Some(Duration::from_millis(2)),
            ..LuaOptions::default()
        },
    )
    .unwrap();
    rt.on_error(|_| {});
    let mut source = String::from("ListenMessage('Bench.Tick', nil, function(n) end)\n");
    if runaway {
        source.push_str("ListenMessage('Bench.Tick', nil, function(n) while true do end end)\n");
    }
    rt.load_script("tick.lua", &source, object).unwrap();
    std::mem::forget(rt);
    let key = hub.key("Bench.Tick").unwrap();
    (hub, key)
}

criterion_group!(benches, bench);
criterion_main!(benches);
