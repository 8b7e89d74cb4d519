//! Every API family from Lua (send, listen, request, store, hooks, tables as
//! structs and arrays, objects and worlds), as globals and as fields of
//! `GMP`, and Lua ↔ Rust both ways; a bad key is an error at the caller's
//! line, literal or not.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{KeyDecl, Kind, Language, ListenOptions, Role, Type, Value};

use crate::support::Fixture;

#[test]
fn notify_reaches_a_lua_listener_with_integer_and_float_subtypes() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        ListenMessage("Game.Score", nil, function(points, ratio, name, flag)
            print(math.type(points), math.type(ratio), name, flag)
        end)
        NotifyMessage("Game.Score", 3, 0.5, "ann", true)
        "#,
    );
    assert_eq!(f.printed(), vec!["integer\tfloat\tann\ttrue"]);
    let table = f.hub.table();
    let entry = table.get("Game.Score").unwrap();
    assert_eq!(
        entry.param_types(),
        vec![Type::Int, Type::Float, Type::String, Type::Bool]
    );
}

#[test]
fn object_send_reaches_object_world_and_global_tiers_but_not_upwards() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local other = GMP.Spawn()
        ListenObjectMessage(self, "Hit", nil, function() print("object") end)
        ListenWorldMessage(self:World(), "Hit", nil, function() print("world") end)
        ListenMessage("Hit", nil, function() print("global") end)
        ListenObjectMessage(other, "Hit", nil, function() print("other") end)
        NotifyObjectMessage(self, "Hit")
        print("--")
        NotifyWorldMessage(self:World(), "Hit")
        print("--")
        NotifyMessage("Hit")
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
        "a.lua",
        r#"
        ListenMessage("Inv.Items", nil, function(n) print("late", n) end, {order = 5})
        ListenMessage("Inv.Items", nil, function(n) print("once", n) end, {times = 1})
        ListenMessage("Inv", nil, function(n) print("partial", n) end, {match = "partial"})
        NotifyMessage("Inv.Items", 1)
        NotifyMessage("Inv.Items", 2)
        "#,
    );
    assert_eq!(
        f.printed(),
        vec!["once\t1", "partial\t1", "late\t1", "partial\t2", "late\t2"]
    );
}

#[test]
fn listen_returns_a_connection_that_unbind_message_removes() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local id = ListenMessage("Ping", nil, function() print("ping") end)
        local owner = {}
        ListenMessage("Ping", owner, function() print("owned") end)
        assert(tostring(id) == "Connection(Ping#" .. id:Id() .. ")")
        NotifyMessage("Ping")
        print(UnbindMessage("Ping", id), UnbindMessage("Ping", owner))
        NotifyMessage("Ping")
        "#,
    );
    assert_eq!(f.printed(), vec!["ping", "owned", "1\t1"]);
}

#[test]
fn request_reply_function_gets_the_responders_answer() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        ListenObjectMessage(self, "Shop.Price", nil, function(item, rsp)
            rsp:Response(item == "sword" and 30 or 5)
        end)
        SendObjectMessage(self, "Shop.Price", "sword", function(price) print("price", price) end)
        "#,
    );
    assert_eq!(f.printed(), vec!["price\t30"]);
    assert_eq!(
        f.hub
            .table()
            .get("Shop.Price")
            .unwrap()
            .response
            .as_ref()
            .unwrap()[0]
            .ty,
        Type::Int
    );
}

