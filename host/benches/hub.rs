//! The hub's dispatch costs (a baked `Key`, a `TypedKey`, key text through
//! `send` and through `send_str`), each
//! beside the baseline it must beat, measured
//! in the same run (see BENCHMARKS.md for the recorded ratios); and the
//! cost of registering many listeners on one key beside the linear
//! baselines it must approach.

use std::cell::Cell;
use std::hint::black_box;
use std::rc::Rc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gantry_host::{HookOptions, Hub, ListenOptions, Reply, Source, Value};
use rustc_hash::FxHashMap;

fn hub_with_listeners(n: usize, sink: &Rc<Cell<f64>>) -> (Hub, Vec<gantry_host::ListenerHandle>) {
    let hub = Hub::new();
    let handles = (0..n)
        .map(|_| {
            let s = sink.clone();
            hub.listen("Player.Hurt", Source::Global, move |hp: i64, dmg: f64| {
                s.set(s.get() + hp as f64 * dmg)
            })
            .unwrap()
        })
        .collect();
    (hub, handles)
}

fn floor(n: usize, sink: &Rc<Cell<f64>>) -> Vec<Box<dyn Fn(i64, f64)>> {
    (0..n)
        .map(|_| {
            let s = sink.clone();
            Box::new(move |hp: i64, dmg: f64| s.set(s.get() + hp as f64 * dmg))
                as Box<dyn Fn(i64, f64)>
        })
        .collect()
}

fn send(c: &mut Criterion) {
    let mut group = c.benchmark_group("send");
    for n in [1usize, 8] {
        let sink = Rc::new(Cell::new(0.0));
        let closures = floor(n, &sink);
        group.bench_function(format!("floor_boxed_closure_vec/{n}"), |b| {
            b.iter(|| {
                for f in &closures {
                    f(black_box(3), black_box(0.5));
                }
            })
        });
        let (hub, _handles) = hub_with_listeners(n, &sink);
        let key = hub.key("Player.Hurt").unwrap();
        group.bench_function(format!("hub_baked_key/{n}"), |b| {
            b.iter(|| {
                hub.send(
                    black_box(key),
                    Source::Global,
                    (black_box(3i64), black_box(0.5f64)),
                )
                .unwrap()
            })
        });
        let typed = hub.typed_key::<(i64, f64)>("Player.Hurt").unwrap();
        group.bench_function(format!("hub_typed_key/{n}"), |b| {
            b.iter(|| {
                hub.send(
                    black_box(typed),
                    Source::Global,
                    (black_box(3i64), black_box(0.5f64)),
                )
                .unwrap()
            })
        });
        // By text: `send` with a tuple of fixed kinds looks the key up and
        // goes as a typed key; `send_str` takes any arguments as `Value`s.
        group.bench_function(format!("hub_by_string/{n}"), |b| {
            b.iter(|| {
                hub.send(
                    black_box("Player.Hurt"),
                    Source::Global,
                    (black_box(3i64), black_box(0.5f64)),
                )
                .unwrap()
            })
        });
        group.bench_function(format!("hub_send_str/{n}"), |b| {
            b.iter(|| {
                hub.send_str(
                    black_box("Player.Hurt"),
                    Source::Global,
                    (black_box(3i64), black_box(0.5f64)),
                )
                .unwrap()
            })
        });
    }
    // Object send fanning out over three tiers, one listener per tier.
    let sink = Rc::new(Cell::new(0.0));
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    let _handles: Vec<_> = [Source::Object(obj), Source::World(world), Source::Global]
        .into_iter()
        .map(|scope| {
            let s = sink.clone();
            hub.listen_with(
                "Player.Hurt",
                scope,
                ListenOptions::new(),
                move |hp: i64, dmg: f64| s.set(s.get() + hp as f64 * dmg),
            )
            .unwrap()
        })
        .collect();
    let key = hub.key("Player.Hurt").unwrap();
    let closures = floor(3, &sink);
    group.bench_function("floor_boxed_closure_vec/3", |b| {
        b.iter(|| {
            for f in &closures {
                f(black_box(3), black_box(0.5));
            }
        })
    });
    group.bench_function("hub_object_send_three_tiers/3", |b| {
        b.iter(|| {
            hub.send(key, obj, (black_box(3i64), black_box(0.5f64)))
                .unwrap()
        })
    });
    group.finish();
}

