//! Lua and Rhai give the same answers: one table of cases, each written once
//! as data — a Lua script, the same scenario in Rhai, and one expected
//! outcome (what the scripts printed, then every error, with the script's
//! file name written `{file}`). The runner plays every case in both languages
//! and holds both to that one expectation, so a rule changed in one face and
//! not the other fails here by name.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::Hub;
use gantry_host::face::ScriptRuntime;
use gantry_lua::runtime::{LuaOptions, LuaRuntime};
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime};

/// One scenario, written once per language, with one expected outcome.
struct Case {
    name: &'static str,
    lua: &'static str,
    rhai: &'static str,
    /// Lines printed, in order, then `error: <text>` for the script's load
    /// error (if any), for each report of the hub and for each error the
    /// runtime kept (without Lua's traceback), with the script's file name replaced by `{file}`.
    expect: &'static [&'static str],
}

/// Plays `source` as the file `file` in the language of `lua_face`, on a
/// fresh hub, and returns what it printed followed by its errors.
fn play(lua_face: bool, source: &str) -> Vec<String> {
    let file = if lua_face { "case.lua" } else { "case.rhai" };
    let hub = Hub::new();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let printed = Rc::new(RefCell::new(Vec::new()));
    let sink = printed.clone();
    let runtime: Box<dyn ScriptRuntime> = if lua_face {
        let rt = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
        rt.on_print(move |l| sink.borrow_mut().push(l.to_owned()));
        Box::new(rt)
    } else {
        let rt = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).unwrap();
        rt.on_print(move |l| sink.borrow_mut().push(l.to_owned()));
        Box::new(rt)
    };
    let loaded = runtime.load(file, source, object);
    let mut out = printed.borrow().clone();
    // Lua appends its traceback; what is compared is the message.
    let message = |e: &str| {
        let message = e.split("\nstack traceback:").next().unwrap_or_default();
        format!("error: {message}")
    };
    if let Err(e) = loaded {
        out.push(message(&e.to_string()));
    }
    out.extend(hub.take_reports().iter().map(|r| message(&r.to_string())));
    // What no report carries: a failing reply function, for one.
    out.extend(
        runtime
            .take_errors()
            .iter()
            .map(|e| message(&e.to_string())),
    );
    out.into_iter().map(|l| l.replace(file, "{file}")).collect()
}

