//! Never panics on user input: stubs are generated from random tables that
//! a table file can hold (hand-written names, docs and types included), and
//! what is generated keeps its structure — the Lua meta file parses, and
//! every line of a Rhai definition file is a declaration or a doc comment.

use std::path::Path;

use gantry_host::SignatureTable;
use gantry_stubs::{lua_stubs, rhai_definitions, stub_files};
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

// ----- regressions ------------------------------------------------------------

/// Found by `lua_stubs_of_any_loadable_table_parse_as_lua`: a parameter
/// named `a\nb` in the table file ended the key alias's comment line, so
/// the meta file did not parse (`b: any)` became code).
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
