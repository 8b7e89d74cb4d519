//! The bridge against raw `async-nats`, in the same run, on one loopback
//! `nats-server`: throughput of one key with one remote listener, and the
//! latency one message takes from send to listener.
//!
//! - `throughput/raw`: publish → subscribe of the same bytes the bridge
//!   puts on the wire, one client each side, both on this thread.
//! - `throughput/raw_threaded`: the same, the publishing client on a
//!   thread (and runtime) of its own, as a bridge's network thread is: a
//!   baseline with the same parallelism as the bridge's (a node's
//!   network thread sends while the other's game thread delivers).
//! - `throughput/bridge`: `Hub::send` on node A → A's listener on node B,
//!   both pumped as a game loop would.
//! - `latency/*`: one message at a time, sent and awaited; the median is
//!   the p50, and the bridge's minus raw's is what the bridge adds.
//!
//! The two throughput loops are functions of their own (`raw_run`,
//! `bridge_run`), so a profiler names them and the one-cell mode (see
//! `sends_only`) runs the very loop criterion times; what each cell
//! measures, its bytes and its window of 2048 in flight, are as before.
//!
//! Without `nats-server` on the PATH (or /usr/sbin) it prints a
//! `skipped:` line and measures nothing.

use std::cell::Cell;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use gantry_host::{Hub, ListenOptions, Source, Value};
use gantry_nats::{Bridge, BridgeConfig};

const PATIENCE: Duration = Duration::from_secs(10);

struct Server {
    child: Child,
    /// The server's JetStream store, removed with it.
    _dir: tempfile::TempDir,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server() -> Option<Server> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let binary = std::env::split_paths(&path)
        .chain(["/usr/sbin".into()])
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())?;
    let port = TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let dir = tempfile::tempdir().ok()?;
    let child = Command::new(binary)
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server {
        child,
        _dir: dir,
        port,
    };
    let deadline = Instant::now() + PATIENCE;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Some(server)
}

/// What the game thread does after a pump that delivered nothing.
#[derive(Clone, Copy)]
enum Idle {
    /// Sleeps [`IDLE_SLEEP`], as a game's thread does between ticks: for
    /// throughput. The raw loop parks (in epoll) while it waits; a game
    /// thread spinning on `yield_now` instead holds one of the machine's
    /// two cores, which the two network threads and the server need (a
    /// game's thread, on its own machine, would not compete with the
    /// other node's). The pipe stays full meanwhile: 2048 messages in
    /// flight take milliseconds to drain, a sleep tens of µs. (Measured on
    /// a busy 2-core machine, neither way was clearly faster.)
    Sleep,
    /// Yields and looks again at once: for latency, where a sleep would
    /// be measured instead of the bridge.
    Spin,
}

/// How long the game thread sleeps when it found nothing (the kernel's
/// timer slack adds about 50 µs).
const IDLE_SLEEP: Duration = Duration::from_micros(20);

/// A raw publishing client on a thread of its own: told how many messages
/// to publish, it takes a permit of `window` for each (the receiver gives
/// them back as it hears the messages: at most 2048 in flight, as
/// elsewhere).
struct Publisher {
    orders: tokio::sync::mpsc::UnboundedSender<u64>,
    window: std::sync::Arc<tokio::sync::Semaphore>,
}

impl Publisher {
    fn start(url: &str, subject: &'static str, payload: bytes::Bytes) -> Publisher {
        let window = std::sync::Arc::new(tokio::sync::Semaphore::new(2048));
        let (orders, mut todo) = tokio::sync::mpsc::unbounded_channel::<u64>();
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let (url, permits) = (url.to_owned(), window.clone());
        // Ends with the bench's process (its orders never close before).
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let client = async_nats::connect(&url).await.unwrap();
                ready_tx.send(()).unwrap();
                while let Some(n) = todo.recv().await {
                    for _ in 0..n {
                        permits.acquire().await.unwrap().forget();
                        client.publish(subject, payload.clone()).await.unwrap();
                    }
                }
            });
        });
        ready
            .recv_timeout(PATIENCE)
            .expect("raw publisher did not connect");
        Publisher { orders, window }
    }
}

struct Nodes {
    a: (Hub, Bridge),
    b: (Hub, Bridge),
    heard: Rc<Cell<u64>>,
}

impl Nodes {
    fn start(url: &str) -> Nodes {
        let config = BridgeConfig::new(url)
            .cluster("bench")
            .share("Chat")
            .buffer(8192);
        let node = || {
            let hub = Hub::new();
            let bridge = Bridge::start(&hub, config.clone()).unwrap();
            (hub, bridge)
        };
        let (a, b) = (node(), node());
        let heard = Rc::new(Cell::new(0));
        let sink = heard.clone();
        b.0.listen_message(
            "Chat.Say",
            Source::Global,
            ListenOptions::new(),
            move |_| sink.set(sink.get() + 1),
        )
        .unwrap()
        .detach();
        let deadline = Instant::now() + PATIENCE;
        while !(a.1.is_ready() && b.1.is_ready()) {
            assert!(Instant::now() < deadline, "bridges did not connect");
            a.1.pump(&a.0);
            b.1.pump(&b.0);
            std::thread::sleep(Duration::from_millis(5));
        }
        Nodes { a, b, heard }
    }

