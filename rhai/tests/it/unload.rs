//! Unloading and reloading a Rhai script: unloading takes back every
//! listener the script registered, of every kind, and drops its
//! environment (AST, top-level variables, closures), while its object and
//! what is stored on it stay; a reload swaps the script in place and, when
//! the new version fails, leaves the old one running as it was.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::ScriptRuntime;
use gantry_host::{Key, ListenOptions, ObjectId, Reply, Source, StructValue, Value};
use gantry_rhai::runtime::RhaiOptions;

use crate::support::{Fixture, inventory, item};

/// A script listening in every way a script can: a message, a partial
/// key, a hook, a request (with a responder), rows, a slot and a whole
/// table.
const EVERY_KIND: &str = r#"
ListenMessage("Tick", (), || print("tick"));
ListenMessage("Ui", (), || print("ui"), #{ "match": "partial" });
ListenHook("Heal", (), |p, ctx| { p.hp += 10; });
ListenObjectMessage(SELF, "Price", (), |item, rsp| rsp.Response(`${item}=5`));
ListenRowMessage(SELF, "Inv.Items", (), GMP::ALL_ROWS, |row, item| print(`row ${row}`));
ListenRowMessage(SELF, "Inv.Items", (), 0, |row, item| print(`slot ${row}`));
ListenObjectMessage(SELF, "Inv.Items", (), |items, update| print(`table ${items.len()}`));
"#;

/// Sets off every listener of [`EVERY_KIND`] on `object` from Rust; what
/// answered, besides what the scripts print.
fn set_off_everything(f: &Fixture, items: Key, object: ObjectId) -> Vec<String> {
    let mut heard = Vec::new();
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    f.hub.send_str("Ui.Open", Source::Global, ()).unwrap();
    let mut payload = Value::structure(StructValue::new("Hp").with("hp", 5i64));
    let hook = f.hub.run_hook("Heal", &mut payload).unwrap();
    heard.push(format!("hook ran {}", hook.ran));
    let answer = Rc::new(RefCell::new(String::from("unanswered")));
    let a = answer.clone();
    let price = f.hub.key("Price").unwrap();
    f.hub
        .request(price, object, ("sword",), move |reply| {
            if let Reply::Answer(values) = reply {
                *a.borrow_mut() = format!("answer {values:?}");
            }
        })
        .unwrap();
    heard.push(answer.borrow().clone());
    let mut writer = f.hub.stored_array(items, object);
    writer.add(item(1));
    drop(writer);
    heard
}

#[test]
fn unloading_a_script_stops_every_kind_of_listener_it_registered() {
    let (f, items) = inventory(RhaiOptions::default());
    let before = f.hub.listener_count();
    let (id, object) = f.load("every.rhai", EVERY_KIND);
    let heard = set_off_everything(&f, items, object);
    assert_eq!(heard[0], "hook ran 1");
    assert!(heard[1].contains("sword=5"), "{heard:?}");
    let printed = f.printed();
    for line in ["tick", "ui", "row 0", "slot 0", "table 1"] {
        assert!(printed.iter().any(|p| p == line), "{line} in {printed:?}");
    }

    assert!(f.rt.unload(id));
    assert_eq!(
        f.hub.listener_count(),
        before,
        "no message listener is left"
    );
    let heard = set_off_everything(&f, items, object);
    assert_eq!(heard, ["hook ran 0", "unanswered"]);
    assert_eq!(f.printed(), Vec::<String>::new());
    assert!(f.failures().is_empty());
    assert!(!f.rt.unload(id), "a second unload finds nothing");
    assert!(f.rt.global(id, "x").is_none());
    assert_eq!(f.rt.live_environments(), 0, "its environment is dropped");
}

#[test]
fn what_is_stored_on_the_object_survives_unload_and_reload() {
    let f = Fixture::new();
    let (id, object) = f.load(
        "bag.rhai",
        r#"
        StoreObjectMessage(SELF, "Bag.Gold", 10);
        ListenObjectMessage(SELF, "Bag.Gold", (), |g| print(`v1 gold ${g}`));
        "#,
    );
    assert_eq!(f.printed(), ["v1 gold 10"]);
    f.rt.reload(
        id,
        r#"ListenObjectMessage(SELF, "Bag.Gold", (), |g| print(`v2 gold ${g}`));"#,
    )
    .unwrap();
    assert_eq!(
        f.printed(),
        ["v2 gold 10"],
        "the new listener hears the stored gold"
    );
    f.hub
        .store(f.hub.key("Bag.Gold").unwrap(), object, (25,))
        .unwrap();
    assert_eq!(f.printed(), ["v2 gold 25"], "the old listener is gone");

    assert!(f.rt.unload(id));
    let stored = f.hub.stored(f.hub.key("Bag.Gold").unwrap(), object);
    assert_eq!(stored.as_deref(), Some(&[Value::Int(25)][..]));
}

#[test]
fn a_reload_with_a_syntax_error_keeps_the_old_script_running_and_names_the_new_line() {
    let f = Fixture::new();
    let (id, _) = f.load(
        "hud.rhai",
        r#"ListenMessage("Tick", (), || print("old tick"));"#,
    );
    let error =
        f.rt.reload(id, "let ok = 1;\nlet broken = = 2;\n")
            .unwrap_err()
            .to_string();
    assert!(error.starts_with("hud.rhai:2:"), "{error}");
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["old tick"]);
}

