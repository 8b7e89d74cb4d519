//! Never panics on user input: stubs are generated from random tables that
//! a table file can hold (hand-written names, docs and types included), and
//! what is generated keeps its structure — the Lua meta file parses, and
//! every line of a Rhai definition file is a declaration or a doc comment.

use std::path::Path;

use gantry_host::SignatureTable;
use gantry_stubs::{lua_stubs, rhai_definitions, stub_files};
use gantry_test_support::guard;
use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};

fn load(text: &str) -> Option<SignatureTable> {
    SignatureTable::from_json(text, Path::new("robust.json")).ok()
}

/// Names as a hand-edited file may have them: identifiers, reserved words,
/// duplicates, punctuation, comment and string breakers, newlines.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z_][a-z0-9_]{0,5}",
        2 => prop::sample::select(vec![
            "end", "function", "obj", "world", "key", "fn", "rsp", "update", "reply", "self",
            "1st", "", "a-b", "a b", "a\nb", "a\r\nend", "]]", "--", "*/", "/*", "\"", "`",
            "é", "🎮", "obj2", "handler",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,8}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

fn doc() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "\\PC{0,20}",
        prop::sample::select(vec![
            "line one\nline two",
            "\r\nend\r\n",
            "*/ fn evil() {} /*",
            "]] end --[[",
            "\n---@class Evil\n",
        ])
        .prop_map(str::to_owned),
    ]
}

const STRUCT_NAMES: &[&str] = &["Item", "Weapon", "Hit", "A", "B", "end", "self"];

fn type_text() -> impl Strategy<Value = String> {
    let base = prop::sample::select(vec![
        "any", "nil", "bool", "int", "float", "string", "object", "Item", "Weapon", "Hit", "A",
        "B", "end", "self", "Unknown",
    ])
    .prop_map(str::to_owned);
    base.prop_recursive(3, 6, 1, |inner| inner.prop_map(|t| format!("array<{t}>")))
}

fn params(max: usize) -> impl Strategy<Value = Json> {
    prop::collection::vec((name(), type_text()), 0..max).prop_map(|ps| {
        Json::Array(
            ps.into_iter()
                .map(|(name, ty)| json!({ "name": name, "type": ty }))
                .collect(),
        )
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z_][A-Za-z0-9_]{0,5}(\\.[A-Za-z0-9_]{1,5}){0,3}",
        1 => prop::sample::select(vec![
            "end", "Player.Hurt", "Inv.Items", "a.b__c", "A__B", "_", "0", "9.9", "function.end",
        ])
        .prop_map(str::to_owned),
    ]
}

fn entry() -> impl Strategy<Value = Json> {
    (
        prop::sample::select(vec!["event", "store", "collection", "hook"]),
        prop::sample::select(vec!["declared", "observed"]),
        doc(),
        params(5),
        prop::option::of(params(3)),
    )
        .prop_map(|(kind, origin, doc, params, response)| {
            let mut m = Map::new();
            m.insert("kind".into(), json!(kind));
            m.insert("origin".into(), json!(origin));
            m.insert("doc".into(), json!(doc));
            m.insert("params".into(), params);
            if let Some(response) = response {
                m.insert("response".into(), response);
            }
            Json::Object(m)
        })
}

fn struct_def() -> impl Strategy<Value = Json> {
    (
        prop::option::of(prop::sample::select(STRUCT_NAMES.to_vec())),
        doc(),
        params(4),
    )
        .prop_map(|(parent, doc, fields)| {
            let mut m = Map::new();
            if let Some(parent) = parent {
                m.insert("parent".into(), json!(parent));
            }
            m.insert("doc".into(), json!(doc));
            m.insert("fields".into(), fields);
            Json::Object(m)
        })
}

/// A table a table file can hold: it loads.
fn table() -> impl Strategy<Value = SignatureTable> {
    (
        prop::collection::vec(
            (prop::sample::select(STRUCT_NAMES.to_vec()), struct_def()),
            0..4,
        ),
        prop::collection::vec((key(), entry()), 0..6),
    )
        .prop_filter_map("not a loadable table", |(structs, keys)| {
            let structs: Map<String, Json> = structs
                .into_iter()
                .map(|(n, d)| (n.to_owned(), d))
                .collect();
            let keys: Map<String, Json> = keys.into_iter().collect();
            load(&json!({ "version": 1, "structs": structs, "keys": keys }).to_string())
        })
}

/// The Lua meta file parses without a syntax error.
fn assert_lua_parses(text: &str) {
    let tree = gantry_lua::syntax::parse(text, None).expect("tree-sitter parses");
    let root = tree.root_node();
    if root.has_error() {
        // Name the first broken line.
        let mut cursor = root.walk();
        let mut line = 0;
        'find: loop {
            let node = cursor.node();
            if node.is_error() || node.is_missing() {
                line = node.start_position().row;
                break;
            }
            if node.has_error() && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'find;
                }
            }
        }
        let around: Vec<&str> = text.lines().skip(line.saturating_sub(2)).take(5).collect();
        panic!(
            "the Lua stub does not parse near line {}:\n{}",
            line + 1,
            around.join("\n")
        );
    }
}

