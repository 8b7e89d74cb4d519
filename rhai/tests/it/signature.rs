//! What the table learns from Rhai: values inferred on first use, and a
//! listener on a new key records no types.

use gantry_host::Type;

use crate::support::{Fixture, both_ways};

/// "for an unregistered tag, types are inferred from the actual script
/// values (numbers split into integer and float; boolean, string and
/// userdata map across)" — from Rhai.
#[test]
fn signature_rhai_values_are_inferred_on_first_use() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"NotifyMessage("Infer.Rhai", SELF, 3, 4.0, false, "s", [1, 2]);"#,
        );
        assert_eq!(
            f.hub.table().get("Infer.Rhai").unwrap().param_types(),
            [
                Type::Object,
                Type::Int,
                Type::Float,
                Type::Bool,
                Type::String,
                Type::Array(Box::new(Type::Int)),
            ],
            "rewrite {rewrite}"
        );
    });
}

/// dynamic callbacks "carry no static types, so they cannot be
/// inferred" — a Rhai listener on a new key records no parameter types; the
/// first send is what the key learns.
#[test]
fn signature_a_rhai_listener_on_a_new_key_records_no_types() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"ListenMessage("Fresh.Rhai", (), |a, b| print(`got ${a} ${b}`));"#,
        );
        assert!(
            f.hub
                .table()
                .get("Fresh.Rhai")
                .is_none_or(|e| e.params.is_empty()),
            "rewrite {rewrite}"
        );
        f.load("b.rhai", r#"NotifyMessage("Fresh.Rhai", "text", 2.5);"#);
        assert_eq!(f.printed(), ["got text 2.5"], "rewrite {rewrite}");
        assert_eq!(
            f.hub.table().get("Fresh.Rhai").unwrap().param_types(),
            [Type::String, Type::Float],
            "rewrite {rewrite}"
        );
    });
}

/// A listener closure names the key's parameters, whether it registers
/// before the first send or after.
#[test]
fn a_rhai_closures_parameter_names_name_the_recorded_parameters() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"ListenMessage("Shop.Buy", (), |item, price| { });"#,
    );
    f.load("b.rhai", r#"NotifyMessage("Shop.Buy", "axe", 3);"#);
    let table = f.hub.table();
    let names: Vec<&str> = table
        .get("Shop.Buy")
        .unwrap()
        .params
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["item", "price"]);
}

/// A store key is not run as a hook: an error naming the key, its kind
/// and the function.
#[test]
fn a_rhai_call_of_another_kind_than_the_key_is_an_error() {
    let f = Fixture::new();
    f.load("a.rhai", r#"StoreObjectMessage(SELF, "Inv.Gold", 5);"#);
    let error = f.load_err("b.rhai", r#"RunHook("Inv.Gold", 3);"#);
    assert!(
        error.contains("RunHook on `Inv.Gold`: the key is a store (as first used)"),
        "{error}"
    );
    assert!(error.contains("b.rhai"), "{error}");
}

/// A store of a declared event is refused at the script's line, naming the
/// key and its kind; sending it is heard.
#[test]
fn a_rhai_store_of_a_declared_event_is_an_error() {
    let f = Fixture::new();
    f.hub
        .declare(
            "Quest.Start",
            gantry_host::KeyDecl::event().param("id", Type::String),
        )
        .unwrap();
    f.load(
        "a.rhai",
        r#"ListenMessage("Quest.Start", (), |id| print(`start ${id}`));
NotifyMessage("Quest.Start", "wolves");"#,
    );
    let error = f.load_err(
        "b.rhai",
        "let n = 1;\nStoreObjectMessage(SELF, \"Quest.Start\", \"wolves\");",
    );
    assert!(
        error.contains("StoreObjectMessage on `Quest.Start`: the key is an event (declared)"),
        "{error}"
    );
    assert!(error.contains("b.rhai:2"), "{error}");
    assert_eq!(f.printed(), ["start wolves"]);
}
