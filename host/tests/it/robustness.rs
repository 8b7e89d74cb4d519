//! Never panics on user input: table files (random text, random JSON and
//! random table-shaped JSON), key text, and sends of random values on a hub
//! loaded from a random table. Errors are types that name the user's thing.

use std::path::Path;
use std::rc::Rc;

use gantry_host::collection::listen::{RowFn, TableFn};
use gantry_host::face::Faced;
use gantry_host::hook::HookOptions;
use gantry_host::key::validate_key;
use gantry_host::{
    ALL_ROWS_WITH_REMOVAL, Caller, Hub, HubError, KeyDecl, KeyError, ListenOptions, Match,
    ObjectId, SignatureTable, Source, StructValue, TableError, Type, Value,
};
use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};

const PATH: &str = "mods/.gantry/robust.json";

fn load(text: &str) -> Result<SignatureTable, TableError> {
    SignatureTable::from_json(text, Path::new(PATH))
}

/// A table-file error names the file.
fn assert_names_the_file(err: &TableError) {
    let text = err.to_string();
    assert!(text.contains(PATH), "error does not name the file: {text}");
}

/// A loaded table is what it claims: valid keys, and it saves to text that
/// loads back to the same table.
fn assert_sane(table: &SignatureTable) {
    for (key, _) in table.entries() {
        assert!(validate_key(key).is_ok(), "loaded an invalid key {key:?}");
    }
    let again = load(&table.to_json()).expect("a saved table loads");
    assert_eq!(&again, table);
}

fn any_json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>().prop_map(Json::from),
        "\\PC{0,12}".prop_map(Json::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::vec(
                (prop_oneof!["\\PC{0,8}", Just("version".to_owned())], inner),
                0..6
            )
            .prop_map(|pairs| Json::Object(pairs.into_iter().collect())),
        ]
    })
}

/// Key text: mostly well-formed, often not.
fn key_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[A-Za-z0-9_]{1,6}(\\.[A-Za-z0-9_]{1,6}){0,3}",
        1 => prop::sample::select(vec![
            "", ".", "..", "a.", ".a", "a..b", "Player.Hurt", "Inv.Items", "A.B.C", "bad key",
            "Ünï.cøde", "a.b.", "_", "0", "a\u{0}b", "a\nb", "🎮.Key",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,12}",
        1 => any::<String>(),
    ]
}

const STRUCT_NAMES: &[&str] = &["Item", "Weapon", "Hit", "A", "B", "Self_", "Unknown"];

/// Type text as a user might write it: good, bad, nested and unknown names.
fn type_text() -> impl Strategy<Value = String> {
    let base = prop_oneof![
        4 => prop::sample::select(vec![
            "any", "nil", "bool", "int", "float", "string", "object", "Item", "Weapon", "Hit",
            "A", "B", "Self_", "Unknown",
        ])
        .prop_map(str::to_owned),
        1 => prop::sample::select(vec![
            "", " int ", "Int", "array<", "array<>", "array<int", "array>", "<>", "9lives",
            "array<array<", "map<int>", "array < int >", "int?", "a b",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,8}",
    ];
    base.prop_recursive(4, 8, 1, |inner| inner.prop_map(|t| format!("array<{t}>")))
}

fn param() -> impl Strategy<Value = Json> {
    (
        prop_oneof![
            3 => "[a-z_]{1,6}",
            1 => "\\PC{0,8}",
            1 => prop::sample::select(vec!["end", "obj", "key", "1st", "", "a-b", "a\nb", "fn"])
                .prop_map(str::to_owned),
        ],
        type_text(),
    )
        .prop_map(|(name, ty)| json!({ "name": name, "type": ty }))
}

fn site() -> impl Strategy<Value = Json> {
    (
        "\\PC{0,10}",
        prop_oneof![any::<u32>().prop_map(Json::from), Just(json!(u64::MAX)), Just(json!(-1))],
        any::<u32>(),
        prop::sample::select(vec!["rust", "lua", "rhai", "cobol"]),
        prop::sample::select(vec!["declare", "send", "listen", "shout"]),
    )
        .prop_map(|(file, line, column, language, role)| {
            json!({ "file": file, "line": line, "column": column, "language": language, "role": role })
        })
}

fn entry() -> impl Strategy<Value = Json> {
    (
        prop::option::of(prop::sample::select(vec![
            "event",
            "store",
            "collection",
            "hook",
            "bogus",
        ])),
        prop::option::of(prop::sample::select(vec![
            "declared", "observed", "guessed",
        ])),
        prop::option::of("\\PC{0,20}"),
        prop::option::of(prop::collection::vec(param(), 0..5)),
        prop::option::of(prop::collection::vec(param(), 0..3)),
        prop::option::of(prop::collection::vec(site(), 0..3)),
    )
        .prop_map(|(kind, origin, doc, params, response, sites)| {
            let mut m = Map::new();
            if let Some(kind) = kind {
                m.insert("kind".into(), json!(kind));
            }
            if let Some(origin) = origin {
                m.insert("origin".into(), json!(origin));
            }
            if let Some(doc) = doc {
                m.insert("doc".into(), json!(doc));
            }
            if let Some(params) = params {
                m.insert("params".into(), Json::Array(params));
            }
            if let Some(response) = response {
                m.insert("response".into(), Json::Array(response));
            }
            if let Some(sites) = sites {
                m.insert("sites".into(), Json::Array(sites));
            }
            Json::Object(m)
        })
}

fn struct_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(STRUCT_NAMES.to_vec()).prop_map(str::to_owned),
        1 => "\\PC{0,8}",
    ]
}

