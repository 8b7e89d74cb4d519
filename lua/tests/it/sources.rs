//! Named (object + name) sources from Lua (`GMP.Named(obj, name)`): tiers,
//! store / once / removal, wiped with their object, refused (naming the
//! object) once it is destroyed, odd names, requests, and Rust and Lua
//! agreeing on one named source.

use crate::support::Fixture;

/// A named send reaches the named source's listeners, the world's and the
/// global ones; not the plain object listeners, not another name's.
#[test]
fn named_send_tiers_from_lua() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local left, right = GMP.Named(self, "left"), GMP.Named(self, "right")
        ListenObjectMessage(left, "Arm", nil, function(n) print("left " .. n) end)
        ListenObjectMessage(right, "Arm", nil, function(n) print("right " .. n) end)
        ListenObjectMessage(self, "Arm", nil, function(n) print("object " .. n) end)
        ListenWorldMessage(self:World(), "Arm", nil, function(n) print("world " .. n) end)
        ListenMessage("Arm", nil, function(n) print("global " .. n) end)
        NotifyObjectMessage(left, "Arm", 1)
        NotifyObjectMessage(self, "Arm", 2)
        "#,
    );
    let mut first: Vec<String> = f.printed();
    let second = first.split_off(3);
    first.sort();
    assert_eq!(first, ["global 1", "left 1", "world 1"]);
    let mut second = second;
    second.sort();
    assert_eq!(second, ["global 2", "object 2", "world 2"]);
}

/// Store on a named source replays to a late listener on it only; Once is
/// consumed by the first; RemoveStoredObjectMessage on the named source
/// removes that one only. Same handle or a fresh `GMP.Named` of the same
/// (object, name) are the same source.
#[test]
fn named_store_once_and_remove_from_lua() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        StoreObjectMessage(GMP.Named(self, "left"), "Hand.Item", "sword")
        StoreObjectMessage(GMP.Named(self, "right"), "Hand.Item", "shield")
        OnceObjectMessage(GMP.Named(self, "left"), "Hand.Pulse", 1)
        ListenObjectMessage(self, "Hand.Item", nil, function(s) print("object " .. s) end)
        ListenObjectMessage(GMP.Named(self, "left"), "Hand.Item", nil, function(s) print("left " .. s) end)
        ListenObjectMessage(GMP.Named(self, "left"), "Hand.Pulse", nil, function(n) print("pulse1 " .. n) end)
        ListenObjectMessage(GMP.Named(self, "left"), "Hand.Pulse", nil, function(n) print("pulse2 " .. n) end)
        RemoveStoredObjectMessage(GMP.Named(self, "right"), "Hand.Item")
        ListenObjectMessage(GMP.Named(self, "right"), "Hand.Item", nil, function(s) print("right " .. s) end)
        local a, b = GMP.Named(self, "left"), GMP.Named(self, "left")
        print(a == b, a == GMP.Named(self, "right"), tostring(a) == tostring(b))
        "#,
    );
    assert_eq!(f.printed(), ["left sword", "pulse1 1", "true\tfalse\ttrue"]);
}

/// GMP.Destroy wipes the object's named sources: listeners, stored messages;
/// afterwards listening or storing on one of its names raises an error that
/// says the object is gone; a send from it raises nothing it should not.
#[test]
fn destroy_wipes_named_sources_and_later_use_is_an_error_from_lua() {
    let f = Fixture::new();
    let (_, _owner) = f.load(
        "a.lua",
        r#"
        local o = GMP.Spawn()
        local slot = GMP.Named(o, "slot")
        ListenObjectMessage(slot, "Slot.State", nil, function(n) print("slot " .. n) end)
        StoreObjectMessage(slot, "Slot.State", 1)
        print(GMP.Destroy(o))
        print("send", (pcall(NotifyObjectMessage, GMP.Named(o, "slot"), "Slot.State", 2)))
        local ok, err = pcall(ListenObjectMessage, slot, "Slot.State", nil, function() print("never") end)
        print("listen", ok, err ~= nil)
        ok, err = pcall(StoreObjectMessage, GMP.Named(o, "fresh"), "Slot.State", 3)
        print("store", ok)
        ok, err = pcall(OnceObjectMessage, slot, "Slot.State", 4)
        print("once", ok)
        "#,
    );
    let printed = f.printed();
    assert_eq!(
        printed,
        [
            "slot 1",
            "true",
            "send\tfalse",
            "listen\tfalse\ttrue",
            "store\tfalse",
            "once\tfalse"
        ]
    );
    assert_eq!(f.hub.listener_count(), 0);
}

