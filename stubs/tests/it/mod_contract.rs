//! The stubs of a mod with a `mod.toml`: its declared names, docs, kinds
//! and structs show in both outputs, and EmmyLua reading the Lua stubs
//! flags the very lines `gantry check` flags — no more, no fewer.
//!
//! The table is built as every tool builds it
//! ([`gantry_host::manifest::Contract`]): the table file, the host's keys,
//! then the manifest.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use gantry_host::SignatureTable;
use gantry_host::manifest::Contract;
use gantry_host::manifest::contract::find_table;
use gantry_lsp::analysis::diagnostics::Severity;
use gantry_stubs::{lua_stubs, rhai_definitions};

/// A newcomer's quest mod: a few declared keys of four kinds and a struct.
const MANIFEST: &str = r#"
[mod]
name = "questlog"

[structs.Quest]
fields = ["id: string", "reward: int"]
doc = "One quest of the log."

[keys."Quest.Start"]
kind = "event"
params = ["id: string", "reward: int"]
doc = "A quest begins."

[keys."Quest.Done"]
kind = "event"
params = ["id: string"]

[keys."Quest.IsActive"]
kind = "request"
params = ["id: string"]
returns = ["active: bool"]

[keys."Quest.First"]
kind = "once"
params = ["quest: Quest"]

[keys."Quest.Award"]
kind = "hook"
params = ["quest: Quest"]
"#;

/// The mod's folder with `mod.toml` and `main.lua` (no table file: no run
/// yet).
fn quest_mod(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("mod.toml"), MANIFEST).unwrap();
    fs::write(dir.path().join("main.lua"), script).unwrap();
    dir
}

/// The table `gantry stubs` and `gantry check` both read for `dir`.
fn contract_table(dir: &Path) -> SignatureTable {
    let contract = Contract::load(find_table(dir).as_deref(), &[], Some(dir));
    assert!(contract.table_error.is_none(), "{:?}", contract.table_error);
    assert!(
        contract.manifest_errors.is_none(),
        "{:?}",
        contract.manifest_errors
    );
    contract.table
}

/// The lines of `main.lua` `gantry check` reports an error or a warning
/// on (hints, about keys that are not literals, say nothing is wrong).
fn check_lines(dir: &Path) -> BTreeSet<u32> {
    let files = gantry_lsp::check::check_dir(dir).expect("the mod folder is checked");
    files
        .iter()
        .filter(|file| file.path.ends_with("main.lua"))
        .flat_map(|file| &file.diagnostics)
        .filter(|d| d.severity != Severity::Hint)
        .map(|d| d.line as u32)
        .collect()
}

/// The lines of `main.lua` EmmyLua's analysis flags with the mod's stubs
/// as its library (unused-variable hints left out).
fn emmylua_lines(dir: &Path) -> BTreeSet<u32> {
    let lib = tempfile::tempdir().unwrap();
    fs::write(
        lib.path().join("gantry.lua"),
        lua_stubs(&contract_table(dir)),
    )
    .unwrap();
    let config = lib.path().join("emmyrc.json");
    fs::write(
        &config,
        serde_json::json!({
            "runtime": { "version": "Lua5.4" },
            "workspace": { "library": [lib.path().to_string_lossy()] },
        })
        .to_string(),
    )
    .unwrap();
    gantry_test_support::emmylua::check(dir, &config)
        .into_iter()
        .filter(|(file, _)| file == "main.lua")
        .flat_map(|(_, diags)| diags)
        .filter(|d| d.code != "unused")
        .map(|d| d.line)
        .collect()
}

