//! Rhai ↔ Lua ↔ Rust on the same keys, in every direction: notifies,
//! requests answered across languages, stores replayed to the other
//! language, hooks run by one language and changed by another, and one
//! signature table recording every language's sites.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{Hub, Language, ObjectId, Source, StructValue, Value};
use gantry_lua::runtime::{LuaRuntime, RuntimeOptions};
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
        let hub = Hub::new();
        let world = hub.create_world();
        let lua = LuaRuntime::new(hub.clone(), RuntimeOptions::default()).unwrap();
        let rhai = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).unwrap();
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