/// The refusal's text names the object (its id) — the Lua error says which
/// source is gone.
#[test]
fn refusal_for_named_source_of_destroyed_object_names_the_object() {
    let f = Fixture::new();
    let err = f
        .rt
        .load_script(
            "b.lua",
            "local o = GMP.Spawn()\nGMP.Destroy(o)\nStoreObjectMessage(GMP.Named(o, 'slot'), 'Slot.State', 1)\n",
            f.spawn(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("b.lua:3"), "{err}");
    assert!(
        err.contains("does not exist") || err.contains("destroyed"),
        "{err}"
    );
    assert!(err.contains("object#"), "{err}");
}

/// Bad input to GMP.Named never panics: odd strings are names; a non-string,
/// non-number name or a non-object first argument is a Lua error.
#[test]
fn gmp_named_odd_input_is_an_error_or_a_name_never_a_panic() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local names = { "", " ", "\0", "a.b", "A..B", "äö/名", string.rep("x", 256) }
        for i, n in ipairs(names) do
            local src = GMP.Named(self, n)
            StoreObjectMessage(src, "Odd", i)
        end
        for i, n in ipairs(names) do
            ListenObjectMessage(GMP.Named(self, n), "Odd", nil, function(v) print(i, v) end)
        end
        local bad = {
            function() return GMP.Named(self) end,
            function() return GMP.Named(self, nil) end,
            function() return GMP.Named(self, {}) end,
            function() return GMP.Named(nil, "x") end,
            function() return GMP.Named("self", "x") end,
            function() return GMP.Named(self:World(), "x") end,
            function() return GMP.Named(GMP.Named(self, "a"), "b") end,
            function() return GMP.Named(self, "\255\254") end,
            function() return GMP.Named(self, string.rep("x", 257)) end,
        }
        for i, fn in ipairs(bad) do
            local ok, err = pcall(fn)
            print("bad", i, ok, ok and "" or tostring(err):gsub("\n.*", ""))
        end
        "#,
    );
    let printed = f.printed();
    let expect_stores: Vec<String> = (1..=7).map(|i| format!("{i}\t{i}")).collect();
    assert_eq!(&printed[..7], &expect_stores[..], "{printed:?}");
    // Every bad call returned (error or value) without a panic.
    assert_eq!(printed.len(), 7 + 9, "{printed:?}");
    for line in &printed[7..9] {
        assert!(
            line.contains("\tfalse\t"),
            "missing name must be an error: {line}"
        );
    }
    for line in &printed[7..] {
        assert!(
            line.contains("\tfalse\t"),
            "bad input must be an error: {line}"
        );
    }
    for line in &printed[10..14] {
        assert!(
            line.contains("GMP.Named: argument 1 must be an object"),
            "{line}"
        );
    }
}

/// A named handle is not a value that can travel in a message, and it is
/// not an object: refused with an error, not sent as something else.
#[test]
fn named_handle_as_message_argument_is_refused() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        ListenMessage("Carry", nil, function(v) print("got", type(v)) end)
        local ok, err = pcall(NotifyMessage, "Carry", GMP.Named(self, "n"))
        print(ok, tostring(err):find("only object handles") ~= nil)
        "#,
    );
    assert_eq!(f.printed(), ["false\ttrue"]);
}

/// A request on a named source, answered by a listener on that source.
#[test]
fn request_on_named_source_from_lua() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local shop = GMP.Named(self, "shop")
        ListenObjectMessage(shop, "Shop.Price", nil, function(item, rsp) rsp:Response(#item) end)
        ListenObjectMessage(self, "Shop.Price", nil, function(item, rsp) rsp:Response(-1) end)
        SendObjectMessage(shop, "Shop.Price", "sword", function(v) print("price", v) end)
        "#,
    );
    assert_eq!(f.printed(), ["price\t5"]);
}

