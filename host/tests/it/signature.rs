//! What the signature table learns: a key's first use records its types
//! (objects, structs, arrays, kinds) and call site, a declared doc and kind
//! are kept, a compatible send never narrows what was observed, and every
//! Rust call site (send, listen, store, request, declare) is recorded.

use gantry_host::{
    Hub, HubError, KeyDecl, Kind, Language, ListenOptions, Role, SignatureTable, Source,
    StructValue, Type, Value,
};
use gantry_test_support::log::{log, taken};

#[test]
fn first_use_records_types_and_call_site() {
    let hub = Hub::new();
    hub.send_str("Player.Hurt", Source::Global, (2.5f64, 7i64, true, "x"))
        .unwrap();
    let table = hub.table();
    let entry = table.get("Player.Hurt").unwrap();
    let types: Vec<String> = entry.params.iter().map(|p| p.ty.to_string()).collect();
    assert_eq!(types, ["float", "int", "bool", "string"]);
    assert_eq!(entry.kind, Kind::Event);
    let site = entry.sites.iter().next().unwrap();
    assert!(site.file.ends_with("signature.rs"));
}

#[test]
fn declared_doc_and_kind_are_kept() {
    let hub = Hub::new();
    hub.declare(
        "Boot.Done",
        KeyDecl::event()
            .kind(Kind::Store)
            .doc("The game finished booting"),
    )
    .unwrap();
    let t: SignatureTable = hub.table_snapshot();
    let e = t.get("Boot.Done").unwrap();
    assert_eq!(e.doc, "The game finished booting");
    assert_eq!(e.kind, Kind::Store);
    assert!(e.declaration_site().is_some());
}

fn mismatch_position(err: &HubError) -> Option<usize> {
    match err {
        HubError::Mismatch { mismatch, .. } | HubError::ListenRejected { mismatch, .. } => {
            Some(mismatch.position)
        }
        _ => None,
    }
}

/// "a signature that contradicts the recorded one warns and aborts that
/// dispatch; a compatible one updates the table" — an int sent where an
/// observed float sits is compatible, and does not narrow the float to int.
#[test]
fn signature_a_compatible_int_send_never_narrows_an_observed_float() {
    let hub = Hub::new();
    hub.send_str("Speed", Source::Global, (2.5f64,)).unwrap();
    hub.send_str("Speed", Source::Global, (3i64,)).unwrap();
    assert_eq!(
        hub.table().get("Speed").unwrap().param_types(),
        [Type::Float]
    );
    // And the reverse is still refused.
    hub.send_str("Count", Source::Global, (3i64,)).unwrap();
    let err = hub
        .send_str("Count", Source::Global, (2.5f64,))
        .unwrap_err();
    assert_eq!(mismatch_position(&err), Some(0));
    assert_eq!(hub.table().get("Count").unwrap().param_types(), [Type::Int]);
}

fn base() -> Value {
    Value::structure(StructValue::new("Base").with("id", 1i64))
}

#[test]
fn signature_first_use_infers_object_struct_array_and_kinds() {
    let hub = Hub::new();
    let world = hub.create_world();
    let obj = hub.spawn(world).unwrap();
    hub.send_str(
        "Infer.All",
        Source::Global,
        (obj, base(), Value::array(vec![Value::Int(1)]), Value::Nil),
    )
    .unwrap();
    let key = hub.key("Infer.Store").unwrap();
    hub.store(key, Source::Global, ("x",)).unwrap();
    let ask = hub.key("Infer.Ask").unwrap();
    let _answer = hub
        .listen_message("Infer.Ask", Source::Global, ListenOptions::new(), |m| {
            m.responder.unwrap().respond((1.5f64, true));
        })
        .unwrap();
    hub.request(ask, Source::Global, (), |_| {}).unwrap();
    let table = hub.table();
    let all = table.get("Infer.All").unwrap();
    assert_eq!(
        all.param_types(),
        [
            Type::Object,
            Type::Struct("Base".into()),
            Type::Array(Box::new(Type::Int)),
            Type::Nil
        ]
    );
    assert_eq!(all.kind, Kind::Event);
    assert_eq!(all.origin, gantry_host::Origin::Observed);
    assert_eq!(table.get("Infer.Store").unwrap().kind, Kind::Store);
    let response: Vec<Type> = table
        .get("Infer.Ask")
        .unwrap()
        .response
        .as_ref()
        .unwrap()
        .iter()
        .map(|p| p.ty.clone())
        .collect();
    assert_eq!(response, [Type::Float, Type::Bool]);
    drop(table);
    // A nil position is narrowed by the first real value.
    hub.send_str(
        "Infer.All",
        Source::Global,
        (obj, base(), Value::array(vec![]), "now a string"),
    )
    .unwrap();
    assert_eq!(
        hub.table().get("Infer.All").unwrap().params[3].ty,
        Type::String
    );
}

