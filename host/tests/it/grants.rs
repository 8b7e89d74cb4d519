//! `[grants]` in `mod.toml`: what a mod may send, listen to, hook and
//! store, by key subtree; a malformed one is a manifest error naming its
//! field; a game's policy narrows it; a call is decided once per key.

use gantry_host::face::{GrantError, ModGrants};
use gantry_host::manifest::{self, Grant, Grants, MANIFEST_FILE};
use gantry_host::{ApiFunction, Hub};

const UI: &str = r#"[mod]
name = "ui"

[grants]
send = ["Ui"]
listen = ["Game", "Quest"]
hook = []
store = ["Ui.State"]
"#;

fn shown_errors(text: &str) -> String {
    match manifest::parse(MANIFEST_FILE, text) {
        Ok(m) => panic!("expected errors, got {m:?}"),
        Err(errors) => errors.to_string(),
    }
}

#[test]
fn a_manifest_grants_what_its_grants_table_lists() {
    let m = manifest::parse(MANIFEST_FILE, UI).unwrap_or_else(|e| panic!("{e}"));
    let grants = m.grants.expect("the [grants] of the manifest");
    assert!(grants.allows(Grant::Send, "Ui.Open"));
    assert!(!grants.allows(Grant::Send, "Quest.Start"));
    assert!(grants.allows(Grant::Listen, "Quest.Start"));
    assert!(!grants.allows(Grant::Hook, "Ui.Open"));
    assert!(grants.allows(Grant::Store, "Ui.State.Open"));
    assert!(!grants.allows(Grant::Store, "Ui.Theme"));
}

#[test]
fn a_manifest_without_grants_has_none_and_may_use_everything() {
    let m = manifest::parse(MANIFEST_FILE, "[mod]\nname = \"free\"\n").unwrap();
    assert_eq!(m.grants, None);
    assert_eq!(Grants::effective(None, None, false), None);
}

#[test]
fn a_field_left_out_of_grants_grants_nothing_of_its_kind() {
    let m = manifest::parse(
        MANIFEST_FILE,
        "[mod]\nname = \"quiet\"\n[grants]\nlisten = [\"Game\"]\n",
    )
    .unwrap();
    let grants = m.grants.unwrap();
    assert!(grants.allows(Grant::Listen, "Game.Tick"));
    assert!(!grants.allows(Grant::Send, "Game.Tick"));
}

#[test]
fn a_grant_on_quest_covers_quest_start_but_not_questlog() {
    let grants = Grants::none().with(Grant::Send, ["Quest"]);
    assert!(grants.allows(Grant::Send, "Quest"));
    assert!(grants.allows(Grant::Send, "Quest.Start"));
    assert!(grants.allows(Grant::Send, "Quest.Log.Entry"));
    assert!(!grants.allows(Grant::Send, "QuestLog"));
    assert!(!grants.allows(Grant::Send, "Ques"));
}

#[test]
fn an_unknown_grants_field_is_an_error_naming_it_with_a_suggestion() {
    let shown = shown_errors("[mod]\nname = \"ui\"\n[grants]\nsend = []\nlisen = [\"Ui\"]\n");
    assert_eq!(
        shown,
        "mod.toml:5:1: unknown field `lisen` (expected one of send, listen, hook, store) \
         in grants (did you mean `listen`?)"
    );
}

#[test]
fn a_grant_that_is_not_a_list_is_an_error_naming_its_field() {
    let shown = shown_errors("[mod]\nname = \"ui\"\n[grants]\nsend = \"Ui\"\n");
    assert_eq!(
        shown,
        "mod.toml:4:8: expected an array of keys, found a string in grants.send"
    );
}