#[test]
fn a_reload_whose_top_level_fails_takes_back_what_it_registered() {
    let f = Fixture::new();
    let (id, _) = f.load(
        "hud.rhai",
        r#"ListenMessage("Tick", (), || print("old tick"));"#,
    );
    let listeners = f.hub.listener_count();
    let error =
        f.rt.reload(
            id,
            "ListenMessage(\"Tick\", (), || print(\"new tick\"));\n\
             ListenMessage(\"Tick\", (), || (), #{ times: \"twice\" });\n",
        )
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("hud.rhai:2:"), "{error}");
    assert_eq!(f.hub.listener_count(), listeners);
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["old tick"]);
    assert_eq!(f.rt.live_environments(), 1, "the failed version is dropped");
}

#[test]
fn a_reload_swaps_the_listeners_and_variables_under_the_same_id() {
    let f = Fixture::new();
    let (id, _) = f.load(
        "hud.rhai",
        r#"
        let version = 1;
        ListenMessage("Tick", (), || print("tick v1"));
        "#,
    );
    f.rt.reload(
        id,
        r#"
        let version = 2;
        ListenMessage("Tick", (), || print("tick v2"));
        "#,
    )
    .unwrap();
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["tick v2"]);
    assert_eq!(f.rt.global(id, "version").unwrap().as_int(), Ok(2));
}

#[test]
fn a_reply_to_an_unloaded_script_is_dropped_unheard() {
    let f = Fixture::new();
    let buyer = f.spawn();
    let held = Rc::new(RefCell::new(Vec::new()));
    let h = held.clone();
    let _shop = f
        .hub
        .listen_message("Price", buyer, ListenOptions::new(), move |m| {
            h.borrow_mut().extend(m.responder.cloned());
        })
        .unwrap();
    let id =
        f.rt.load_script(
            "buyer.rhai",
            r#"ListenMessage("Buy", (), || {
                SendObjectMessage(This(), "Price", "sword", |v| print(`reply ${v}`));
            });"#,
            buyer,
        )
        .unwrap();
    f.hub.send_str("Buy", Source::Global, ()).unwrap();
    f.hub.send_str("Buy", Source::Global, ()).unwrap();
    let mut responders = std::mem::take(&mut *held.borrow_mut()).into_iter();
    responders.next().unwrap().respond(("5",));
    assert_eq!(f.printed(), ["reply 5"]);
    assert!(f.rt.unload(id));
    responders.next().unwrap().respond(("6",));
    assert_eq!(f.printed(), Vec::<String>::new());
    assert!(f.rt.take_errors().is_empty());
    drop(responders);
    assert_eq!(f.rt.live_environments(), 0);
}

#[test]
fn unloading_a_script_from_inside_its_own_listener_is_safe_mid_send() {
    let (f, _) = inventory(RhaiOptions::default());
    let f = Rc::new(f);
    let object = f.spawn();
    f.rt.load_script(
        "watcher.rhai",
        r#"ListenObjectMessage(SELF, "Inv.Items", (), |items, update| print(`rows ${items.len()}`));"#,
        object,
    )
    .unwrap();
    // A writer held in a top-level variable publishes when the script goes.
    let id =
        f.rt.load_script(
            "quitter.rhai",
            r#"
            let items = GMP::StoredArray(SELF, "Inv.Items");
            items.Add(#{ id: 1, name: "sword", count: 1 });
            ListenMessage("Quit", (), || { print("first"); NotifyMessage("Unload"); });
            ListenMessage("Quit", (), || print("second"));
            "#,
            object,
        )
        .unwrap();
    let weak = Rc::downgrade(&f);
    let _unloader = f
        .hub
        .listen("Unload", Source::Global, move || {
            if let Some(f) = weak.upgrade() {
                assert!(f.rt.unload(id));
            }
        })
        .unwrap();
    f.printed();
    f.hub.send_str("Quit", Source::Global, ()).unwrap();
    assert_eq!(
        f.printed(),
        ["first", "rows 1"],
        "the send skips the script's other listener; its writer publishes as it goes"
    );
    assert!(f.failures().is_empty());
    f.hub.send_str("Quit", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), Vec::<String>::new());
    assert_eq!(f.rt.live_environments(), 1, "the watcher's");
}

#[test]
fn reloading_a_thousand_times_does_not_grow_memory() {
    let (f, items) = inventory(RhaiOptions::default());
    let (id, object) = f.load("every.rhai", EVERY_KIND);
    let listeners = f.hub.listener_count();
    for _ in 0..1000 {
        f.rt.reload(id, EVERY_KIND).unwrap();
    }
    assert_eq!(f.rt.live_environments(), 1, "one environment is alive");
    assert_eq!(f.hub.listener_count(), listeners);
    f.printed();
    set_off_everything(&f, items, object);
    assert_eq!(
        f.printed().iter().filter(|p| *p == "tick").count(),
        1,
        "one version listens"
    );
}
