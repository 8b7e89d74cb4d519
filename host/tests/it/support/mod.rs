pub mod collections;
pub mod log;
