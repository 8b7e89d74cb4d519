//! Every API family from Rhai (as globals and under `GMP`), Rhai ↔ Rust
//! both ways, listening by function name and with unit options; a bad key
//! is an error at the caller's line, literal or not.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::hook::HookOptions;
use gantry_host::{KeyDecl, Language, ListenOptions, Role, Source, StructValue, Type, Value};
use gantry_rhai::runtime::RhaiOptions;

use crate::support::{Fixture, both_ways};

#[test]
fn notify_reaches_a_rhai_listener_with_int_float_string_bool() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        ListenMessage("Game.Score", (), |points, ratio, name, flag| {
            print(`${type_of(points)} ${type_of(ratio)} ${name} ${flag}`);
        });
        NotifyMessage("Game.Score", 3, 0.5, "ann", true);
        "#,
    );
    assert_eq!(f.printed(), vec!["i64 f64 ann true"]);
    let table = f.hub.table();
    assert_eq!(
        table.get("Game.Score").unwrap().param_types(),
        vec![Type::Int, Type::Float, Type::String, Type::Bool]
    );
}

#[test]
fn gmp_module_has_every_function() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        GMP::ListenMessage("Gmp.Key", (), |n| print(`got ${n}`));
        GMP::NotifyMessage("Gmp.Key", 1);
        let k = "Gmp.Key";
        GMP::NotifyMessage(k, 2);
        "#,
    );
    assert_eq!(f.printed(), vec!["got 1", "got 2"]);
}

#[test]
fn object_send_reaches_object_world_and_global_tiers_but_not_upwards() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let other = GMP::Spawn();
        ListenObjectMessage(SELF, "Hit", (), || print("object"));
        ListenWorldMessage(SELF.World(), "Hit", (), || print("world"));
        ListenMessage("Hit", (), || print("global"));
        ListenObjectMessage(other, "Hit", (), || print("other"));
        NotifyObjectMessage(SELF, "Hit");
        print("--");
        NotifyWorldMessage(SELF.World(), "Hit");
        print("--");
        NotifyMessage("Hit");
        "#,
    );
    assert_eq!(
        f.printed(),
        vec![
            "object", "world", "global", "--", "world", "global", "--", "global"
        ]
    );
}

#[test]
fn listen_options_times_order_and_partial_match() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        ListenMessage("Inv.Items", (), |n| print(`late ${n}`), #{ order: 5 });
        ListenMessage("Inv.Items", (), |n| print(`once ${n}`), #{ times: 1 });
        ListenMessage("Inv", (), |n| print(`partial ${n}`), #{ "match": "partial" });
        NotifyMessage("Inv.Items", 1);
        NotifyMessage("Inv.Items", 2);
        "#,
    );
    assert_eq!(
        f.printed(),
        vec!["once 1", "partial 1", "late 1", "partial 2", "late 2"]
    );
}

#[test]
fn listeners_may_be_function_pointers_to_script_functions() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        fn on_hurt(dmg, causer) { print(`hurt ${dmg} by ${causer == This()}`); }
        ListenObjectMessage(SELF, "Player.Hurt", (), Fn("on_hurt"));
        NotifyObjectMessage(SELF, "Player.Hurt", 5, SELF);
        "#,
    );
    assert_eq!(f.printed(), vec!["hurt 5 by true"]);
}

#[test]
fn listen_returns_an_id_that_unbind_message_removes() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let id = ListenMessage("Tick", (), || print("a"));
        ListenMessage("Tick", (), || print("b"));
        NotifyMessage("Tick");
        print(`removed ${UnbindMessage("Tick", id)}`);
        NotifyMessage("Tick");
        print(`removed ${UnbindMessage("Tick", SELF)}`);
        NotifyMessage("Tick");
        "#,
    );
    assert_eq!(f.printed(), vec!["a", "b", "removed 1", "b", "removed 1"]);
}

#[test]
fn request_listener_gets_a_responder_and_the_reply_function_the_answer() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        ListenObjectMessage(SELF, "Shop.Price", (), |item, rsp| {
            rsp.Response(if item == "sword" { 30 } else { 5 });
        });
        SendObjectMessage(SELF, "Shop.Price", "sword", |price| print(`price ${price}`));
        "#,
    );
    assert_eq!(f.printed(), vec!["price 30"]);
    let table = f.hub.table();
    let response = table.get("Shop.Price").unwrap().response.clone().unwrap();
    assert_eq!(response[0].ty, Type::Int);
}

