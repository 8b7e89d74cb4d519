//! The stub generators' integration tests, one binary, one module per
//! behaviour. The golden files live in `golden/` beside `golden.rs`.

mod editor_config;
mod golden;
mod lua_types;
mod luals_addon;
mod mod_contract;
mod regenerate;
mod rhai_definitions;
mod robustness;