#[test]
fn gmp_request_in_a_coroutine_yields_until_a_later_answer() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local pending
        ListenObjectMessage(self, "Quest.Ask", nil, function(q, rsp) pending = rsp end)
        ListenMessage("Answer.Now", nil, function() pending:Response("yes", 42) end)
        ListenObjectMessage(self, "Quick.Ask", nil, function(rsp) rsp:Response(7) end)
        coroutine.wrap(function()
            print("quick", GMP.Request(self, "Quick.Ask"))
            local a, b = GMP.Request(self, "Quest.Ask", "ready?")
            print("answer", a, b)
        end)()
        print("waiting")
        "#,
    );
    assert_eq!(f.printed(), vec!["quick\t7", "waiting"]);
    let key = f.hub.key("Answer.Now").unwrap();
    f.hub.send(key, gantry_host::Source::Global, ()).unwrap();
    assert_eq!(f.printed(), vec!["answer\tyes\t42"]);
    let err =
        f.rt.load_script("b.lua", "GMP.Request(self, 'Quick.Ask')", f.spawn())
            .unwrap_err();
    assert!(err.to_string().contains("b.lua:1:"), "{err}");
    assert!(err.to_string().contains("coroutine"), "{err}");
}

#[test]
fn store_replays_to_late_listeners_and_once_is_consumed() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        StoreObjectMessage(self, "Door.State", "open")
        OnceObjectMessage(self, "Door.Built", 1)
        ListenObjectMessage(self, "Door.State", nil, function(s) print("state", s) end)
        ListenObjectMessage(self, "Door.Built", nil, function(n) print("built", n) end)
        ListenObjectMessage(self, "Door.Built", nil, function(n) print("built again", n) end)
        print(RemoveStoredObjectMessage(self, "Door.State"))
        ListenObjectMessage(self, "Door.State", nil, function(s) print("late", s) end)
        "#,
    );
    assert_eq!(f.printed(), vec!["state\topen", "built\t1", "true"]);
}

#[test]
fn hooks_change_the_payload_mark_handled_and_cancel() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        ListenHook("Combat.Damage", nil, function(p, ctx) p.amount = p.amount * 2 end, {priority = 10})
        ListenHook("Combat.Damage", nil, function(p, ctx) p.amount = p.amount - 1; ctx:Handled(); ctx:Cancel() end)
        ListenHook("Combat.Damage", nil, function(p) p.amount = 0 end, {priority = -5})
        local result, payload = RunHook("Combat.Damage", {__struct = "Damage", amount = 5})
        print(result.ran, result.handled, result.cancelled, payload.amount, payload.__struct)
        local r2, same = RunHook("Nobody.Listens", 3)
        print(r2.ran, same)
        "#,
    );
    assert_eq!(f.printed(), vec!["2\ttrue\ttrue\t9\tDamage", "0\t3"]);
}

