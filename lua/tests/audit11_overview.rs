//! Audit 11 from Lua: rules of references 000 and 002 (and DESIGN.md) at
//! the edges the earlier audits leave open, each run with load-time
//! rewriting on and off (the rewrite must not change behaviour; with it on,
//! literal-key sends between Lua scripts take the fast lane).

mod common;

use common::Fixture;
use gantry_host::{KeyDecl, Language, Param, Report, Role, StructDef, Type};

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

// ----- script rewriting preserves behaviour -------------------------------------------

/// DESIGN: "The rewrite must preserve behaviour ... never turn a call into a
/// call of something [other than what Lua would call]"; 002: "Designers keep
/// writing the same generic NotifyObjectMessage" — a script that replaces
/// the API function through `_G` (the script's own environment) calls its
/// replacement, rewritten or not.
#[test]
fn rewrite_preserves_behaviour_when_a_script_replaces_an_api_function_through_g() {
    let failed = std::cell::RefCell::new(Vec::new());
    for (how, replace) in [
        ("_G field", "_G.NotifyMessage = mine"),
        ("_G index", "_G[\"NotifyMessage\"] = mine"),
        ("rawset", "rawset(_ENV, \"NotifyMessage\", mine)"),
        ("_ENV index", "_ENV[\"NotifyMessage\"] = mine"),
        ("plain global", "NotifyMessage = mine"),
        (
            "alias of _ENV",
            "local env = _ENV; env.NotifyMessage = mine",
        ),
        ("load", "load(\"local f = ...; NotifyMessage = f\")(mine)"),
    ] {
        both_ways(|f, rewrite| {
            let source = format!(
                r#"
                ListenMessage("Wrapped", nil, function(n) print("hub", n) end)
                local real = NotifyMessage
                local function mine(key, n)
                    print("mine", key, n)
                    real(key, n + 100)
                end
                {replace}
                NotifyMessage("Wrapped", 1)
                "#
            );
            f.load("wrap.lua", &source);
            let printed = f.printed();
            if printed != ["mine\tWrapped\t1", "hub\t101"] {
                failed
                    .borrow_mut()
                    .push(format!("{how}, rewrite {rewrite}: {printed:?}"));
            }
        });
    }
    let failed = failed.into_inner();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Literal keys written with escapes or as a call with a string argument
/// (`f"str"`) are the same key to Lua: heard the same rewritten or not, and
/// recorded under the key Lua sees.
#[test]
fn rewrite_preserves_behaviour_of_escaped_keys_and_string_call_syntax() {
    both_ways(|f, rewrite| {
        f.load(
            "esc.lua",
            r#"
            ListenMessage("Esc.Key", nil, function() print("esc") end)
            ListenMessage("Ping", nil, function() print("ping") end)
            NotifyMessage("Esc\x2eKey")
            NotifyMessage("Esc\u{2E}Key")
            NotifyMessage [[Esc.Key]]
            NotifyMessage "Ping"
            GMP.NotifyMessage"Ping"
            "#,
        );
        assert_eq!(
            f.printed(),
            ["esc", "esc", "esc", "ping", "ping"],
            "rewrite {rewrite}"
        );
        let table = f.hub.table();
        assert!(
            table
                .keys
                .keys()
                .all(|k| !k.contains('\\') && !k.contains('[')),
            "rewrite {rewrite}: {:?}",
            table.keys.keys().collect::<Vec<_>>()
        );
        let sends: Vec<u32> = table
            .get("Esc.Key")
            .unwrap()
            .sites_with_role(Role::Send)
            .filter(|s| s.file == "esc.lua")
            .map(|s| s.line)
            .collect();
        assert_eq!(sends, [4, 5, 6], "rewrite {rewrite}");
    });
}

/// 002: "Every script send and listen records the call site's file and
/// line" — a call spread over lines is recorded at the line of the call,
/// the same with the rewrite on or off, and an error names that line too.
#[test]
fn call_site_of_a_multi_line_call_is_the_same_line_baked_or_generic() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Multi.Line", KeyDecl::event().param("n", Type::Int))
            .unwrap();
        f.load(
            "ml.lua",
            "\nNotifyMessage(\n  \"Multi.Line\",\n  1)\nListenMessage(\n  \"Multi.Line\",\n  nil,\n  function() end)\n",
        );
        let table = f.hub.table();
        let sites: Vec<(u32, Role)> = table
            .get("Multi.Line")
            .unwrap()
            .sites
            .iter()
            .filter(|s| s.file == "ml.lua" && s.language == Language::Lua)
            .map(|s| (s.line, s.role))
            .collect();
        assert_eq!(
            sites,
            [(2, Role::Send), (5, Role::Listen)],
            "rewrite {rewrite}"
        );
        drop(table);
        let err =
            f.rt.load_script(
                "bad.lua",
                "\n\nNotifyMessage(\n  \"Multi.Line\",\n  'x')\n",
                f.spawn(),
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.lua:3:"), "rewrite {rewrite}: {err}");
    });
}

