//! Runs a hostile case on its own thread with a deadline, so that a hang is
//! reported as a hang instead of a test that never ends, and a panic on the
//! case's thread fails the test with its own message. The Lua and Rhai
//! robustness tests include this file by path.

use std::sync::mpsc;
use std::time::Duration;

/// Keys a hostile program uses: ordinary ones, the host's tick, malformed
/// ones, and two far longer than a key may be.
pub fn hostile_keys() -> Vec<String> {
    let mut keys: Vec<String> = [
        "Game.Tick",
        "A",
        "A.B",
        "Hook.Go",
        "",
        "A..B",
        ".",
        "A.B.C.D",
    ]
    .map(String::from)
    .to_vec();
    keys.push("K.".repeat(200));
    keys.push("x".repeat(5000));
    keys
}

/// Runs `case` on a fresh thread and returns its result; panics if it has
/// not finished after `deadline`, and re-raises its panic if it panicked.
pub fn within<T: Send + 'static>(
    deadline: Duration,
    case: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = done.send(case());
    });
    match finished.recv_timeout(deadline) {
        Ok(value) => {
            worker.join().expect("the case's thread");
            value
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the case's thread ended without a result"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("a hostile program hung the host for {deadline:?}")
        }
    }
}

/// The longest single call of a hostile case, run on its own thread within
/// `deadline`: `start` builds a runtime on the hub, `load` loads the
/// hostile script on an object; then the hub sends three `Game.Tick`s and
/// pokes a few keys every way (`super::hub_poke`, which the including test
/// crate provides). Each of those calls is timed.
pub fn longest_call<R>(
    deadline: Duration,
    start: impl FnOnce(&gantry_host::Hub) -> R + Send + 'static,
    load: impl FnOnce(&R, gantry_host::ObjectId) + Send + 'static,
) -> Duration {
    use gantry_host::{Caller, Hub, Source, Value};
    use std::time::Instant;
    within(deadline, move || {
        let hub = Hub::new();
        let world = hub.create_world();
        let runtime = start(&hub);
        let mut longest = Duration::ZERO;
        let mut timed = |call: &mut dyn FnMut()| {
            let started = Instant::now();
            call();
            longest = longest.max(started.elapsed());
        };
        let object = hub.spawn(world).expect("object");
        let mut load = Some(load);
        timed(&mut || (load.take().expect("loaded once"))(&runtime, object));
        let tick = hub.key("Game.Tick").expect("key");
        for n in 0..3 {
            timed(&mut || {
                let mut args = vec![Value::Int(n), Value::Float(0.1)];
                let _ = hub.send_values(tick, Source::Global, &mut args, Caller::Unrecorded);
            });
        }
        timed(&mut || super::hub_poke::poke(&hub, world, object, &["A", "A.B", "Hook.Go"]));
        let _ = hub.take_reports();
        let _ = hub.destroy(object);
        drop(runtime);
        longest
    })
}