#[test]
fn tables_are_structs_by_struct_field_or_signature_and_arrays_by_sequence() {
    let f = Fixture::new();
    f.hub
        .declare(
            "Player.Stats",
            KeyDecl::event().param("stats", Type::Struct("Stats".into())),
        )
        .unwrap();
    let got = Rc::new(RefCell::new(Vec::new()));
    let sink = got.clone();
    f.hub
        .listen_message(
            "Player.Stats",
            gantry_host::Source::Global,
            ListenOptions::new(),
            move |m| sink.borrow_mut().push(m.args[0].clone()),
        )
        .unwrap()
        .detach();
    f.load(
        "a.lua",
        r#"
        NotifyMessage("Player.Stats", {hp = 3, name = "x"})
        ListenMessage("Loot", nil, function(item, list) print(item.__struct, item.gold, #list, list[2]) end)
        NotifyMessage("Loot", {__struct = "Item", gold = 4}, {10, 20, 30})
        local ok, err = pcall(NotifyMessage, "Loot2", {gold = 1})
        print(ok, err)
        "#,
    );
    let got = got.borrow();
    let stats = got[0].as_struct().unwrap();
    assert_eq!(&*stats.name, "Stats");
    assert_eq!(stats.get("hp"), Some(&Value::Int(3)));
    let printed = f.printed();
    assert_eq!(printed[0], "Item\t4\t3\t20");
    // Without `__struct` and with nothing known, the table is a struct
    // named after the key.
    assert_eq!(printed[1], "true\tnil", "{printed:?}");
    assert_eq!(
        f.hub.table().get("Loot2").unwrap().params[0].ty.to_string(),
        "Loot2"
    );
}

#[test]
fn every_send_and_listen_records_its_call_site() {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        let key = "Site.Test";
        f.load(
            "sites.lua",
            "local k = 'Site.Test'\nListenMessage(k, nil, function() end)\n\nNotifyMessage(k, 1)\nListenMessage('Site.Test', nil, function() end)\nNotifyMessage('Site.Test', 2)\n",
        );
        let table = f.hub.table();
        let sites: Vec<(u32, Role)> = table
            .get(key)
            .unwrap()
            .sites
            .iter()
            .filter(|s| s.language == Language::Lua && s.file == "sites.lua")
            .map(|s| (s.line, s.role))
            .collect();
        for expected in [
            (2, Role::Listen),
            (4, Role::Send),
            (5, Role::Listen),
            (6, Role::Send),
        ] {
            assert!(sites.contains(&expected), "rewrite {rewrite}: {sites:?}");
        }
    }
}

#[test]
fn lua_sends_reach_rust_listeners_and_rust_sends_reach_lua() {
    let f = Fixture::new();
    let got = Rc::new(RefCell::new(Vec::new()));
    let sink = got.clone();
    f.hub
        .listen(
            "Lua.To.Rust",
            gantry_host::Source::Global,
            move |n: i64, s: String| sink.borrow_mut().push(format!("{n} {s}")),
        )
        .unwrap()
        .detach();
    let (_, object) = f.load(
        "a.lua",
        r#"
        NotifyMessage("Lua.To.Rust", 7, "seven")
        ListenObjectMessage(self, "Rust.To.Lua", nil, function(x, who) print("from rust", x, who == self) end)
        "#,
    );
    assert_eq!(*got.borrow(), vec!["7 seven"]);
    let key = f.hub.key("Rust.To.Lua").unwrap();
    f.hub.send(key, object, (1.5f64, object)).unwrap();
    assert_eq!(f.printed(), vec!["from rust\t1.5\ttrue"]);
}

#[test]
fn objects_spawn_destroy_named_sources_and_worlds() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local o = GMP.Spawn()
        print(o:World() == self:World(), o == o, o ~= self)
        local left = GMP.Named(o, "left")
        ListenObjectMessage(left, "Arm", nil, function() print("left arm") end)
        ListenObjectMessage(o, "Arm", nil, function() print("body") end)
        NotifyObjectMessage(left, "Arm")
        ListenObjectMessage(o, "Bye", o, function() print("never") end)
        print(GMP.Destroy(o), o:IsAlive())
        NotifyObjectMessage(self, "Bye")
        "#,
    );
    assert_eq!(
        f.printed(),
        vec!["true\ttrue\ttrue", "left arm", "true\tfalse"]
    );
}

#[test]
fn a_mismatched_send_is_an_error_at_the_senders_line() {
    let f = Fixture::new();
    f.hub
        .declare(
            "Typed.Key",
            KeyDecl::event().kind(Kind::Event).param("n", Type::Int),
        )
        .unwrap();
    let err =
        f.rt.load_script(
            "m.lua",
            "\n\nNotifyMessage('Typed.Key', 'oops')\n",
            f.spawn(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("m.lua:3:"), "{err}");
    assert!(err.to_string().contains("Typed.Key"), "{err}");
}

#[test]
fn a_world_is_an_object_source_for_store_and_once() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        OnceObjectMessage(self:World(), "Bell", "fight!")
        StoreObjectMessage(self:World(), "Size", 20)
        ListenObjectMessage(self, "Size", nil, function(n) print("object", n) end)
        ListenWorldMessage(self:World(), "Size", nil, function(n) print("world", n) end)
        ListenWorldMessage(self:World(), "Bell", nil, function(t) print("first", t) end)
        ListenWorldMessage(self:World(), "Bell", nil, function(t) print("second", t) end)
        "#,
    );
    // Replays respect scope: only the world listener hears the world's store;
    // the once-message goes to its first listener only.
    assert_eq!(f.printed(), vec!["world\t20", "first\tfight!"]);
}