const CASES: &[Case] = &[
    Case {
        name: "a send reaches a listener with its arguments",
        lua: r#"
ListenMessage("Ping", nil, function(a, n) print(a .. " " .. n) end)
NotifyMessage("Ping", "hi", 1)
"#,
        rhai: r#"
ListenMessage("Ping", (), |a, n| print(`${a} ${n}`));
NotifyMessage("Ping", "hi", 1);
"#,
        expect: &["hi 1"],
    },
    Case {
        name: "listeners run by order, ties in registration order",
        lua: r#"
ListenMessage("Tick", nil, function() print("late") end, { order = 10 })
ListenMessage("Tick", nil, function() print("first") end, { order = -5 })
ListenMessage("Tick", nil, function() print("plain 1") end)
ListenMessage("Tick", nil, function() print("plain 2") end)
NotifyMessage("Tick")
"#,
        rhai: r#"
ListenMessage("Tick", (), || print("late"), #{ order: 10 });
ListenMessage("Tick", (), || print("first"), #{ order: -5 });
ListenMessage("Tick", (), || print("plain 1"));
ListenMessage("Tick", (), || print("plain 2"));
NotifyMessage("Tick");
"#,
        expect: &["first", "plain 1", "plain 2", "late"],
    },
    Case {
        name: "a stored message is replayed to a listener that comes later",
        lua: r#"
StoreObjectMessage(self, "Door.State", "open")
ListenObjectMessage(self, "Door.State", nil, function(s) print("state " .. s) end)
StoreObjectMessage(self, "Door.State", "shut")
"#,
        rhai: r#"
StoreObjectMessage(SELF, "Door.State", "open");
ListenObjectMessage(SELF, "Door.State", (), |s| print(`state ${s}`));
StoreObjectMessage(SELF, "Door.State", "shut");
"#,
        expect: &["state open", "state shut"],
    },
    Case {
        name: "a request is answered through the responder",
        lua: r#"
ListenObjectMessage(self, "Price", nil, function(item, rsp) rsp:Response(item .. "=5") end)
SendObjectMessage(self, "Price", "sword", function(v) print("reply " .. v) end)
"#,
        rhai: r#"
ListenObjectMessage(SELF, "Price", (), |item, rsp| rsp.Response(`${item}=5`));
SendObjectMessage(SELF, "Price", "sword", |v| print(`reply ${v}`));
"#,
        expect: &["reply sword=5"],
    },
    Case {
        name: "a hook changes the payload and marks it handled",
        lua: r#"
ListenHook("Heal", nil, function(p, ctx) p.hp = p.hp + 10; ctx:Handled() end)
local r, p = RunHook("Heal", { hp = 5 })
print(tostring(r.handled) .. " " .. p.hp)
"#,
        rhai: r#"
ListenHook("Heal", (), |p, ctx| { p.hp += 10; ctx.Handled(); });
let r = RunHook("Heal", #{ hp: 5 });
print(`${r.handled} ${r.payload.hp}`);
"#,
        expect: &["true 15"],
    },
    Case {
        name: "a send of another type than the key carries is refused",
        lua: r#"
ListenMessage("Hurt", nil, function(n) print("hurt " .. n) end)
NotifyMessage("Hurt", 5)
NotifyMessage("Hurt", "five")
print("after")
"#,
        rhai: r#"
ListenMessage("Hurt", (), |n| print(`hurt ${n}`));
NotifyMessage("Hurt", 5);
NotifyMessage("Hurt", "five");
print("after");
"#,
        expect: &[
            "hurt 5",
            "error: {file}:4: `Hurt` argument 1: expected int, got string; dispatch aborted, and the script stopped at this line",
            "error: {file}:4: `Hurt` argument 1: expected int, got string; dispatch aborted, and the script stopped at this line",
        ],
    },
    Case {
        name: "a send from a destroyed object is an error",
        lua: r#"
local o = GMP.Spawn()
GMP.Destroy(o)
NotifyObjectMessage(o, "Gone", 1)
"#,
        rhai: r#"
let o = GMP::Spawn();
GMP::Destroy(o);
NotifyObjectMessage(o, "Gone", 1);
"#,
        expect: &["error: {file}:4: object#2 does not exist (destroyed?)"],
    },
    Case {
        name: "a listener unbound by its id hears no more",
        lua: r#"
local id = ListenMessage("Ping", nil, function() print("heard") end)
NotifyMessage("Ping")
print(tostring(UnbindMessage("Ping", id)))
NotifyMessage("Ping")
"#,
        rhai: r#"
let id = ListenMessage("Ping", (), || print("heard"));
NotifyMessage("Ping");
print(`${UnbindMessage("Ping", id)}`);
NotifyMessage("Ping");
"#,
        expect: &["heard", "1"],
    },
    Case {
        name: "a send missing a parameter the key carries is refused",
        lua: r#"
ListenMessage("Hit", nil, function(n) print("hit " .. n) end)
NotifyMessage("Hit", 5, "axe")
NotifyMessage("Hit", 6)
"#,
        rhai: r#"
ListenMessage("Hit", (), |n| print(`hit ${n}`));
NotifyMessage("Hit", 5, "axe");
NotifyMessage("Hit", 6);
"#,
        expect: &[
            "hit 5",
            "error: {file}:4: `Hit` argument 2: expected string, got nothing; dispatch aborted, and the script stopped at this line",
            "error: {file}:4: `Hit` argument 2: expected string, got nothing; dispatch aborted, and the script stopped at this line",
        ],
    },
    Case {
        name: "a listener taking more than a known key carries is refused where it registers",
        lua: r#"
NotifyMessage("Hurt", 5)
ListenMessage("Hurt", nil, function(n, who, why) print("never") end)
"#,
        rhai: r#"
NotifyMessage("Hurt", 5);
ListenMessage("Hurt", (), |n, who, why| print("never"));
"#,
        expect: &[
            "error: {file}:3: ListenMessage `Hurt`: the listener takes 3 parameters but `Hurt` carries 1",
        ],
    },
    Case {
        name: "a listener taking more than a key carries is reported at its first call",
        lua: r#"
ListenMessage("Hurt", nil, function(n, who, why) print("never") end)
ListenMessage("Hurt", nil, function(n) print("hurt " .. n) end)
NotifyMessage("Hurt", 5)
"#,
        rhai: r#"
ListenMessage("Hurt", (), |n, who, why| print("never"));
ListenMessage("Hurt", (), |n| print(`hurt ${n}`));
NotifyMessage("Hurt", 5);
"#,
        expect: &[
            "hurt 5",
            "error: {file}:2: listener of `Hurt` failed: the listener takes 3 parameters but `Hurt` carries 1",
        ],
    },
    Case {
        name: "a listener may take fewer parameters than the key carries",
        lua: r#"
NotifyMessage("Pair", 1, "two")
ListenMessage("Pair", nil, function(a) print("a " .. a) end)
ListenMessage("Pair", nil, function() print("none") end)
NotifyMessage("Pair", 3, "four")
"#,
        rhai: r#"
NotifyMessage("Pair", 1, "two");
ListenMessage("Pair", (), |a| print(`a ${a}`));
ListenMessage("Pair", (), || print("none"));
NotifyMessage("Pair", 3, "four");
"#,
        expect: &["a 3", "none"],
    },
    Case {
        name: "a listener of a request takes one more parameter: the responder",
        lua: r#"
ListenObjectMessage(self, "Price", nil, function(item, rsp) rsp:Response(1) end)
SendObjectMessage(self, "Price", "axe", function(v) print("first " .. v) end)
ListenObjectMessage(self, "Price", nil, function(item, rsp) print("known " .. item) end)
ListenObjectMessage(self, "Price", nil, function(item, rsp, more) print("never") end)
"#,
        rhai: r#"
ListenObjectMessage(SELF, "Price", (), |item, rsp| rsp.Response(1));
SendObjectMessage(SELF, "Price", "axe", |v| print(`first ${v}`));
ListenObjectMessage(SELF, "Price", (), |item, rsp| print(`known ${item}`));
ListenObjectMessage(SELF, "Price", (), |item, rsp, more| print("never"));
"#,
        expect: &[
            "first 1",
            "error: {file}:5: ListenObjectMessage `Price`: the listener takes 3 parameters but `Price` carries 1 and a responder",
        ],
    },
    Case {
        name: "a failing listener is reported at its line and the others still run",
        lua: r#"
ListenMessage("Boom", nil, function(n)
  error("bad " .. n)
end)
ListenMessage("Boom", nil, function(n) print("still " .. n) end)
NotifyMessage("Boom", 1)
"#,
        rhai: r#"
ListenMessage("Boom", (), |n| {
  throw `bad ${n}`;
});
ListenMessage("Boom", (), |n| print(`still ${n}`));
NotifyMessage("Boom", 1);
"#,
        expect: &[
            "still 1",
            "error: {file}:2: listener of `Boom` failed: {file}:3: bad 1",
        ],
    },
    Case {
        name: "an id unbinds only on its own key, hook listeners included",
        lua: r#"
local ping = ListenMessage("Ping", nil, function() print("ping") end)
local hook = ListenHook("Heal", nil, function(p, ctx) print("hook") end)
print(tostring(UnbindMessage("Pong", ping)) .. " " .. tostring(UnbindMessage("Ping", hook)))
NotifyMessage("Ping")
RunHook("Heal", 1)
print(tostring(UnbindMessage("Heal", hook)))
RunHook("Heal", 1)
"#,
        rhai: r#"
let ping = ListenMessage("Ping", (), || print("ping"));
let hook = ListenHook("Heal", (), |p, ctx| print("hook"));
print(`${UnbindMessage("Pong", ping)} ${UnbindMessage("Ping", hook)}`);
NotifyMessage("Ping");
RunHook("Heal", 1);
print(`${UnbindMessage("Heal", hook)}`);
RunHook("Heal", 1);
"#,
        expect: &["0 0", "ping", "hook", "1"],
    },
    Case {
        name: "a partial listener asking for the key hears which key fired",
        lua: r#"
ListenMessage("Player", nil, function(key, n) print(key .. " " .. n) end, { match = "partial", key = true })
ListenMessage("Player", nil, function(key) print("only " .. key) end, { match = "partial", key = true })
NotifyMessage("Player.Hurt", 5)
NotifyMessage("Player.Healed", 2)
NotifyMessage("Player.Hurt", 7)
"#,
        rhai: r#"
ListenMessage("Player", (), |key, n| print(`${key} ${n}`), #{ "match": "partial", key: true });
ListenMessage("Player", (), |key| print(`only ${key}`), #{ "match": "partial", key: true });
NotifyMessage("Player.Hurt", 5);
NotifyMessage("Player.Healed", 2);
NotifyMessage("Player.Hurt", 7);
"#,
        expect: &[
            "Player.Hurt 5",
            "only Player.Hurt",
            "Player.Healed 2",
            "only Player.Healed",
            "Player.Hurt 7",
            "only Player.Hurt",
        ],
    },
    Case {
        name: "the key counts as a parameter for the arity rule",
        lua: r#"
NotifyMessage("Hurt", 5)
ListenMessage("Hurt", nil, function(key, n) print(key .. " " .. n) end, { key = true })
NotifyMessage("Hurt", 6)
ListenMessage("Hurt", nil, function(key, n, more) end, { key = true })
"#,
        rhai: r#"
NotifyMessage("Hurt", 5);
ListenMessage("Hurt", (), |key, n| print(`${key} ${n}`), #{ key: true });
NotifyMessage("Hurt", 6);
ListenMessage("Hurt", (), |key, n, more| print("never"), #{ key: true });
"#,
        expect: &[
            "Hurt 6",
            "error: {file}:5: ListenMessage `Hurt`: the listener takes 2 parameters but `Hurt` carries 1",
        ],
    },
    Case {
        name: "a request listener asking for the key gets the responder after the values",
        lua: r#"
ListenObjectMessage(self, "Price", nil, function(key, item, rsp) rsp:Response(key .. ":" .. item) end, { key = true })
SendObjectMessage(self, "Price", "axe", function(v) print("reply " .. v) end)
"#,
        rhai: r#"
ListenObjectMessage(SELF, "Price", (), |key, item, rsp| rsp.Response(`${key}:${item}`), #{ key: true });
SendObjectMessage(SELF, "Price", "axe", |v| print(`reply ${v}`));
"#,
        expect: &["reply Price:axe"],
    },
    Case {
        name: "a listener that says it responds gets the responder last and may drop values",
        lua: r#"
ListenObjectMessage(self, "Trade", nil, function(item, rsp) rsp:Response(item .. " sold") end, { respond = true })
SendObjectMessage(self, "Trade", "axe", 3, "gold", function(v) print("reply " .. v) end)
"#,
        rhai: r#"
ListenObjectMessage(SELF, "Trade", (), |item, rsp| rsp.Response(`${item} sold`), #{ respond: true });
SendObjectMessage(SELF, "Trade", "axe", 3, "gold", |v| print(`reply ${v}`));
"#,
        expect: &["reply axe sold"],
    },
    Case {
        name: "a responding listener taking only the responder answers a request of values",
        lua: r#"
ListenObjectMessage(self, "Trade", nil, function(rsp) rsp:Response("done") end, { respond = true })
SendObjectMessage(self, "Trade", "axe", 3, function(v) print("reply " .. v) end)
"#,
        rhai: r#"
ListenObjectMessage(SELF, "Trade", (), |rsp| rsp.Response("done"), #{ respond: true });
SendObjectMessage(SELF, "Trade", "axe", 3, |v| print(`reply ${v}`));
"#,
        expect: &["reply done"],
    },
    Case {
        name: "a responding listener asking for the key gets it first and the responder last",
        lua: r#"
ListenObjectMessage(self, "Trade", nil, function(key, rsp) rsp:Response(key) end, { respond = true, key = true })
SendObjectMessage(self, "Trade", "axe", 3, function(v) print("reply " .. v) end)
"#,
        rhai: r#"
ListenObjectMessage(SELF, "Trade", (), |key, rsp| rsp.Response(key), #{ respond: true, key: true });
SendObjectMessage(SELF, "Trade", "axe", 3, |v| print(`reply ${v}`));
"#,
        expect: &["reply Trade"],
    },
    Case {
        name: "a responding listener hears a plain send like any other",
        lua: r#"
ListenMessage("Trade", nil, function(item, n) print(item .. " " .. n) end, { respond = true })
NotifyMessage("Trade", "axe", 3)
"#,
        rhai: r#"
ListenMessage("Trade", (), |item, n| print(`${item} ${n}`), #{ respond: true });
NotifyMessage("Trade", "axe", 3);
"#,
        expect: &["axe 3"],
    },
    Case {
        name: "listening returns a connection that prints as its key and id and unbinds",
        lua: r#"
local conn = ListenMessage("Quest.Start", nil, function() print("heard") end)
print(tostring(conn))
print(tostring(conn == conn))
NotifyMessage("Quest.Start")
print(tostring(conn:Unbind()) .. " " .. tostring(conn:Unbind()))
NotifyMessage("Quest.Start")
"#,
        rhai: r#"
let conn = ListenMessage("Quest.Start", (), || print("heard"));
print(`${conn}`);
print(`${conn == conn}`);
NotifyMessage("Quest.Start");
print(`${conn.unbind()} ${conn.unbind()}`);
NotifyMessage("Quest.Start");
"#,
        expect: &["Connection(Quest.Start#1)", "true", "heard", "true false"],
    },
    Case {
        name: "a connection unbinds through UnbindMessage only on its own key",
        lua: r#"
local conn = ListenMessage("Quest.Start", nil, function() print("heard") end)
print(tostring(UnbindMessage("Quest.End", conn)))
NotifyMessage("Quest.Start")
print(tostring(UnbindMessage("Quest.Start", conn)))
NotifyMessage("Quest.Start")
"#,
        rhai: r#"
let conn = ListenMessage("Quest.Start", (), || print("heard"));
print(`${UnbindMessage("Quest.End", conn)}`);
NotifyMessage("Quest.Start");
print(`${UnbindMessage("Quest.Start", conn)}`);
NotifyMessage("Quest.Start");
"#,
        expect: &["0", "heard", "1"],
    },
    Case {
        name: "order holds across plain, whole-table and row listeners of a store",
        lua: r#"
StoreObjectMessage(self, "Inv.Bag", { { __struct = "Item", id = 1 } })
ListenObjectMessage(self, "Inv.Bag", nil, function(items, u) print("table " .. #items) end, { order = 2 })
ListenRowMessage(self, "Inv.Bag", nil, GMP.AllRows, function(row, item) print("row " .. item.id) end, { order = -1 })
ListenObjectMessage(self, "Inv.Bag", nil, function(items) print("plain " .. #items) end, { order = 1 })
print("edit")
do
  local bag <close> = GMP.StoredArray(self, "Inv.Bag")
  bag:GetMutable(1).id = 7
end
"#,
        rhai: r#"
StoreObjectMessage(SELF, "Inv.Bag", [#{ __struct: "Item", id: 1 }]);
ListenObjectMessage(SELF, "Inv.Bag", (), |items, u| print(`table ${items.len()}`), #{ order: 2 });
ListenRowMessage(SELF, "Inv.Bag", (), GMP::ALL_ROWS, |row, item| print(`row ${item.id}`), #{ order: -1 });
ListenObjectMessage(SELF, "Inv.Bag", (), |items| print(`plain ${items.len()}`), #{ order: 1 });
print("edit");
{
    let bag = GMP::StoredArray(SELF, "Inv.Bag");
    bag[0].id = 7;
}
"#,
        expect: &[
            "table 1", "row 1", "plain 1", "edit", "row 7", "plain 1", "table 1",
        ],
    },
    Case {
        name: "an empty store reaches whole-table listeners, the later one by replay",
        lua: r#"
ListenObjectMessage(self, "Inv.Bag", nil, function(items, u) print("early " .. #items .. " " .. u.total) end)
StoreObjectMessage(self, "Inv.Bag", {})
ListenObjectMessage(self, "Inv.Bag", nil, function(items, u) print("late " .. #items .. " " .. u.total) end)
"#,
        rhai: r#"
ListenObjectMessage(SELF, "Inv.Bag", (), |items, u| print(`early ${items.len()} ${u.total}`));
StoreObjectMessage(SELF, "Inv.Bag", []);
ListenObjectMessage(SELF, "Inv.Bag", (), |items, u| print(`late ${items.len()} ${u.total}`));
"#,
        expect: &["early 0 0", "late 0 0"],
    },
    Case {
        name: "respond must be true or false",
        lua: r#"
ListenMessage("Trade", nil, function() end, { respond = "yes" })
"#,
        rhai: r#"
ListenMessage("Trade", (), || (), #{ respond: "yes" });
"#,
        expect: &[
            "error: {file}:2: ListenMessage `Trade`: option `respond` must be true or false, got \"yes\"",
        ],
    },
];

#[test]
fn lua_and_rhai_agree_on_every_case() {
    let mut failures = Vec::new();
    for case in CASES {
        for (lua_face, source) in [(true, case.lua), (false, case.rhai)] {
            let got = play(lua_face, source);
            if got != case.expect {
                failures.push(format!(
                    "{} in {}:\n  expected {:?}\n  got      {:?}",
                    case.name,
                    if lua_face { "Lua" } else { "Rhai" },
                    case.expect,
                    got
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the host does to a loaded script between looking at what it says.
enum Step {
    /// A send of the key from Rust, to everyone.
    Send(&'static str),
    /// A run of the hook from Rust.
    Hook(&'static str),
    /// A reload with the case's source of this index.
    Reload(usize),
    Unload,
    /// What is stored on the script's object under the key.
    Stored(&'static str),
}

/// A script's life, written once per language: its versions (the first is
/// loaded), what the host does, and one expected outcome — what the
/// scripts printed and what each step answered, in order.
struct Lifecycle {
    name: &'static str,
    lua: &'static [&'static str],
    rhai: &'static [&'static str],
    steps: &'static [Step],
    expect: &'static [&'static str],
}

/// Plays a lifecycle in the language of `lua_face` on a fresh hub.
fn live(lua_face: bool, sources: &[&str], steps: &[Step]) -> Vec<String> {
    use gantry_host::{Source, Value};
    let file = if lua_face { "case.lua" } else { "case.rhai" };
    let hub = Hub::new();
    let world = hub.create_world();
    let object = hub.spawn(world).unwrap();
    let printed = Rc::new(RefCell::new(Vec::new()));
    let sink = printed.clone();
    let runtime: Box<dyn ScriptRuntime> = if lua_face {
        let rt = LuaRuntime::new(hub.clone(), LuaOptions::default()).unwrap();
        rt.on_print(move |l| sink.borrow_mut().push(l.to_owned()));
        Box::new(rt)
    } else {
        let rt = RhaiRuntime::new(hub.clone(), RhaiOptions::default()).unwrap();
        rt.on_print(move |l| sink.borrow_mut().push(l.to_owned()));
        Box::new(rt)
    };
    let id = runtime.load(file, sources[0], object).unwrap();
    let mut out: Vec<String> = printed.borrow_mut().drain(..).collect();
    for step in steps {
        match step {
            Step::Send(key) => {
                hub.send_str(key, Source::Global, ()).unwrap();
            }
            Step::Hook(key) => {
                hub.run_hook(key, &mut Value::Int(0)).unwrap();
            }
            // The languages word a syntax error each its own way: what
            // must agree is that it failed, and where.
            Step::Reload(version) => {
                if let Err(e) = runtime.reload(id, sources[*version]) {
                    let text = e.to_string();
                    let place: Vec<&str> = text.splitn(3, ':').take(2).collect();
                    out.push(format!("reload failed at {}", place.join(":")));
                }
            }
            Step::Unload => out.push(format!("unloaded {}", runtime.unload(id))),
            Step::Stored(key) => {
                let values = hub.stored(hub.key(key).unwrap(), object);
                out.push(format!("stored {key}: {values:?}"));
            }
        }
        out.extend(printed.borrow_mut().drain(..));
    }
    out.extend(hub.take_reports().iter().map(|r| format!("report: {r}")));
    out.into_iter().map(|l| l.replace(file, "{file}")).collect()
}

const LIFECYCLES: &[Lifecycle] = &[
    Lifecycle {
        name: "an unloaded script hears nothing, and what it stored stays",
        lua: &[r#"
StoreObjectMessage(self, "Bag.Gold", 10)
ListenMessage("Tick", nil, function() print("tick") end)
ListenMessage("Ui", nil, function() print("ui") end, { match = "partial" })
ListenHook("Heal", nil, function(p, ctx) print("heal") end)
"#],
        rhai: &[r#"
StoreObjectMessage(SELF, "Bag.Gold", 10);
ListenMessage("Tick", (), || print("tick"));
ListenMessage("Ui", (), || print("ui"), #{ "match": "partial" });
ListenHook("Heal", (), |p, ctx| print("heal"));
"#],
        steps: &[
            Step::Send("Tick"),
            Step::Send("Ui.Open"),
            Step::Hook("Heal"),
            Step::Unload,
            Step::Send("Tick"),
            Step::Send("Ui.Open"),
            Step::Hook("Heal"),
            Step::Unload,
            Step::Stored("Bag.Gold"),
        ],
        expect: &[
            "tick",
            "ui",
            "heal",
            "unloaded true",
            "unloaded false",
            "stored Bag.Gold: Some([Int(10)])",
        ],
    },
    Lifecycle {
        name: "a reload swaps the listeners, and the new ones hear what is stored",
        lua: &[
            r#"
StoreObjectMessage(self, "Bag.Gold", 10)
ListenObjectMessage(self, "Bag.Gold", nil, function(g) print("v1 gold " .. g) end)
ListenMessage("Tick", nil, function() print("v1 tick") end)
"#,
            r#"
ListenObjectMessage(self, "Bag.Gold", nil, function(g) print("v2 gold " .. g) end)
ListenMessage("Tick", nil, function() print("v2 tick") end)
"#,
        ],
        rhai: &[
            r#"
StoreObjectMessage(SELF, "Bag.Gold", 10);
ListenObjectMessage(SELF, "Bag.Gold", (), |g| print(`v1 gold ${g}`));
ListenMessage("Tick", (), || print("v1 tick"));
"#,
            r#"
ListenObjectMessage(SELF, "Bag.Gold", (), |g| print(`v2 gold ${g}`));
ListenMessage("Tick", (), || print("v2 tick"));
"#,
        ],
        steps: &[
            Step::Reload(1),
            Step::Send("Tick"),
            Step::Stored("Bag.Gold"),
        ],
        expect: &[
            "v1 gold 10",
            "v2 gold 10",
            "v2 tick",
            "stored Bag.Gold: Some([Int(10)])",
        ],
    },
    Lifecycle {
        name: "a reload that fails keeps the old version and names the new line",
        lua: &[
            r#"ListenMessage("Tick", nil, function() print("v1 tick") end)"#,
            "local fine = 1\nlocal broken = = 2\n",
            "ListenMessage(\"Tick\", nil, function() print(\"v2 tick\") end)\nerror(\"boom\")\n",
        ],
        rhai: &[
            r#"ListenMessage("Tick", (), || print("v1 tick"));"#,
            "let fine = 1;\nlet broken = = 2;\n",
            "ListenMessage(\"Tick\", (), || print(\"v2 tick\"));\nthrow \"boom\";\n",
        ],
        steps: &[
            Step::Reload(1),
            Step::Send("Tick"),
            Step::Reload(2),
            Step::Send("Tick"),
        ],
        expect: &[
            "reload failed at {file}:2",
            "v1 tick",
            "reload failed at {file}:2",
            "v1 tick",
        ],
    },
];

#[test]
fn lua_and_rhai_agree_on_unloading_and_reloading() {
    let mut failures = Vec::new();
    for case in LIFECYCLES {
        for (lua_face, sources) in [(true, case.lua), (false, case.rhai)] {
            let got = live(lua_face, sources, case.steps);
            if got != case.expect {
                failures.push(format!(
                    "{} in {}:\n  expected {:?}\n  got      {:?}",
                    case.name,
                    if lua_face { "Lua" } else { "Rhai" },
                    case.expect,
                    got
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
