//! Baking on and off must be indistinguishable: every script runs twice —
//! baked into per-key functions and through the generic functions only —
//! and what it printed, every error with its file:line, and the signature
//! table it left (types and call sites) must be the same; a script defining
//! an API-named function and multi-line calls included. Part of the corpus
//! is hand-written, part generated (proptest).

use gantry_host::{KeyDecl, Language, Role, Source, Type};
use gantry_rhai::runtime::RhaiOptions;

use crate::support::{Fixture, both_ways};

/// "The rewrite must preserve behaviour" — a script defining its own
/// function of an API name calls its own, baked or not.
#[test]
fn rewrite_preserves_behaviour_when_a_script_defines_an_api_named_function() {
    both_ways(|f, rewrite| {
        f.load(
            "a.rhai",
            r#"
            fn NotifyMessage(key, n) { print(`mine ${key} ${n}`); }
            ListenMessage("Wrapped", (), |n| print(`hub ${n}`));
            NotifyMessage("Wrapped", 1);
            GMP::NotifyMessage("Wrapped", 2);
            "#,
        );
        assert_eq!(
            f.printed(),
            ["mine Wrapped 1", "hub 2"],
            "rewrite {rewrite}"
        );
    });
}

/// "Every script send and listen records the call site's file and
/// line" — a call spread over lines is recorded at the same line baked or
/// not, and its error names that line.
#[test]
fn call_site_of_a_multi_line_call_is_the_same_line_baked_or_generic() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Multi.Line", KeyDecl::event().param("n", Type::Int))
            .unwrap();
        f.load(
            "ml.rhai",
            "\nNotifyMessage(\n  \"Multi.Line\",\n  1);\nListenMessage(\n  \"Multi.Line\",\n  (),\n  || {});\n",
        );
        let table = f.hub.table();
        let sites: Vec<(u32, Role)> = table
            .get("Multi.Line")
            .unwrap()
            .sites
            .iter()
            .filter(|s| s.file == "ml.rhai" && s.language == Language::Rhai)
            .map(|s| (s.line, s.role))
            .collect();
        assert_eq!(
            sites,
            [(2, Role::Send), (5, Role::Listen)],
            "rewrite {rewrite}"
        );
        drop(table);
        let err = f.load_err(
            "bad.rhai",
            "\n\nNotifyMessage(\n  \"Multi.Line\",\n  \"x\");\n",
        );
        assert!(err.starts_with("bad.rhai:3:"), "rewrite {rewrite}: {err}");
    });
}

fn run(source: &str, rewrite: bool) -> (Vec<String>, String) {
    let f = Fixture::with(RhaiOptions {
        rewrite,
        ..RhaiOptions::default()
    });
    let mut out = Vec::new();
    if let Err(e) = f.rt.load_script("gen.rhai", source, f.spawn()) {
        out.push(format!("load error: {e}"));
    }
    let tick = f.hub.key("Game.Tick").unwrap();
    for n in 1..=2i64 {
        let _ = f.hub.send(tick, Source::Global, (n, 0.25f64));
    }
    out.extend(f.printed().into_iter().map(|l| format!("print: {l}")));
    out.extend(f.errors().into_iter().map(|e| format!("error: {e}")));
    out.extend(f.failures().into_iter().map(|e| format!("report: {e}")));
    let table = format!("{:?}", f.hub.table_snapshot());
    (out, table)
}

/// Each key's signature without its call sites: a baked send records its
/// site at load (creating the key's entry), a generic one when it first
/// runs, so a script stopped before some of its sends knows those keys
/// only when baked.
fn signatures(source: &str, rewrite: bool) -> std::collections::BTreeMap<String, String> {
    let f = Fixture::with(RhaiOptions {
        rewrite,
        ..RhaiOptions::default()
    });
    let _ = f.rt.load_script("gen.rhai", source, f.spawn());
    let mut table = f.hub.table_snapshot();
    table
        .keys
        .iter_mut()
        .map(|(key, entry)| {
            entry.sites.clear();
            (key.clone(), format!("{entry:?}"))
        })
        .collect()
}

