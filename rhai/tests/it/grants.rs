//! A Rhai script loaded with its mod's grants: every call outside them,
//! baked or generic, is an error naming the mod, the key and the grant it
//! lacks, and reaches no listener; a baked function the engine shares
//! between scripts answers for the mod of the script calling it.

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
                .with(Grant::Listen, ["Game", "Quest.Start"]),
        ),
    )
}

fn load_ui(f: &Fixture, source: &str) {
    let object = f.spawn();
    f.rt.load_granted("ui.rhai", source, object, ui_grants())
        .unwrap_or_else(|e| panic!("ui.rhai failed to load: {e}"));
}

const LISTENER: &str = r#"
    ListenMessage("Quest", (), |n| print(`heard ${n}`), #{ "match": "partial" });
    ListenMessage("Ui", (), |n| print(`ui heard ${n}`), #{ "match": "partial" });
"#;

const REFUSED: &str = "mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only";

#[test]
fn a_baked_send_outside_the_grants_is_refused_and_reaches_no_listener() {
    let f = Fixture::new();
    f.load("core.rhai", LISTENER);
    load_ui(
        &f,
        r#"
        try { NotifyMessage("Quest.Start", 1); } catch (e) { print(`refused: ${e}`); }
        NotifyMessage("Ui.Open", 2);
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 2, "{printed:?}");
    assert!(
        printed[0].starts_with("refused: ") && printed[0].contains(REFUSED),
        "{printed:?}"
    );
    assert_eq!(printed[1], "ui heard 2");
}

#[test]
fn a_generic_send_outside_the_grants_is_refused_and_reaches_no_listener() {
    let f = Fixture::new();
    f.rt.set_rewrite(false);
    f.load("core.rhai", LISTENER);
    load_ui(
        &f,
        r#"
        let key = "Quest.Start";
        for i in 0..2 {
            try { NotifyObjectMessage(SELF, key, i); } catch (e) { print(`refused: ${e}`); }
        }
        SendObjectMessage(SELF, "Ui.Open", 3);
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 3, "{printed:?}");
    for line in &printed[..2] {
        assert!(line.contains(REFUSED), "{printed:?}");
    }
    assert_eq!(printed[2], "ui heard 3");
}

#[test]
fn a_baked_function_shared_with_a_mod_without_grants_still_refuses_the_granted_mod() {
    let f = Fixture::new();
    f.load(
        "core.rhai",
        r#"
        ListenMessage("Quest.Start", (), |n| print(`started ${n}`));
        fn start(n) { NotifyMessage("Quest.Start", n); }
        NotifyMessage("Quest.Start", 1);
        "#,
    );
    load_ui(
        &f,
        r#"
        try { NotifyMessage("Quest.Start", 2); } catch (e) { print(`refused: ${e}`); }
        "#,
    );
    f.load("later.rhai", r#"NotifyMessage("Quest.Start", 3);"#);
    let printed = f.printed();
    assert_eq!(printed.len(), 3, "{printed:?}");
    assert_eq!(printed[0], "started 1");
    assert!(printed[1].contains(REFUSED), "{printed:?}");
    assert_eq!(printed[2], "started 3");
}

#[test]
fn a_partial_listen_on_a_key_wider_than_the_grants_is_refused() {
    let f = Fixture::new();
    load_ui(
        &f,
        r#"
        try {
            ListenMessage("Quest", (), |n| print(n), #{ "match": "partial" });
        } catch (e) { print(`refused: ${e}`); }
        ListenMessage("Quest.Start", (), |n| print(`start ${n}`));
        "#,
    );
    f.load("core.rhai", r#"NotifyMessage("Quest.Start", 7);"#);
    let printed = f.printed();
    assert_eq!(printed.len(), 2, "{printed:?}");
    assert!(
        printed[0].contains(
            "mod \"ui\" may not listen to \"Quest\": its grants listen to Game, Quest.Start only"
        ),
        "{printed:?}"
    );
    assert_eq!(printed[1], "start 7");
}

#[test]
fn a_rhai_script_loaded_without_grants_may_use_everything() {
    let f = Fixture::new();
    f.load("core.rhai", LISTENER);
    f.load(
        "free.rhai",
        r#"
        NotifyMessage("Quest.Start", 1);
        RunHook("Quest.Reward", 1);
        "#,
    );
    assert_eq!(f.printed(), vec!["heard 1"]);
}

#[test]
fn a_listener_answers_for_its_own_mod_whoever_sent_what_it_heard() {
    let f = Fixture::new();
    load_ui(
        &f,
        r#"
        ListenMessage("Quest.Start", (), |n| {
            try { NotifyMessage("Quest.End", n); } catch (e) { print(`ui refused: ${e}`); }
            NotifyMessage("Ui.Open", n);
        });
        "#,
    );
    f.load(
        "core.rhai",
        r#"
        ListenMessage("Ui.Open", (), |n| {
            NotifyMessage("Quest.Done", n);
        });
        ListenMessage("Quest.Done", (), |n| print(`done ${n}`));
        ListenMessage("Quest.End", (), |n| print(`ended ${n}`));
        NotifyMessage("Quest.Start", 4);
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 2, "{printed:?}");
    assert!(
        printed[0].starts_with("ui refused: ")
            && printed[0]
                .contains("mod \"ui\" may not send \"Quest.End\": its grants send to Ui only"),
        "{printed:?}"
    );
    assert_eq!(printed[1], "done 4");
}