#[test]
fn store_replays_to_late_listeners_and_once_is_consumed() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        StoreObjectMessage(SELF, "Door.State", "open");
        OnceObjectMessage(SELF, "Door.Built", 1);
        ListenObjectMessage(SELF, "Door.State", (), |s| print(`state ${s}`));
        ListenObjectMessage(SELF, "Door.Built", (), |n| print(`built ${n}`));
        ListenObjectMessage(SELF, "Door.Built", (), |n| print(`built again ${n}`));
        print(`removed ${RemoveStoredObjectMessage(SELF, "Door.State")}`);
        ListenObjectMessage(SELF, "Door.State", (), |s| print(`late ${s}`));
        "#,
    );
    assert_eq!(f.printed(), vec!["state open", "built 1", "removed true"]);
}

#[test]
fn hooks_change_the_payload_mark_handled_and_cancel() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        ListenHook("Damage.Calc", (), |p, ctx| { p.amount *= 2; }, #{ priority: 10 });
        ListenHook("Damage.Calc", (), |p, ctx| { p.amount += 1; ctx.Handled(); });
        let r = RunHook("Damage.Calc", #{ __struct: "Dmg", amount: 5 });
        print(`${r.ran} ${r.handled} ${r.cancelled} ${r.payload.amount} ${r.payload.__struct}`);
        ListenHook("Door.Open", (), |p, ctx| ctx.Cancel());
        let r = RunHook("Door.Open", 1);
        print(`${r.cancelled}`);
        "#,
    );
    assert_eq!(f.printed(), vec!["2 true false 11 Dmg", "true"]);
}

