//! A Rust sender, listener or declaration that disagrees with a key's
//! declared type does not compile, and the compiler says why in its own
//! words (the `.stderr` files beside each case in `tests/ui/`).
//!
//! One test for every case: each compiles against the hub in its own
//! target directory, which is what costs.

#[test]
fn a_mismatched_rust_sender_or_listener_does_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