/// The lines of `script` marked `--!`: the mistakes it holds.
fn marked(script: &str) -> BTreeSet<u32> {
    script
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains("--!"))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// One mod, its mistakes marked: a typo'd key, a wrong-type send, keys
/// used with functions their kind does not fit — and correct calls of
/// every kind (plain tables for the struct, a request in a coroutine, a
/// hook). `gantry check` and EmmyLua on the stubs flag exactly the marked
/// lines.
#[test]
fn the_stubs_and_gantry_check_flag_the_same_lines_of_a_mod() {
    let script = r#"
ListenMessage("Quest.Start", nil, function(id, reward) print(id, reward + 1) end)
ListenMessage("Quest.Don", nil, function(id) print(id) end) --! typo
NotifyMessage("Quest.Start", "q1", "lots") --! wrong type
NotifyMessage("Quest.Start", "q1", 10)
NotifyMessage("Quest.Done", "q1")
NotifyMessage("Quest.Done", 1) --! wrong type, a single argument
OnceObjectMessage(self, "Quest.First", { id = "q1", reward = 5 })
StoreObjectMessage(self, "Quest.Start", "q1", 10) --! an event is not stored
ListenMessage("Quest.IsActive", nil, function(id, rsp) rsp:Response(id == "q1") end)
local asking = coroutine.wrap(function()
  local active = GMP.Request(self, "Quest.IsActive", "q1")
  return active
end)
GMP.Request(self, "Quest.Done", "q1") --! not a request
ListenHook("Quest.Award", nil, function(quest, ctx) quest.reward = quest.reward * 2 ctx:Handled() end)
RunHook("Quest.Award", { id = "q1", reward = 5 })
RunHook("Quest.Start", { id = "q1", reward = 5 }) --! not a hook
return asking
"#;
    let dir = quest_mod(script);
    let expected = marked(script);
    assert_eq!(expected.len(), 6);
    assert_eq!(check_lines(dir.path()), expected, "gantry check");
    assert_eq!(emmylua_lines(dir.path()), expected, "EmmyLua on the stubs");
}

/// Keys a run only observed (in the table file, not in `mod.toml`) are
/// held alike: a wrong argument is a finding of `gantry check` (a warning)
/// and flagged on the stubs, and storing a key observed as a plain event is
/// accepted by both (storing it makes it a store), where storing a
/// declared event is not.
#[test]
fn observed_keys_get_the_same_verdict_from_the_stubs_and_gantry_check() {
    let script = r#"
ListenMessage("Score.Set", nil, function(n) print(n + 1) end)
NotifyMessage("Score.Set", 3)
NotifyMessage("Score.Set", "three") --! wrong type of an observed key
StoreObjectMessage(self, "Score.Set", 4)
StoreObjectMessage(self, "Quest.Done", "q1") --! a declared event is not stored
ListenMessage("Quest.Done", nil, function(id) print(id) end)
"#;
    let dir = quest_mod(script);
    let table = dir.path().join(".gantry/signatures.json");
    fs::create_dir_all(table.parent().unwrap()).unwrap();
    fs::write(
        &table,
        r#"{"version": 1, "keys": {"Score.Set": {"kind": "event", "params": [{"name": "n", "type": "int"}]}}}"#,
    )
    .unwrap();
    let expected = marked(script);
    assert_eq!(expected.len(), 2);
    assert_eq!(check_lines(dir.path()), expected, "gantry check");
    assert_eq!(emmylua_lines(dir.path()), expected, "EmmyLua on the stubs");
}

