//! Collection messages: a key whose message is a table of struct rows, heard
//! row by row, by fixed position (slot), whole, or as the update alone.

mod delivery;
mod diff;
mod forms;
mod kept;
mod lifetime;
mod mirror;
mod order;
mod recognition;
mod removal;
mod replay;
mod row_path;
mod send;
mod slots;
mod writer;
