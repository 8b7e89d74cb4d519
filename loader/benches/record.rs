//! What `gantry run --record` costs: the Lua bus benchmark's send (a Lua
//! script's `NotifyMessage` to one Lua listener, baked) in a mod the
//! loader runs, without a recorder and with one writing to a buffered
//! file, in the same run. The target: recording costs at most 10%, and
//! nothing when off.
//!
//! As in the Lua bus benchmark, the sends are a Lua loop of at most
//! [`CHUNK`] sends started by one hub message each, so entering Lua from
//! Rust is paid once per 1,000 sends, as in a game's tick. The recorder
//! is the hub's dispatch log, so the Lua lane stays on: each send writes
//! a compact record into the recorder's buffer itself on this thread, and
//! the recorder's writer thread formats and writes the file. Beside them, a tracer that does nothing: what a
//! recorder that was a tracer cost before it wrote a byte (the hub's
//! traced path, no Lua lane).

use std::cell::Cell;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use gantry_host::{Key, Source, TraceEvent};
use gantry_loader::record::Recorder;
use gantry_loader::{Game, Options, TableChoice};

/// The bus benchmark's baked send to one listener, run by a message.
const SCRIPT: &str = r#"
count = 0
ListenMessage("Bench.Hit", nil, function(a, b) count = count + 1 end)
function run(n)
  for i = 1, n do NotifyMessage("Bench.Hit", i, 1.5) end
end
ListenMessage("Bench.Run", nil, function(n) run(n) end)
"#;

const CHUNK: u64 = 1000;

fn open(dir: &Path) -> (Game, Key) {
    std::fs::write(dir.join("bench.lua"), SCRIPT).unwrap();
    let options = Options {
        table: TableChoice::Off,
        ..Options::default()
    };
    let mut game = Game::open(dir, options).expect("the mod opens");
    game.load();
    assert!(!game.failed(), "the bench script loads");
    let run = game.hub().key("Bench.Run").unwrap();
    (game, run)
}

/// The time this thread has spent on a CPU, to the nanosecond.
fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// How a cell's time is taken: wall-clock (the figure), or the game
/// thread's own CPU time (what the sends cost this thread whatever else
/// the machine runs, the writer thread included).
#[derive(Clone, Copy)]
enum Clock {
    Wall,
    ThreadCpu,
}

fn sends(game: &Game, run: Key, iters: u64, clock: Clock) -> Duration {
    let hub = game.hub();
    let cpu = matches!(clock, Clock::ThreadCpu).then(thread_cpu).flatten();
    let start = Instant::now();
    let mut left = iters;
    while left > 0 {
        let chunk = left.min(CHUNK);
        hub.send(run, Source::Global, (chunk as i64,)).unwrap();
        left -= chunk;
    }
    let elapsed = match (cpu, thread_cpu()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => start.elapsed(),
    };
    assert!(hub.take_reports().is_empty(), "the bench script failed");
    elapsed
}

/// `GANTRY_BENCH_RECORD_SENDS=N`: runs only the sends without a recorder
/// and with one, N each, outside criterion, for an instruction count under
/// callgrind (`valgrind --tool=callgrind`, then the inclusive cost of
/// `sends_off` and `sends_recording`, divided by N + [`CHUNK`]).
///
/// Both run in one game, first without the recorder, then with it: one
/// Lua state, so one string-hash seed. Each state's seed puts the
/// script's global names in its own places, which moves a send's count by
/// some 18 instructions from one state to the next: with a game each,
/// that was a ratio of 1.04 or 1.06 for the same build, by the seeds.
fn record_sends_only() -> bool {
    let Some(sends) = std::env::var("GANTRY_BENCH_RECORD_SENDS")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
    else {
        return false;
    };
    let dir = tempfile::tempdir().unwrap();
    let (game, run) = open(dir.path());
    // Once each first: the lanes are taken before the counted runs.
    sends_off(&game, run, CHUNK);
    sends_off(&game, run, sends);
    let out = tempfile::tempdir().unwrap();
    let recorder = Recorder::create(
        &out.path().join("bench.gantry-rec"),
        &game,
        Rc::new(Cell::new(1u32)),
    )
    .expect("a recording");
    recorder.loaded();
    sends_recording(&game, run, CHUNK);
    sends_recording(&game, run, sends);
    recorder.finish().expect("the recording is written");
    true
}

