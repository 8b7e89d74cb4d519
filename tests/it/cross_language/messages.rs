//! Rhai ↔ Lua ↔ Rust on the same keys, in every direction: notifies,
//! requests answered across languages, stores replayed to the other
//! language, hooks run by one language and changed by another, collections
//! (rows, writers, whole tables) across languages, failing and runaway
//! handlers of one language not stopping the others, and one signature
//! table recording every language's sites.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::ScriptRuntime;
use gantry_host::{Hub, Language, ObjectId, Source, StructValue, Value};
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime};

struct World {
    hub: Hub,
    lua: LuaRuntime,
    rhai: RhaiRuntime,
    printed: Rc<RefCell<Vec<String>>>,
    world: gantry_host::WorldId,
}

impl World {
    fn new() -> Self {
        Self::with(LuaOptions::default(), RhaiOptions::default())
    }

    fn with(lua: LuaOptions, rhai: RhaiOptions) -> Self {
        let hub = Hub::new();
        let world = hub.create_world();
        let lua = LuaRuntime::new(hub.clone(), lua).unwrap();
        let rhai = RhaiRuntime::new(hub.clone(), rhai).unwrap();
        let printed = Rc::new(RefCell::new(Vec::new()));
        let sink = printed.clone();
        lua.on_print(move |l| sink.borrow_mut().push(format!("lua: {l}")));
        let sink = printed.clone();
        rhai.on_print(move |l| sink.borrow_mut().push(format!("rhai: {l}")));
        Self {
            hub,
            lua,
            rhai,
            printed,
            world,
        }
    }

    fn object(&self) -> ObjectId {
        self.hub.spawn(self.world).unwrap()
    }

    fn lua(&self, file: &str, source: &str) -> ObjectId {
        let o = self.object();
        self.lua
            .load_script(file, source, o)
            .unwrap_or_else(|e| panic!("{e}"));
        o
    }

    fn rhai(&self, file: &str, source: &str) -> ObjectId {
        let o = self.object();
        self.rhai
            .load_script(file, source, o)
            .unwrap_or_else(|e| panic!("{e}"));
        o
    }

    fn printed(&self) -> Vec<String> {
        std::mem::take(&mut *self.printed.borrow_mut())
    }

    /// The hub's reports of failed listeners, as text.
    fn failures(&self) -> Vec<String> {
        self.hub
            .take_reports()
            .iter()
            .filter(|r| matches!(r, gantry_host::Report::ListenerFailed { .. }))
            .map(|r| r.to_string())
            .collect()
    }
}