#[test]
fn an_invalid_key_in_a_grant_is_an_error_naming_the_key_and_field() {
    let shown =
        shown_errors("[mod]\nname = \"ui\"\n[grants]\nlisten = [\"Game\", \"Quest.\", 3]\n");
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(
        lines[0].starts_with("mod.toml:4:19: message key `Quest.` has an empty segment")
            && lines[0].ends_with("in grants.listen"),
        "{shown}"
    );
    assert_eq!(
        lines[1],
        "mod.toml:4:29: expected a key string, found an integer in grants.listen"
    );
}

#[test]
fn grants_that_are_not_a_table_are_an_error() {
    let shown = shown_errors("grants = [\"Ui\"]\n[mod]\nname = \"ui\"\n");
    assert_eq!(
        shown,
        "mod.toml:1:10: expected a table, found an array in grants"
    );
}

#[test]
fn a_games_policy_narrows_a_mods_grants_to_what_both_allow() {
    let mine = Grants::none()
        .with(Grant::Send, ["Quest", "Ui"])
        .with(Grant::Listen, ["Game"]);
    let policy = Grants::none()
        .with(Grant::Send, ["Quest.Start", "Chat"])
        .with(Grant::Listen, ["Game", "Quest"]);
    let narrowed = Grants::effective(Some(&mine), Some(&policy), false).unwrap();
    assert!(narrowed.allows(Grant::Send, "Quest.Start"));
    assert!(!narrowed.allows(Grant::Send, "Quest.End"));
    assert!(!narrowed.allows(Grant::Send, "Ui.Open"));
    assert!(!narrowed.allows(Grant::Send, "Chat.Say"));
    assert!(narrowed.allows(Grant::Listen, "Game.Tick"));
    assert!(!narrowed.allows(Grant::Listen, "Quest.Start"));
}

#[test]
fn a_game_that_requires_grants_gives_a_mod_without_them_nothing() {
    let none = Grants::effective(None, None, true).expect("grants");
    for grant in Grant::ALL {
        assert!(!none.allows(grant, "Game.Tick"), "{grant}");
    }
    let policy = Grants::none().with(Grant::Listen, ["Game"]);
    let given = Grants::effective(None, Some(&policy), false).expect("grants");
    assert!(given.allows(Grant::Listen, "Game.Tick"));
}

#[test]
fn a_refused_call_names_the_mod_the_key_and_the_grant_it_lacks() {
    let hub = Hub::new();
    let grants = ModGrants::new(
        "ui",
        Grants::none()
            .with(Grant::Send, ["Ui"])
            .with(Grant::Listen, ["Game"]),
    );
    let start = hub.key("Quest.Start").unwrap();
    let error: GrantError = grants
        .check(ApiFunction::NotifyMessage, start, "Quest.Start")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "mod \"ui\" may not send \"Quest.Start\": its grants send to Ui only"
    );
    let error = grants
        .check(ApiFunction::RunHook, start, "Quest.Start")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "mod \"ui\" may not hook \"Quest.Start\": its grants hook no key (no `hook` grant)"
    );
    // Decided once, the same answer after.
    assert!(
        grants
            .check(ApiFunction::NotifyMessage, start, "Quest.Start")
            .is_err()
    );
    let open = hub.key("Ui.Open").unwrap();
    assert!(
        grants
            .check(ApiFunction::SendObjectMessage, open, "Ui.Open")
            .is_ok()
    );
    assert!(
        grants
            .check(ApiFunction::ListenMessage, open, "Ui.Open")
            .is_err()
    );
}

#[test]
fn a_grant_listing_more_keys_than_allowed_is_refused_naming_its_field() {
    let keys: Vec<String> = (0..=manifest::grants::MAX_GRANT_KEYS)
        .map(|i| format!("\"K{i}\""))
        .collect();
    let text = format!(
        "[mod]\nname = \"ui\"\n[grants]\nsend = [{}]\n",
        keys.join(", ")
    );
    assert_eq!(
        shown_errors(&text),
        format!(
            "mod.toml:4:8: more than {} keys in grants.send",
            manifest::grants::MAX_GRANT_KEYS
        )
    );
}
