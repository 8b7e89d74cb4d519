//! The loader's tests, one binary: the library API as a game uses it,
//! and the Rust host example played as CI runs it.

mod game_api;
mod game_host_example;
mod quarantine;
mod recorded_sends;
mod recorded_values;
mod saved_state;
mod tick_budgets;
