//! Named (object + name) sources from Rhai (`GMP::Named(obj, name)`): tiers,
//! store / once / removal, wiped with their object, refusals for a
//! destroyed object, odd names, requests, owners.

use crate::support::Fixture;

/// A named send reaches the named source's, the world's and the global
/// listeners; not the object's, not another name's. An object send does not
/// reach the named listeners.
#[test]
fn named_send_tiers_from_rhai() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let left = GMP::Named(SELF, "left");
        let right = GMP::Named(SELF, "right");
        ListenObjectMessage(left, "Arm", (), |n| print(`left ${n}`));
        ListenObjectMessage(right, "Arm", (), |n| print(`right ${n}`));
        ListenObjectMessage(SELF, "Arm", (), |n| print(`object ${n}`));
        ListenWorldMessage(SELF.World(), "Arm", (), |n| print(`world ${n}`));
        ListenMessage("Arm", (), |n| print(`global ${n}`));
        NotifyObjectMessage(left, "Arm", 1);
        NotifyObjectMessage(SELF, "Arm", 2);
        "#,
    );
    let mut printed = f.printed();
    assert_eq!(printed.len(), 6, "{printed:?}");
    let mut second = printed.split_off(3);
    printed.sort();
    second.sort();
    assert_eq!(printed, ["global 1", "left 1", "world 1"]);
    assert_eq!(second, ["global 2", "object 2", "world 2"]);
}

/// Store on a named source replays to a late listener on it only; Once is
/// consumed by the first; RemoveStoredObjectMessage removes one name's.
#[test]
fn named_store_once_and_remove_from_rhai() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        StoreObjectMessage(GMP::Named(SELF, "left"), "Hand.Item", "sword");
        StoreObjectMessage(GMP::Named(SELF, "right"), "Hand.Item", "shield");
        OnceObjectMessage(GMP::Named(SELF, "left"), "Hand.Pulse", 1);
        ListenObjectMessage(SELF, "Hand.Item", (), |s| print(`object ${s}`));
        ListenObjectMessage(GMP::Named(SELF, "left"), "Hand.Item", (), |s| print(`left ${s}`));
        ListenObjectMessage(GMP::Named(SELF, "left"), "Hand.Pulse", (), |n| print(`pulse1 ${n}`));
        ListenObjectMessage(GMP::Named(SELF, "left"), "Hand.Pulse", (), |n| print(`pulse2 ${n}`));
        RemoveStoredObjectMessage(GMP::Named(SELF, "right"), "Hand.Item");
        ListenObjectMessage(GMP::Named(SELF, "right"), "Hand.Item", (), |s| print(`right ${s}`));
        print(`${GMP::Named(SELF, "left") == GMP::Named(SELF, "left")}`);
        "#,
    );
    assert_eq!(f.printed(), ["left sword", "pulse1 1", "true"]);
}

/// GMP::Destroy wipes the object's named sources; afterwards listening or
/// storing on one of its names (an old handle or a fresh one) is an error
/// that says the object is gone; a send from it calls nothing of it.
#[test]
fn destroy_wipes_named_sources_and_later_use_is_an_error_from_rhai() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let o = GMP::Spawn();
        let slot = GMP::Named(o, "slot");
        ListenObjectMessage(slot, "Slot.State", (), |n| print(`slot ${n}`));
        StoreObjectMessage(slot, "Slot.State", 1);
        GMP::Destroy(o);
        try {
            NotifyObjectMessage(GMP::Named(o, "slot"), "Slot.State", 2);
            print("send ok");
        } catch (e) {
            print(`send refused ${"" + e}`);
        }
        try {
            ListenObjectMessage(slot, "Slot.State", (), |n| print("never"));
            print("listen ok");
        } catch (e) {
            print(`listen refused ${"" + e}`);
        }
        try {
            StoreObjectMessage(GMP::Named(o, "fresh"), "Slot.State", 3);
            print("store ok");
        } catch (e) {
            print(`store refused ${"" + e}`);
        }
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 4, "{printed:?}");
    assert_eq!(printed[0], "slot 1");
    for line in &printed[1..] {
        assert!(line.contains("refused"), "{line}");
        assert!(
            line.contains("object#") && line.contains("does not exist"),
            "{line}"
        );
    }
    assert_eq!(f.hub.listener_count(), 0);
}