#[test]
fn an_observed_nil_parameter_accepts_any_typed_listener_until_a_real_value_narrows_it() {
    let hub = Hub::new();
    hub.send_str("Nil.First", Source::Global, (1i64, Value::Nil))
        .unwrap();
    let got = log();
    let g = got.clone();
    let _h = hub
        .listen("Nil.First", Source::Global, move |_: i64, s: String| {
            g.borrow_mut().push(s)
        })
        .expect("an observed nil says nothing yet");
    hub.send_str("Nil.First", Source::Global, (2i64, "now a string"))
        .unwrap();
    assert_eq!(taken(&got), ["now a string"]);
    assert_eq!(
        hub.table().get("Nil.First").unwrap().params[1].ty,
        Type::String
    );
    // A declared nil is what the key carries: held to it.
    hub.declare(
        "Nil.Declared",
        KeyDecl::event()
            .param("n", Type::Int)
            .param("none", Type::Nil),
    )
    .unwrap();
    assert!(
        hub.listen("Nil.Declared", Source::Global, |_: i64, _: String| {})
            .is_err()
    );
}

#[test]
fn call_sites_of_rust_sends_listens_stores_requests_and_declarations_are_recorded() {
    let hub = Hub::new();
    // A store key: sent, stored and asked (a declared event is never stored).
    let declared_at = line!() + 1;
    hub.declare(
        "Sites.Key",
        KeyDecl::event().kind(Kind::Store).param("n", Type::Int),
    )
    .unwrap();
    let key = hub.key("Sites.Key").unwrap();
    let listened_at = line!() + 2;
    let _h = hub
        .listen("Sites.Key", Source::Global, |_: i64| {})
        .unwrap();
    let sent_at = line!() + 1;
    hub.send(key, Source::Global, (1i64,)).unwrap();
    let stored_at = line!() + 1;
    hub.store(key, Source::Global, (2i64,)).unwrap();
    let asked_at = line!() + 1;
    hub.request(key, Source::Global, (3i64,), |_| {}).unwrap();
    let table = hub.table();
    let entry = table.get("Sites.Key").unwrap();
    let lines = |role| -> Vec<u32> {
        entry
            .sites_with_role(role)
            .filter(|s| s.file.ends_with("signature.rs") && s.language == Language::Rust)
            .map(|s| s.line)
            .collect()
    };
    assert_eq!(lines(Role::Declare), [declared_at]);
    assert_eq!(lines(Role::Listen), [listened_at]);
    assert_eq!(lines(Role::Send), [sent_at, stored_at, asked_at]);
    assert_eq!(entry.declaration_site().map(|s| s.line), Some(declared_at));
}

#[test]
fn signature_receive_side_a_typed_listener_on_a_new_key_records_its_types() {
    let hub = Hub::new();
    let _h = hub
        .listen("Fresh.Typed", Source::Global, |_: i64, _: String| {})
        .unwrap();
    {
        let table = hub.table();
        let entry = table.get("Fresh.Typed").unwrap();
        assert_eq!(entry.param_types(), [Type::Int, Type::String]);
        assert_eq!(entry.origin, gantry_host::Origin::Observed);
    }
    // What it recorded is what sends are checked against from now on.
    assert!(
        hub.send_str("Fresh.Typed", Source::Global, (1i64, "x"))
            .is_ok()
    );
    assert!(
        hub.send_str("Fresh.Typed", Source::Global, ("x", 1i64))
            .is_err()
    );
}

#[test]
fn a_rust_declaration_is_sited_at_the_line_that_declares_it() {
    let hub = Hub::new();
    let line = line!() + 1;
    hub.declare("Host.Ready", KeyDecl::event().param("level", Type::String))
        .unwrap();
    let table = hub.table();
    let site = table.get("Host.Ready").unwrap().declaration_site().unwrap();
    assert_eq!(site.file, file!().replace('\\', "/"));
    assert_eq!(site.line, line);
    assert_eq!(site.language, Language::Rust);
}

