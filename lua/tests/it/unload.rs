//! Unloading and reloading a Lua script: unloading takes back every
//! listener the script registered, of every kind, and frees its
//! environment, while its object and what is stored on it stay; a reload
//! swaps the script in place and, when the new version fails, leaves the
//! old one running as it was.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::ScriptRuntime;
use gantry_host::{ListenOptions, Reply, Source, StructValue, Value};
use gantry_lua::runtime::{LuaError, LuaOptions};

use crate::support::{Fixture, inventory};

/// A script listening in every way a script can: a message, a partial
/// key, a hook, a request (with a responder), rows, a slot, a whole table,
/// and a message under a table owner it keeps.
const EVERY_KIND: &str = r#"
ListenMessage("Tick", nil, function() print("tick") end)
ListenMessage("Ui", nil, function() print("ui") end, { match = "partial" })
ListenHook("Heal", nil, function(p, ctx) p.hp = p.hp + 10 end)
ListenObjectMessage(self, "Price", nil, function(item, rsp) rsp:Response(item .. "=5") end)
ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item) print("row " .. row) end)
ListenRowMessage(self, "Inv.Items", nil, 1, function(row, item) print("slot " .. row) end)
ListenObjectMessage(self, "Inv.Items", nil, function(items, update) print("table " .. #items) end)
keeper = {}
ListenMessage("Tick", keeper, function() print("kept tick") end)
"#;

/// Sets off every listener of [`EVERY_KIND`] on `object` from Rust; what
/// answered, besides what the scripts print.
fn set_off_everything(f: &Fixture, object: gantry_host::ObjectId) -> Vec<String> {
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
                *a.borrow_mut() = format!("answer {:?}", values);
            }
        })
        .unwrap();
    heard.push(answer.borrow().clone());
    let items = f.hub.key("Inv.Items").unwrap();
    let mut writer = f.hub.stored_array(items, object);
    writer.add(Value::structure(
        StructValue::new("Item")
            .with("name", "arrow")
            .with("count", 1i64),
    ));
    drop(writer);
    heard
}

#[test]
fn unloading_a_script_stops_every_kind_of_listener_it_registered() {
    let f = inventory(LuaOptions::default());
    let before = f.hub.listener_count();
    let (id, object) = f.load("every.lua", EVERY_KIND);
    let heard = set_off_everything(&f, object);
    assert_eq!(heard[0], "hook ran 1");
    assert!(heard[1].contains("sword=5"), "{heard:?}");
    let printed = f.printed();
    for line in ["tick", "kept tick", "ui", "row 1", "slot 1", "table 1"] {
        assert!(printed.iter().any(|p| p == line), "{line} in {printed:?}");
    }

    assert!(f.rt.unload(id));
    assert_eq!(
        f.hub.listener_count(),
        before,
        "no message listener is left"
    );
    let heard = set_off_everything(&f, object);
    assert_eq!(heard, ["hook ran 0", "unanswered"]);
    assert_eq!(f.printed(), Vec::<String>::new());
    let reports = f.failures();
    assert!(
        reports.len() == 1 && reports[0].contains("`Price` was not answered"),
        "{reports:?}"
    );
    assert!(!f.rt.unload(id), "a second unload finds nothing");
    assert!(matches!(
        f.rt.global::<i64>(id, "keeper"),
        Err(LuaError::NotLoaded(_))
    ));
}

#[test]
fn unloading_leaves_the_object_and_what_others_registered_on_it() {
    let f = Fixture::new();
    let (id, object) = f.load(
        "mine.lua",
        r#"ListenObjectMessage(self, "Hit", nil, function(n) print("mine " .. n) end)"#,
    );
    f.rt.load_script(
        "other.lua",
        r#"ListenObjectMessage(self, "Hit", nil, function(n) print("other " .. n) end)"#,
        object,
    )
    .unwrap();
    assert!(f.rt.unload(id));
    assert!(f.hub.world_of(object).is_some(), "the object stays");
    f.hub.send_str("Hit", Source::Object(object), (3,)).unwrap();
    assert_eq!(f.printed(), ["other 3"]);
}