/// A function near Lua's 255-upvalue limit whose baked calls would each
/// add one more: the rewritten text would not compile, so the script runs
/// as written, with every call working.
#[test]
fn a_script_whose_rewritten_text_lua_would_refuse_runs_as_written() {
    let f = Fixture::new();
    let names: Vec<String> = (1..=199).map(|i| format!("a{i}")).collect();
    let sends: String = (1..=60)
        .map(|i| format!("    NotifyMessage(\"Wide.K{i}\", {i})\n"))
        .collect();
    let source = format!(
        "local seen = 0\n\
         for i = 1, 60 do ListenMessage(\"Wide.K\" .. i, nil, function(n) seen = seen + n end) end\n\
         local function outer()\n\
           local {locals} = {values}\n\
           return function()\n\
             local sum = {sum}\n\
         {sends}\
             return sum\n\
           end\n\
         end\n\
         local sum = outer()()\n\
         print(sum, seen)\n",
        locals = names.join(", "),
        values = vec!["1"; names.len()].join(", "),
        sum = names.join(" + "),
    );
    f.load("wide.lua", &source);
    assert_eq!(f.printed(), vec![format!("199\t{}", (1..=60).sum::<i64>())]);
}

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

#[test]
fn keys_bad_keys_are_errors_at_the_callers_line_literal_or_not() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local k = "also bad"
            print(pcall(NotifyMessage, "bad key!", 1))
            print(pcall(ListenMessage, k, nil, function() end))
            print(pcall(GMP.StoreObjectMessage, self, "A..B", 1))
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed.len(), 3, "rewrite {rewrite}: {printed:?}");
        for (line, key) in printed.iter().zip(["bad key!", "also bad", "A..B"]) {
            assert!(
                line.starts_with("false") && line.contains(key) && line.contains("a.lua:"),
                "rewrite {rewrite}: {line}"
            );
        }
        let err =
            f.rt.load_script(
                "b.lua",
                "\n\nNotifyObjectMessage(self, 'Bad.', 1)\n",
                f.spawn(),
            )
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("b.lua:3:") && err.contains("Bad."),
            "rewrite {rewrite}: {err}"
        );
    });
}

#[test]
fn api_every_function_is_a_global_and_a_field_of_gmp_and_self_is_the_object() {
    both_ways(|f, rewrite| {
        let (_, object) = f.load(
            "a.lua",
            r#"
            local names = {"NotifyMessage", "NotifyWorldMessage", "NotifyObjectMessage",
                "SendObjectMessage", "ListenMessage", "ListenWorldMessage", "ListenObjectMessage",
                "ListenRowMessage", "StoreObjectMessage", "OnceObjectMessage",
                "RemoveStoredObjectMessage", "UnbindMessage", "ListenHook", "RunHook"}
            for _, name in ipairs(names) do
                if type(_ENV[name]) ~= "function" then print("no global", name) end
                if type(GMP[name]) ~= "function" then print("no GMP field", name) end
            end
            for _, name in ipairs({"Request", "StoredArray", "WithRemoval"}) do
                if type(GMP[name]) ~= "function" then print("no GMP field", name) end
            end
            print(math.type(GMP.AllRows), math.type(GMP.AllRowsWithRemoval))
            ListenObjectMessage(self, "Who", nil, function(o) print("self is the sender", o == self) end)
            "#,
        );
        assert_eq!(f.printed(), vec!["integer\tinteger"], "rewrite {rewrite}");
        let key = f.hub.key("Who").unwrap();
        f.hub.send(key, object, (object,)).unwrap();
        assert_eq!(f.printed(), vec!["self is the sender\ttrue"]);
    });
}