/// Every line of a definition file is blank, a doc comment or a
/// declaration: nothing from the table broke out of a comment.
fn assert_rhai_lines(name: &str, text: &str) {
    for (i, line) in text.lines().enumerate() {
        let ok = line.is_empty()
            || ["///", "fn ", "module ", "const "]
                .iter()
                .any(|p| line.starts_with(p));
        assert!(ok, "{name}:{}: not a declaration: {line:?}", i + 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn lua_stubs_of_any_loadable_table_parse_as_lua(table in table()) {
        let text = lua_stubs(&table);
        assert_lua_parses(&text);
        prop_assert_eq!(lua_stubs(&table), text, "deterministic");
    }

    #[test]
    fn rhai_definitions_of_any_loadable_table_are_declarations_only(table in table()) {
        let files = rhai_definitions(&table);
        for (name, text) in &files {
            assert_rhai_lines(name, text);
        }
        prop_assert_eq!(rhai_definitions(&table), files, "deterministic");
    }

    #[test]
    fn stub_files_of_any_loadable_table_never_panic(table in table()) {
        let files = stub_files(&table, Path::new("/tmp/gantry-robustness-stubs"));
        prop_assert!(files.iter().any(|f| f.path == gantry_stubs::LUA_FILE));
        for file in &files {
            if file.path.ends_with(".json") {
                let parsed: Result<Json, _> = serde_json::from_str(&file.content);
                prop_assert!(parsed.is_ok(), "{} is not JSON", file.path);
            }
        }
    }
}

/// A parameter named `a\nb` in the table file stays inside the key alias's
/// comment line: the meta file still parses (`b: any)` never becomes code).
#[test]
fn lua_stub_parameter_name_with_a_newline_stays_in_its_comment() {
    let table = load(r#"{"version":1,"keys":{"a":{"origin":"declared","params":[{"name":"a\nb","type":"any"}]}}}"#)
        .unwrap();
    assert_lua_parses(&lua_stubs(&table));
}

/// Struct, parent and field names are not checked when a table file loads;
/// a newline in one ended its `---@class` / `---@field` comment.
#[test]
fn lua_stub_struct_and_field_names_with_newlines_stay_in_their_comments() {
    let table = load(
        r#"{"version":1,"structs":{"A\nend":{"parent":"B\nend","fields":[{"name":"x\nend end","type":"int"}]}},"keys":{}}"#,
    )
    .unwrap();
    assert_lua_parses(&lua_stubs(&table));
}

/// Found by `rhai_definitions_of_any_loadable_table_are_declarations_only`:
/// a response parameter named `a\nb` ended the `/// reply:` doc line (and a
/// message parameter the key's doc line).
#[test]
fn rhai_definition_parameter_names_with_newlines_stay_in_their_doc_lines() {
    let table = load(r#"{"version":1,"keys":{"_":{"origin":"declared","params":[{"name":"p\nq","type":"int"}],"response":[{"name":"a\nb","type":"any"}]}}}"#)
        .unwrap();
    for (name, text) in rhai_definitions(&table) {
        assert_rhai_lines(&name, &text);
    }
}

/// A small table with one key, so the stubs have content.
fn one_key_table() -> SignatureTable {
    let mut table = SignatureTable::new();
    table
        .declare(
            "Door.Open",
            gantry_host::KeyDecl::event().param("door", gantry_host::Type::Object),
            None,
        )
        .unwrap();
    table
}

/// A mod folder `mod` beside a `victim` folder holding `important.txt`,
/// both in a fresh temporary folder.
struct Layout {
    _root: tempfile::TempDir,
    mod_dir: std::path::PathBuf,
    victim: std::path::PathBuf,
}

impl Layout {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let mod_dir = root.path().join("mod");
        let victim = root.path().join("victim");
        std::fs::create_dir_all(mod_dir.join(".gantry/stubs")).unwrap();
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(victim.join("important.txt"), "keep me").unwrap();
        Layout {
            _root: root,
            mod_dir,
            victim,
        }
    }

    fn stubs(&self) -> std::path::PathBuf {
        self.mod_dir.join(".gantry/stubs")
    }

    fn write(&self) -> Result<gantry_stubs::WriteReport, gantry_stubs::StubsError> {
        gantry_stubs::write_stubs_in(&one_key_table(), &self.mod_dir, &self.stubs())
    }

    fn victim_untouched(&self) {
        let names: Vec<_> = std::fs::read_dir(&self.victim)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["important.txt"]);
        assert_eq!(
            std::fs::read_to_string(self.victim.join("important.txt")).unwrap(),
            "keep me"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_shipped_link_and_manifest_line_cannot_make_stubs_delete_outside_the_folder() {
    let layout = Layout::new();
    std::os::unix::fs::symlink("../../../victim", layout.stubs().join("evil")).unwrap();
    std::fs::write(
        layout.stubs().join(gantry_stubs::MANIFEST),
        "evil/important.txt\n",
    )
    .unwrap();
    let report = layout.write().unwrap();
    layout.victim_untouched();
    assert!(report.removed.is_empty(), "{report:?}");
    assert_eq!(report.ignored.len(), 1, "{report:?}");
    assert!(
        report.ignored[0].starts_with("evil/important.txt: ")
            && report.ignored[0].contains("evil is a symbolic link"),
        "{report:?}"
    );
    // The manifest now lists only what this run generated.
    let manifest = std::fs::read_to_string(layout.stubs().join(gantry_stubs::MANIFEST)).unwrap();
    assert!(!manifest.contains("evil"), "{manifest}");
}

#[test]
fn manifest_lines_leading_out_of_the_folder_are_ignored() {
    let layout = Layout::new();
    let absolute = layout.victim.join("important.txt");
    std::fs::write(
        layout.stubs().join(gantry_stubs::MANIFEST),
        format!(
            "../../../victim/important.txt\n{}\n./lua/../../x\n",
            absolute.display()
        ),
    )
    .unwrap();
    let report = layout.write().unwrap();
    layout.victim_untouched();
    assert!(report.removed.is_empty(), "{report:?}");
    assert_eq!(report.ignored.len(), 3, "{report:?}");
}

#[cfg(unix)]
#[test]
fn a_shipped_lua_folder_link_is_refused_and_nothing_is_written_through_it() {
    let layout = Layout::new();
    std::os::unix::fs::symlink("../../../victim", layout.stubs().join("lua")).unwrap();
    let err = layout.write().unwrap_err();
    assert!(
        err.to_string()
            .contains("lua is a symbolic link; Gantry writes nothing through it"),
        "{err}"
    );
    layout.victim_untouched();
}

#[cfg(unix)]
#[test]
fn a_gantry_folder_that_links_out_of_the_mod_folder_gets_no_stubs() {
    let layout = Layout::new();
    std::fs::remove_dir_all(layout.mod_dir.join(".gantry")).unwrap();
    std::os::unix::fs::symlink("../victim", layout.mod_dir.join(".gantry")).unwrap();
    let err = layout.write().unwrap_err();
    assert!(
        err.to_string().contains(".gantry is a symbolic link"),
        "{err}"
    );
    layout.victim_untouched();
}

#[cfg(unix)]
#[test]
fn a_generated_stub_replaced_by_a_link_is_replaced_again_not_written_through() {
    let layout = Layout::new();
    layout.write().unwrap();
    let stub = layout.stubs().join(gantry_stubs::LUA_FILE);
    let generated = std::fs::read_to_string(&stub).unwrap();
    std::fs::remove_file(&stub).unwrap();
    std::os::unix::fs::symlink(layout.victim.join("important.txt"), &stub).unwrap();
    let report = layout.write().unwrap();
    assert!(
        report.written.contains(&gantry_stubs::LUA_FILE.to_owned()),
        "{report:?}"
    );
    layout.victim_untouched();
    assert!(!std::fs::symlink_metadata(&stub).unwrap().is_symlink());
    assert_eq!(std::fs::read_to_string(&stub).unwrap(), generated);
}

#[cfg(unix)]
#[test]
fn a_link_where_a_stub_goes_that_no_run_generated_is_not_ours() {
    let layout = Layout::new();
    std::fs::create_dir_all(layout.stubs().join("lua")).unwrap();
    let stub = layout.stubs().join(gantry_stubs::LUA_FILE);
    std::os::unix::fs::symlink(layout.victim.join("important.txt"), &stub).unwrap();
    let err = layout.write().unwrap_err();
    assert!(
        matches!(err, gantry_stubs::StubsError::NotOurs { .. }),
        "{err}"
    );
    assert!(std::fs::symlink_metadata(&stub).unwrap().is_symlink());
    layout.victim_untouched();
}

#[cfg(unix)]
#[test]
fn a_fifo_where_a_stub_goes_is_an_error_not_a_hang() {
    let layout = Layout::new();
    layout.write().unwrap();
    let stub = layout.stubs().join(gantry_stubs::LUA_FILE);
    std::fs::remove_file(&stub).unwrap();
    guard::mkfifo(&stub);
    let (mod_dir, out) = (layout.mod_dir.clone(), layout.stubs());
    let err = guard::within(std::time::Duration::from_secs(5), move || {
        gantry_stubs::write_stubs_in(&one_key_table(), &mod_dir, &out)
            .unwrap_err()
            .to_string()
    });
    assert!(
        err.contains("lua/gantry.lua is a FIFO (named pipe), not a regular file"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_manifest_linked_to_a_device_is_not_read() {
    let layout = Layout::new();
    std::os::unix::fs::symlink("/dev/zero", layout.stubs().join(gantry_stubs::MANIFEST)).unwrap();
    let (mod_dir, stubs) = (layout.mod_dir.clone(), layout.stubs());
    let out = stubs.clone();
    let report = guard::within(std::time::Duration::from_secs(5), move || {
        gantry_stubs::write_stubs_in(&one_key_table(), &mod_dir, &out).unwrap()
    });
    assert!(!report.written.is_empty(), "{report:?}");
    assert!(
        !std::fs::symlink_metadata(stubs.join(gantry_stubs::MANIFEST))
            .unwrap()
            .is_symlink()
    );
}