#[test]
fn what_a_required_module_registered_goes_with_the_script() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("helper.lua"),
        r#"ListenMessage("Tick", nil, function() print("module tick") end)
        return {}"#,
    )
    .unwrap();
    let f = Fixture::with(LuaOptions {
        mod_dir: Some(dir.path().to_owned()),
        ..Default::default()
    });
    let (id, _) = f.load("main.lua", r#"local helper = require("helper")"#);
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["module tick"]);
    assert!(f.rt.unload(id));
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), Vec::<String>::new());
}

#[test]
fn what_is_stored_on_the_object_survives_unload_and_reload() {
    let f = Fixture::new();
    let (id, object) = f.load(
        "bag.lua",
        r#"
        StoreObjectMessage(self, "Bag.Gold", 10)
        ListenObjectMessage(self, "Bag.Gold", nil, function(g) print("v1 gold " .. g) end)
        "#,
    );
    assert_eq!(f.printed(), ["v1 gold 10"]);
    f.rt.reload(
        id,
        r#"ListenObjectMessage(self, "Bag.Gold", nil, function(g) print("v2 gold " .. g) end)"#,
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
        "hud.lua",
        r#"ListenMessage("Tick", nil, function() print("old tick") end)"#,
    );
    let error =
        f.rt.reload(id, "local ok = 1\nlocal broken = = 2\n")
            .unwrap_err()
            .to_string();
    assert!(error.starts_with("hud.lua:2:"), "{error}");
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["old tick"]);
}

#[test]
fn a_reload_whose_top_level_fails_takes_back_what_it_registered() {
    let f = Fixture::new();
    let (id, _) = f.load(
        "hud.lua",
        r#"ListenMessage("Tick", nil, function() print("old tick") end)"#,
    );
    let listeners = f.hub.listener_count();
    let error =
        f.rt.reload(
            id,
            "ListenMessage(\"Tick\", nil, function() print(\"new tick\") end)\n\
             ListenMessage(\"Tick\", nil, function() end, { times = \"twice\" })\n",
        )
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("hud.lua:2:"), "{error}");
    assert_eq!(f.hub.listener_count(), listeners);
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["old tick"]);
}

#[test]
fn a_reload_swaps_the_listeners_and_globals_under_the_same_id() {
    let f = Fixture::new();
    let (id, _) = f.load(
        "hud.lua",
        r#"
        version = 1
        ListenMessage("Tick", nil, function() print("tick v1") end)
        "#,
    );
    f.rt.reload(
        id,
        r#"
        version = 2
        ListenMessage("Tick", nil, function() print("tick v2") end)
        "#,
    )
    .unwrap();
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["tick v2"]);
    assert_eq!(f.rt.global::<i64>(id, "version").unwrap(), 2);
}

#[test]
fn a_reload_or_unload_set_off_by_the_new_top_level_leaves_at_most_one_version() {
    let f = Rc::new(Fixture::new());
    let (id, _) = f.load(
        "hud.lua",
        r#"ListenMessage("Tick", nil, function() print("v1") end)"#,
    );
    let weak = Rc::downgrade(&f);
    let _again = f
        .hub
        .listen("Again", Source::Global, move || {
            if let Some(f) = weak.upgrade() {
                let v3 = r#"ListenMessage("Tick", nil, function() print("v3") end)"#;
                f.rt.reload(id, v3).unwrap();
            }
        })
        .unwrap();
    let v2 = "ListenMessage(\"Tick\", nil, function() print(\"v2\") end)\nNotifyMessage(\"Again\")";
    f.rt.reload(id, v2).unwrap();
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["v2"], "the reload asked first ends last");

    let weak = Rc::downgrade(&f);
    let _gone = f
        .hub
        .listen("Gone", Source::Global, move || {
            if let Some(f) = weak.upgrade() {
                assert!(f.rt.unload(id));
            }
        })
        .unwrap();
    let v4 = "ListenMessage(\"Tick\", nil, function() print(\"v4\") end)\nNotifyMessage(\"Gone\")";
    f.rt.reload(id, v4).unwrap();
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), Vec::<String>::new(), "the unload wins");
    assert!(!f.rt.unload(id));
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
            "buyer.lua",
            r#"ListenMessage("Buy", nil, function()
                SendObjectMessage(self, "Price", "sword", function(v) print("reply " .. v) end)
            end)"#,
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
}