#[test]
fn notifies_cross_rhai_lua_and_rust_in_every_direction() {
    let w = World::new();
    let rust = Rc::new(RefCell::new(Vec::new()));
    let sink = rust.clone();
    let _h = w
        .hub
        .listen("Cross.Ping", Source::Global, move |from: String, n: i64| {
            sink.borrow_mut().push(format!("rust: {from} {n}"))
        })
        .unwrap();
    w.lua(
        "l.lua",
        r#"ListenMessage("Cross.Ping", nil, function(from, n) print(from, n) end)"#,
    );
    w.rhai(
        "r.rhai",
        r#"ListenMessage("Cross.Ping", (), |from, n| print(`${from} ${n}`));"#,
    );
    w.rhai("r2.rhai", r#"NotifyMessage("Cross.Ping", "rhai", 1);"#);
    w.lua("l2.lua", r#"NotifyMessage("Cross.Ping", "lua", 2)"#);
    let key = w.hub.key("Cross.Ping").unwrap();
    w.hub
        .send(key, Source::Global, ("rust".to_owned(), 3i64))
        .unwrap();
    assert_eq!(
        w.printed(),
        vec![
            "lua: rhai\t1",
            "rhai: rhai 1",
            "lua: lua\t2",
            "rhai: lua 2",
            "lua: rust\t3",
            "rhai: rust 3"
        ]
    );
    assert_eq!(
        *rust.borrow(),
        vec!["rust: rhai 1", "rust: lua 2", "rust: rust 3"]
    );
    let table = w.hub.table();
    let languages: std::collections::BTreeSet<Language> = table
        .get("Cross.Ping")
        .unwrap()
        .sites
        .iter()
        .map(|s| s.language)
        .collect();
    assert_eq!(
        languages,
        [Language::Rust, Language::Lua, Language::Rhai]
            .into_iter()
            .collect()
    );
}

#[test]
fn requests_are_answered_across_languages() {
    let w = World::new();
    w.lua(
        "shop.lua",
        r#"ListenWorldMessage(self:World(), "Shop.Price", nil, function(item, rsp) rsp:Response(#item * 10) end)"#,
    );
    w.rhai(
        "bank.rhai",
        r#"ListenWorldMessage(SELF.World(), "Bank.Rate", (), |years, rsp| rsp.Response(years * 2));"#,
    );
    w.rhai(
        "buyer.rhai",
        r#"SendObjectMessage(SELF.World(), "Shop.Price", "axe", |p| print(`price ${p}`));"#,
    );
    w.lua(
        "saver.lua",
        r#"SendObjectMessage(self:World(), "Bank.Rate", 4, function(r) print("rate", r) end)"#,
    );
    assert_eq!(w.printed(), vec!["rhai: price 30", "lua: rate\t8"]);
    let answer = Rc::new(RefCell::new(Vec::new()));
    let sink = answer.clone();
    let key = w.hub.key("Bank.Rate").unwrap();
    w.hub
        .request(key, w.world, (5i64,), move |reply| {
            if let gantry_host::Reply::Answer(v) = reply {
                sink.borrow_mut().extend(v.to_vec());
            }
        })
        .unwrap();
    assert_eq!(*answer.borrow(), vec![Value::Int(10)]);
}

#[test]
fn stores_replay_to_the_other_language() {
    let w = World::new();
    w.lua(
        "door.lua",
        r#"StoreObjectMessage(self:World(), "Door.State", "open")"#,
    );
    w.rhai(
        "guard.rhai",
        r#"ListenObjectMessage(SELF.World(), "Door.State", (), |s| print(`door ${s}`));
        StoreObjectMessage(SELF.World(), "Guard.Mood", #{ __struct: "Mood", calm: true });"#,
    );
    w.lua(
        "watcher.lua",
        r#"ListenObjectMessage(self:World(), "Guard.Mood", nil, function(m) print(m.__struct, m.calm) end)"#,
    );
    assert_eq!(w.printed(), vec!["rhai: door open", "lua: Mood\ttrue"]);
}

#[test]
fn hooks_run_by_one_language_are_changed_by_the_others() {
    let w = World::new();
    w.lua(
        "armor.lua",
        r#"ListenHook("Damage.Calc", nil, function(p) p.amount = p.amount - 2 end, {priority = 5})"#,
    );
    w.rhai(
        "crit.rhai",
        r#"ListenHook("Damage.Calc", (), |p, ctx| { p.amount *= 3; }, #{ priority: 10 });"#,
    );
    w.rhai(
        "attack.rhai",
        r#"let r = RunHook("Damage.Calc", #{ __struct: "Dmg", amount: 4 });
        print(`${r.ran} ${r.payload.amount}`);"#,
    );
    w.lua(
        "attack.lua",
        r#"local r, p = RunHook("Damage.Calc", {__struct = "Dmg", amount = 1}); print(r.ran, p.amount)"#,
    );
    let mut payload = Value::structure(StructValue::new("Dmg").with("amount", 10i64));
    let result = w.hub.run_hook("Damage.Calc", &mut payload).unwrap();
    assert_eq!(w.printed(), vec!["rhai: 2 10", "lua: 2\t1"]);
    assert_eq!(result.ran, 2);
    assert_eq!(
        payload.as_struct().unwrap().get("amount"),
        Some(&Value::Int(28))
    );
}

#[test]
fn collections_cross_languages_rows_writers_and_whole_tables() {
    let w = World::new();
    // Lua stores the table; Rhai (0-based rows) and Lua (1-based rows)
    // listen to every row, removals included; Rust reads the whole table.
    w.lua(
        "inv.lua",
        r#"StoreObjectMessage(self:World(), "Inv.Items", {{__struct = "Item", id = 1, n = 5}, {__struct = "Item", id = 2, n = 7}})"#,
    );
    w.rhai(
        "watch.rhai",
        r#"ListenRowMessage(SELF.World(), "Inv.Items", (), GMP::ALL_ROWS_WITH_REMOVAL, |row, item| print(`row ${row} id=${item.id} n=${item.n}`));"#,
    );
    w.lua(
        "watch.lua",
        r#"ListenRowMessage(self:World(), "Inv.Items", nil, GMP.AllRowsWithRemoval, function(row, item) print("row", row, item.id, item.n) end)"#,
    );
    let totals = Rc::new(RefCell::new(Vec::new()));
    let sink = totals.clone();
    let _whole = w
        .hub
        .listen_table(
            "Inv.Items",
            w.world,
            gantry_host::ListenOptions::new(),
            move |view: &gantry_host::collection::TableView<'_>,
                  update: &gantry_host::collection::Update| {
                sink.borrow_mut().push((view.len(), update.total as usize));
            },
        )
        .unwrap();
    // Late listeners were replayed the stored rows.
    assert_eq!(
        w.printed(),
        vec![
            "rhai: row 0 id=1 n=5",
            "rhai: row 1 id=2 n=7",
            "lua: row\t1\t1\t5",
            "lua: row\t2\t2\t7",
        ]
    );
    // A Lua writer edits the second row: both languages hear that row only.
    w.lua(
        "edit.lua",
        r#"do local items <close> = GMP.StoredArray(self:World(), "Inv.Items"); items:GetMutable(2).n = 8 end"#,
    );
    assert_eq!(
        w.printed(),
        vec!["rhai: row 1 id=2 n=8", "lua: row\t2\t2\t8"]
    );
    // A Rhai writer shrinks the table: the removed row is told as `~row`
    // in each language's own numbering, with a default item.
    w.rhai(
        "shrink.rhai",
        r#"let bag = GMP::StoredArray(SELF.World(), "Inv.Items"); bag.SetNum(1); bag.commit();"#,
    );
    assert_eq!(
        w.printed(),
        vec!["rhai: row -2 id=0 n=0", "lua: row\t-3\t0\t0"]
    );
    assert_eq!(*totals.borrow().last().unwrap(), (1, 1));
}

#[test]
fn a_failing_handler_in_one_language_does_not_stop_the_others() {
    let w = World::new();
    let rust = Rc::new(RefCell::new(0));
    let sink = rust.clone();
    w.lua(
        "bad.lua",
        "ListenMessage(\"Fail.Key\", nil, function(n)\n  error(\"lua boom \" .. n)\nend)",
    );
    w.rhai(
        "bad.rhai",
        "ListenMessage(\"Fail.Key\", (), |n| {\n    throw `rhai boom ${n}`;\n});",
    );
    let _rust = w
        .hub
        .listen("Fail.Key", Source::Global, move |n: i64| {
            *sink.borrow_mut() += n
        })
        .unwrap();
    w.lua(
        "good.lua",
        r#"ListenMessage("Fail.Key", nil, function(n) print("lua got", n) end)"#,
    );
    w.rhai(
        "good.rhai",
        r#"ListenMessage("Fail.Key", (), |n| print(`rhai got ${n}`));"#,
    );
    // Sent from each language and from Rust: every good listener runs
    // every time, and each failure is reported with the handler's file:line.
    w.lua("send.lua", r#"NotifyMessage("Fail.Key", 1)"#);
    w.rhai("send.rhai", r#"NotifyMessage("Fail.Key", 2);"#);
    let key = w.hub.key("Fail.Key").unwrap();
    w.hub.send(key, Source::Global, (3i64,)).unwrap();
    assert_eq!(
        w.printed(),
        vec![
            "lua: lua got\t1",
            "rhai: rhai got 1",
            "lua: lua got\t2",
            "rhai: rhai got 2",
            "lua: lua got\t3",
            "rhai: rhai got 3",
        ]
    );
    assert_eq!(*rust.borrow(), 6);
    let failures = w.failures();
    assert_eq!(failures.len(), 6, "{failures:#?}");
    for n in 1..=3 {
        assert!(
            failures
                .iter()
                .any(|f| f.contains("bad.lua:2") && f.contains(&format!("lua boom {n}"))),
            "{failures:#?}"
        );
        assert!(
            failures
                .iter()
                .any(|f| f.contains("bad.rhai:2") && f.contains(&format!("rhai boom {n}"))),
            "{failures:#?}"
        );
    }
}

#[test]
fn limits_stop_a_runaway_handler_of_either_language_and_the_others_run() {
    let w = World::with(
        LuaOptions {
            budget: Some(100_000),
            watchdog_interval: std::time::Duration::from_millis(1),
            ..LuaOptions::default()
        },
        RhaiOptions {
            budget: Some(10_000),
            max_string_size: 64,
            ..RhaiOptions::default()
        },
    );
    w.lua(
        "spin.lua",
        "ListenMessage(\"Spin\", nil, function()\n  while true do end\nend)",
    );
    w.rhai(
        "spin.rhai",
        "ListenMessage(\"Spin\", (), || {\n    loop { }\n});",
    );
    w.rhai(
        "long.rhai",
        "ListenMessage(\"Spin\", (), || {\n    let s = \"\";\n    for i in 0..100 { s += \"xxxxxxxx\"; }\n});",
    );
    w.lua(
        "after.lua",
        r#"ListenMessage("Spin", nil, function() print("still here") end)"#,
    );
    w.rhai(
        "send.rhai",
        r#"ListenMessage("Go", (), || { NotifyMessage("Spin"); print("sender goes on"); });"#,
    );
    w.lua("go.lua", r#"NotifyMessage("Go")"#);
    assert_eq!(w.printed(), vec!["lua: still here", "rhai: sender goes on"]);
    let failures = w.failures();
    assert_eq!(failures.len(), 3, "{failures:#?}");
    assert!(
        failures.iter().any(|f| f.contains("spin.lua:2")),
        "{failures:#?}"
    );
    assert!(
        failures
            .iter()
            .any(|f| f.contains("spin.rhai") && f.contains("operation limit")),
        "{failures:#?}"
    );
    // Rhai gives a limit hit inside a closure no position: the report
    // names the line the listener was registered at.
    assert!(
        failures.iter().any(|f| f.contains("long.rhai:1")
            && f.to_lowercase().contains("string")
            && f.contains("listener registered")),
        "{failures:#?}"
    );
}
