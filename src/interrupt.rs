//! Ctrl-C during `gantry run`: stop, save the table, exit.
//!
//! The first Ctrl-C asks the run to stop after the tick (or script load)
//! under way. A call that does not end on its own within [`GRACE`] — a
//! script stuck in a loop, a long built-in — is stopped through the
//! runtimes' interrupters, again every [`AGAIN`] until the run has left
//! its loop (a Rhai interrupt stops one outermost call, and the tick may
//! go on to the next stuck listener). The table is then saved as after any
//! run. A second Ctrl-C exits at once, without saving: the way out when
//! even that hangs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::out::errln;

/// How long a call may go on after Ctrl-C before it is interrupted.
const GRACE: Duration = Duration::from_millis(200);

/// How often the interrupt is repeated until the run stops calling scripts.
const AGAIN: Duration = Duration::from_millis(50);

/// The exit status of a run cut short by Ctrl-C (128 + SIGINT).
pub const INTERRUPTED: u8 = 130;

/// Stops the script call running in any runtime, from another thread.
pub type Interrupt = gantry_loader::Interrupt;

/// The installed Ctrl-C handler, as the run sees it.
pub struct CtrlC {
    pressed: Arc<AtomicBool>,
    finished: Arc<AtomicBool>,
}

impl CtrlC {
    /// Installs the handler (once per process).
    pub fn install(interrupt: Interrupt) -> anyhow::Result<Self> {
        let pressed = Arc::new(AtomicBool::new(false));
        let finished = Arc::new(AtomicBool::new(false));
        let (flag, done) = (pressed.clone(), finished.clone());
        ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                errln!("gantry: interrupted again; exiting without saving the table");
                std::process::exit(i32::from(INTERRUPTED));
            }
            // Not in the handler itself: it must stay free for a second press.
            let (done, interrupt) = (done.clone(), interrupt.clone());
            std::thread::spawn(move || {
                let deadline = Instant::now() + GRACE;
                while !done.load(Ordering::SeqCst) {
                    if Instant::now() >= deadline {
                        interrupt();
                    }
                    std::thread::sleep(AGAIN);
                }
            });
        })
        .context("installing the Ctrl-C handler")?;
        Ok(Self { pressed, finished })
    }

    /// Was Ctrl-C pressed?
    pub fn pressed(&self) -> bool {
        self.pressed.load(Ordering::SeqCst)
    }

    /// The run calls no more scripts: nothing left to interrupt.
    pub fn finished(&self) {
        self.finished.store(true, Ordering::SeqCst);
    }

    /// Sleeps for `length`, waking early when Ctrl-C is pressed.
    pub fn sleep(&self, length: Duration) {
        let until = Instant::now() + length;
        while !self.pressed() {
            let Some(left) = until.checked_duration_since(Instant::now()) else {
                return;
            };
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }
}
