//! The Lua stubs type scripts per key, as EmmyLua's own analysis (that of
//! `emmylua_check` 0.25.1, in-process) reads them: the runtime's handles
//! and the `GMP` table, arguments narrowed per key (rows, writers, replies,
//! hook payloads), reserved-word and digit keys, the empty table and 10,000
//! keys; the compatibility rule is never flagged; and the stubs lint clean.
//!
//! The fixture scripts in `tests/fixtures/lua/`: every script in `good/`
//! produces no diagnostic; every line of a script in `bad/` that ends with
//! `--! code[, code]` gets exactly those diagnostics, and no other line any.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gantry_host::{KeyDecl, Kind, Param, SignatureTable, StructDef, Type};
use gantry_stubs::{lua_stubs, rhai_definitions};
use gantry_test_support::emmylua::check;
use gantry_test_support::signature_table::{array, sample_table, strukt};

/// (line, code, message), 1-based lines.
type Diags = Vec<(u32, String, String)>;

/// The in-process checker's diagnostics by file name, without the hints
/// about unused locals (they say nothing about the stubs).
fn run_check(ws: &Path, config: &Path) -> BTreeMap<String, Diags> {
    gantry_test_support::emmylua::check(ws, config)
        .into_iter()
        .map(|(name, diags)| {
            let diags = diags
                .into_iter()
                .filter(|d| d.code != "unused")
                .map(|d| (d.line, d.code, d.message))
                .collect();
            (name, diags)
        })
        .collect()
}

/// Checks `scripts` (name, source) against the stubs of `table`; the
/// diagnostics of each script by name (every script present, maybe empty).
fn check_scripts(table: &SignatureTable, scripts: &[(&str, &str)]) -> BTreeMap<String, Diags> {
    let root = tempfile::tempdir().unwrap();
    let lib = root.path().join("lib");
    fs::create_dir_all(&lib).unwrap();
    fs::write(lib.join("gantry.lua"), lua_stubs(table)).unwrap();
    let ws = root.path().join("ws");
    fs::create_dir_all(&ws).unwrap();
    for (name, src) in scripts {
        fs::write(ws.join(name), src).unwrap();
    }
    let config = root.path().join("emmyrc.json");
    fs::write(
        &config,
        serde_json::json!({
            "runtime": { "version": "Lua5.4" },
            "workspace": { "library": [lib.to_string_lossy()] },
        })
        .to_string(),
    )
    .unwrap();
    let mut found = run_check(&ws, &config);
    for (name, _) in scripts {
        found.entry((*name).to_owned()).or_default();
    }
    found
}

/// Lints the meta file itself (without `---@meta`), as `emmylua.rs` does.
fn lint_stubs(table: &SignatureTable) -> Diags {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("stubs");
    fs::create_dir_all(&ws).unwrap();
    let text = lua_stubs(table).replacen("---@meta\n", "", 1);
    fs::write(ws.join("gantry.lua"), text).unwrap();
    let empty = root.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let config = root.path().join("lint.emmyrc.json");
    fs::write(
        &config,
        serde_json::json!({
            "runtime": { "version": "Lua5.4" },
            "workspace": { "library": [empty.to_string_lossy()] },
            "diagnostics": { "enables": ["unknown-doc-tag"], "disable": ["missing-return", "unused"] },
        })
        .to_string(),
    )
    .unwrap();
    run_check(&ws, &config)
        .remove("gantry.lua")
        .unwrap_or_default()
}