#[test]
fn maps_are_structs_by_struct_field_or_signature_and_arrays_are_arrays() {
    let f = Fixture::new();
    let got = Rc::new(RefCell::new(Vec::new()));
    let sink = got.clone();
    let _l = f
        .hub
        .listen_message("Inv.Set", Source::Global, ListenOptions::new(), move |m| {
            sink.borrow_mut().push(m.args.to_vec())
        })
        .unwrap();
    f.load(
        "a.rhai",
        r#"
        NotifyMessage("Inv.Set", #{ __struct: "Item", name: "axe", n: 2 }, [1, 2]);
        NotifyMessage("Inv.Set", #{ name: "bow", n: 1 }, []);
        "#,
    );
    let got = got.borrow();
    let item = |name: &str, n: i64| {
        Value::structure(StructValue::new("Item").with("n", n).with("name", name))
    };
    assert_eq!(got[0][0], item("axe", 2));
    assert_eq!(got[0][1], Value::array(vec![Value::Int(1), Value::Int(2)]));
    assert_eq!(got[1][0].as_struct().unwrap().name.as_ref(), "Item");
    // Where nothing is known, a map is a struct named after the key.
    f.load("b.rhai", r#"NotifyMessage("Other.Key", #{ a: 1 });"#);
    assert_eq!(
        f.hub.table().get("Other.Key").unwrap().params[0]
            .ty
            .to_string(),
        "OtherKey"
    );
}

#[test]
fn every_send_and_listen_records_its_call_site() {
    let f = Fixture::new();
    f.load(
        "sites.rhai",
        "ListenMessage(\"Site.Key\", (), |n| {});\n\nNotifyMessage(\"Site.Key\", 1);\nlet k = \"Site.Key\";\nNotifyMessage(k, 2);\n",
    );
    let table = f.hub.table();
    let entry = table.get("Site.Key").unwrap();
    let lines = |role| {
        entry
            .sites_with_role(role)
            .filter(|s| s.language == Language::Rhai && s.file == "sites.rhai")
            .map(|s| s.line)
            .collect::<Vec<_>>()
    };
    assert_eq!(lines(Role::Listen), vec![1]);
    assert_eq!(lines(Role::Send), vec![3, 5]);
}

#[test]
fn rhai_sends_reach_rust_listeners_and_rust_sends_reach_rhai() {
    let f = Fixture::new();
    let got = Rc::new(RefCell::new(Vec::new()));
    let sink = got.clone();
    let _h = f
        .hub
        .listen("Rhai.To.Rust", Source::Global, move |n: i64, s: String| {
            sink.borrow_mut().push(format!("{n} {s}"))
        })
        .unwrap();
    let (_, object) = f.load(
        "a.rhai",
        r#"
        NotifyMessage("Rhai.To.Rust", 7, "seven");
        ListenObjectMessage(SELF, "Rust.To.Rhai", (), |x, o| print(`${x} ${o == SELF}`));
        "#,
    );
    assert_eq!(*got.borrow(), vec!["7 seven"]);
    let key = f.hub.key("Rust.To.Rhai").unwrap();
    f.hub.send(key, object, (1.5f64, object)).unwrap();
    assert_eq!(f.printed(), vec!["1.5 true"]);
}

#[test]
fn rust_requests_and_hooks_reach_rhai() {
    let f = Fixture::new();
    let (_, object) = f.load(
        "a.rhai",
        r#"
        ListenObjectMessage(SELF, "Ask.Sum", (), |a, b, rsp| rsp.Response(a + b));
        ListenHook("Heal", (), |p, ctx| { p.hp += 10; });
        "#,
    );
    let answer = Rc::new(RefCell::new(None));
    let sink = answer.clone();
    let key = f.hub.key("Ask.Sum").unwrap();
    f.hub
        .request(key, object, (2i64, 3i64), move |reply| {
            if let gantry_host::Reply::Answer(v) = reply {
                *sink.borrow_mut() = Some(v.to_vec());
            }
        })
        .unwrap();
    assert_eq!(*answer.borrow(), Some(vec![Value::Int(5)]));
    let mut payload = Value::structure(StructValue::new("Hp").with("hp", 1i64));
    let result = f.hub.run_hook("Heal", &mut payload).unwrap();
    assert_eq!(result.ran, 1);
    assert_eq!(
        payload.as_struct().unwrap().get("hp"),
        Some(&Value::Int(11))
    );
}

#[test]
fn rust_hooks_and_listeners_see_rhai_runs_and_requests() {
    let f = Fixture::new();
    let _hook = f
        .hub
        .listen_hook("Rust.Hook", HookOptions::new(), |call| {
            if let Value::Struct(s) = &*call.payload {
                let mut s = (**s).clone();
                s.set("n", Value::Int(99));
                *call.payload = Value::structure(s);
            }
            call.handled();
        })
        .unwrap();
    let _l = f
        .hub
        .listen_message("Rust.Answers", Source::Global, ListenOptions::new(), |m| {
            if let Some(rsp) = m.responder {
                rsp.respond((42i64,));
            }
        })
        .unwrap();
    f.load(
        "a.rhai",
        r#"
        let r = RunHook("Rust.Hook", #{ __struct: "N", n: 1 });
        print(`${r.handled} ${r.payload.n}`);
        SendObjectMessage(SELF, "Rust.Answers", |v| print(`answer ${v}`));
        "#,
    );
    assert_eq!(f.printed(), vec!["true 99", "answer 42"]);
}

#[test]
fn objects_spawn_destroy_named_sources_and_worlds() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let o = GMP::Spawn();
        print(`${o.IsAlive()} ${o.World() == SELF.World()}`);
        let slot = GMP::Named(SELF, "Slot1");
        ListenObjectMessage(slot, "Equip", (), |n| print(`slot ${n}`));
        ListenObjectMessage(SELF, "Equip", (), |n| print(`self ${n}`));
        NotifyObjectMessage(slot, "Equip", 1);
        ListenObjectMessage(o, "Bye", o, || print("never"));
        GMP::Destroy(o);
        print(`${o.IsAlive()}`);
        NotifyObjectMessage(SELF, "Bye");
        "#,
    );
    assert_eq!(
        f.printed(),
        vec!["true true", "slot 1", "true false"]
            .into_iter()
            .take(2)
            .chain(["false"])
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_mismatched_send_is_an_error_at_the_senders_line() {
    let f = Fixture::new();
    f.load("a.rhai", r#"NotifyMessage("Typed.Key", 1);"#);
    let err = f.load_err("b.rhai", "\n\nNotifyMessage(\"Typed.Key\", \"text\");");
    assert!(err.starts_with("b.rhai:3:"), "{err}");
    assert!(err.contains("Typed.Key"), "{err}");
}

#[test]
fn a_world_is_an_object_source_for_store_and_once() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        StoreObjectMessage(SELF.World(), "World.State", "day");
        ListenObjectMessage(SELF.World(), "World.State", (), |s| print(s));
        "#,
    );
    assert_eq!(f.printed(), vec!["day"]);
}

fn declare_pair(f: &Fixture) {
    f.hub
        .declare(
            "Pair",
            KeyDecl::event()
                .param("a", Type::Int)
                .param("b", Type::String),
        )
        .unwrap();
}

#[test]
fn keys_bad_keys_are_errors_at_the_callers_line_literal_or_not() {
    both_ways(|f, rewrite| {
        for (source, line, key) in [
            ("\n\nNotifyMessage(\"bad key!\", 1);\n", 3, "bad key!"),
            (
                "let k = \"A..B\";\nListenMessage(k, (), || {});\n",
                2,
                "A..B",
            ),
            ("\nGMP::StoreObjectMessage(SELF, \"Bad.\", 1);\n", 2, "Bad."),
        ] {
            let err = f.load_err("k.rhai", source);
            assert!(
                err.starts_with(&format!("k.rhai:{line}:")) && err.contains(key),
                "rewrite {rewrite}: {err}"
            );
        }
    });
}

/// Every API function by its global name and under `GMP::`, the same
/// script in both spellings.
const EVERY_FUNCTION: &str = r#"
let id = ListenMessage("P.A", (), |n| print(`a ${n}`));
NotifyMessage("P.A", 1);
ListenWorldMessage(SELF.World(), "P.W", (), || print("w"));
NotifyWorldMessage(SELF.World(), "P.W");
ListenObjectMessage(SELF, "P.O", (), |x, rsp| rsp.Response(x + 1));
SendObjectMessage(SELF, "P.O", 1, |v| print(`reply ${v}`));
ListenObjectMessage(SELF, "P.N", (), |x| print(`object ${x}`));
NotifyObjectMessage(SELF, "P.N", 5);
StoreObjectMessage(SELF, "P.S", "kept");
OnceObjectMessage(SELF, "P.Once", 7);
ListenObjectMessage(SELF, "P.S", (), |s| print(`stored ${s}`));
ListenObjectMessage(SELF, "P.Once", (), |n| print(`once ${n}`));
ListenObjectMessage(SELF, "P.Once", (), |n| print(`once again ${n}`));
print(`${RemoveStoredObjectMessage(SELF, "P.S")}`);
print(`${UnbindMessage("P.A", id)}`);
NotifyMessage("P.A", 2);
ListenHook("P.H", (), |p, ctx| { ctx.Handled(); });
let r = RunHook("P.H", 1);
print(`${r.ran} ${r.handled} ${r.cancelled}`);
print(`${Request(SELF, "P.O", 3)}`);
"#;

#[test]
fn api_every_function_works_as_a_global_and_under_gmp() {
    let expected = [
        "a 1",
        "w",
        "reply 2",
        "object 5",
        "stored kept",
        "once 7",
        "true",
        "1",
        "1 true false",
        "4",
    ];
    both_ways(|f, rewrite| {
        f.load("global.rhai", EVERY_FUNCTION);
        assert_eq!(f.printed(), expected, "rewrite {rewrite}");
        let mut gmp = EVERY_FUNCTION.to_owned();
        for name in [
            "ListenMessage",
            "ListenWorldMessage",
            "ListenObjectMessage",
            "NotifyMessage",
            "NotifyWorldMessage",
            "NotifyObjectMessage",
            "SendObjectMessage",
            "StoreObjectMessage",
            "OnceObjectMessage",
            "RemoveStoredObjectMessage",
            "UnbindMessage",
            "ListenHook",
            "RunHook",
            "Request",
        ] {
            gmp = gmp.replace(&format!("{name}("), &format!("GMP::{name}("));
        }
        // (No name above is a part of another, so each call is
        // qualified once.)
        assert!(!gmp.contains("GMP::GMP::"));
        let f2 = Fixture::with(RhaiOptions {
            rewrite,
            ..RhaiOptions::default()
        });
        f2.load("gmp.rhai", &gmp);
        assert_eq!(f2.printed(), expected, "rewrite {rewrite}:\n{gmp}");
    });
}

#[test]
fn listen_by_function_name_and_unit_options_work_baked_or_not() {
    both_ways(|f, rewrite| {
        declare_pair(f);
        f.load(
            "a.rhai",
            r#"
            fn on_pair(a, b) { print(`named ${a} ${b}`); }
            ListenMessage("Pair", (), "on_pair");
            ListenMessage("Pair", (), |a| print(`unit options ${a}`), ());
            ListenMessage("Fresh.Key", (), "on_pair", #{ times: 1 });
            NotifyMessage("Pair", 1, "x");
            NotifyMessage("Fresh.Key", 2, "y");
            NotifyMessage("Fresh.Key", 3, "z");
            "#,
        );
        assert_eq!(
            f.printed(),
            ["named 1 x", "unit options 1", "named 2 y"],
            "rewrite {rewrite}"
        );
    });
}
