use super::super::parse;
use super::refusal;

/// Whether the check refuses `source`, which tree-sitter must parse
/// without an `ERROR` or `MISSING` node (that is the case it exists for).
fn refused(source: &str) -> bool {
    let tree = parse(source, None).unwrap();
    assert!(
        !tree.root_node().has_error(),
        "tree-sitter refuses it: {source:?}"
    );
    refusal(&tree, source).is_some()
}

/// Whether Lua 5.4 itself refuses `source`, loaded as text as the loader
/// loads a script.
#[cfg(feature = "runtime")]
fn lua_refuses(lua: &mlua::Lua, source: &str) -> bool {
    lua.load(source)
        .set_name("=chunk")
        .set_mode(mlua::chunk::ChunkMode::Text)
        .into_function()
        .is_err()
}

/// Chunks tree-sitter parses without an error node and Lua 5.4 refuses,
/// one per way its grammar is wider than Lua's.
const LUA_REFUSES: &[&str] = &[
    " #NotifyMessage(\"Game.Tick\", 1, 2.5)\nNotifyMessage(\"Game.Tick\", 1, 2.5)\n",
    "-- c\n#!shebang\nx = 1",
    "end\"\"",
    "local nil",
    "local x<const>=1",
    "-- --[==[ a\nx = 1 ]==] y = 2",
    "x = 'a\nb'",
    "x = \"\\300\"",
    "x = \"\\u{80000000}\"",
    "x = 0b101",
    "x = 1ULL",
    "x = 3i",
    "x = 0x7ffffffffffffffftrueF\"bad key\"",
    "x = 3y = 2",
    "x = $y",
    "x = é",
    "x = 1\u{a0}y = 2",
    "x = a != b",
    "global x = 1",
    "global function f() end",
    "global *",
    "local <const> x = 1",
    "function f(...t) end",
    "local x <foo> = 1",
    "local a <close>, b <close> = nil, nil",
    "local a <const> = 1 a = 2",
    "local a <close> = nil do a = 2 end",
    "local a <const> = 1 function a() end",
    "local a <const> = 1 f = function() a = 2 end",
    "repeat local x <const> = 1 until (function() x = 2 end)()",
    "function f() return ... end",
    "x = 1 while true do break end break",
    "for i = 1, 2 do local f = function() break end end",
    "goto continue",
    "do ::l:: end goto l",
    "local function f() goto l end ::l::",
    "::a:: ::a::",
    "::a:: do ::a:: end",
    "goto a local x ::a:: print(x)",
    "do goto a local x ::a:: ; ::b:: return end",
    "repeat goto a local x ::a:: until x",
];

/// Chunks Lua 5.4 loads that come close to a refusal.
const LUA_LOADS: &[&str] = &[
    "#!/usr/bin/env lua\nNotifyMessage('A.B')",
    "x = 1 --\nNotifyMessage(\"K\", 1)\n--\n-- \ny=2",
    "x = 1 --[==x\ny = 2",
    "x = 1 --[==[ a\n]] ]==] y = 2",
    "local x <const> = 1 local y <close> = nil",
    "local a <const> = 1 do local a = 2 a = 3 end",
    "local a <const> = {} a.b = 2 a[1] = 3",
    "local x = 1 x = 1",
    "global = 1 x = global local global = 2",
    "do ::a:: end ::a::",
    "goto a local x ::a::",
    "goto a local x ::a:: ; ::b::",
    "do goto a local x ::a:: end",
    "x = 1 local y ::l:: goto l",
    "for k, v in pairs(t) do goto continue ::continue:: end",
    "while x do if y then break end end",
    "repeat local x = 1 until x",
    "function f(a, ...) return ... end x = ...",
    "x = 1e5 + 0xA.8P-1 + 3. + .5 + 08 + 0x1p4 + 1E+5",
    "x = \"a\\z\n   b\" .. 'a\\\nb' .. 'a\\'b' .. \"\\u{7FFFFFFF}\\255\\x41\"",
    "x = [==[\n]] ]==] .. [[]]",
    "x = a // b ~= c >> 1 << 2 >= 3 <= 4 .. 5",
    "f{x=1;y=2,} a.b:c\"x\" return;",
    "x = -2^-2 local t = {[1]=2, a=3, 4}",
    "local function f() local a <const> = 1 return function() return a end end",
    "function t.a.b:m(x) self.x = x end",
    "",
    "  \n\t",
    "-- only a comment",
];

