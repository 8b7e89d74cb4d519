//! A script loaded with its mod's grants: every call outside them, baked
//! or generic, in any API form, is an error naming the mod, the key and
//! the grant it lacks, and reaches no listener; a call inside them works
//! as without grants.

use std::rc::Rc;

use gantry_host::face::{ModGrants, ScriptRuntime};
use gantry_host::manifest::{Grant, Grants};

use crate::support::Fixture;

fn ui_grants() -> Option<Rc<ModGrants>> {
    ModGrants::of(
        "ui",
        Some(
            Grants::none()
                .with(Grant::Send, ["Ui"])
                .with(Grant::Listen, ["Game", "Quest.Start"])
                .with(Grant::Store, ["Ui"]),
        ),
    )
}

/// Loads `source` as mod "ui"'s script `ui.lua`; panics on a load error.
fn load_ui(f: &Fixture, source: &str) {
    let object = f.spawn();
    f.rt.load_granted("ui.lua", source, object, ui_grants())
        .unwrap_or_else(|e| panic!("ui.lua failed to load: {e}"));
}

/// A listener of every key the tests send, in a script with no grants.
const LISTENER: &str = r#"
    ListenMessage("Quest", nil, function(...) print("heard", ...) end, { match = "partial" })
    ListenMessage("Ui", nil, function(...) print("ui heard", ...) end, { match = "partial" })
"#;

#[test]
fn a_baked_send_outside_the_grants_is_refused_and_reaches_no_listener() {
    let f = Fixture::new();
    f.load("core.lua", LISTENER);
    load_ui(
        &f,
        r#"
        local ok, err = pcall(function() NotifyMessage("Quest.Start", 1) end)
        print(ok, err)
        NotifyMessage("Ui.Open", 2)
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 2, "{printed:?}");
    assert!(
        printed[0].starts_with("false\t")
            && printed[0].contains(
                "ui.lua:2: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only"
            ),
        "{printed:?}"
    );
    assert_eq!(printed[1], "ui heard\t2");
}

#[test]
fn a_generic_send_outside_the_grants_is_refused_and_reaches_no_listener() {
    let f = Fixture::new();
    f.rt.set_rewrite(false);
    f.load("core.lua", LISTENER);
    load_ui(
        &f,
        r#"
        local key = "Quest.Start"
        for _ = 1, 2 do
            local ok, err = pcall(NotifyObjectMessage, self, key, 1)
            print(ok, err)
        end
        SendObjectMessage(self, "Ui.Open", 3)
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 3, "{printed:?}");
    for line in &printed[..2] {
        assert!(
            line.starts_with("false\t")
                && line.contains(
                    "ui.lua:4: mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only"
                ),
            "{printed:?}"
        );
    }
    assert_eq!(printed[2], "ui heard\t3");
}

#[test]
fn a_baked_send_refused_at_load_stays_refused_once_a_lua_listener_could_take_the_fast_lane() {
    let f = Fixture::new();
    f.load(
        "core.lua",
        r#"ListenMessage("Quest.Start", nil, function(n) print("started", n) end)"#,
    );
    load_ui(
        &f,
        r#"
        for i = 1, 3 do
            print(pcall(NotifyMessage, "Quest.Start", i))
        end
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 3, "{printed:?}");
    assert!(
        printed.iter().all(|l| l.starts_with("false\t")),
        "{printed:?}"
    );
}

#[test]
fn a_partial_listen_on_a_key_wider_than_the_grants_is_refused() {
    let f = Fixture::new();
    load_ui(
        &f,
        r#"
        print(pcall(ListenMessage, "Quest", nil, function() end, { match = "partial" }))
        print(pcall(ListenMessage, "Quest.Start", nil, function() print("start") end))
        print(pcall(ListenMessage, "Game", nil, function() end, { match = "partial" }))
        "#,
    );
    let printed = f.printed();
    assert!(
        printed[0].starts_with("false\t")
            && printed[0].contains(
                "mod \"ui\" may not listen to \"Quest\": its grants listen to Game, Quest.Start only"
            ),
        "{printed:?}"
    );
    assert!(printed[1].starts_with("true\t"), "{printed:?}");
    assert!(printed[2].starts_with("true\t"), "{printed:?}");
}

#[test]
fn stores_hooks_and_requests_outside_the_grants_are_refused() {
    let f = Fixture::new();
    load_ui(
        &f,
        r#"
        print(pcall(StoreObjectMessage, self, "Quest.Current", 1))
        print(pcall(RunHook, "Ui.Draw", 1))
        print(pcall(ListenHook, "Ui.Draw", nil, function() end))
        print(pcall(SendObjectMessage, self, "Quest.IsActive", 1, function() end))
        print(pcall(StoreObjectMessage, self, "Ui.State", 1))
        "#,
    );
    let printed = f.printed();
    let expected = [
        "mod \"ui\" may not store \"Quest.Current\": its grants store Ui only",
        "mod \"ui\" may not hook \"Ui.Draw\": its grants hook no key (no `hook` grant)",
        "mod \"ui\" may not hook \"Ui.Draw\": its grants hook no key (no `hook` grant)",
        "mod \"ui\" may not send \"Quest.IsActive\": its grants send to Ui only",
    ];
    for (line, want) in printed.iter().zip(expected) {
        assert!(
            line.starts_with("false\t") && line.contains(want),
            "{printed:?}"
        );
    }
    assert!(printed[4].starts_with("true"), "{printed:?}");
    assert!(f.hub.table().get("Quest.Current").is_none());
}

#[test]
fn a_module_a_granted_script_requires_is_held_to_the_same_grants() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("helper.lua"),
        "return { start = function() NotifyMessage(\"Quest.Start\", 1) end }",
    )
    .unwrap();
    let f = Fixture::with(gantry_lua::runtime::LuaOptions {
        mod_dir: Some(dir.path().to_owned()),
        ..Default::default()
    });
    f.load("core.lua", LISTENER);
    load_ui(
        &f,
        r#"
        local helper = require("helper")
        print(pcall(helper.start))
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 1, "{printed:?}");
    assert!(
        printed[0].starts_with("false\t") && printed[0].contains("mod \"ui\" may not send"),
        "{printed:?}"
    );
}

#[test]
fn a_script_loaded_without_grants_may_use_everything() {
    let f = Fixture::new();
    f.load("core.lua", LISTENER);
    f.load(
        "free.lua",
        r#"
        NotifyMessage("Quest.Start", 1)
        StoreObjectMessage(self, "Quest.Current", 2)
        "#,
    );
    assert_eq!(f.printed(), vec!["heard\t1", "heard\t2"]);
}

#[test]
fn a_listener_answers_for_its_own_mod_whoever_sent_what_it_heard() {
    let f = Fixture::new();
    load_ui(
        &f,
        r#"
        ListenMessage("Quest.Start", nil, function(n)
            print(pcall(NotifyMessage, "Quest.End", n))
            NotifyMessage("Ui.Open", n)
        end)
        "#,
    );
    f.load(
        "core.lua",
        r#"
        ListenMessage("Ui.Open", nil, function(n) NotifyMessage("Quest.Done", n) end)
        ListenMessage("Quest.Done", nil, function(n) print("done", n) end)
        ListenMessage("Quest.End", nil, function(n) print("ended", n) end)
        NotifyMessage("Quest.Start", 4)
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 2, "{printed:?}");
    assert!(
        printed[0].starts_with("false\t")
            && printed[0]
                .contains("mod \"ui\" may not send \"Quest.End\": its grants send to Ui only"),
        "{printed:?}"
    );
    assert_eq!(printed[1], "done\t4");
}
