//! Golden files for both outputs, on a table with every type and kind, and
//! byte-identical output for the same table whatever its history.
//! Update the files in `tests/it/golden/` with
//! `UPDATE_EXPECT=1 cargo test -p gantry-stubs --test it golden`.

use std::path::Path;

use expect_test::expect_file;
use gantry_host::SignatureTable;
use gantry_stubs::{lua_stubs, rhai_definitions, stub_files};
use gantry_test_support::signature_table::sample_table;

fn load(json: &str) -> SignatureTable {
    SignatureTable::from_json(json, Path::new("signatures.json")).expect("loads")
}

/// Same table → byte-identical files, whatever order the keys and structs
/// were declared in and whatever call sites were recorded since (sites are
/// not in the stubs: a `gantry run` that only records sites must not make
/// the next `gantry stubs` rewrite anything — "regenerated only when their
/// content changes"). A JSON round trip changes nothing either.
#[test]
fn the_same_table_gives_byte_identical_files_whatever_its_history() {
    let a = sample_table();
    // The same declarations in reverse order, structs too.
    let mut b = SignatureTable::new();
    for (name, def) in a.structs.defs.iter().rev() {
        b.declare_struct(name, def.clone());
    }
    for (key, entry) in a.entries().collect::<Vec<_>>().into_iter().rev() {
        b.keys.insert(key.to_owned(), entry.clone());
    }
    // Call sites recorded by a run.
    for entry in b.keys.values_mut() {
        entry.sites.insert(gantry_host::Site::new(
            "main.lua",
            7,
            gantry_host::Language::Lua,
            gantry_host::Role::Send,
        ));
    }
    let c = load(&b.to_json());
    let out = Path::new("/tmp/gantry-stubs-out");
    let files = stub_files(&a, out);
    assert_eq!(stub_files(&b, out), files);
    assert_eq!(stub_files(&c, out), files);
    assert_eq!(stub_files(&a, out), files);
}

#[test]
fn lua_meta_file_matches_the_golden_file() {
    let text = lua_stubs(&gantry_test_support::signature_table::sample_table());
    expect_file!["golden/gantry.lua"].assert_eq(&text);
}

#[test]
fn rhai_definitions_match_the_golden_files() {
    let files = rhai_definitions(&gantry_test_support::signature_table::sample_table());
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["GMP.d.rhai", "__static__.d.rhai"]);
    expect_file!["golden/GMP.d.rhai"].assert_eq(&files[0].1);
    expect_file!["golden/__static__.d.rhai"].assert_eq(&files[1].1);
}

#[test]
fn generation_is_deterministic() {
    let table = gantry_test_support::signature_table::sample_table();
    assert_eq!(lua_stubs(&table), lua_stubs(&table));
    assert_eq!(rhai_definitions(&table), rhai_definitions(&table));
}