    /// Sends `n` messages from A and pumps both until B heard them all;
    /// between pumps that found nothing, `idle` (see [`Idle`]).
    fn run(&self, n: u64, idle: Idle) -> Duration {
        let key = self.a.0.key("Chat.Say").unwrap();
        let start_heard = self.heard.get();
        let start = Instant::now();
        let mut sent = 0;
        while self.heard.get() - start_heard < n {
            // At most 2048 in flight end to end: B's incoming buffer
            // (8192) never overflows, as a game's per-tick sends would not.
            while sent < n && sent - (self.heard.get() - start_heard) < 2048 {
                self.a.0.send(key, Source::Global, ("hello", 42)).unwrap();
                sent += 1;
            }
            self.a.1.pump(&self.a.0);
            if self.b.1.pump(&self.b.0).delivered == 0 {
                match idle {
                    Idle::Sleep => std::thread::sleep(IDLE_SLEEP),
                    Idle::Spin => std::thread::yield_now(),
                }
            }
            assert!(
                start.elapsed() < PATIENCE,
                "bridge lost messages: {:?}",
                self.b.1.stats()
            );
        }
        start.elapsed()
    }
}

/// `throughput/raw`'s loop: publishes `n` messages with at most 2048 in
/// flight and takes them back, both clients on this thread.
#[inline(never)]
fn raw_run(
    runtime: &tokio::runtime::Runtime,
    publisher: &async_nats::Client,
    subscriber: &mut async_nats::Subscriber,
    payload: &bytes::Bytes,
    n: u64,
) -> Duration {
    runtime.block_on(async {
        // The same window as the bridge's: at most 2048 in flight.
        let start = Instant::now();
        let (mut sent, mut received) = (0u64, 0u64);
        while received < n {
            while sent < n && sent - received < 2048 {
                publisher
                    .publish("raw.Chat.Say", payload.clone())
                    .await
                    .unwrap();
                sent += 1;
            }
            tokio::time::timeout(PATIENCE, subscriber.next())
                .await
                .expect("raw lost messages");
            received += 1;
        }
        start.elapsed()
    })
}

/// `throughput/bridge`'s loop (its own symbol for a profiler).
#[inline(never)]
fn bridge_run(nodes: &Nodes, n: u64, idle: Idle) -> Duration {
    nodes.run(n, idle)
}

/// `GANTRY_BENCH_BRIDGE_SENDS=N` with `GANTRY_BENCH_BRIDGE_CELL=raw` or
/// `bridge`: runs that throughput cell's loop once for N messages outside
/// criterion (after a first window's worth, so connections and buffers
/// are warm), for an instruction count per thread under callgrind
/// (`valgrind --tool=callgrind --separate-threads=yes`, the inclusive
/// cost of `raw_run` or of each thread, divided by N) or system calls
/// under `strace -c -f`. It prints each thread's context switches and
/// time on a CPU per message over the counted run.
fn sends_only() -> Option<(String, u64)> {
    let n = std::env::var("GANTRY_BENCH_BRIDGE_SENDS")
        .ok()?
        .parse::<u64>()
        .ok()?;
    let cell = std::env::var("GANTRY_BENCH_BRIDGE_CELL").unwrap_or_else(|_| "bridge".into());
    Some((cell, n))
}

/// This process's threads' context switches (voluntary, involuntary)
/// and time on a CPU (ns), by thread name, read from /proc.
struct Switches(Vec<(String, u64, u64, u64)>);

impl Switches {
    fn now() -> Switches {
        let mut threads = Vec::new();
        for task in std::fs::read_dir("/proc/self/task").into_iter().flatten() {
            let Ok(task) = task else { continue };
            let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
                continue;
            };
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_owned())
                    .unwrap_or_default()
            };
            let name = format!("{}:{}", field("Name:"), task.file_name().to_string_lossy());
            let voluntary = field("voluntary_ctxt_switches:").parse().unwrap_or(0);
            let involuntary = field("nonvoluntary_ctxt_switches:").parse().unwrap_or(0);
            let cpu = std::fs::read_to_string(task.path().join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse().ok())
                .unwrap_or(0);
            threads.push((name, voluntary, involuntary, cpu));
        }
        Switches(threads)
    }

    /// Prints each thread's switches since `self`, per message.
    fn report(&self, n: u64) {
        let mut total = 0;
        for (name, v, i, cpu) in Switches::now().0 {
            let (v0, i0, cpu0) = self
                .0
                .iter()
                .find(|(t, ..)| *t == name)
                .map_or((0, 0, 0), |(_, v, i, c)| (*v, *i, *c));
            total += cpu - cpu0;
            println!(
                "switches {name}: voluntary {:.4}/msg, involuntary {:.4}/msg, cpu {:.0} ns/msg",
                (v - v0) as f64 / n as f64,
                (i - i0) as f64 / n as f64,
                (cpu - cpu0) as f64 / n as f64
            );
        }
        println!("cpu, all threads: {:.0} ns/msg", total as f64 / n as f64);
    }
}