// ----- signature inference -----------------------------------------------------------

/// 002: "Lua callbacks are dynamic and carry no static types, so they
/// cannot be inferred" — a Lua listener on a new key records no parameter
/// types, and the first send is what the key learns.
#[test]
fn signature_a_lua_listener_on_a_new_key_records_no_types() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenMessage("Fresh.Lua", nil, function(a, b) print("got", a, b) end)
            "#,
        );
        assert!(
            f.hub
                .table()
                .get("Fresh.Lua")
                .is_none_or(|e| e.params.is_empty()),
            "rewrite {rewrite}"
        );
        f.load("b.lua", r#"NotifyMessage("Fresh.Lua", "text", 2.5)"#);
        assert_eq!(f.printed(), ["got\ttext\t2.5"], "rewrite {rewrite}");
        assert_eq!(
            f.hub.table().get("Fresh.Lua").unwrap().param_types(),
            [Type::String, Type::Float],
            "rewrite {rewrite}"
        );
    });
}

// ----- compatibility ------------------------------------------------------------------

/// 000/DESIGN: "an int is accepted for a float and converted; nothing else
/// converts" — a Lua float (even 2.0) is not an int.
#[test]
fn compat_a_lua_float_is_not_accepted_for_an_int_parameter() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Count", KeyDecl::event().param("n", Type::Int))
            .unwrap();
        f.load(
            "a.lua",
            r#"
            ListenMessage("Count", nil, function(n) print("got", math.type(n)) end)
            NotifyMessage("Count", 2)
            print(pcall(NotifyMessage, "Count", 2.0))
            local ok = pcall(function() NotifyMessage("Count", 2.0) end)
            print("baked call refused", not ok)
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed[0], "got\tinteger", "rewrite {rewrite}");
        assert!(
            printed[1].starts_with("false") && printed[1].contains("expected int, got float"),
            "rewrite {rewrite}: {printed:?}"
        );
        assert_eq!(printed[2], "baked call refused\ttrue", "rewrite {rewrite}");
        assert_eq!(printed.len(), 3);
    });
}

fn declare_pos(f: &Fixture) {
    f.hub.edit_table(|t| {
        t.declare_struct(
            "Pos",
            StructDef {
                fields: vec![Param::new("x", Type::Float), Param::new("y", Type::Float)],
                ..Default::default()
            },
        )
    });
    f.hub
        .declare(
            "Moved",
            KeyDecl::event().param("to", Type::Struct("Pos".into())),
        )
        .unwrap();
}

/// DESIGN: "an int is accepted for a float and converted" — in a struct's
/// fields too: `{x = 1}` for a declared `Pos { x: float }` reaches a Lua
/// listener as a float.
#[test]
fn compat_an_integer_in_a_float_field_of_a_struct_reaches_lua_as_a_float() {
    both_ways(|f, rewrite| {
        declare_pos(f);
        f.load(
            "a.lua",
            r#"
            ListenMessage("Moved", nil, function(p) print(math.type(p.x), math.type(p.y)) end)
            NotifyMessage("Moved", {x = 1, y = 2.5})
            "#,
        );
        assert_eq!(f.printed(), ["float\tfloat"], "rewrite {rewrite}");
    });
}