fn struct_def() -> impl Strategy<Value = Json> {
    (
        prop::option::of(struct_name()),
        prop::option::of("\\PC{0,12}"),
        prop::collection::vec(param(), 0..4),
    )
        .prop_map(|(parent, doc, fields)| {
            let mut m = Map::new();
            if let Some(parent) = parent {
                m.insert("parent".into(), json!(parent));
            }
            if let Some(doc) = doc {
                m.insert("doc".into(), json!(doc));
            }
            m.insert("fields".into(), Json::Array(fields));
            Json::Object(m)
        })
}

fn version() -> impl Strategy<Value = Option<Json>> {
    prop_oneof![
        8 => Just(Some(json!(1))),
        1 => Just(Some(json!(0))),
        1 => Just(Some(json!(2))),
        1 => Just(Some(json!(u64::MAX))),
        1 => Just(Some(json!(u64::from(u32::MAX) + 1))),
        1 => Just(Some(json!(-1))),
        1 => Just(Some(json!(1.5))),
        1 => Just(Some(json!("1"))),
        1 => Just(Some(Json::Null)),
        1 => Just(None),
    ]
}

/// JSON shaped like a table file: a version, structs (parents may form
/// cycles or name nothing) and keys (some invalid) with params of good and
/// bad types.
fn table_json() -> impl Strategy<Value = Json> {
    (
        version(),
        prop::collection::vec((struct_name(), struct_def()), 0..5),
        prop::collection::vec((key_text(), entry()), 0..6),
    )
        .prop_map(|(version, structs, keys)| {
            let mut m = Map::new();
            if let Some(version) = version {
                m.insert("version".into(), version);
            }
            if !structs.is_empty() {
                m.insert(
                    "structs".into(),
                    Json::Object(structs.into_iter().collect()),
                );
            }
            m.insert("keys".into(), Json::Object(keys.into_iter().collect()));
            Json::Object(m)
        })
}

/// A table-shaped JSON text that loads: a version the loader takes, valid
/// keys and parseable types.
fn valid_table() -> impl Strategy<Value = SignatureTable> {
    table_json().prop_filter_map("not a loadable table", |json| load(&json.to_string()).ok())
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Nil),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0)
        ]
        .prop_map(Value::Float),
        "\\PC{0,8}".prop_map(|s| Value::str(&s)),
        any::<u64>().prop_filter_map("zero", |raw| ObjectId::from_raw(raw).map(Value::Object)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::array),
            (
                struct_name(),
                prop::collection::vec(("[a-z]{1,4}", inner), 0..4)
            )
                .prop_map(|(name, fields)| {
                    let mut s = StructValue::new(name.as_str());
                    for (field, v) in fields {
                        s.set(&field, v);
                    }
                    Value::structure(s)
                }),
        ]
    })
}