/// Messages per interleaved batch: two windows of 2048 in flight, some
/// 3 to 8 ms here.
const BATCH: u64 = 4096;

fn bench(c: &mut Criterion) {
    let Some(server) = server() else {
        println!("skipped: nats-server not found (install nats-server to run it)");
        return;
    };
    let url = format!("nats://127.0.0.1:{}", server.port);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The raw clients drop their subscriptions inside the runtime.
    let _inside = runtime.enter();
    // The very bytes the bridge sends for ("hello", 42).
    let mut payload = Vec::new();
    gantry_nats::wire::encode(1, &[Value::str("hello"), Value::Int(42)], &mut payload).unwrap();
    let payload = bytes::Bytes::from(payload);
    let (publisher, mut subscriber) = runtime.block_on(async {
        let publisher = async_nats::connect(&url).await.unwrap();
        let receiver = async_nats::connect(&url).await.unwrap();
        let subscriber = receiver.subscribe("raw.Chat.Say").await.unwrap();
        receiver.flush().await.unwrap();
        (publisher, subscriber)
    });
    if let Some((cell, n)) = sends_only() {
        // Connected and a first window sent, then the counted run.
        let mut run: Box<dyn FnMut(u64) -> Duration> = match cell.as_str() {
            "raw" => Box::new(|n| raw_run(&runtime, &publisher, &mut subscriber, &payload, n)),
            "bridge" => {
                let nodes = Nodes::start(&url);
                Box::new(move |n| bridge_run(&nodes, n, Idle::Sleep))
            }
            other => panic!("GANTRY_BENCH_BRIDGE_CELL: `{other}` is not raw or bridge"),
        };
        run(2048);
        let before = Switches::now();
        let took = run(n);
        before.report(n);
        println!("{cell}: {n} messages in {took:?}");
        return;
    }
    // `GANTRY_BENCH_BRIDGE_INTERLEAVE=ROUNDS`: the throughput cells `raw`
    // and `bridge` by wall time, in batches of `BATCH` messages taken in
    // turn, ROUNDS each, outside criterion; prints each one's fastest
    // batches and the bridge's ratio to raw (see
    // `gantry_test_support::interleave`).
    if let Some(rounds) = gantry_test_support::interleave::rounds("GANTRY_BENCH_BRIDGE_INTERLEAVE")
    {
        use gantry_test_support::interleave::{Side, interleave, print};
        let nodes = Nodes::start(&url);
        let results = interleave(
            rounds,
            &mut [
                Side::new("raw", || {
                    raw_run(&runtime, &publisher, &mut subscriber, &payload, BATCH)
                }),
                Side::new("bridge", || bridge_run(&nodes, BATCH, Idle::Sleep)),
            ],
        );
        print("throughput", BATCH, &results);
        return;
    }
    let threaded = Publisher::start(&url, "raw.Chat.Say", payload.clone());
    let nodes = Nodes::start(&url);

    let mut group = c.benchmark_group("throughput");
    group.throughput(Throughput::Elements(1));
    group.bench_function("raw", |b| {
        b.iter_custom(|n| raw_run(&runtime, &publisher, &mut subscriber, &payload, n))
    });
    group.bench_function("raw_threaded", |b| {
        b.iter_custom(|n| {
            runtime.block_on(async {
                let start = Instant::now();
                threaded.orders.send(n).unwrap();
                for i in 1..=n {
                    tokio::time::timeout(PATIENCE, subscriber.next())
                        .await
                        .expect("raw lost messages");
                    // Given back 64 at a time: a waiting publisher is
                    // woken (a system call) once per 64, not per message,
                    // as a bridge's game thread refills its window once a
                    // pump.
                    if i % 64 == 0 || i == n {
                        threaded.window.add_permits(if i % 64 == 0 {
                            64
                        } else {
                            (i % 64) as usize
                        });
                    }
                }
                start.elapsed()
            })
        })
    });
    group.bench_function("bridge", |b| {
        b.iter_custom(|n| bridge_run(&nodes, n, Idle::Sleep))
    });
    group.finish();

    let mut group = c.benchmark_group("latency");
    group.bench_function("raw", |b| {
        b.iter_custom(|n| {
            runtime.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..n {
                    let start = Instant::now();
                    publisher
                        .publish("raw.Chat.Say", payload.clone())
                        .await
                        .unwrap();
                    tokio::time::timeout(PATIENCE, subscriber.next())
                        .await
                        .expect("raw lost a message");
                    total += start.elapsed();
                }
                total
            })
        })
    });
    group.bench_function("bridge", |b| {
        b.iter_custom(|n| (0..n).map(|_| nodes.run(1, Idle::Spin)).sum())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