/// Rust stores on a named source; a Lua listener on the same (object,
/// name) made with GMP.Named gets the replay and Rust's sends; Rust's
/// destroy wipes the Lua listener and the store.
#[test]
fn rust_and_lua_agree_on_a_named_source() {
    let f = Fixture::new();
    let obj = f.spawn();
    let named = f.hub.named(obj, "slot");
    let key = f.hub.key("Slot.Item").unwrap();
    f.hub.store(key, named, ("axe",)).unwrap();
    f.rt.load_script(
        "a.lua",
        r#"ListenObjectMessage(GMP.Named(self, "slot"), "Slot.Item", GMP.Spawn(), function(s) print("slot " .. s) end)"#,
        obj,
    )
    .unwrap();
    f.hub.send_str("Slot.Item", named, ("bow",)).unwrap();
    f.hub.send_str("Slot.Item", obj, ("body",)).unwrap();
    assert_eq!(f.printed(), ["slot axe", "slot bow"]);
    assert_eq!(f.hub.listener_count(), 1);
    f.hub.destroy(obj).unwrap();
    assert_eq!(f.hub.listener_count(), 0);
    assert!(f.hub.stored(key, named).is_none());
}

/// "once the owner is gone it is dropped before the next
/// delivery. Destroying an object drops everything it owns and everything
/// sourced from it (listeners, stored messages, named sources)." A listener
/// whose owner is a named source of an object is dropped when that object
/// is destroyed (the named source is gone). Gantry's Lua face takes the
/// `GMP.Named` userdata as an anonymous Lua owner (kept alive by the handle
/// value, not by the object), so it keeps hearing after `GMP.Destroy`.
#[test]
fn listener_owned_by_a_named_source_is_dropped_when_its_object_is_destroyed() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local o = GMP.Spawn()
        local keep = GMP.Named(o, "k")
        ListenMessage("Own", keep, function() print("heard") end)
        NotifyMessage("Own")
        GMP.Destroy(o)
        NotifyMessage("Own")
        _G.keep = keep
        "#,
    );
    assert_eq!(
        f.printed(),
        ["heard"],
        "listener outlived its owner's object"
    );
    assert_eq!(f.hub.listener_count(), 0);
}

/// explicit removal (`RemoveSourceKey`) from Lua:
/// `GMP.RemoveNamed(obj, name)` drops that name's listeners and stored
/// messages, not another name's nor the object's; it returns how many went
/// and refuses what is not an object and a name.
#[test]
fn gmp_remove_named_drops_one_names_records_from_lua() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
        local hp, mp = GMP.Named(self, "HP"), GMP.Named(self, "MP")
        ListenObjectMessage(hp, "Bar", nil, function(n) print("hp " .. n) end)
        ListenObjectMessage(mp, "Bar", nil, function(n) print("mp " .. n) end)
        ListenObjectMessage(self, "Bar", nil, function(n) print("object " .. n) end)
        StoreObjectMessage(hp, "Bar.Max", 100)
        print("removed " .. GMP.RemoveNamed(self, "HP"))
        NotifyObjectMessage(hp, "Bar", 1)
        NotifyObjectMessage(mp, "Bar", 2)
        NotifyObjectMessage(self, "Bar", 3)
        ListenObjectMessage(hp, "Bar.Max", nil, function(n) print("max " .. n) end)
        print("again " .. GMP.RemoveNamed(self, "Stamina"))
        print(pcall(GMP.RemoveNamed, self, 7))
        print(pcall(GMP.RemoveNamed, "self", "HP"))
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed[..4], ["removed 2", "mp 2", "object 3", "again 0"]);
    assert!(
        printed[4].starts_with("false") && printed[4].contains("argument 2 must be a name"),
        "{printed:?}"
    );
    assert!(
        printed[5].starts_with("false") && printed[5].contains("argument 1 must be an object"),
        "{printed:?}"
    );
}