const SCRIPTS: &[&str] = &[
    // every family, some calls over several lines
    "ListenMessage(\"Game.Tick\", (), |n, dt| print(`tick ${n} ${dt}`));\nListenObjectMessage(SELF, \"Q.Ask\", (), |x, rsp| rsp.Response(x * 2));\nSendObjectMessage(SELF, \"Q.Ask\", 21, |v| print(`answer ${v}`));\nStoreObjectMessage(SELF,\n    \"S.Val\",\n    \"kept\");\nListenObjectMessage(SELF, \"S.Val\", (), |v| print(`stored ${v}`));\nOnceObjectMessage(SELF, \"O.Val\", 1);\nprint(`${RemoveStoredObjectMessage(SELF, \"S.Val\")}`);\nListenHook(\"H.K\", (), |p, ctx| { p.n += 1; });\nlet r = RunHook(\"H.K\", #{ __struct: \"P\", n: 1 });\nprint(`${r.ran} ${r.payload.n}`);\nlet id = ListenMessage(\"U.K\", (), || print(\"never\"));\nUnbindMessage(\"U.K\", id);\nNotifyMessage(\"U.K\");\nGMP::NotifyMessage(\"Game.Tick\", 0, 0.5);\n",
    // non-literal keys stay generic; strings and comments untouched
    "let k = \"X.Y\";\nlet s = \"NotifyMessage(\\\"X.Y\\\", 1)\";\n// NotifyMessage(\"X.Y\", 2)\nListenMessage(k, (), |n| print(`got ${n}`));\nNotifyMessage(k, 3);\nNotifyMessage(\"X.Y\", 4);\nprint(s);\n",
    // an error raised by the API keeps the caller's line and column
    "ListenMessage(\"E.K\", (), || {});\n\nNotifyMessage(\"E.K\", #{ a: 1 });\nNotifyMessage(\"E.K\", #{ b: 1 });\n",
    // a handler failing at run time
    "ListenMessage(\"Game.Tick\", (), |n, dt| {\n    if n == 2 { throw \"second tick\"; }\n    print(`ok ${n}`);\n});\n",
    // a type mismatch against the recorded signature
    "NotifyMessage(\"T.K\", 1);\nNotifyMessage(\"T.K\", 2);\n",
    // collections: rows, whole table, the writer, removals; requests
    r#"StoreObjectMessage(SELF, "Inv.Bag", [#{ __struct: "Item", id: 1, n: 0 }, #{ __struct: "Item", id: 2, n: 0 }]);
ListenRowMessage(SELF, "Inv.Bag", (), GMP::ALL_ROWS_WITH_REMOVAL, |row, item, u| print(`row ${row} id=${item.id} total=${u.total}`));
ListenRowMessage(SELF, "Inv.Bag", (), GMP::WithRemoval(1), |row, item| print(`slot ${row} ${item.id}`));
ListenObjectMessage(SELF, "Inv.Bag", (), |items, u| print(`table ${items.len()} ${u.ranges}`));
let k = "Inv.Bag";
ListenRowMessage(SELF, k, (), 0, |row, item| print(`generic ${row}`));
{
    let bag = GMP::StoredArray(SELF, "Inv.Bag");
    bag[0].n += 1;
    bag.Add(#{ id: 3, n: 0 });
    bag.commit();
    bag.SetNum(1);
}
let other = GMP::StoredArray(SELF, k);
other.Insert(0, #{ id: 9, n: 0 });
other.commit();
ListenObjectMessage(SELF, "Q.Twice", (), |x, rsp| rsp.Response(x * 2, x));
print(`${GMP::Request(SELF, "Q.Twice", 4)}`);
print(`${GMP::Request(SELF, "Q.Nobody", 4)}`);
"#,
];

#[test]
fn baking_on_and_off_give_the_same_outputs_and_the_same_table() {
    for source in SCRIPTS {
        let (baked, baked_table) = run(source, true);
        let (generic, generic_table) = run(source, false);
        assert_eq!(baked, generic, "outputs differ for:\n{source}");
        assert_eq!(baked_table, generic_table, "tables differ for:\n{source}");
    }
}

#[test]
fn baked_calls_are_described_by_the_recorded_signature_and_checked_by_the_hub() {
    // Typed when the key's parameters are known at its first bake (here
    // declared by Rust), for `Engine::definitions`; a call the typed form
    // does not fit still runs, and the hub checks it as it checks the
    // generic call: a missing parameter or a wrong type is the hub's
    // mismatch at the author's line.
    let f = Fixture::new();
    f.hub
        .declare(
            "Typed.Hit",
            KeyDecl::event()
                .param("dmg", Type::Int)
                .param("weapon", Type::String),
        )
        .unwrap();
    let err = f.load_err("a.rhai", "\nNotifyMessage(\"Typed.Hit\", 5);\n");
    assert!(
        err.starts_with("a.rhai:2:") && err.contains("argument 2: expected string, got nothing"),
        "{err}"
    );
    let err = f.load_err("c.rhai", "NotifyMessage(\"Typed.Hit\", \"5\", \"axe\");\n");
    assert!(
        err.starts_with("c.rhai:1:") && err.contains("`Typed.Hit` argument 1: expected int"),
        "{err}"
    );
    f.load("d.rhai", "NotifyMessage(\"Typed.Hit\", 5, \"axe\");\n");
    let defs = f.rt.definitions();
    assert!(
        defs.contains("fn NotifyMessage__Typed__Hit(dmg: int, weapon: String)"),
        "{defs}"
    );
}

#[test]
fn baking_records_the_authors_lines_for_sends() {
    let f = Fixture::new();
    f.load("a.rhai", "\n\nNotifyMessage(\n  \"Line.Key\", 1);\n");
    let table = f.hub.table();
    let lines: Vec<u32> = table
        .get("Line.Key")
        .unwrap()
        .sites
        .iter()
        .map(|s| s.line)
        .collect();
    assert_eq!(lines, vec![3]);
}

/// Generated scripts: random sequences of API calls on a few related keys
/// (so that partial listeners, stores, once-stores, unbinds and mismatched
/// sends meet), some calls spread over lines, some keys not literals.
mod generated {
    use proptest::prelude::*;

    const KEYS: [&str; 4] = ["Gen", "Gen.A", "Gen.A.B", "Gen.C"];

    fn key() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(&KEYS[..])
    }

    /// Message arguments: mostly ints, sometimes a string or a float, so
    /// that some sends contradict a key's first use.
    fn args() -> impl Strategy<Value = String> {
        let arg = prop_oneof![
            6 => (0i64..100).prop_map(|n| n.to_string()),
            1 => Just("\"s\"".to_owned()),
            1 => Just("2.5".to_owned()),
        ];
        proptest::collection::vec(arg, 0..3)
            .prop_map(|a| a.iter().map(|a| format!(", {a}")).collect::<String>())
    }

    fn params(n: usize) -> (String, String) {
        let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        let shown: String = names.iter().map(|p| format!(" ${{{p}}}")).collect();
        (names.join(", "), shown)
    }

    fn statement(i: usize) -> impl Strategy<Value = String> {
        prop_oneof![
            (key(), args(), any::<bool>()).prop_map(|(k, a, split)| {
                if split {
                    format!("NotifyMessage(\n    \"{k}\"{a});")
                } else {
                    format!("NotifyMessage(\"{k}\"{a});")
                }
            }),
            (key(), args()).prop_map(|(k, a)| format!("NotifyObjectMessage(SELF, \"{k}\"{a});")),
            (key(), args()).prop_map(move |(k, a)| format!("let k{i} = \"{k}\";\nNotifyMessage(k{i}{a});")),
            (key(), 0usize..3, 0i64..3, any::<bool>(), -2i64..3).prop_map(
                move |(k, n, times, partial, order)| {
                    let (ps, shown) = params(n);
                    let times = if times == 0 { -1 } else { times };
                    let m = if partial { "partial" } else { "exact" };
                    format!(
                        "ListenMessage(\"{k}\", (), |{ps}| print(`L{i} {k}{shown}`), #{{ times: {times}, order: {order}, match: \"{m}\" }});"
                    )
                }
            ),
            (key(), 0usize..3).prop_map(move |(k, n)| {
                let (ps, shown) = params(n);
                format!("ListenObjectMessage(SELF, \"{k}\", (), |{ps}| print(`O{i} {k}{shown}`));")
            }),
            (key(), args(), any::<bool>()).prop_map(|(k, a, once)| {
                let f = if once { "OnceObjectMessage" } else { "StoreObjectMessage" };
                format!("{f}(SELF, \"{k}\"{a});")
            }),
            key().prop_map(|k| format!("print(`removed ${{RemoveStoredObjectMessage(SELF, \"{k}\")}}`);")),
            key().prop_map(move |k| format!(
                "let id{i} = ListenMessage(\"{k}\", (), || print(\"U{i}\"));\nUnbindMessage(\"{k}\", id{i});\nNotifyMessage(\"{k}\");"
            )),
        ]
    }

    fn script() -> impl Strategy<Value = String> {
        (1usize..12).prop_flat_map(|n| {
            (0..n)
                .map(statement)
                .collect::<Vec<_>>()
                .prop_map(|lines| lines.join("\n") + "\n")
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn baking_on_and_off_agree_on_generated_scripts(source in script()) {
            let (baked, baked_table) = super::run(&source, true);
            let (generic, generic_table) = super::run(&source, false);
            prop_assert_eq!(&baked, &generic, "outputs differ for:\n{}", source);
            if baked.iter().any(|l| l.starts_with("load error")) {
                // Stopped early: every key the generic run knows has the
                // same signature baked.
                let baked_sigs = super::signatures(&source, true);
                for (key, sig) in super::signatures(&source, false) {
                    prop_assert_eq!(Some(&sig), baked_sigs.get(&key), "`{}` differs for:\n{}", key, source);
                }
            } else {
                prop_assert_eq!(baked_table, generic_table, "tables differ for:\n{}", source);
            }
        }
    }
}
