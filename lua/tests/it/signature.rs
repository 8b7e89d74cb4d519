//! What the table learns from Lua: values inferred on first use (a listener
//! on a new key records no types), and every family's call site with file,
//! line, language and role.

use gantry_host::{Language, Role, Type};

use crate::support::Fixture;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

/// "Lua callbacks are dynamic and carry no static types, so they
/// cannot be inferred" — a Lua listener on a new key records no parameter
/// types, and the first send is what the key learns.
#[test]
fn signature_a_lua_listener_on_a_new_key_records_no_types() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"
            ListenMessage("Fresh.Lua", nil, function(a, b) print("got", a, b) end)
            "#,
        );
        assert!(
            f.hub
                .table()
                .get("Fresh.Lua")
                .is_none_or(|e| e.params.is_empty()),
            "rewrite {rewrite}"
        );
        f.load("b.lua", r#"NotifyMessage("Fresh.Lua", "text", 2.5)"#);
        assert_eq!(f.printed(), ["got\ttext\t2.5"], "rewrite {rewrite}");
        assert_eq!(
            f.hub.table().get("Fresh.Lua").unwrap().param_types(),
            [Type::String, Type::Float],
            "rewrite {rewrite}"
        );
    });
}

#[test]
fn signature_lua_values_are_inferred_on_first_use() {
    both_ways(|f, rewrite| {
        f.load(
            "a.lua",
            r#"NotifyMessage("Infer.Lua", self, {__struct = "Pos", x = 1.5, y = 2}, 3, 4.0, false, "s", {1, 2})"#,
        );
        let table = f.hub.table();
        let entry = table.get("Infer.Lua").unwrap();
        assert_eq!(
            entry.param_types(),
            vec![
                Type::Object,
                Type::Struct("Pos".into()),
                Type::Int,
                Type::Float,
                Type::Bool,
                Type::String,
                Type::Array(Box::new(Type::Int)),
            ],
            "rewrite {rewrite}"
        );
        let pos = table.structs.get("Pos").unwrap();
        let mut fields: Vec<(String, Type)> = pos
            .fields
            .iter()
            .map(|p| (p.name.clone(), p.ty.clone()))
            .collect();
        fields.sort();
        assert_eq!(fields, [("x".into(), Type::Float), ("y".into(), Type::Int)]);
    });
}

#[test]
fn call_sites_of_every_family_are_recorded_with_file_line_language_and_role() {
    both_ways(|f, rewrite| {
        f.load(
            "s.lua",
            "ListenHook('Site.Hook', nil, function() end)\n\
             RunHook('Site.Hook', 1)\n\
             StoreObjectMessage(self, 'Site.Store', 1)\n\
             ListenObjectMessage(self, 'Site.Store', nil, function() end)\n\
             SendObjectMessage(self, 'Site.Ask', 1, function() end)\n\
             OnceObjectMessage(self, 'Site.Once', 1)\n\
             RemoveStoredObjectMessage(self, 'Site.Store')\n",
        );
        let table = f.hub.table();
        let sites = |key: &str| -> Vec<(u32, Role)> {
            table
                .get(key)
                .unwrap_or_else(|| panic!("{key} unknown"))
                .sites
                .iter()
                .filter(|s| s.file == "s.lua" && s.language == Language::Lua)
                .map(|s| (s.line, s.role))
                .collect()
        };
        assert_eq!(
            sites("Site.Hook"),
            [(1, Role::Listen), (2, Role::Send)],
            "rewrite {rewrite}"
        );
        let store = sites("Site.Store");
        for expected in [(3, Role::Send), (4, Role::Listen), (7, Role::Send)] {
            assert!(store.contains(&expected), "rewrite {rewrite}: {store:?}");
        }
        assert_eq!(sites("Site.Ask"), [(5, Role::Send)], "rewrite {rewrite}");
        assert_eq!(sites("Site.Once"), [(6, Role::Send)], "rewrite {rewrite}");
    });
}

/// The names of a key's parameters: a listener's function literal names
/// them, whether it registers before the first send or after; `argN`
/// stays only where nothing names a position.
#[test]
fn a_lua_listeners_parameter_names_name_the_recorded_parameters() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"ListenMessage("Quest.Start", nil, function(id, reward) end)"#,
    );
    f.load("b.lua", r#"NotifyMessage("Quest.Start", "q1", 5, true)"#);
    f.load("c.lua", r#"NotifyMessage("Quest.Done", "q1")"#);
    f.load(
        "d.lua",
        r#"ListenMessage("Quest.Done", nil, function(quest) end)"#,
    );
    let names = |key: &str| -> Vec<String> {
        let table = f.hub.table();
        table
            .get(key)
            .unwrap()
            .params
            .iter()
            .map(|p| p.name.clone())
            .collect()
    };
    assert_eq!(names("Quest.Start"), ["id", "reward", "arg3"]);
    assert_eq!(names("Quest.Done"), ["quest"]);
}

/// A key's kind is part of its contract: a hook is not listened to as a
/// message, nor a stored key run as a hook, at the script's line.
#[test]
fn a_lua_call_of_another_kind_than_the_key_is_an_error_at_its_line() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
ListenHook("Combat.Damage", nil, function(hit, ctx) end)
StoreObjectMessage(self, "Inv.Gold", 5)
print(pcall(function() ListenMessage("Combat.Damage", nil, function(hit) end) end))
print(pcall(function() RunHook("Inv.Gold", 3) end))
"#,
    );
    let printed = f.printed();
    assert!(
        printed[0].starts_with("false")
            && printed[0].contains(
                "a.lua:4: ListenMessage on `Combat.Damage`: the key is a hook (as first used)"
            ),
        "{printed:?}"
    );
    assert!(
        printed[1].contains("a.lua:5: RunHook on `Inv.Gold`: the key is a store")
            && printed[1].contains("RunHook is for hook keys"),
        "{printed:?}"
    );
}

/// A send or a store of a hook key is refused at the script's line, every
/// time (the fast lane never carries a send to a hook), and the hook still
/// runs.
#[test]
fn a_lua_send_or_store_of_a_hook_key_is_an_error_at_its_line() {
    let f = Fixture::new();
    f.load(
        "a.lua",
        r#"
ListenHook("Combat.Damage", nil, function(hit, ctx) print("hook", hit) end)
RunHook("Combat.Damage", 3)
for i = 1, 3 do
  print(pcall(function() NotifyMessage("Combat.Damage", i) end))
end
print(pcall(function() StoreObjectMessage(self, "Combat.Damage", 5) end))
RunHook("Combat.Damage", 4)
"#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 6, "{printed:?}");
    assert_eq!(printed[0], "hook\t3");
    for sent in &printed[1..4] {
        assert!(
            sent.starts_with("false")
                && sent.contains(
                    "a.lua:5: NotifyMessage on `Combat.Damage`: the key is a hook (as first used)"
                ),
            "{printed:?}"
        );
    }
    assert!(
        printed[4].starts_with("false")
            && printed[4].contains("a.lua:7: StoreObjectMessage on `Combat.Damage`"),
        "{printed:?}"
    );
    assert_eq!(printed[5], "hook\t4");
}
