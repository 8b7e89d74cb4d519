//! Spec audit from Lua: rules of DESIGN.md and references 000, 002 and 003
//! that the other Lua tests leave untested, each run with load-time
//! rewriting on and off (the rewrite must not change behaviour).

mod common;

use common::Fixture;
use gantry_host::{KeyDecl, Language, Report, Role, Type};

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

fn declare_int(f: &Fixture, key: &str) {
    f.hub
        .declare(key, KeyDecl::event().param("n", Type::Int))
        .unwrap();
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

#[test]
fn compat_script_mismatch_is_reported_with_key_position_expected_got_and_the_scripts_line() {
    both_ways(|f, rewrite| {
        declare_int(f, "Typed.Key");
        f.load(
            "listen.lua",
            "ListenMessage('Typed.Key', nil, function(n) print('called', n) end)\n",
        );
        for (function, call) in [
            ("NotifyMessage", "NotifyMessage('Typed.Key', 'oops')"),
            (
                "NotifyObjectMessage",
                "NotifyObjectMessage(self, 'Typed.Key', 'oops')",
            ),
            (
                "SendObjectMessage",
                "SendObjectMessage(self, 'Typed.Key', 'oops')",
            ),
            (
                "StoreObjectMessage",
                "StoreObjectMessage(self, 'Typed.Key', 'oops')",
            ),
            ("generic", "local k = 'Typed.Key'\nNotifyMessage(k, 'oops')"),
        ] {
            f.hub.take_reports();
            let source = format!("\n\n{call}\n");
            let line = 2 + call.lines().count() as u32;
            let err =
                f.rt.load_script("m.lua", &source, f.spawn())
                    .unwrap_err()
                    .to_string();
            assert!(
                err.contains(&format!("m.lua:{line}:")) && err.contains("Typed.Key"),
                "{function}, rewrite {rewrite}: {err}"
            );
            assert!(f.printed().is_empty(), "no listener is called");
            let reports = f.hub.take_reports();
            let [
                Report::Mismatch {
                    key,
                    position,
                    expected,
                    got,
                    site: Some(site),
                    ..
                },
            ] = reports.as_slice()
            else {
                panic!("{function}, rewrite {rewrite}: {reports:?}");
            };
            assert_eq!((key.as_str(), *position), ("Typed.Key", 0));
            assert_eq!((expected.as_str(), got.as_str()), ("int", "string"));
            assert_eq!(
                (site.file.as_str(), site.line, site.language),
                ("m.lua", line, Language::Lua),
                "{function}, rewrite {rewrite}"
            );
        }
    });
}

#[test]
fn compat_unchecked_mode_lets_a_lua_send_through() {
    both_ways(|f, rewrite| {
        declare_int(f, "Typed.Key");
        f.hub.set_checked(false);
        f.load(
            "a.lua",
            r#"
            ListenMessage("Typed.Key", nil, function(n) print("got", n) end)
            NotifyMessage("Typed.Key", "text")
            "#,
        );
        assert_eq!(f.printed(), vec!["got\ttext"], "rewrite {rewrite}");
        assert!(f.hub.take_reports().is_empty());
    });
}

#[test]
fn compat_int_for_float_reaches_lua_listeners_as_a_float() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Speed", KeyDecl::event().param("v", Type::Float))
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenMessage("Speed", nil, function(v) print(math.type(v), v) end)
            NotifyMessage("Speed", 5)
            local k = "Speed"
            NotifyMessage(k, 6)
            StoreObjectMessage(self, "Speed", 7)
            ListenObjectMessage(self, "Speed", nil, function(v) print("replayed", math.type(v)) end)
            "#,
        );
        assert_eq!(
            f.printed(),
            vec!["float\t5.0", "float\t6.0", "float\t7.0", "replayed\tfloat"],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn compat_a_prefix_send_reaches_listeners_and_a_longer_one_is_refused() {
    both_ways(|f, rewrite| {
        f.hub
            .declare(
                "Pair",
                KeyDecl::event()
                    .param("a", Type::Int)
                    .param("b", Type::String),
            )
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenMessage("Pair", nil, function(a, b) print("got", a, b) end)
            NotifyMessage("Pair", 1)
            NotifyMessage("Pair", 2, "two")
            print(pcall(NotifyMessage, "Pair", 3, "three", true))
            "#,
        );
        let printed = f.printed();
        assert_eq!(
            printed[..2],
            ["got\t1\tnil", "got\t2\ttwo"],
            "rewrite {rewrite}"
        );
        assert!(
            printed[2].starts_with("false") && printed[2].contains("at most 2"),
            "rewrite {rewrite}: {printed:?}"
        );
    });
}

#[test]
fn request_unanswered_from_lua_is_reported_with_the_scripts_line() {
    both_ways(|f, rewrite| {
        f.load(
            "ask.lua",
            "\nSendObjectMessage(self, 'Nobody.Answers', 1, function() print('never') end)\n",
        );
        assert!(f.printed().is_empty());
        let reports = f.hub.take_reports();
        let Some(Report::Unanswered {
            key,
            site: Some(site),
            ..
        }) = reports.first()
        else {
            panic!("rewrite {rewrite}: {reports:?}");
        };
        assert_eq!(key, "Nobody.Answers");
        assert_eq!((site.file.as_str(), site.line), ("ask.lua", 2));
    });
}