/// Listens on every key of `table` every way a script can, then sends,
/// stores, requests and runs hooks with `sends`. Nothing may panic; what
/// fails is a [`HubError`].
fn exercise(table: &SignatureTable, sends: &[(usize, Vec<Value>)], checked: bool) {
    let hub = Hub::with_table(table.clone());
    hub.set_checked(checked);
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let named = hub.named(object, "slot");
    let sources = [
        Source::Global,
        Source::World(world),
        Source::Object(object),
        named,
    ];
    let keys: Vec<String> = table.entries().map(|(k, _)| k.to_owned()).collect();
    let mut handles = Vec::new();
    for key in &keys {
        handles.push(
            hub.listen_message(key, Source::Global, ListenOptions::default(), |m| {
                if let Some(r) = m.responder {
                    r.respond_values(m.args);
                }
            }),
        );
        handles.push(hub.listen(key, Source::Object(object), |_: i64, _: String| {}));
        handles.push(hub.listen_with(
            key,
            Source::World(world),
            ListenOptions::default().times(2).order(-1),
            |_: f64| {},
        ));
        let partial = ListenOptions {
            matching: Match::Partial,
            ..ListenOptions::default()
        };
        handles.push(hub.listen_message(key, Source::Global, partial, |_| {}));
        handles.push(hub.listen_hook(key, HookOptions::new().partial(), |call| {
            call.handled();
        }));
        let table_fn: Rc<TableFn> = Rc::new(|view, _| {
            let _ = view.len();
            Ok(())
        });
        let _ = hub.listen_table_raw(
            key,
            Source::Global,
            ListenOptions::default(),
            None,
            table_fn,
        );
        let row_fn: Rc<RowFn> = Rc::new(|_, _, _| Ok(()));
        let _ = hub.listen_rows_raw(
            key,
            Source::Global,
            ALL_ROWS_WITH_REMOVAL,
            ListenOptions::default(),
            None,
            row_fn,
        );
    }
    for (i, (pick, args)) in sends.iter().enumerate() {
        let text = if keys.is_empty() {
            "Empty.Table"
        } else {
            &keys[pick % keys.len()]
        };
        let Ok(key) = hub.key(text) else {
            panic!("a loaded key {text:?} does not intern");
        };
        let source = sources[i % sources.len()];
        let mut sent = args.clone();
        let _ = hub.send_values(key, source, &mut sent, Caller::Unrecorded);
        let _ = hub.store_values(key, source, args.clone(), i % 3 == 0, Caller::Unrecorded);
        // A shorter store: collections see removed rows.
        let shorter: Vec<Value> = args
            .iter()
            .map(|v| match v {
                Value::Array(items) => Value::array(items.iter().take(1).cloned().collect()),
                other => other.clone(),
            })
            .collect();
        let _ = hub.store_values(key, source, shorter, false, Caller::Unrecorded);
        let mut sent = args.clone();
        let _ = hub.request_values(key, source, &mut sent, Caller::Unrecorded, Box::new(|_| {}));
        let mut payload = args.first().cloned().unwrap_or_default();
        let _ = hub.run_hook(text, &mut payload);
        if i == 1 {
            // The table changes under the listeners.
            hub.merge_table(table);
        }
    }
    let _ = hub.take_reports();
    hub.destroy(object).unwrap();
    drop(handles);
    let _ = hub.table_snapshot().to_json();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn table_file_random_text_is_an_error_never_a_panic(text in any::<String>()) {
        match load(&text) {
            Ok(table) => assert_sane(&table),
            Err(e) => assert_names_the_file(&e),
        }
    }

    #[test]
    fn table_file_random_bytes_are_an_error_never_a_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let text = String::from_utf8_lossy(&bytes);
        match load(&text) {
            Ok(table) => assert_sane(&table),
            Err(e) => assert_names_the_file(&e),
        }
    }

    #[test]
    fn table_file_random_json_is_an_error_never_a_panic(json in any_json()) {
        match load(&json.to_string()) {
            Ok(table) => assert_sane(&table),
            Err(e) => assert_names_the_file(&e),
        }
    }

    #[test]
    fn table_file_random_table_shaped_json_loads_sane_or_is_a_typed_error(json in table_json()) {
        let text = serde_json::to_string_pretty(&json).unwrap();
        match load(&text) {
            Ok(table) => assert_sane(&table),
            Err(e) => {
                assert_names_the_file(&e);
                // The error names the bad key (an empty key has no text).
                if let TableError::InvalidKey {
                    source: KeyError::EmptySegment { key, .. } | KeyError::InvalidChar { key, .. },
                    ..
                } = &e
                {
                    prop_assert!(e.to_string().contains(key.as_str()));
                }
            }
        }
    }

    #[test]
    fn key_text_interns_exactly_when_valid_and_errors_name_the_key(text in key_text()) {
        let hub = Hub::new();
        let valid = validate_key(&text);
        match hub.key(&text) {
            Ok(key) => {
                prop_assert!(valid.is_ok());
                prop_assert_eq!(&*hub.key_name(key), text.as_str());
                prop_assert_eq!(hub.key(&text).unwrap(), key, "interned once");
            }
            Err(e) => {
                prop_assert_eq!(Err(e.clone()), valid.map_err(HubError::Key));
                if !text.is_empty() {
                    prop_assert!(e.to_string().contains(text.as_str()), "{e}");
                }
            }
        }
    }

    #[test]
    fn declare_listen_and_send_by_random_key_text_never_panic(
        text in key_text(),
        args in prop::collection::vec(value(), 0..4),
    ) {
        let hub = Hub::new();
        let valid = validate_key(&text).is_ok();
        let declared = hub.declare(&text, KeyDecl::event().param("n", Type::Int).doc(text.clone()));
        prop_assert_eq!(declared.is_ok(), valid);
        if let Err(e) = &declared {
            prop_assert!(matches!(e, HubError::Key(_)), "{e}");
        }
        let listened = hub.listen(&text, Source::Global, |_: i64| {});
        prop_assert_eq!(listened.is_ok(), valid);
        let sent = hub.send_str(&text, Source::Global, (1i64,));
        prop_assert_eq!(sent.is_ok(), valid);
        if let Ok(key) = hub.key(&text) {
            let mut args = args;
            let _ = hub.send_values(key, Source::Global, &mut args, Caller::Unrecorded);
        }
        let mut payload = Value::Nil;
        let ran = hub.run_hook(&text, &mut payload);
        prop_assert_eq!(ran.is_ok(), valid, "an unheard hook is an error only for a malformed key");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn hub_on_a_random_valid_table_survives_random_sends(
        table in valid_table(),
        sends in prop::collection::vec((any::<usize>(), prop::collection::vec(value(), 0..4)), 1..6),
        checked in any::<bool>(),
    ) {
        exercise(&table, &sends, checked);
    }

    #[test]
    fn hub_merging_random_valid_tables_never_panics(a in valid_table(), b in valid_table()) {
        let hub = Hub::with_table(a.clone());
        for (key, _) in a.entries() {
            let _ = hub.listen(key, Source::Global, |_: i64| {});
        }
        hub.merge_table(&b);
        let merged = hub.table_snapshot();
        assert_sane(&merged);
        for (key, _) in b.entries() {
            prop_assert!(merged.get(key).is_some(), "merge lost {key}");
        }
    }
}

