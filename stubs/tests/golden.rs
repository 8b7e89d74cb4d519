//! Golden files for both outputs, on a table with every type and kind.
//! Update with `UPDATE_EXPECT=1 cargo test -p gantry-stubs --test golden`.

#[path = "../../test-support/src/signature_table.rs"]
mod common;

use expect_test::expect_file;
use gantry_stubs::{lua_stubs, rhai_definitions};

#[test]
fn lua_meta_file_matches_the_golden_file() {
    let text = lua_stubs(&common::sample_table());
    expect_file!["golden/gantry.lua"].assert_eq(&text);
}

#[test]
fn rhai_definitions_match_the_golden_files() {
    let files = rhai_definitions(&common::sample_table());
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["GMP.d.rhai", "__static__.d.rhai"]);
    expect_file!["golden/GMP.d.rhai"].assert_eq(&files[0].1);
    expect_file!["golden/__static__.d.rhai"].assert_eq(&files[1].1);
}

#[test]
fn generation_is_deterministic() {
    let table = common::sample_table();
    assert_eq!(lua_stubs(&table), lua_stubs(&table));
    assert_eq!(rhai_definitions(&table), rhai_definitions(&table));
}