#[test]
fn a_listeners_names_name_the_parameters_a_later_first_send_records() {
    let mut table = SignatureTable::new();
    let names = ["id".to_owned(), "reward".to_owned()];
    table.suggest_param_names("Quest.Start", &names);
    table.record_args(
        "Quest.Start",
        Kind::Event,
        &[Value::str("q1"), Value::Int(5)],
    );
    let entry = table.get("Quest.Start").unwrap();
    let named: Vec<(&str, String)> = entry
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.ty.to_string()))
        .collect();
    assert_eq!(
        named,
        [("id", "string".to_owned()), ("reward", "int".to_owned())]
    );
}

#[test]
fn a_listeners_names_rename_generated_names_and_leave_unnamed_positions_as_arg() {
    let hub = Hub::new();
    hub.send_str("Quest.Done", Source::Global, ("q1", 5i64, true))
        .unwrap();
    hub.suggest_param_names("Quest.Done", &["id".to_owned(), "_".to_owned()]);
    let names: Vec<String> = hub
        .table()
        .get("Quest.Done")
        .unwrap()
        .params
        .iter()
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(names, ["id", "arg2", "arg3"]);
}

#[test]
fn a_listeners_names_never_rename_a_declared_key() {
    let hub = Hub::new();
    hub.declare("Quest.Fail", KeyDecl::event().param("why", Type::String))
        .unwrap();
    hub.suggest_param_names("Quest.Fail", &["reason".to_owned(), "extra".to_owned()]);
    let table = hub.table();
    let entry = table.get("Quest.Fail").unwrap();
    assert_eq!(entry.params.len(), 1);
    assert_eq!(entry.params[0].name, "why");
}

fn wrong_kind(result: Result<gantry_host::Delivered, HubError>) -> (String, bool, String) {
    match result {
        Err(e @ HubError::WrongKind { .. }) => {
            let text = e.to_string();
            let HubError::WrongKind { kind, declared, .. } = e else {
                unreachable!()
            };
            (kind, declared, text)
        }
        other => panic!("expected a wrong-kind refusal, got {other:?}"),
    }
}

/// A key first run as a hook is only a hook: a send or a store of it is
/// refused as the wrong kind, nobody hears it, and the table keeps it a hook.
#[test]
fn a_send_or_a_store_of_a_hook_key_is_refused_as_the_wrong_kind() {
    let hub = Hub::new();
    let heard = log();
    let l = heard.clone();
    let _hook = hub
        .listen_hook(
            "Combat.Damage",
            gantry_host::HookOptions::new(),
            move |_| l.borrow_mut().push("hook".into()),
        )
        .unwrap();
    let l = heard.clone();
    let _listener = hub
        .listen("Combat.Damage", Source::Global, move |n: i64| {
            l.borrow_mut().push(format!("message {n}"))
        })
        .unwrap();
    hub.run_hook("Combat.Damage", &mut Value::Int(3)).unwrap();
    assert_eq!(taken(&heard), ["hook"]);

    let (kind, declared, text) = wrong_kind(hub.send_str("Combat.Damage", Source::Global, (4i64,)));
    assert_eq!((kind.as_str(), declared), ("a hook", false));
    assert!(
        text.contains("`Combat.Damage`") && text.contains("not hooks"),
        "{text}"
    );
    let key = hub.key("Combat.Damage").unwrap();
    let (kind, _, _) = wrong_kind(hub.store(key, Source::Global, (5i64,)));
    assert_eq!(kind, "a hook");
    assert!(taken(&heard).is_empty(), "nobody heard a refused dispatch");
    assert_eq!(hub.table().get("Combat.Damage").unwrap().kind, Kind::Hook);
}

/// A declared event is only sent: storing it is refused as the wrong kind,
/// while an event only observed carrying values may still be stored.
#[test]
fn a_store_of_a_declared_event_is_refused_and_of_an_observed_one_kept() {
    let hub = Hub::new();
    hub.declare("Quest.Start", KeyDecl::event().param("id", Type::String))
        .unwrap();
    hub.send_str("Quest.Start", Source::Global, ("wolves",))
        .unwrap();
    let key = hub.key("Quest.Start").unwrap();
    let (kind, declared, text) = wrong_kind(hub.store(key, Source::Global, ("wolves",)));
    assert_eq!((kind.as_str(), declared), ("an event", true));
    assert!(
        text.contains("StoreObjectMessage on `Quest.Start`"),
        "{text}"
    );
    assert!(hub.stored(key, Source::Global).is_none(), "nothing stored");

    hub.send_str("Quest.Seen", Source::Global, ("wolves",))
        .unwrap();
    let seen = hub.key("Quest.Seen").unwrap();
    hub.store(seen, Source::Global, ("wolves",)).unwrap();
    assert!(hub.stored(seen, Source::Global).is_some());
}