#[inline(never)]
fn sends_off(game: &Game, run: Key, iters: u64) -> Duration {
    std::hint::black_box(1u8); // Each body its own: never folded into one symbol.
    sends(game, run, iters, Clock::Wall)
}

#[inline(never)]
fn sends_recording(game: &Game, run: Key, iters: u64) -> Duration {
    std::hint::black_box(2u8); // Each body its own: never folded into one symbol.
    sends(game, run, iters, Clock::Wall)
}

/// Sends per interleaved batch: [`CHUNK`], as in the criterion cells, so
/// that entering Lua from Rust weighs on a batch as it does there.
const BATCH: u64 = CHUNK;

fn bench(c: &mut Criterion) {
    if record_sends_only() {
        return;
    }
    let off_dir = tempfile::tempdir().unwrap();
    let (off, off_run) = open(off_dir.path());

    let on_dir = tempfile::tempdir().unwrap();
    let (on, on_run) = open(on_dir.path());
    let out = tempfile::tempdir().unwrap();
    let tick = Rc::new(Cell::new(1u32));
    let file = out.path().join("bench.gantry-rec");
    let recorder = Recorder::create(&file, &on, tick).expect("a recording");
    recorder.loaded();

    // The floor of any recorder that is a tracer: a tracer that does
    // nothing (the hub's traced path, no Lua fast path).
    let traced_dir = tempfile::tempdir().unwrap();
    let (traced, traced_run) = open(traced_dir.path());
    traced
        .hub()
        .set_tracer(Some(Rc::new(|_: &TraceEvent<'_>| {})));

    // `GANTRY_BENCH_RECORD_INTERLEAVE=ROUNDS`: the send without a recorder
    // and with one by wall time, in batches of `BATCH` sends taken in
    // turn, ROUNDS each, outside criterion; prints each one's fastest
    // batches and their ratio (see `gantry_test_support::interleave`).
    if let Some(rounds) = gantry_test_support::interleave::rounds("GANTRY_BENCH_RECORD_INTERLEAVE")
    {
        use gantry_test_support::interleave::{Side, interleave, print};
        let results = interleave(
            rounds,
            &mut [
                Side::new("off", || sends(&off, off_run, BATCH, Clock::Wall)),
                Side::new("recording", || sends(&on, on_run, BATCH, Clock::Wall)),
            ],
        );
        print("record/lua_send_1_listener", BATCH, &results);
        recorder.finish().expect("the recording is written");
        return;
    }

    let mut group = c.benchmark_group("record");
    group.bench_function("lua_send_1_listener/off", |b| {
        b.iter_custom(|iters| sends(&off, off_run, iters, Clock::Wall))
    });
    group.bench_function("lua_send_1_listener/tracer_doing_nothing", |b| {
        b.iter_custom(|iters| sends(&traced, traced_run, iters, Clock::Wall))
    });
    group.bench_function("lua_send_1_listener/recording", |b| {
        b.iter_custom(|iters| sends(&on, on_run, iters, Clock::Wall))
    });
    // On a machine busy with other work the wall-clock cells measure the
    // machine too; these measure the game thread's own time.
    group.bench_function("lua_send_1_listener/off_thread_cpu", |b| {
        b.iter_custom(|iters| sends(&off, off_run, iters, Clock::ThreadCpu))
    });
    group.bench_function("lua_send_1_listener/recording_thread_cpu", |b| {
        b.iter_custom(|iters| sends(&on, on_run, iters, Clock::ThreadCpu))
    });
    group.finish();
    recorder.finish().expect("the recording is written");
    // A whole recording: it ends with its end line.
    let mut tail = std::fs::File::open(&file).unwrap();
    tail.seek(SeekFrom::End(-24)).unwrap();
    let mut end = String::new();
    tail.read_to_string(&mut end).unwrap();
    assert!(end.ends_with("\n{\"end\":true,\"ticks\":1}\n"), "{end}");
}

criterion_group!(benches, bench);
criterion_main!(benches);