/// DESIGN: "nothing else converts ... no listener is called with wrong
/// types" — a field of a declared struct that carries the wrong type is a
/// mismatch, not a string handed to a listener expecting a float.
#[test]
fn compat_a_wrong_typed_field_of_a_declared_struct_is_refused() {
    both_ways(|f, rewrite| {
        declare_pos(f);
        f.load(
            "a.lua",
            r#"
            ListenMessage("Moved", nil, function(p) print("called with", type(p.x)) end)
            print(pcall(NotifyMessage, "Moved", {x = "far", y = 1.0}))
            "#,
        );
        let printed = f.printed();
        assert!(
            printed.len() == 1 && printed[0].starts_with("false"),
            "rewrite {rewrite}: {printed:?}"
        );
    });
}

// ----- store / once / times -----------------------------------------------------------

/// 002 Once + Times from Lua: a once message replayed to a `{times = 2}`
/// listener uses one call; one more live send and the listener is gone.
#[test]
fn store_once_replay_uses_one_of_a_lua_listeners_times() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            OnceObjectMessage(self, "Boot.Done", 1)
            ListenObjectMessage(self, "Boot.Done", nil, function(n) print("got", n) end, {times = 2})
            ListenObjectMessage(self, "Boot.Done", nil, function(n) print("second", n) end)
            NotifyObjectMessage(self, "Boot.Done", 2)
            NotifyObjectMessage(self, "Boot.Done", 3)
            "#,
        );
        assert_eq!(
            f.printed(),
            ["got\t1", "got\t2", "second\t2", "second\t3"],
            "rewrite {rewrite}"
        );
    });
}

/// 002 Store + partial matching from Lua: a partial listener arriving after
/// a store under its key gets the replay with the stored arguments.
#[test]
fn store_replays_to_a_late_partial_lua_listener() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            StoreObjectMessage(self, "Game.Ready", 7, "map")
            ListenObjectMessage(self, "Game", nil, function(n, s) print("partial", n, s) end, {match = "partial"})
            ListenObjectMessage(self, "Game", nil, function() print("exact parent: never") end)
            "#,
        );
        assert_eq!(f.printed(), ["partial\t7\tmap"], "rewrite {rewrite}");
    });
}

// ----- lifetime and re-entrancy -------------------------------------------------------

/// DESIGN "Destroying an object drops everything it owns and everything
/// sourced from it" — mid-dispatch, on the fast lane too: listeners of the
/// object destroyed by an earlier listener are not called.
#[test]
fn destroying_the_source_object_mid_dispatch_skips_its_lua_listeners() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            local o = GMP.Spawn()
            ListenMessage("Boom", nil, function() print("killer"); GMP.Destroy(o) end, {order = -1})
            ListenObjectMessage(o, "Boom", o, function() print("object tier: never") end)
            ListenMessage("Boom", o, function() print("owned by o: never") end)
            ListenWorldMessage(GMP.World(), "Boom", nil, function() print("world") end)
            NotifyObjectMessage(o, "Boom")
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed, ["killer", "world"], "rewrite {rewrite}");
        assert!(f.failures().is_empty(), "rewrite {rewrite}");
    });
}

/// 002 "Set N and the listener unlistens itself after N calls" — a Lua
/// `{times = 1}` listener sending its own key is called once.
#[test]
fn listen_options_times_counts_a_lua_listeners_reentrant_calls() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenMessage("Echo", nil, function(n)
                print("called", n)
                if n < 3 then NotifyMessage("Echo", n + 1) end
            end, {times = 1})
            NotifyMessage("Echo", 0)
            NotifyMessage("Echo", 10)
            "#,
        );
        assert_eq!(f.printed(), ["called\t0"], "rewrite {rewrite}");
    });
}