/// Every line marked `--! code` gets that code, and no other line any
/// warning; unmarked scripts must be clean.
fn assert_marked(found: &BTreeMap<String, Diags>, scripts: &[(&str, &str)]) {
    let mut wrong = Vec::new();
    for (name, src) in scripts {
        let mut expected: Vec<(u32, String)> = Vec::new();
        for (i, line) in src.lines().enumerate() {
            if let Some((_, codes)) = line.split_once("--!") {
                for code in codes.split(',') {
                    expected.push((i as u32 + 1, code.trim().to_owned()));
                }
            }
        }
        expected.sort();
        let got_full = &found[*name];
        let mut got: Vec<(u32, String)> =
            got_full.iter().map(|(l, c, _)| (*l, c.clone())).collect();
        got.dedup();
        // A marked line may carry more than one diagnostic of other codes
        // (emmylua explains an overload miss in several ways): hold it to
        // "at least the marked code", and unmarked lines to "nothing".
        let marked_lines: Vec<u32> = expected.iter().map(|(l, _)| *l).collect();
        let missing: Vec<_> = expected.iter().filter(|e| !got.contains(e)).collect();
        let extra: Vec<_> = got
            .iter()
            .filter(|(l, _)| !marked_lines.contains(l))
            .collect();
        if !missing.is_empty() || !extra.is_empty() {
            wrong.push(format!(
                "{name}: missing {missing:?}, unexpected {extra:?}\nall: {got_full:#?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn check_marked(table: &SignatureTable, scripts: &[(&str, &str)]) {
    assert_marked(&check_scripts(table, scripts), scripts);
}

fn declare(t: &mut SignatureTable, key: &str, decl: KeyDecl) {
    t.declare(key, decl, None).expect("valid key");
}

/// The meta file has "the object handle class, the row listener
/// and writer types, the `GMP` table and its constants". A script using
/// what the Lua runtime gives it (`lua/src/runtime/handles.rs`,
/// `sandbox.rs`: `GMP.World()`, a named source's `:Object()`, a
/// responder's `:IsAnswered()`, `obj:Id()`, `obj:IsAlive()`) is correct
/// and must check clean.
#[test]
fn a_script_using_the_runtimes_handles_and_gmp_helpers_checks_clean() {
    let script = r#"
local w = GMP.World()
local hud = GMP.Named(self, "hud")
local owner = hud:Object()
local alive = self:IsAlive()
local id = self:Id() + self:World():Id()
ListenMessage("Shop.Buy", nil, function(item, count, rsp)
  if not rsp:IsAnswered() then
    rsp:Response(true, item.id * count)
  end
end)
return w, owner, alive, id
"#;
    check_marked(&sample_table(), &[("handles.lua", script)]);
}

/// The `GMP.` form is the same function as the global ("as globals
/// and as fields of the `GMP` table"): per-key typing must hold through it.
#[test]
fn gmp_forms_are_typed_per_key_like_the_globals() {
    let good = r#"
GMP.NotifyObjectMessage(self, "Player.Hurt", 1.5, self)
GMP.StoreObjectMessage(self, "Player.Score", 3, "ann")
GMP.ListenMessage("Player.Hurt", nil, function(dmg, causer)
  local w = causer:World()
  return w and dmg * 2
end)
GMP.ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
  return row + item.id
end)
local result, hit = GMP.RunHook("Combat.Hit", { dmg = 1.0, target = self, tags = {} })
return result, hit.dmg
"#;
    let bad = r#"
GMP.NotifyObjectMessage(self, "Player.Hurt", "lots", self) --! param-type-mismatch
GMP.NotifyMessage("Player.Hrut", 1.0, self) --! param-type-mismatch
GMP.StoreObjectMessage(self, "Game.Tick", 1, 0.5) --! param-type-mismatch
GMP.ListenMessage("Player.Hurt", nil, function(dmg, causer)
  ---@type string
  local s = dmg --! assign-type-mismatch
  return causer and s
end)
"#;
    check_marked(
        &sample_table(),
        &[("gmp_good.lua", good), ("gmp_bad.lua", bad)],
    );
}

/// The compatibility rule: "a listener may drop trailing
/// parameters", "an int is accepted for a float", "a child struct matches
/// its parent". Scripts relying on it are correct.
#[test]
fn the_compatibility_rule_is_not_flagged() {
    let script = r#"
ListenMessage("Player.Hurt", nil, function(dmg) return dmg end)
ListenMessage("Player.Hurt", nil, function() end)
ListenObjectMessage(self, "Inv.Items", nil, function(items) return #items end)
ListenMessage("Shop.Buy", nil, function(item) return item.id end)
NotifyMessage("Game.Tick", 1, 2)
---@type Weapon
local sword = { id = 1, name = "sword", damage = 2.5 }
NotifyMessage("Shop.Buy", sword, 1)
StoreObjectMessage(self, "Inv.Items", { sword })
"#;
    check_marked(&sample_table(), &[("compat.lua", script)]);
}

/// "A call with the wrong type after a given key is flagged" —
/// also when the wrong arguments happen to fit another key of the same
/// arity (the checker must narrow by the key, not by whatever overload fits).
#[test]
fn wrong_arguments_that_fit_another_keys_shape_are_still_flagged() {
    let bad = r#"
NotifyMessage("Game.Tick", 1.5, self) --! param-type-mismatch
NotifyMessage("Player.Hurt", 1, 0.5) --! param-type-mismatch
NotifyObjectMessage(self, "Player.Score", 2.5, self) --! param-type-mismatch
ListenMessage("Game.Tick", nil, function(n, dt)
  local w = dt:World() --! undefined-field
  return n + w
end)
"#;
    check_marked(&sample_table(), &[("arity.lua", bad)]);
}

/// A wrong argument that fits no overload of its key is flagged even when it
/// fits another key's form — here a string where `B.Count` takes an
/// integer, with `A.Name` (a string) first in the table — and a short call
/// too; a key that is not a literal (a helper's parameter) is not checked,
/// as `gantry check` only hints at it. (A listener given with such a key is
/// typed as EmmyLua picks an overload, so this one takes `...`.)
#[test]
fn a_known_key_with_a_wrong_string_argument_is_flagged_and_a_dynamic_key_is_not() {
    let mut t = SignatureTable::new();
    declare(&mut t, "A.Name", KeyDecl::event().param("id", Type::String));
    declare(&mut t, "B.Count", KeyDecl::event().param("n", Type::Int));
    declare(
        &mut t,
        "C.Pair",
        KeyDecl::event()
            .kind(Kind::Store)
            .param("id", Type::String)
            .param("n", Type::Int),
    );
    let script = r#"
NotifyMessage("A.Name", "ok")
NotifyMessage("B.Count", 3)
NotifyMessage("B.Count", "three") --! param-type-mismatch
NotifyMessage("B.Count") --! param-type-mismatch
NotifyMessage("C.Pair", "x") --! param-type-mismatch
StoreObjectMessage(self, "C.Pair", 3, 3) --! param-type-mismatch
StoreObjectMessage(self, "C.Pair", "x", 3)
NotifyMessage("D.Typo", "x") --! param-type-mismatch
local function relay(key, ...)
  NotifyMessage(key, ...)
  NotifyMessage(key, {})
  StoreObjectMessage(self, key, "anything", 1, 2)
  return ListenMessage(key, nil, function(...) return select('#', ...) end)
end
return relay
"#;
    check_marked(&t, &[("strings.lua", script)]);
}

/// Two collections of different rows: each row listener's `item`, each
/// whole-table listener's rows and each writer are typed for their key.
fn two_collections() -> SignatureTable {
    let mut t = sample_table();
    t.declare_struct(
        "Quest",
        StructDef {
            parent: None,
            doc: "A quest in the log.".into(),
            fields: vec![
                Param::new("title", Type::String),
                Param::new("done", Type::Bool),
            ],
        },
    );
    declare(
        &mut t,
        "Quest.Log",
        KeyDecl::event()
            .kind(Kind::Collection)
            .param("quests", array(strukt("Quest"))),
    );
    t
}

#[test]
fn row_listener_and_writer_types_follow_their_collection_key() {
    let good = r#"
ListenRowMessage(self, "Quest.Log", nil, GMP.AllRows, function(row, quest)
  if quest.done then return quest.title .. row end
end)
ListenRowMessage(self, "Inv.Items", nil, 3, function(row, item) return item.id + row end)
ListenObjectMessage(self, "Quest.Log", nil, function(quests, update)
  return #quests + update.total
end)
do
  local log <close> = GMP.StoredArray(self, "Quest.Log")
  log:Add({ title = "find the key", done = false })
  local q = log:Get(1)
  q.done = true
end
"#;
    let bad = r#"
ListenRowMessage(self, "Quest.Log", nil, GMP.AllRows, function(row, quest)
  return quest.id + row --! undefined-field
end)
ListenRowMessage(self, "Inv.Items", nil, GMP.AllRows, function(row, item)
  return item.title .. row --! undefined-field
end)
ListenRowMessage(self, "Player.Score", nil, GMP.AllRows, function() end) --! param-type-mismatch
ListenRowMessage(self, "Quest.Log", nil, "all", function() end) --! param-type-mismatch
do
  local log <close> = GMP.StoredArray(self, "Quest.Log")
  log:Add({ id = 1, name = "axe" }) --! missing-fields
  local items <close> = GMP.StoredArray(self, "Player.Score") --! param-type-mismatch
end
"#;
    check_marked(
        &two_collections(),
        &[("rows_good.lua", good), ("rows_bad.lua", bad)],
    );
}

/// Requests: the reply function and `GMP.Request` get the response types,
/// a key without a response takes no reply, a hook's payload is typed.
#[test]
fn requests_replies_and_hook_payloads_are_typed_per_key() {
    let good = r#"
SendObjectMessage(self, "Shop.Buy", { id = 1, name = "axe" }, 2, function(ok, price)
  if ok then return price + 1 end
end)
local co = coroutine.wrap(function()
  local ok, price = GMP.Request(self, "Shop.Buy", { id = 1, name = "axe" }, 1)
  if ok then return price * 2 end
end)
ListenHook("Combat.Hit", nil, function(hit, ctx)
  hit.dmg = hit.dmg / 2
  ctx:Handled()
end, { priority = 5 })
return co
"#;
    let bad = r#"
SendObjectMessage(self, "Shop.Buy", { id = 1, name = "axe" }, 2, function(ok, price)
  return price .. ok:upper() --! undefined-field
end)
local co = coroutine.wrap(function()
  local ok, price = GMP.Request(self, "Shop.Buy", { id = 1, name = "axe" }, 1)
  ---@type string
  local s = price --! assign-type-mismatch
  return ok and s
end)
GMP.Request(self, "Player.Hurt", 1.0, self) --! param-type-mismatch
ListenHook("Combat.Hit", nil, function(hit, ctx)
  hit.dmg = "half" --! assign-type-mismatch
  ctx:Handled()
end)
RunHook("Combat.Hit", 5) --! param-type-mismatch
ListenHook("Player.Hurt", nil, function() end) --! param-type-mismatch
return co
"#;
    check_marked(
        &sample_table(),
        &[("req_good.lua", good), ("req_bad.lua", bad)],
    );
}

/// Keys are "dot-separated segments of `[A-Za-z0-9_]`": segments
/// may be Lua or Rhai reserved words or start with a digit. Parameter and
/// field names may be reserved words too (`end`, `self`, `this`, `fn`).
fn naming_table() -> SignatureTable {
    let mut t = SignatureTable::new();
    t.declare_struct(
        "Slot",
        StructDef {
            parent: None,
            doc: "A UI slot.".into(),
            fields: vec![Param::new("end", Type::Int), Param::new("x", Type::Float)],
        },
    );
    let decls = [
        (
            "Game.end",
            KeyDecl::event()
                .doc("The game ended")
                .param("winner", Type::String),
        ),
        (
            "UI.2D.Show",
            KeyDecl::event()
                .param("slot", strukt("Slot"))
                .param("end", Type::Bool),
        ),
        ("function.local", KeyDecl::event().param("n", Type::Int)),
        (
            "0",
            KeyDecl::event()
                .param("fn", Type::Int)
                .param("this", Type::String),
        ),
        (
            "A_B",
            KeyDecl::event()
                .param("self", Type::Int)
                .param("y", Type::String),
        ),
        (
            "A.B",
            KeyDecl::event().kind(Kind::Store).param("nil", Type::Float),
        ),
        (
            "Hud.Slots",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("slots", array(strukt("Slot"))),
        ),
    ];
    for (key, decl) in decls {
        declare(&mut t, key, decl);
    }
    t
}

#[test]
fn reserved_word_and_digit_keys_are_typed_and_the_stubs_lint_clean() {
    let table = naming_table();
    let diags = lint_stubs(&table);
    assert!(diags.is_empty(), "the stubs were diagnosed: {diags:#?}");
    let good = r#"
NotifyMessage("Game.end", "red")
NotifyMessage("UI.2D.Show", { ["end"] = 1, x = 0.5 }, true)
NotifyMessage("function.local", 3)
NotifyMessage("0", 1, "t")
NotifyMessage("A_B", 1, "y")
StoreObjectMessage(self, "A.B", 2.5)
ListenMessage("A_B", nil, function(s, y) return s + #y end)
ListenMessage("UI.2D.Show", nil, function(slot, e) if e then return slot["end"] + slot.x end end)
ListenRowMessage(self, "Hud.Slots", nil, GMP.AllRows, function(row, slot) return slot.x + row end)
"#;
    let bad = r#"
NotifyMessage("Game.end", 1) --! param-type-mismatch
NotifyMessage("UI.2D.Show", { x = 0.5 }, true) --! param-type-mismatch
NotifyMessage("0", "1", "t") --! param-type-mismatch
NotifyMessage("A_B", "1", "y") --! param-type-mismatch
ListenMessage("A_B", nil, function(s, y)
  ---@type string
  local t = s --! assign-type-mismatch
  return t .. y
end)
NotifyMessage("Game.End", "red") --! param-type-mismatch
"#;
    check_marked(&table, &[("names_good.lua", good), ("names_bad.lua", bad)]);
}

/// No key known yet: the meta file still lints clean, declares the whole
/// API (so a script's globals are not "undefined"), and any literal key is
/// a typo to the checker.
#[test]
fn the_empty_table_gives_stubs_that_lint_clean_and_flag_every_literal_key() {
    let table = SignatureTable::new();
    let diags = lint_stubs(&table);
    assert!(diags.is_empty(), "the stubs were diagnosed: {diags:#?}");
    let text = lua_stubs(&table);
    for f in [
        "NotifyMessage",
        "ListenRowMessage",
        "RunHook",
        "GMP.Request",
        "GMP.StoredArray",
    ] {
        assert!(
            text.contains(&format!("function {f}(")),
            "{f} missing:\n{text}"
        );
    }
    let bad = r#"
NotifyMessage("Player.Hurt", 1.0) --! param-type-mismatch
ListenMessage("Player.Hurt", nil, function() end) --! param-type-mismatch
local n = GMP.AllRows + GMP.WithRemoval(2)
return n
"#;
    check_marked(&table, &[("empty.lua", bad)]);
    let files = rhai_definitions(&table);
    assert_eq!(files.len(), 2);
    assert!(
        files[1].1.contains("fn NotifyMessage(key: String) -> ();"),
        "{}",
        files[1].1
    );
}

/// The benchmark's table shape, 10,000 keys.
fn big_table(n: usize) -> SignatureTable {
    let mut t = SignatureTable::new();
    t.declare_struct(
        "Item",
        StructDef {
            parent: None,
            doc: String::new(),
            fields: vec![
                Param::new("id", Type::Int),
                Param::new("name", Type::String),
            ],
        },
    );
    for i in 0..n {
        let key = format!("Area{}.Thing{}.Event{}", i % 37, i % 101, i);
        let decl = match i % 10 {
            0 => KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", array(strukt("Item"))),
            1 => KeyDecl::event()
                .kind(Kind::Store)
                .param("score", Type::Int)
                .param("name", Type::String),
            2 => KeyDecl::event()
                .kind(Kind::Hook)
                .param("item", strukt("Item")),
            3 => KeyDecl::event()
                .param("item", strukt("Item"))
                .response("ok", Type::Bool),
            _ => KeyDecl::event()
                .doc("Something happened")
                .param("dmg", Type::Float)
                .param("causer", Type::Object),
        };
        declare(&mut t, &key, decl);
    }
    t
}

/// 10,000 keys generate in ≤ 100 ms (a criterion benchmark, not run
/// here). Here: the generators finish and the checker still narrows by key
/// in a file of 10,000 overloads per function — a key near the end included.
/// (Key `i` is `Area{i % 37}.Thing{i % 101}.Event{i}`: 9990 is a collection,
/// 9991 a store, which takes no row listener.)
#[test]
fn ten_thousand_keys_generate_and_still_check_per_key() {
    let table = big_table(10_000);
    let start = Instant::now();
    let lua = lua_stubs(&table);
    let rhai = rhai_definitions(&table);
    let took = start.elapsed();
    eprintln!(
        "10k keys (debug build): {took:?}, lua {} KB, rhai {} KB",
        lua.len() / 1024,
        rhai[1].1.len() / 1024
    );
    assert_eq!(lua.matches("---| \"Area").count(), 10_000);
    assert!(
        rhai[1].1.contains(
            "fn NotifyMessage__Area9__Thing0__Event9999(dmg: float, causer: Object) -> ();"
        )
    );
    let script = r#"
NotifyMessage("Area9.Thing0.Event9999", 1.5, self)
NotifyMessage("Area9.Thing0.Event9999", "x", self) --! param-type-mismatch
ListenRowMessage(self, "Area0.Thing92.Event9990", nil, GMP.AllRows, function(row, item) return item.id + row end)
ListenRowMessage(self, "Area1.Thing93.Event9991", nil, GMP.AllRows, function() end) --! param-type-mismatch
"#;
    let start = Instant::now();
    check_marked(&table, &[("big.lua", script)]);
    eprintln!("EmmyLua over 10k keys: {:?}", start.elapsed());
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lua");

/// `--! code, code` markers of a bad script: (line, code), sorted.
fn expected_markers(script: &str) -> Vec<(u32, String)> {
    let mut expected = Vec::new();
    for (i, line) in script.lines().enumerate() {
        if let Some((_, codes)) = line.split_once("--!") {
            for code in codes.split(',') {
                expected.push((i as u32 + 1, code.trim().to_owned()));
            }
        }
    }
    expected.sort();
    expected
}

fn emmyrc(library: &Path, extra_enables: &[&str], disables: &[&str]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "runtime": { "version": "Lua5.4" },
        "workspace": { "library": [library.to_string_lossy()] },
        "diagnostics": { "enables": extra_enables, "disable": disables },
    }))
    .unwrap()
}

/// Copies the fixture scripts of `kind` (`good` or `bad`) into a workspace
/// beside the generated stubs; returns (workspace, config).
fn workspace_with(root: &Path, kind: &str) -> (PathBuf, PathBuf) {
    let lib = root.join("lib");
    fs::create_dir_all(&lib).unwrap();
    fs::write(
        lib.join("gantry.lua"),
        lua_stubs(&gantry_test_support::signature_table::sample_table()),
    )
    .unwrap();
    let ws = root.join(kind);
    fs::create_dir_all(&ws).unwrap();
    for entry in fs::read_dir(Path::new(FIXTURES).join(kind)).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, ws.join(path.file_name().unwrap())).unwrap();
    }
    let config = root.join(format!("{kind}.emmyrc.json"));
    fs::write(&config, emmyrc(&lib, &[], &[])).unwrap();
    (ws, config)
}

#[test]
fn good_scripts_produce_no_diagnostics() {
    let root = tempfile::tempdir().unwrap();
    let (ws, config) = workspace_with(root.path(), "good");
    let found = check(&ws, &config);
    let noisy: Vec<_> = found.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert!(noisy.is_empty(), "good scripts were diagnosed: {noisy:#?}");
}

#[test]
fn each_bad_line_gets_the_expected_diagnostic() {
    let root = tempfile::tempdir().unwrap();
    let (ws, config) = workspace_with(root.path(), "bad");
    let found = check(&ws, &config);
    let mut scripts = 0;
    let mut wrong = Vec::new();
    for entry in fs::read_dir(&ws).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "lua") {
            continue;
        }
        scripts += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = expected_markers(&fs::read_to_string(&path).unwrap());
        assert!(!expected.is_empty(), "{name} marks no expected diagnostic");
        let got_full = found.get(&name).cloned().unwrap_or_default();
        let mut got: Vec<(u32, String)> =
            got_full.iter().map(|d| (d.line, d.code.clone())).collect();
        got.dedup();
        if got != expected {
            wrong.push(format!(
                "{name}: expected {expected:?}, got {got:?}\n{got_full:#?}"
            ));
        }
    }
    assert!(scripts >= 4, "the bad fixtures are missing");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_stubs_lint_clean() {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("stubs");
    fs::create_dir_all(&ws).unwrap();
    let text = lua_stubs(&gantry_test_support::signature_table::sample_table());
    let linted = text.replacen("---@meta\n", "", 1);
    assert_ne!(linted, text, "the stubs start with ---@meta");
    fs::write(ws.join("gantry.lua"), linted).unwrap();
    let config = root.path().join("lint.emmyrc.json");
    let empty = root.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    // Declarations have empty bodies and methods that ignore `self`: the two
    // codes that says nothing about the stubs' types are off; every type,
    // doc-syntax and name check stays on.
    fs::write(
        &config,
        emmyrc(&empty, &["unknown-doc-tag"], &["missing-return", "unused"]),
    )
    .unwrap();
    let found = check(&ws, &config);
    let noisy: Vec<_> = found.iter().filter(|(_, d)| !d.is_empty()).collect();
    assert!(
        noisy.is_empty(),
        "the stubs themselves were diagnosed: {noisy:#?}"
    );
}