/// A type `array<…>` nested 100,000 deep is a typed error naming the file,
/// never a stack overflow in `Type::from_str` or any recursive walk over
/// the type.
#[test]
fn table_file_deeply_nested_array_type_is_an_error_never_a_stack_overflow() {
    let depth = 100_000;
    let ty = format!("{}int{}", "array<".repeat(depth), ">".repeat(depth));
    let text =
        format!(r#"{{"version":1,"keys":{{"K":{{"params":[{{"name":"a","type":"{ty}"}}]}}}}}}"#);
    let err = load(&text).unwrap_err();
    assert!(matches!(err, TableError::Corrupt { .. }), "{err}");
    assert_names_the_file(&err);
    assert!(err.to_string().contains("nested too deeply"));
    // The deepest allowed nesting still loads and round-trips.
    let depth = gantry_host::types::MAX_TYPE_DEPTH;
    let ty = format!("{}int{}", "array<".repeat(depth), ">".repeat(depth));
    let text =
        format!(r#"{{"version":1,"keys":{{"K":{{"params":[{{"name":"a","type":"{ty}"}}]}}}}}}"#);
    assert_sane(&load(&text).unwrap());
}

/// A table file whose struct contains itself: removing a collection row of
/// it (whose stand-in is the struct's default) never overflows the stack.
#[test]
fn self_containing_struct_in_table_file_defaults_without_overflow() {
    let text = r#"{"version":1,"structs":{"A":{"fields":[{"name":"a","type":"A"},{"name":"n","type":"int"}]}},"keys":{"K":{"kind":"collection","origin":"declared","params":[{"name":"rows","type":"array<A>"}]}}}"#;
    let hub = Hub::with_table(load(text).unwrap());
    let removed = Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = removed.clone();
    let row_fn: Rc<RowFn> = Rc::new(move |row, item, _| {
        if row < 0 {
            seen.borrow_mut().push(item.clone());
        }
        Ok(())
    });
    hub.listen_rows_raw(
        "K",
        Source::Global,
        ALL_ROWS_WITH_REMOVAL,
        ListenOptions::default(),
        None,
        row_fn,
    )
    .unwrap();
    let key = hub.key("K").unwrap();
    let row = || {
        Value::structure(
            StructValue::new("A")
                .with("a", Value::Nil)
                .with("n", Value::Int(1)),
        )
    };
    let store = |rows: Vec<Value>| {
        hub.store_values(
            key,
            Source::Global,
            vec![Value::array(rows)],
            false,
            Caller::Unrecorded,
        )
    };
    store(vec![row(), row()]).unwrap();
    store(vec![row()]).unwrap();
    let removed = removed.borrow();
    assert_eq!(removed.len(), 1);
    let stand_in = removed[0].as_struct().expect("a struct stand-in");
    assert_eq!(
        stand_in.get("a"),
        Some(&Value::Nil),
        "the loop closes with nil"
    );
    assert_eq!(stand_in.get("n"), Some(&Value::Int(0)));
}

/// Structs that each hold two of the next would make a default of 2^40
/// structs: it is bounded instead.
#[test]
fn struct_defaults_from_a_table_file_are_bounded() {
    let mut structs = Map::new();
    for i in 0..40 {
        let next = format!("S{}", i + 1);
        structs.insert(
            format!("S{i}"),
            json!({ "fields": [ { "name": "l", "type": next }, { "name": "r", "type": next } ] }),
        );
    }
    let table = load(&json!({ "version": 1, "structs": structs, "keys": {} }).to_string()).unwrap();
    let value = Value::default_of(&Type::Struct("S0".into()), &table.structs);
    fn count(v: &Value) -> usize {
        match v {
            Value::Struct(s) => 1 + s.fields.iter().map(|(_, f)| count(f)).sum::<usize>(),
            _ => 0,
        }
    }
    assert!(count(&value) <= 4096, "{}", count(&value));
}

#[test]
fn a_key_over_256_bytes_or_16_segments_is_refused_at_every_entry_point() {
    let hub = Hub::new();
    let long = "K".repeat(gantry_host::key::MAX_KEY_BYTES + 1);
    let deep = vec!["S"; gantry_host::key::MAX_KEY_SEGMENTS + 1].join(".");
    for (text, limit) in [(&long, "at most 256 bytes"), (&deep, "at most 16")] {
        let err = hub.key(text).unwrap_err().to_string();
        assert!(err.contains(limit), "{err}");
        assert!(
            err.len() < 200,
            "the error quotes the key, not all of it: {err}"
        );
        assert!(hub.listen(text, Source::Global, |_: i64| {}).is_err());
        assert!(hub.send_str(text, Source::Global, (1i64,)).is_err());
        assert!(hub.declare(text, KeyDecl::event()).is_err());
        assert!(
            hub.run_hook(text, &mut Value::Nil).is_err(),
            "unheard, still refused"
        );
    }
    assert!(
        hub.table_snapshot().entries().next().is_none(),
        "nothing recorded"
    );
    let longest = "K".repeat(gantry_host::key::MAX_KEY_BYTES);
    hub.send_str(&longest, Source::Global, (1i64,)).unwrap();
}

/// What the first send of a key records is what every later send is held
/// to: a send that fails it is refused on the first run as on the second.
#[test]
fn an_array_mixing_types_is_refused_the_same_way_every_run() {
    let mixed = || vec![Value::array(vec![Value::Int(1), Value::str("a")])];
    let first_run = Hub::new();
    let key = first_run.key("Mixed").unwrap();
    let first = first_run
        .send_values(key, Source::Global, &mut mixed(), Caller::Unrecorded)
        .unwrap_err()
        .to_string();
    assert!(first.contains("array mixing int and string"), "{first}");
    let recorded = first_run.table_snapshot();
    assert!(
        recorded.get("Mixed").is_none_or(|e| e.params.is_empty()),
        "a refused first send records nothing: {:?}",
        recorded.get("Mixed")
    );
    let second_run = Hub::with_table(recorded);
    let key = second_run.key("Mixed").unwrap();
    let second = second_run
        .send_values(key, Source::Global, &mut mixed(), Caller::Unrecorded)
        .unwrap_err()
        .to_string();
    assert_eq!(first, second);
    // Ints beside floats are floats, and stay so.
    let floats = Value::array(vec![Value::Int(1), Value::Float(2.5)]);
    second_run
        .send_str("Floats", Source::Global, (floats,))
        .unwrap();
    assert_eq!(
        second_run.table().get("Floats").unwrap().signature_label(),
        "(arg1: array<float>)"
    );
    let ints = Value::array(vec![Value::Int(3)]);
    second_run
        .send_str("Floats", Source::Global, (ints,))
        .unwrap();
}

#[test]
fn rows_of_one_struct_with_fields_of_different_types_are_refused_on_the_first_send() {
    let hub = Hub::new();
    let row = |count: Value| Value::structure(StructValue::new("Slot").with("count", count));
    let rows = Value::array(vec![row(Value::Int(1)), row(Value::str("many"))]);
    let err = hub
        .send_str("Slots", Source::Global, (rows,))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("array<Slot> whose 2nd element is Slot whose field `count` is string"),
        "{err}"
    );
    let table = hub.table_snapshot();
    assert!(
        table.structs.get("Slot").is_none(),
        "the struct is not recorded either"
    );
    assert!(table.get("Slots").is_none_or(|e| e.params.is_empty()));
}

#[test]
fn the_writer_refuses_a_row_that_contradicts_the_element_type_naming_key_and_row() {
    let hub = Hub::new();
    let key = hub.key("Nums").unwrap();
    let nums = |ns: &[i64]| vec![Value::array(ns.iter().map(|n| Value::Int(*n)).collect())];
    hub.store_values(
        key,
        Source::Global,
        nums(&[1, 2]),
        false,
        Caller::Unrecorded,
    )
    .unwrap();
    let mut writer = hub.stored_array(key, Source::Global);
    for bad in [
        Value::str("x"),
        Value::Bool(true),
        Value::array(vec![Value::Int(3)]),
    ] {
        let err = writer.try_add(bad).unwrap_err();
        assert!(
            matches!(&err, HubError::RowMismatch { key, row: 2, expected, .. }
                if key == "Nums" && expected == "int"),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("`Nums` row 2: expected int, got "),
            "{err}"
        );
    }
    assert!(matches!(
        writer.try_set(0, Value::str("y")),
        Err(HubError::RowMismatch { row: 0, .. })
    ));
    assert!(matches!(
        writer.try_insert(1, Value::Nil),
        Err(HubError::RowMismatch { row: 1, .. })
    ));
    writer.try_add(Value::Int(3)).unwrap();
    writer.publish().unwrap();
    assert_eq!(
        hub.stored(key, Source::Global).unwrap().to_vec(),
        nums(&[1, 2, 3])
    );
    // A row written past the check is refused at the publish, saying which.
    let mut writer = hub.stored_array(key, Source::Global);
    writer.add(Value::str("z"));
    let err = writer.publish().unwrap_err().to_string();
    assert!(
        err.contains("got array mixing int and string whose 4th element is string"),
        "{err}"
    );
    assert_eq!(
        hub.stored(key, Source::Global).unwrap().to_vec(),
        nums(&[1, 2, 3])
    );
}

const MIB: usize = 1 << 20;

/// A hub and a handle to it charged to a quota of `limit` bytes.
fn charged(limit: usize) -> (Hub, Hub, gantry_host::Quota) {
    let hub = Hub::new();
    let quota = gantry_host::Quota::new(limit);
    let script = hub.charged_to(quota.clone());
    (hub, script, quota)
}

fn megabyte() -> Vec<Value> {
    vec![Value::str(&"x".repeat(MIB))]
}

#[test]
fn stored_messages_past_the_quota_are_refused_naming_the_key_and_the_limit() {
    let (hub, script, quota) = charged(8 * MIB);
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let store = |key: &str| {
        let key = script.key(key).unwrap();
        script.store_values(key, object.into(), megabyte(), false, Caller::Unrecorded)
    };
    let mut refused = None;
    for i in 0..60 {
        if let Err(e) = store(&format!("K{i}")) {
            refused = Some((i, e));
            break;
        }
    }
    let (at, err) = refused.expect("the quota refuses a store");
    assert!((6..9).contains(&at), "refused at K{at}");
    assert!(matches!(err, HubError::OverQuota(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("`K{at}`: storing this message needs 1.0 MiB"))
            && text.contains("hub memory limit of 8 MiB"),
        "{text}"
    );
    assert!(quota.used() <= quota.limit());
    let key = hub.key(&format!("K{at}")).unwrap();
    assert!(
        hub.stored(key, object).is_none(),
        "nothing kept of a refused store"
    );
    // A store replacing one gives back what the old one held.
    for _ in 0..100 {
        store("K0").unwrap();
    }
    let held = quota.used();
    assert!(hub.remove_stored(hub.key("K0").unwrap(), object));
    assert!(
        quota.used() < held - MIB / 2,
        "a removed store is given back"
    );
    hub.destroy(object).unwrap();
    assert!(
        quota.used() < MIB / 2,
        "destroying the source gives back its stores"
    );
    // The host's own handle charges nothing.
    for i in 0..20 {
        let key = hub.key(&format!("Host{i}")).unwrap();
        hub.store_values(key, Source::Global, megabyte(), false, Caller::Unrecorded)
            .unwrap();
    }
    assert!(quota.used() < MIB);
}

#[test]
fn listeners_and_new_keys_count_against_the_quota_and_listeners_give_it_back() {
    let (hub, script, quota) = charged(MIB);
    let mut ids = Vec::new();
    let err = loop {
        match script.listen_message("Many", Source::Global, ListenOptions::new(), |_| {}) {
            Ok(handle) => ids.push(handle.detach()),
            Err(e) => break e,
        }
        assert!(ids.len() < 100_000, "the quota never refused a listener");
    };
    assert!(
        err.to_string().contains("`Many`: this listener needs"),
        "{err}"
    );
    let full = quota.used();
    for id in ids.drain(..) {
        hub.unlisten(id);
    }
    assert!(
        quota.used() < full / 100,
        "unlistening gives the listeners back"
    );
    // Keys are kept for the whole run: a million new ones are refused long
    // before they are made.
    let mut made = 0;
    let err = loop {
        match script.key(&format!("Distinct.K{made}")) {
            Ok(_) => made += 1,
            Err(e) => break e,
        }
    };
    assert!(made > 100 && made < 10_000, "{made} keys");
    assert!(err.to_string().contains("this new key needs"), "{err}");
    // The host may still make its own.
    hub.key("Distinct.Host").unwrap();
}

#[test]
fn a_writer_past_the_quota_is_refused_at_the_row_and_the_table_is_kept() {
    let (hub, script, quota) = charged(4 * MIB);
    let key = script.key("Rows").unwrap();
    let row = || Value::str(&"r".repeat(64 * 1024));
    script
        .store_values(
            key,
            Source::Global,
            vec![Value::array(vec![row()])],
            false,
            Caller::Unrecorded,
        )
        .unwrap();
    let mut writer = script.stored_array(key, Source::Global);
    let mut added = 0;
    let err = loop {
        match writer.try_add(row()) {
            Ok(()) => added += 1,
            Err(e) => break e,
        }
        assert!(added < 1000, "the quota never refused a row");
    };
    assert!(matches!(err, HubError::OverQuota(_)), "{err}");
    assert!(
        err.to_string()
            .starts_with("`Rows`: writing these table rows needs"),
        "{err}"
    );
    writer.publish().unwrap();
    let held = quota.used();
    assert!(held <= quota.limit());
    let stored = hub.stored(key, Source::Global).unwrap();
    assert_eq!(stored[0].as_array().unwrap().len(), added + 1);
    // Editing one row of the table costs that row, either way.
    let mut writer = script.stored_array(key, Source::Global);
    assert!(writer.try_set(0, Value::str("small")).unwrap());
    writer.publish().unwrap();
    assert!(
        quota.used() < held - 32 * 1024,
        "{} -> {}",
        held,
        quota.used()
    );
    let mut writer = script.stored_array(key, Source::Global);
    assert!(matches!(
        writer.try_set_len(1_000_000),
        Err(HubError::OverQuota(_))
    ));
    assert!(writer.try_set_len(1).unwrap());
    writer.publish().unwrap();
    assert!(quota.used() < 128 * 1024, "{}", quota.used());
}

fn declare_tick(hub: &Hub) {
    hub.declare_at(
        "Game.Tick",
        KeyDecl::event()
            .param("n", Type::Int)
            .param("dt", Type::Float),
        None,
    )
    .unwrap();
}

#[test]
fn a_key_the_host_declared_is_not_retyped_by_a_contradicting_send_or_a_merged_table() {
    let hub = Hub::new();
    declare_tick(&hub);
    let declared = hub.table_snapshot().get("Game.Tick").cloned().unwrap();
    let script = hub.charged_to(gantry_host::Quota::new(MIB));
    let tick = script.key("Game.Tick").unwrap();
    let mut poison = [
        Value::str("x"),
        Value::array(vec![Value::Int(1), Value::Int(2)]),
    ];
    let err = script
        .send_values(tick, Source::Global, &mut poison, Caller::Unrecorded)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("`Game.Tick` argument 1: expected int, got string"),
        "{err}"
    );
    let mut stored = vec![Value::Int(1), Value::Float(0.5), Value::Bool(true)];
    assert!(
        script
            .store_values(
                tick,
                Source::Global,
                std::mem::take(&mut stored),
                false,
                Caller::Unrecorded
            )
            .is_err(),
        "one argument too many"
    );
    assert_eq!(hub.table_snapshot().get("Game.Tick"), Some(&declared));
    // A table file saying otherwise (a mod may ship one) does not retype it.
    let mut shipped = SignatureTable::new();
    shipped
        .declare("Game.Tick", KeyDecl::event().param("s", Type::String), None)
        .unwrap();
    hub.merge_table(&shipped);
    assert_eq!(
        hub.table_snapshot().get("Game.Tick").unwrap().params,
        declared.params
    );
    // The host's ticks keep working.
    let heard = Rc::new(std::cell::Cell::new(0));
    let count = heard.clone();
    let _listening = hub
        .listen("Game.Tick", Source::Global, move |n: i64, _dt: f64| {
            count.set(n)
        })
        .unwrap();
    hub.send_str("Game.Tick", Source::Global, (7i64, 0.016f64))
        .unwrap();
    assert_eq!(heard.get(), 7);
}

#[test]
fn a_source_name_from_a_script_is_bounded_and_charged_as_a_key_is() {
    let (hub, script, _quota) = charged(64 * 1024);
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let err = script.try_named(object, &"n".repeat(300)).unwrap_err();
    assert!(
        err.to_string()
            .contains("300 bytes long; a source name has at most 256 bytes"),
        "{err}"
    );
    let mut made = 0;
    let err = loop {
        match script.try_named(object, &format!("part{made}")) {
            Ok(_) => made += 1,
            Err(e) => break e,
        }
        assert!(made < 100_000, "the quota never refused a name");
    };
    assert!(
        err.to_string().contains("this new source name needs"),
        "{err}"
    );
    // A name already made costs nothing more.
    assert_eq!(
        script.try_named(object, "part0").unwrap(),
        hub.named(object, "part0")
    );
}