/// 002 "Order defaults to 0, lower runs first; equal orders keep
/// registration order" — Lua listeners of two scripts and the three tiers,
/// through the fast lane and without it.
#[test]
fn listen_options_order_ties_keep_registration_order_across_lua_scripts() {
    both_ways(|f, rewrite| {
        let (_, first) = f.load(
            "one.lua",
            r#"
            ListenObjectMessage(self, "Tie", nil, function() print("one object 0") end)
            ListenMessage("Tie", nil, function() print("one global 0") end)
            ListenMessage("Tie", nil, function() print("one global -1") end, {order = -1})
            "#,
        );
        let _ = first;
        f.load(
            "two.lua",
            r#"
            ListenWorldMessage(GMP.World(), "Tie", nil, function() print("two world 0") end)
            ListenMessage("Tie", nil, function() print("two global -1") end, {order = -1})
            "#,
        );
        let key = f.hub.key("Tie").unwrap();
        f.hub.send(key, first, ()).unwrap();
        assert_eq!(
            f.printed(),
            [
                "one global -1",
                "two global -1",
                "one object 0",
                "one global 0",
                "two world 0"
            ],
            "rewrite {rewrite}"
        );
    });
}

// ----- request / response -------------------------------------------------------------

/// DESIGN: "an unanswered request is reported, not silently lost" — a Lua
/// listener that ignores its responder leaves the request unanswered, and
/// that is reported when the send is over (not whenever the collector
/// happens to run).
#[test]
fn request_a_lua_listener_ignoring_its_responder_is_reported_unanswered() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenObjectMessage(self, "Price", nil, function(item) print("asked", item) end)
            SendObjectMessage(self, "Price", "sword", function(v) print("reply", v) end)
            print("after")
            "#,
        );
        let printed = f.printed();
        assert_eq!(printed, ["asked\tsword", "after"], "rewrite {rewrite}");
        let unanswered = |reports: Vec<Report>| {
            reports
                .iter()
                .any(|r| matches!(r, Report::Unanswered { key, .. } if key == "Price"))
        };
        let at_once = unanswered(f.hub.take_reports());
        f.rt.collect_garbage().unwrap();
        let after_collection = unanswered(f.hub.take_reports());
        assert!(
            at_once,
            "rewrite {rewrite}: not reported when the send is over \
             (reported after a full collection: {after_collection})"
        );
    });
}

/// 002 "the callback is one-shot": two Lua listeners answering one request
/// call the reply function once, with the first answer.
#[test]
fn request_two_lua_responders_reply_function_runs_once_with_the_first_answer() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenObjectMessage(self, "Ask", nil, function(n, rsp) print("first", rsp:Response(n + 1)) end)
            ListenObjectMessage(self, "Ask", nil, function(n, rsp) print("second", rsp:Response(n + 2)) end)
            SendObjectMessage(self, "Ask", 1, function(v) print("reply", v) end)
            "#,
        );
        assert_eq!(
            f.printed(),
            ["reply\t2", "first\ttrue", "second\tfalse"],
            "rewrite {rewrite}"
        );
    });
}

/// 002 "take FGMPResponder& as the last parameter and GMP knows": a Lua
/// listener gets the responder only when it has a parameter left for it —
/// declared after the arguments, or a vararg function — and may keep it to
/// answer later; one that cannot take it leaves the request to be reported
/// when the send ends, even when another listener is called after it.
#[test]
fn request_responder_goes_to_listeners_with_a_parameter_left_for_it() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r##"
            local kept
            ListenObjectMessage(self, "Ask.Later", nil, function(a, b) print("two params", a, b) end)
            ListenObjectMessage(self, "Ask.Later", nil, function(...) print("vararg", select("#", ...)) end)
            ListenObjectMessage(self, "Ask.Later", nil, function(a, b, rsp) kept = rsp end)
            SendObjectMessage(self, "Ask.Later", "x", "y", function(v) print("reply", v) end)
            print("sent")
            kept:Response(7)
            "##,
        );
        assert_eq!(
            f.printed(),
            ["two params\tx\ty", "vararg\t3", "sent", "reply\t7"],
            "rewrite {rewrite}"
        );
        let reports = f.hub.take_reports();
        assert!(
            !reports
                .iter()
                .any(|r| matches!(r, Report::Unanswered { .. })),
            "rewrite {rewrite}: {reports:?}"
        );
    });
}