/// "Signature help, hover, snippets and the stubs show declared names and
/// docs": the Lua overloads and listeners carry the manifest's parameter
/// names, the key aliases its docs, a request's listener its responder,
/// whose `Response` takes the declared `returns`; the struct is a class.
/// Rhai's baked functions say the same.
#[test]
fn declared_names_docs_responders_and_structs_show_in_both_outputs() {
    let dir = quest_mod("");
    let table = contract_table(dir.path());
    let lua = lua_stubs(&table);
    for expected in [
        r#"---@overload fun(key: "Quest.Start", id: string, reward: integer)"#,
        r#"---| "Quest.Start" # event (id: string, reward: int) — A quest begins."#,
        "---One quest of the log.\n---@class Quest\n---@field id string\n---@field reward integer\n",
        r#"---@overload fun(key: "Quest.IsActive", owner: any, fn: (fun(id: string, rsp: GantryResponder.Quest.IsActive): any?), opts?: GantryListenOptions): GantryConnection"#,
        "---@field Response fun(self: GantryResponder.Quest.IsActive, active: boolean): boolean",
        r#"---@overload fun(obj: GantrySource, key: "Quest.IsActive", id: string): boolean"#,
        r#"---@overload fun(obj: GantrySource, key: "Quest.First", quest: Quest)"#,
    ] {
        assert!(lua.contains(expected), "missing {expected}\n{lua}");
    }
    let rhai = &rhai_definitions(&table)[1].1;
    for expected in [
        "/// `Quest.Start` (event) (id: string, reward: int) — A quest begins.",
        "fn NotifyMessage__Quest__Start(id: String, reward: int) -> ();",
        "fn Request__Quest__IsActive(obj: Object, id: String) -> ",
        "/// handler: |id: String, rsp: Responder|\nfn ListenMessage__Quest__IsActive(owner: ?, handler: FnPtr) -> Connection;",
    ] {
        assert!(rhai.contains(expected), "missing {expected}\n{rhai}");
    }
}

/// "Kinds are part of the contract": a `once` key is offered with the
/// store family and not as a hook or a request, a `request` with
/// `GMP.Request` and a reply and not stored, a `hook` with the hook
/// functions only — in the Lua overloads and in Rhai's baked functions.
#[test]
fn manifest_kinds_choose_the_functions_each_key_is_offered_with() {
    let dir = quest_mod("");
    let table = contract_table(dir.path());
    let lua = lua_stubs(&table);
    let rhai = &rhai_definitions(&table)[1].1;
    // Each function's block: its overloads, then `function [GMP.]Name(`.
    let mut lua_offers: Vec<(String, String)> = Vec::new();
    let mut block: Vec<&str> = Vec::new();
    for line in lua.lines() {
        if line.starts_with("---@overload fun(") {
            block.push(line);
        } else if let Some(rest) = line.strip_prefix("function ") {
            let name = rest.trim_start_matches("GMP.").split('(').next().unwrap();
            for overload in block.drain(..) {
                if let Some((_, key)) = overload.split_once("key: \"") {
                    let key = key.split('"').next().unwrap();
                    lua_offers.push((name.to_owned(), key.to_owned()));
                }
            }
        }
    }
    let offered = |function: &str, key: &str| {
        let in_lua = lua_offers.contains(&(function.to_owned(), key.to_owned()));
        let baked = format!("fn {function}__{}(", key.replace('.', "__"));
        assert_eq!(
            in_lua,
            rhai.contains(&baked),
            "{function} {key}: the Lua and Rhai stubs disagree"
        );
        in_lua
    };
    let once = "Quest.First";
    for function in ["OnceObjectMessage", "StoreObjectMessage", "ListenMessage"] {
        assert!(offered(function, once), "{function} {once}");
    }
    for function in ["RunHook", "ListenHook", "Request", "StoredArray"] {
        assert!(!offered(function, once), "{function} {once}");
    }
    let request = "Quest.IsActive";
    for function in ["Request", "SendObjectMessage", "ListenMessage"] {
        assert!(offered(function, request), "{function} {request}");
    }
    for function in ["StoreObjectMessage", "OnceObjectMessage", "RunHook"] {
        assert!(!offered(function, request), "{function} {request}");
    }
    let hook = "Quest.Award";
    for function in ["RunHook", "ListenHook"] {
        assert!(offered(function, hook), "{function} {hook}");
    }
    for function in [
        "NotifyMessage",
        "ListenMessage",
        "StoreObjectMessage",
        "Request",
    ] {
        assert!(!offered(function, hook), "{function} {hook}");
    }
    let event = "Quest.Done";
    for function in ["Request", "StoreObjectMessage", "RunHook"] {
        assert!(!offered(function, event), "{function} {event}");
    }
}
