//! What the hostile-input tests of every crate share:
//! [`within`] runs a case on its own thread with a deadline, so that a hang
//! (a read blocked on a FIFO, a runaway script) fails the test instead of
//! never ending, and a panic on the case's thread fails it with its own
//! message; [`mkfifo`] makes the FIFO; [`hostile_keys`] are the keys a
//! hostile program uses.
#![allow(dead_code)]

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
            panic!("the case did not return within {deadline:?}: it blocked or hung")
        }
    }
}

/// Makes a FIFO at `path` (a reader of it blocks until a writer comes).
#[cfg(unix)]
pub fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}