fn stored_requests_hooks(c: &mut Criterion) {
    let mut group = c.benchmark_group("kinds");
    // Store, then a late listener that gets the replay (and unlistens).
    let hub = Hub::new();
    let key = hub.key("Game.Ready").unwrap();
    hub.store(key, Source::Global, (1i64, 2.0f64)).unwrap();
    let sink = Rc::new(Cell::new(0i64));
    group.bench_function("store_replay_to_late_listener", |b| {
        b.iter(|| {
            let s = sink.clone();
            let handle = hub
                .listen("Game.Ready", Source::Global, move |n: i64| {
                    s.set(s.get() + n)
                })
                .unwrap();
            drop(black_box(handle));
        })
    });
    // Baseline for the replay: registering and dropping a listener on a key with nothing stored.
    group.bench_function("listen_and_drop_without_replay", |b| {
        b.iter(|| {
            let s = sink.clone();
            let handle = hub
                .listen("Game.Other", Source::Global, move |n: i64| {
                    s.set(s.get() + n)
                })
                .unwrap();
            drop(black_box(handle));
        })
    });

    // Request round trip.
    let hub = Hub::new();
    let _answer = hub
        .listen_message("Math.Double", Source::Global, ListenOptions::new(), |m| {
            let n = m.args[0].as_int().unwrap_or(0);
            m.responder.unwrap().respond((n * 2,));
        })
        .unwrap();
    let key = hub.key("Math.Double").unwrap();
    let got = Rc::new(Cell::new(0i64));
    group.bench_function("request_round_trip", |b| {
        b.iter(|| {
            let g = got.clone();
            hub.request(key, Source::Global, (black_box(21i64),), move |reply| {
                if let Reply::Answer(v) = reply {
                    g.set(v[0].as_int().unwrap_or(0));
                }
            })
            .unwrap()
        })
    });
    // Baseline: a plain send to one listener.
    let sink = Rc::new(Cell::new(0i64));
    let s = sink.clone();
    let _plain = hub
        .listen("Math.Plain", Source::Global, move |n: i64| s.set(n))
        .unwrap();
    let plain = hub.key("Math.Plain").unwrap();
    group.bench_function("plain_send_one_listener", |b| {
        b.iter(|| {
            hub.send(plain, Source::Global, (black_box(21i64),))
                .unwrap()
        })
    });

    // Hooks.
    let hub = Hub::new();
    let _hooks: Vec<_> = (0..8)
        .map(|i| {
            hub.listen_hook("Combat.Damage", HookOptions::new().priority(i), |c| {
                if let Value::Int(n) = c.payload {
                    *n -= 1;
                }
            })
            .unwrap()
        })
        .collect();
    let mut payload = Value::Int(1000);
    group.bench_function("run_hook_8_listeners", |b| {
        b.iter(|| {
            hub.run_hook(black_box("Combat.Damage"), &mut payload)
                .unwrap()
        })
    });
    let mut payload = Value::Int(0);
    group.bench_function("run_hook_no_listeners", |b| {
        b.iter(|| {
            hub.run_hook(black_box("Combat.Heal"), &mut payload)
                .unwrap()
        })
    });
    // What a caller does with the result: read a field. The whole-struct
    // variant above also measures criterion copying the 16-byte result
    // through memory for `black_box` (a store-forwarding stall of several
    // ns on this machine); the baseline's `Option<u32>` needs no such copy.
    group.bench_function("run_hook_no_listeners_caller_reads_cancelled", |b| {
        b.iter(|| {
            hub.run_hook(black_box("Combat.Heal"), &mut payload)
                .unwrap()
                .cancelled
        })
    });
    let mut map: FxHashMap<Rc<str>, u32> = FxHashMap::default();
    for i in 0..64 {
        map.insert(Rc::from(format!("Key.{i}").as_str()), i);
    }
    map.insert(Rc::from("Combat.Damage"), 99);
    group.bench_function("baseline_single_map_lookup", |b| {
        b.iter(|| map.get(black_box("Combat.Heal")).copied())
    });
    group.finish();
}