#[test]
fn owner_already_destroyed_is_an_error_at_the_line_not_a_listener_kept_forever() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local o = GMP.Spawn()
            GMP.Destroy(o)
            print(pcall(ListenMessage, "Late", o, function() end))
            print(pcall(ListenObjectMessage, o, "Late", nil, function() end))
            print(pcall(StoreObjectMessage, o, "Late", 1))
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed.len(), 3);
        for line in &printed {
            assert!(
                line.starts_with("false") && line.contains("does not exist"),
                "rewrite {rewrite}: {line}"
            );
        }
        assert_eq!(f.hub.listener_count(), 0);
    });
}

#[test]
fn signature_lua_values_are_inferred_on_first_use() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"NotifyMessage("Infer.Lua", self, {__struct = "Pos", x = 1.5, y = 2}, 3, 4.0, false, "s", {1, 2})"#,
        );
        let table = f.hub.table();
        let entry = table.get("Infer.Lua").unwrap();
        assert_eq!(
            entry.param_types(),
            vec![
                Type::Object,
                Type::Struct("Pos".into()),
                Type::Int,
                Type::Float,
                Type::Bool,
                Type::String,
                Type::Array(Box::new(Type::Int)),
            ],
            "rewrite {rewrite}"
        );
        let pos = table.structs.get("Pos").unwrap();
        let mut fields: Vec<(String, Type)> = pos
            .fields
            .iter()
            .map(|p| (p.name.clone(), p.ty.clone()))
            .collect();
        fields.sort();
        assert_eq!(fields, [("x".into(), Type::Float), ("y".into(), Type::Int)]);
    });
}

#[test]
fn call_sites_of_every_family_are_recorded_with_file_line_language_and_role() {
    both_ways(|f, rewrite| {
        f.load(
            "s.lua",
            "ListenHook('Site.Hook', nil, function() end)\n\
             RunHook('Site.Hook', 1)\n\
             StoreObjectMessage(self, 'Site.Store', 1)\n\
             ListenObjectMessage(self, 'Site.Store', nil, function() end)\n\
             SendObjectMessage(self, 'Site.Ask', 1, function() end)\n\
             OnceObjectMessage(self, 'Site.Once', 1)\n\
             RemoveStoredObjectMessage(self, 'Site.Store')\n",
        );
        let table = f.hub.table();
        let sites = |key: &str| -> Vec<(u32, Role)> {
            table
                .get(key)
                .unwrap_or_else(|| panic!("{key} unknown"))
                .sites
                .iter()
                .filter(|s| s.file == "s.lua" && s.language == Language::Lua)
                .map(|s| (s.line, s.role))
                .collect()
        };
        assert_eq!(
            sites("Site.Hook"),
            [(1, Role::Listen), (2, Role::Send)],
            "rewrite {rewrite}"
        );
        let store = sites("Site.Store");
        for expected in [(3, Role::Send), (4, Role::Listen), (7, Role::Send)] {
            assert!(store.contains(&expected), "rewrite {rewrite}: {store:?}");
        }
        assert_eq!(sites("Site.Ask"), [(5, Role::Send)], "rewrite {rewrite}");
        assert_eq!(sites("Site.Once"), [(6, Role::Send)], "rewrite {rewrite}");
    });
}

#[test]
fn hooks_run_highest_priority_first_ties_by_registration_partial_above_included() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenHook("Combat.Hit", nil, function(p) print("exact 0 first") end)
            ListenHook("Combat", nil, function(p) print("partial 5") end, {priority = 5, match = "partial"})
            ListenHook("Combat.Hit", nil, function(p) print("exact 0 second") end)
            ListenHook("Combat", nil, function(p) print("exact on parent: never") end, {priority = 9})
            ListenHook("Combat.Hit", nil, function(p, ctx) print("exact -1 cancels"); ctx:Cancel() end, {priority = -1})
            ListenHook("Combat.Hit", nil, function(p) print("after cancel: never") end, {priority = -2})
            local r = RunHook("Combat.Hit", 1)
            print(r.ran, r.handled, r.cancelled)
            "#,
        );
        assert_eq!(
            f.printed(),
            vec![
                "partial 5",
                "exact 0 first",
                "exact 0 second",
                "exact -1 cancels",
                "4\tfalse\ttrue"
            ],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn reentrancy_a_lua_listener_may_unbind_itself_listen_and_send() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local id
            id = ListenMessage("Outer", nil, function()
                print("outer")
                UnbindMessage("Outer", id)
                ListenMessage("Inner", nil, function(n) print("inner", n) end)
                NotifyMessage("Inner", 1)
            end)
            NotifyMessage("Outer")
            NotifyMessage("Outer")
            NotifyMessage("Inner", 2)
            "#,
        );
        assert_eq!(
            f.printed(),
            vec!["outer", "inner\t1", "inner\t2"],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn store_once_and_remove_reach_listeners_of_every_language_once() {
    both_ways(|f, rewrite| {
        let got = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let (_, object) = f.load(
            "a.lua",
            r#"
            StoreObjectMessage(self, "Door.State", "open")
            OnceObjectMessage(self, "Door.Built", 1)
            "#,
        );
        let sink = got.clone();
        let _a = f
            .hub
            .listen("Door.Built", object, move |n: i64| {
                sink.borrow_mut().push(format!("built {n}"))
            })
            .unwrap();
        let sink = got.clone();
        let _b = f
            .hub
            .listen("Door.Built", object, move |n: i64| {
                sink.borrow_mut().push(format!("again {n}"))
            })
            .unwrap();
        let sink = got.clone();
        let _c = f
            .hub
            .listen("Door.State", object, move |s: String| {
                sink.borrow_mut().push(format!("state {s}"))
            })
            .unwrap();
        assert_eq!(
            *got.borrow(),
            ["built 1", "state open"],
            "rewrite {rewrite}"
        );
    });
}
