//! What the tests of more than one Gantry crate (or a crate's unit and
//! integration tests both) share, so that no test includes another
//! crate's file by path. Each crate's own fixtures stay in its
//! `tests/it/support` module.
//!
//! - [`guard`]: a deadline for a case that might hang, a FIFO, hostile keys.
//! - [`interleave`]: a benchmark's wall time beside its baseline's, on a
//!   machine that stalls (the benches use it).
//! - [`hub_poke`] and [`hostile_case`]: what the script faces' hostile-program
//!   tests do to a hub, and the programs they draw.
//! - [`log`]: a log of what listeners heard, in order.
//! - [`signature_table`]: the table the stub generators are tested on.
//! - `emmylua` (feature `emmylua`): EmmyLua's own analysis, run in-process.

pub mod guard;
pub mod hostile_case;
pub mod hub_poke;
pub mod interleave;
pub mod log;
pub mod signature_table;

#[cfg(feature = "emmylua")]
pub mod emmylua;