#[test]
fn unloading_a_script_from_inside_its_own_listener_is_safe_mid_send() {
    let f = Rc::new(Fixture::new());
    let (id, _) = f.load(
        "quitter.lua",
        r#"
        ListenMessage("Quit", nil, function() print("first"); NotifyMessage("Unload") end)
        ListenMessage("Quit", nil, function() print("second") end)
        "#,
    );
    let weak = Rc::downgrade(&f);
    let _unloader = f
        .hub
        .listen("Unload", Source::Global, move || {
            if let Some(f) = weak.upgrade() {
                assert!(f.rt.unload(id));
            }
        })
        .unwrap();
    f.hub.send_str("Quit", Source::Global, ()).unwrap();
    assert_eq!(
        f.printed(),
        ["first"],
        "the rest of the send skips the script"
    );
    assert!(f.failures().is_empty());
    f.hub.send_str("Quit", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), Vec::<String>::new());
}

/// A script with some weight in its environment, listening three ways.
const HEAVY: &str = r#"
names = {}
for i = 1, 200 do names[i] = "name " .. i end
ListenMessage("Tick", nil, function() print("tick " .. #names) end)
ListenHook("Heal", nil, function(p, ctx) p.hp = p.hp + #names end)
ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item) print(names[row]) end)
"#;

#[test]
fn reloading_a_thousand_times_does_not_grow_memory() {
    let f = inventory(LuaOptions::default());
    let (id, _) = f.load("heavy.lua", HEAVY);
    let listeners = f.hub.listener_count();
    let mut settled = 0;
    for round in 1..=1000 {
        f.rt.reload(id, HEAVY).unwrap();
        if round == 100 {
            f.rt.collect_garbage().unwrap();
            settled = f.rt.used_memory();
        }
    }
    f.rt.collect_garbage().unwrap();
    let used = f.rt.used_memory();
    // Each environment holds 200 strings: 900 kept would be megabytes.
    assert!(
        used <= settled + 64 * 1024,
        "{used} bytes after 1,000 reloads, {settled} after 100"
    );
    assert_eq!(f.hub.listener_count(), listeners);
    f.hub.send_str("Tick", Source::Global, ()).unwrap();
    assert_eq!(f.printed(), ["tick 200"], "one version listens");
}

#[test]
fn an_unloaded_scripts_environment_is_collected() {
    let f = inventory(LuaOptions::default());
    f.rt.collect_garbage().unwrap();
    let before = f.rt.used_memory();
    let (id, _) = f.load("heavy.lua", HEAVY);
    f.rt.collect_garbage().unwrap();
    let loaded = f.rt.used_memory();
    assert!(f.rt.unload(id));
    f.rt.collect_garbage().unwrap();
    let unloaded = f.rt.used_memory();
    // What stays (some 5 KiB) is the runtime's, made once: the reload
    // test shows it does not grow.
    assert!(
        unloaded < before + (loaded - before) / 2,
        "{before} bytes before the load, {loaded} loaded, {unloaded} unloaded"
    );
}

#[test]
fn a_reloaded_script_keeps_its_mods_grants() {
    use gantry_host::face::ModGrants;
    use gantry_host::manifest::{Grant, Grants};
    let f = Fixture::new();
    let grants = ModGrants::of("ui", Some(Grants::none().with(Grant::Send, ["Ui"])));
    let id =
        f.rt.load_granted("ui.lua", r#"NotifyMessage("Ui.Open")"#, f.spawn(), grants)
            .unwrap();
    let error =
        f.rt.reload(
            id,
            "NotifyMessage(\"Ui.Open\")\nNotifyMessage(\"Quest.Start\")\n",
        )
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("ui.lua:2:") && error.contains("may not send \"Quest.Start\""),
        "{error}"
    );
}