/// Lua refuses every chunk here though tree-sitter parses it without an
/// error node; the check refuses each, and only those.
#[test]
fn the_check_refuses_what_lua_refuses_though_tree_sitter_parses_it() {
    for source in LUA_REFUSES {
        assert!(refused(source), "not refused: {source:?}");
    }
    for source in LUA_LOADS {
        assert!(!refused(source), "refused: {source:?}");
    }
}

/// The tables above are Lua's own verdicts, not guesses.
#[cfg(feature = "runtime")]
#[test]
fn the_refusal_examples_are_what_lua_itself_decides() {
    let lua = mlua::Lua::new();
    for source in LUA_REFUSES {
        assert!(lua_refuses(&lua, source), "Lua loads {source:?}");
    }
    for source in LUA_LOADS.iter().filter(|s| !s.starts_with('#')) {
        assert!(!lua_refuses(&lua, source), "Lua refuses {source:?}");
    }
}

/// A function may have 200 locals, loop control variables included (three
/// for a numeric `for`, four for a generic one), not 201.
#[test]
fn more_than_200_locals_in_one_function_are_refused() {
    let locals = |n: usize| (0..n).map(|i| format!("local v{i}\n")).collect::<String>();
    assert!(!refused(&locals(200)));
    assert!(refused(&locals(201)));
    let numeric = format!("{}for i = 1, 2 do end", locals(196));
    assert!(!refused(&numeric));
    let numeric = format!("{}for i = 1, 2 do end", locals(197));
    assert!(refused(&numeric));
    let generic = format!("{}for k in x do end", locals(195));
    assert!(!refused(&generic));
    let generic = format!("{}for k in x do end", locals(196));
    assert!(refused(&generic));
    // Each function counts its own; a block's locals end with it.
    let nested = format!("{}function f() {} end", locals(200), locals(200));
    assert!(!refused(&nested));
    let blocks = format!("do {} end {}", locals(200), locals(200));
    assert!(!refused(&blocks));
}

#[cfg(feature = "runtime")]
#[test]
fn the_local_limit_is_lua_s() {
    let lua = mlua::Lua::new();
    let locals = |n: usize| (0..n).map(|i| format!("local v{i}\n")).collect::<String>();
    for (source, refused_by_lua) in [
        (locals(200), false),
        (locals(201), true),
        (format!("{}for i = 1, 2 do end", locals(196)), false),
        (format!("{}for i = 1, 2 do end", locals(197)), true),
        (format!("{}for k in x do end", locals(195)), false),
        (format!("{}for k in x do end", locals(196)), true),
    ] {
        assert_eq!(
            lua_refuses(&lua, &source),
            refused_by_lua,
            "{}",
            &source[source.len() - 40..]
        );
        assert_eq!(
            refused(&source),
            refused_by_lua,
            "{}",
            &source[source.len() - 40..]
        );
    }
}

/// Random programs built from statements around the rules the check
/// mirrors: locals with attributes, assignments, gotos and labels, breaks,
/// loops, nested functions with and without varargs, numbers, strings,
/// comments and spacing Lua reads differently from tree-sitter.
#[cfg(feature = "runtime")]
mod generated {
    use proptest::prelude::*;

    const NAMES: &[&str] = &[
        "a", "b", "x", "self", "global", "t", "a", "b", "x", "c", "nil",
    ];
    const LABELS: &[&str] = &["l", "m", "continue"];
    const ATTRIBUTES: &[&str] = &["", "", "", " <const>", " <close>", "<const>", " <foo>"];
    const PARAMS: &[&str] = &["", "a", "...", "a, ...", "a, b", "", "...t"];
    /// Mostly what Lua reads, with a few tokens it refuses.
    const ATOMS: &[&str] = &[
        "1",
        "0x10",
        "1e5",
        "3.",
        ".5",
        "'s'",
        "\"a\\z\n  b\"",
        "[[x]]",
        "[=[y]=]",
        "...",
        "nil",
        "true",
        "#t",
        "-1",
        "a",
        "b",
        "x",
        "t",
        "f(x)",
        "a.b",
        "0b1",
        "1..2",
        "\"\\300\"",
    ];
    const GAPS: &[&str] = &[
        " ",
        " ",
        " ",
        " ",
        "\n",
        "\n",
        "",
        " -- c\n",
        " --[[ c ]] ",
        ";",
        " ",
        "\n",
        "\u{a0}",
    ];

    fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::sample::select(items).prop_map(str::to_owned)
    }

    fn expression() -> impl Strategy<Value = String> {
        let atom = prop_oneof![pick(ATOMS), pick(NAMES)];
        atom.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} .. {b}")),
                (pick(PARAMS), block_of(inner.clone()))
                    .prop_map(|(p, body)| format!("function({p}) {body} end")),
                inner.prop_map(|e| format!("({e})")),
            ]
        })
    }

    /// Statements whose nested blocks and expressions come from `inner`.
    fn block_of(inner: BoxedStrategy<String>) -> impl Strategy<Value = String> {
        let simple = prop_oneof![
            (
                pick(NAMES),
                pick(ATTRIBUTES),
                proptest::option::of(inner.clone())
            )
                .prop_map(|(n, a, e)| match e {
                    Some(e) => format!("local {n}{a} = {e}"),
                    None => format!("local {n}{a}"),
                }),
            (pick(NAMES), pick(ATTRIBUTES), pick(NAMES), pick(ATTRIBUTES))
                .prop_map(|(n, a, m, b)| format!("local {n}{a}, {m}{b} = nil")),
            (pick(NAMES), inner.clone()).prop_map(|(n, e)| format!("{n} = {e}")),
            pick(LABELS).prop_map(|l| format!("goto {l}")),
            pick(LABELS).prop_map(|l| format!("::{l}::")),
            Just("break".to_owned()),
            Just("NotifyMessage(\"Game.Tick\", 1)".to_owned()),
            inner.clone().prop_map(|e| format!("f({e})")),
            (pick(NAMES), pick(PARAMS)).prop_map(|(n, p)| format!("function {n}({p}) end")),
        ];
        prop::collection::vec((simple, pick(GAPS)), 0..5).prop_map(|statements| {
            statements
                .into_iter()
                .map(|(s, gap)| format!("{s}{gap}"))
                .collect::<String>()
        })
    }

    fn nested(body: BoxedStrategy<String>) -> impl Strategy<Value = String> {
        let e = expression().boxed();
        prop_oneof![
            body.clone().prop_map(|b| format!("do {b} end")),
            (e.clone(), body.clone()).prop_map(|(c, b)| format!("while {c} do {b} end")),
            (body.clone(), e.clone()).prop_map(|(b, c)| format!("repeat {b} until {c}")),
            (pick(NAMES), body.clone()).prop_map(|(n, b)| format!("for {n} = 1, 2 do {b} end")),
            (pick(NAMES), body.clone()).prop_map(|(n, b)| format!("for {n}, v in t do {b} end")),
            (e, body.clone(), body.clone())
                .prop_map(|(c, b, d)| format!("if {c} then {b} else {d} end")),
            (pick(NAMES), pick(PARAMS), body.clone())
                .prop_map(|(n, p, b)| format!("local function {n}({p}) {b} end")),
            body,
        ]
    }

    /// Blocks of gotos, labels, locals and breaks only: where each goto
    /// may land, and whether it jumps into a local's scope, is Lua's
    /// subtlest rule.
    pub(super) fn jumps() -> impl Strategy<Value = String> {
        const SIMPLE: &[&str] = &[
            "goto l",
            "goto l",
            "goto m",
            "::l::",
            "::m::",
            "local x",
            "local x",
            ";",
            "break",
            "local y <const> = 1",
            "x = 1",
            "y = 2",
        ];
        let leaf = prop::collection::vec(pick(SIMPLE), 0..5)
            .prop_map(|s| s.join(" "))
            .boxed();
        leaf.prop_recursive(4, 32, 4, |inner| {
            let statement = prop_oneof![
                2 => pick(SIMPLE),
                1 => inner.clone().prop_map(|b| format!("do {b} end")),
                1 => inner.clone().prop_map(|b| format!("repeat {b} until x")),
                1 => inner.clone().prop_map(|b| format!("while x do {b} end")),
                1 => inner.clone().prop_map(|b| format!("for i = 1, 2 do {b} end")),
                1 => inner.clone().prop_map(|b| format!("if x then {b} else {b} end")),
                1 => inner.clone().prop_map(|b| format!("local function f() {b} end")),
                1 => inner.prop_map(|b| format!("do {b} return end")),
            ];
            prop::collection::vec(statement, 0..6).prop_map(|s| s.join(" "))
        })
    }

    /// A whole chunk: statements and nested statements, sometimes after a
    /// `#` line, sometimes ending in a `return`.
    pub(super) fn program() -> impl Strategy<Value = String> {
        let leaf = block_of(expression().boxed()).boxed();
        let body = leaf.prop_recursive(3, 24, 4, |inner| {
            prop::collection::vec(nested(inner), 1..4).prop_map(|b| b.join("\n"))
        });
        let head = prop_oneof![
            4 => Just(""),
            1 => Just("#!lua\n"),
            1 => Just(" #x\n"),
        ];
        let tail = prop_oneof![3 => Just(""), 1 => Just("\nreturn x")];
        (head, body, tail).prop_map(|(h, b, t)| format!("{h}{b}{t}"))
    }
}