/// `--trace` off must cost nothing in the dispatch path: the same send with
/// no tracer (one `Cell<bool>` read per dispatch and per listener call) and
/// with a tracer that does nothing (events built, listeners timed), beside
/// the closure floor.
fn trace_off(c: &mut Criterion) {
    let mut group = c.benchmark_group("trace");
    let sink = Rc::new(Cell::new(0.0));
    let closures = floor(1, &sink);
    group.bench_function("floor_boxed_closure_vec/1", |b| {
        b.iter(|| {
            for f in &closures {
                f(black_box(3), black_box(0.5));
            }
        })
    });
    let (hub, _handles) = hub_with_listeners(1, &sink);
    let key = hub.key("Player.Hurt").unwrap();
    let send = |hub: &Hub| {
        hub.send(
            black_box(key),
            Source::Global,
            (black_box(3i64), black_box(0.5f64)),
        )
        .unwrap()
    };
    group.bench_function("hub_baked_key/1/tracer_off", |b| b.iter(|| send(&hub)));
    hub.set_tracer(Some(Rc::new(|event: &gantry_host::TraceEvent<'_>| {
        black_box(event);
    })));
    group.bench_function("hub_baked_key/1/noop_tracer", |b| b.iter(|| send(&hub)));
    hub.set_tracer(None);
    group.finish();
}

/// Registering N listeners on one key must stay linear in N (a hostile
/// mod registers 100,000): beside it, in the same run, the linear floors —
/// N boxed closures pushed into a `Vec`, and N listeners on N distinct keys
/// (no key's list grows past one). Each iteration registers all N on a
/// fresh hub; dropping the hub is outside the measure.
fn listen_many(c: &mut Criterion) {
    let mut group = c.benchmark_group("listen_many");
    group.sample_size(10);
    for n in [10_000usize, 100_000] {
        let sink = Rc::new(Cell::new(0i64));
        group.bench_function(format!("floor_boxed_closure_vec_push/{n}"), |b| {
            b.iter_batched(
                || Vec::with_capacity(0),
                |mut closures: Vec<Box<dyn Fn(i64)>>| {
                    for _ in 0..n {
                        let s = sink.clone();
                        closures.push(Box::new(move |x: i64| s.set(s.get() + x)));
                    }
                    closures
                },
                BatchSize::PerIteration,
            )
        });
        let keys: Vec<String> = (0..n).map(|i| format!("Many.K{i}")).collect();
        group.bench_function(format!("hub_distinct_keys/{n}"), |b| {
            b.iter_batched(
                || {
                    let hub = Hub::new();
                    for key in &keys {
                        hub.key(key).unwrap();
                    }
                    hub
                },
                |hub| {
                    for key in &keys {
                        let s = sink.clone();
                        hub.listen(key, Source::Global, move |x: i64| s.set(s.get() + x))
                            .unwrap()
                            .detach();
                    }
                    hub
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_function(format!("hub_one_key/{n}"), |b| {
            b.iter_batched(
                || {
                    let hub = Hub::new();
                    hub.key("Many.One").unwrap();
                    hub
                },
                |hub| {
                    for _ in 0..n {
                        let s = sink.clone();
                        hub.listen("Many.One", Source::Global, move |x: i64| s.set(s.get() + x))
                            .unwrap()
                            .detach();
                    }
                    hub
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, send, stored_requests_hooks, trace_off, listen_many);
criterion_main!(benches);