/// Odd names are names; wrong argument types are a script error, never a
/// panic.
#[test]
fn gmp_named_odd_input_is_an_error_or_a_name_never_a_panic() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let huge = "";
        huge.pad(256, 'x');
        let names = ["", " ", "\x00", "a.b", "A..B", "äö/名", huge];
        for i in 0..names.len() {
            StoreObjectMessage(GMP::Named(SELF, names[i]), "Odd", i);
        }
        for i in 0..names.len() {
            let tag = i;
            ListenObjectMessage(GMP::Named(SELF, names[i]), "Odd", (), |v| print(`${tag} ${v}`));
        }
        let bad = 0;
        try { GMP::Named(SELF, 5); } catch { bad += 1; }
        try { GMP::Named(SELF, ()); } catch { bad += 1; }
        try { GMP::Named((), "x"); } catch { bad += 1; }
        try { GMP::Named("SELF", "x"); } catch { bad += 1; }
        try { GMP::Named(SELF.World(), "x"); } catch { bad += 1; }
        try { GMP::Named(GMP::Named(SELF, "a"), "b"); } catch { bad += 1; }
        try { GMP::Named(SELF); } catch { bad += 1; }
        try { GMP::Named(SELF, huge + "x"); } catch { bad += 1; }
        print(`bad ${bad}`);
        "#,
    );
    let expect: Vec<String> = (0..7)
        .map(|i| format!("{i} {i}"))
        .chain(["bad 8".to_owned()])
        .collect();
    assert_eq!(f.printed(), expect);
}

/// A request on a named source, answered by a listener on that source only.
#[test]
fn request_on_named_source_from_rhai() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let shop = GMP::Named(SELF, "shop");
        ListenObjectMessage(shop, "Shop.Price", (), |item, rsp| rsp.Response(item.len()));
        ListenObjectMessage(SELF, "Shop.Price", (), |item, rsp| rsp.Response(-1));
        SendObjectMessage(shop, "Shop.Price", "sword", |v| print(`price ${v}`));
        "#,
    );
    assert_eq!(f.printed(), ["price 5"]);
}

/// A named handle is no message value (refused with a script error); as
/// an owner it stands for its object (a named source lives as long as its
/// object): what it owns goes when the object is destroyed, as in Lua.
#[test]
fn named_handle_is_no_value_and_owns_as_its_object() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let o = GMP::Spawn();
        let n = GMP::Named(o, "n");
        ListenMessage("Carry", (), |v| print("carried"));
        try { NotifyMessage("Carry", n); print("sent"); } catch { print("send refused"); }
        ListenMessage("Own", n, || print("owned"));
        NotifyMessage("Own");
        GMP::Destroy(o);
        NotifyMessage("Own");
        "#,
    );
    assert_eq!(f.printed(), ["send refused", "owned"]);
}

/// Rust stores on a named source; a Rhai listener on the same (object, name)
/// gets the replay and Rust's sends; Rust's destroy wipes it.
#[test]
fn rust_and_rhai_agree_on_a_named_source() {
    let f = Fixture::new();
    let obj = f.spawn();
    let named = f.hub.named(obj, "slot");
    let key = f.hub.key("Slot.Item").unwrap();
    f.hub.store(key, named, ("axe",)).unwrap();
    f.rt.load_script(
        "a.rhai",
        r#"ListenObjectMessage(GMP::Named(SELF, "slot"), "Slot.Item", GMP::Spawn(), |s| print(`slot ${s}`));"#,
        obj,
    )
    .unwrap();
    f.hub.send_str("Slot.Item", named, ("bow",)).unwrap();
    f.hub.send_str("Slot.Item", obj, ("body",)).unwrap();
    assert_eq!(f.printed(), ["slot axe", "slot bow"]);
    f.hub.destroy(obj).unwrap();
    assert_eq!(f.hub.listener_count(), 0);
    assert!(f.hub.stored(key, named).is_none());
}

/// explicit removal (`RemoveSourceKey`) from Rhai:
/// `GMP::RemoveNamed(obj, name)` drops that name's listeners and stored
/// messages, not another name's nor the object's, and returns how many.
#[test]
fn gmp_remove_named_drops_one_names_records_from_rhai() {
    let f = Fixture::new();
    f.load(
        "a.rhai",
        r#"
        let hp = GMP::Named(SELF, "HP");
        let mp = GMP::Named(SELF, "MP");
        ListenObjectMessage(hp, "Bar", (), |n| print(`hp ${n}`));
        ListenObjectMessage(mp, "Bar", (), |n| print(`mp ${n}`));
        ListenObjectMessage(SELF, "Bar", (), |n| print(`object ${n}`));
        StoreObjectMessage(hp, "Bar.Max", 100);
        print(`removed ${GMP::RemoveNamed(SELF, "HP")}`);
        NotifyObjectMessage(hp, "Bar", 1);
        NotifyObjectMessage(mp, "Bar", 2);
        NotifyObjectMessage(SELF, "Bar", 3);
        ListenObjectMessage(hp, "Bar.Max", (), |n| print(`max ${n}`));
        print(`again ${GMP::RemoveNamed(SELF, "Stamina")}`);
        "#,
    );
    assert_eq!(f.printed(), ["removed 2", "mp 2", "object 3", "again 0"]);
}