#[cfg(feature = "runtime")]
proptest::proptest! {
    // Many programs have a plain syntax error, which tree-sitter sees too:
    // those are rejected and redrawn.
    #![proptest_config(proptest::test_runner::Config {
        cases: 1000,
        max_global_rejects: 20_000,
        ..Default::default()
    })]

    /// On programs tree-sitter parses without an error node, the check
    /// refuses exactly what Lua refuses: nothing Lua refuses is rewritten,
    /// and nothing Lua loads loses its rewrite.
    #[test]
    fn the_check_agrees_with_lua_on_generated_programs(source in generated::program()) {
        let tree = parse(&source, None).unwrap();
        proptest::prop_assume!(!tree.root_node().has_error());
        let lua = mlua::Lua::new();
        // Lua skips a `#` first line only in a file; the rewriter's prologue
        // takes its place, so judge the rest.
        let judged = if source.starts_with('#') {
            source[source.find('\n').unwrap_or(source.len())..].to_owned()
        } else {
            source.clone()
        };
        let ours = refusal(&tree, &source);
        proptest::prop_assert_eq!(
            ours.is_some(),
            lua_refuses(&lua, &judged),
            "{:?}: {:?}",
            ours,
            source
        );
    }

    #[test]
    fn the_check_lands_gotos_as_lua_does(source in generated::jumps()) {
        let tree = parse(&source, None).unwrap();
        proptest::prop_assume!(!tree.root_node().has_error());
        let lua = mlua::Lua::new();
        let ours = refusal(&tree, &source);
        proptest::prop_assert_eq!(
            ours.is_some(),
            lua_refuses(&lua, &source),
            "{:?}: {:?}",
            ours,
            source
        );
    }
}

/// Blocks nested past Lua's 200 levels are refused, whatever loads them;
/// a loop opens two blocks a level, so 200 nested loops are not.
#[test]
fn loops_nested_past_lua_s_200_levels_are_refused() {
    let loops = |n: usize| format!("{}x = 1{}", "while x do ".repeat(n), " end".repeat(n));
    assert!(!refused(&loops(150)));
    assert!(refused(&loops(201)));
}

#[cfg(feature = "runtime")]
#[test]
fn loops_nested_past_200_levels_are_refused_by_lua_too() {
    let loops = |n: usize| format!("{}x = 1{}", "while x do ".repeat(n), " end".repeat(n));
    let lua = mlua::Lua::new();
    assert!(!lua_refuses(&lua, &loops(150)));
    assert!(lua_refuses(&lua, &loops(201)));
}
