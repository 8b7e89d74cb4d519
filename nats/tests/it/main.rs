//! The bridge against a real `nats-server -js` on a free loopback port.
//!
//! Each test starts its own server (see `cluster`); without the binary a
//! test prints one `skipped:` line and passes, except under `CI`, where a
//! missing server is a failure. Every wait is bounded.

mod cluster;

mod faults;
mod hostile_payloads;
mod once;
mod requests;
mod sends_cross;
mod store_bounds;
mod stored;
