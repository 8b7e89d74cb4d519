//! The CLI's end-to-end tests and the cross-language tests, one binary, one
//! module per behaviour. The `cli_*` modules run the built `gantry` binary
//! (`support::gantry`); `cross_language` runs Lua, Rhai and Rust in one
//! hub; `book` keeps the book's examples true, `architecture` the names
//! ARCHITECTURE.md cites.

mod architecture;
mod book;
mod book_transcripts;
mod cli_bridge;
mod cli_budgets;
mod cli_check;
mod cli_contract;
mod cli_errors;
mod cli_game;
mod cli_grants;
mod cli_lsp;
mod cli_profile;
mod cli_replay;
mod cli_run;
mod cli_stubs;
mod cli_test;
mod cli_trace;
mod cli_watch;
mod cli_why;
mod contract_verdicts;
mod cross_language;
mod example_game;
mod parity;
mod support;
