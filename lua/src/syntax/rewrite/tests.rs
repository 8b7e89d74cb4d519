use expect_test::expect;
use gantry_host::{ApiFunction, ScannedCall};

use super::super::{parse, scan};
use super::{BAKES_PROLOGUE_MAX_LOCALS, Rewrite, rewrite};

/// Leaf tokens of `source`: (byte start, line, column, text).
fn leaves(source: &str) -> Vec<(usize, usize, usize, String)> {
    let tree = parse(source, None).unwrap();
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        if node.child_count() == 0 && node.end_byte() > node.start_byte() {
            let p = node.start_position();
            out.push((
                node.start_byte(),
                p.row,
                p.column,
                source[node.byte_range()].to_owned(),
            ));
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out
}

/// How far the prologue shifted line 1: the edits themselves never change
/// a line's length.
fn prologue_len(original: &str, r: &Rewrite) -> usize {
    let first = |s: &str| s.split('\n').next().unwrap_or("").len();
    first(&r.source) - first(original)
}

/// Asserts the layout rules: the same number of lines, the rewritten chunk
/// parses cleanly, and every token that is not a baked callee, a baked key or
/// the comma/paren cut with it is at its original line and column.
fn assert_layout_preserved(original: &str, r: &Rewrite) {
    assert_eq!(
        original.matches('\n').count(),
        r.source.matches('\n').count(),
        "line count changed:\n{}",
        r.source
    );
    assert!(
        !parse(&r.source, None).unwrap().root_node().has_error(),
        "rewritten source does not parse:\n{}",
        r.source
    );
    let calls: Vec<ScannedCall> = scan(original);
    // Regions whose tokens the rewrite may replace: the callee, the key, and
    // what lies between them and the neighbouring argument (`(`, commas,
    // comments). Everything else must stay exactly in place.
    let mut cut: Vec<std::ops::Range<usize>> = Vec::new();
    for bake in &r.bakes {
        let call = calls
            .iter()
            .find(|c| c.call == bake.site)
            .expect("bake site is a scanned call");
        let k = call.function.key_index();
        let key = call.args[k].span;
        let next = call.args.get(k + 1).map_or(key.end, |a| a.span.start);
        if k == 0 {
            cut.push(call.callee.start..next.max(key.end));
        } else {
            cut.push(call.callee.start..call.callee.end);
            if next > key.end {
                cut.push(key.start..next);
            } else {
                cut.push(call.args[k - 1].span.end..key.end);
            }
        }
    }
    let shift = prologue_len(original, r);
    let out_lines: Vec<&str> = r.source.split('\n').collect();
    for (start, line, col, text) in leaves(original) {
        if cut.iter().any(|c| c.contains(&start)) {
            continue;
        }
        let col = if line == 0 { col + shift } else { col };
        let got = out_lines[line].get(col..col + text.len());
        assert_eq!(
            got,
            Some(text.as_str()),
            "token {text:?} moved from {}:{col}\n{}",
            line + 1,
            r.source
        );
    }
}

fn slots_of(r: &Rewrite) -> Vec<(usize, ApiFunction, &str)> {
    r.slots()
        .map(|b| (b.slot, b.function, b.key.as_str()))
        .collect()
}

#[test]
fn literal_key_calls_become_baked_calls_without_the_key() {
    let src = r#"NotifyObjectMessage(self, "Player.Hurt", dmg, causer)
NotifyMessage("Game.Start")
ListenMessage("Player.Hurt", self, function(d) print(d) end)
RemoveStoredObjectMessage(self, "Inv.Items")
GMP.Request(self, "Shop.Price", 3)
NotifyMessage "Game.Start"
"#;
    let r = rewrite(src);
    expect![[r#"
        local __ga=...;local __ga1,__ga2,__ga3,__ga4,__ga5=__ga[1],__ga[2],__ga[3],__ga[4],__ga[5];__ga1              (self,                dmg, causer)
        __ga2(                    )
        __ga3(                       self, function(d) print(d) end)
        __ga4                    (self             )
        __ga5      (self,               3)
        __ga2()                   
    "#]]
    .assert_eq(&r.source);
    expect![[r#"
        [
            (
                1,
                NotifyObjectMessage,
                "Player.Hurt",
            ),
            (
                2,
                NotifyMessage,
                "Game.Start",
            ),
            (
                3,
                ListenMessage,
                "Player.Hurt",
            ),
            (
                4,
                RemoveStoredObjectMessage,
                "Inv.Items",
            ),
            (
                5,
                Request,
                "Shop.Price",
            ),
        ]
    "#]]
    .assert_debug_eq(&slots_of(&r));
    assert_eq!(r.bakes.len(), 6);
    assert_eq!(r.slot_count(), 5);
    assert_layout_preserved(src, &r);
}

#[test]
fn every_untouched_token_keeps_its_line_and_column() {
    let src = r#"-- a header comment: NotifyMessage("Not.Me")
local s = "héllo"; NotifyObjectMessage(self, "Player.Hurt", 1)
NotifyObjectMessage(
    self,   -- the source
    "Player.Hurt" --[[ the key,
    spanning lines ]],
    { amount = 2, "x" }
)
ListenObjectMessage(self,
  "Player.Hurt", self, function(dmg)
    NotifyMessage([[Ui.Flash]], dmg) end)
RemoveStoredObjectMessage(self,
  "Inv.Items"
)
NotifyMessage ( "Game.Over" )
local t = { RunHook("Hook.A", { v = 1 }), n = GMP.RunHook('Hook.B', 2) }
"#;
    let r = rewrite(src);
    assert_eq!(r.bakes.len(), 8);
    assert_layout_preserved(src, &r);
}

#[test]
fn strings_and_comments_are_untouched() {
    let src =
        "local s = 'NotifyMessage(\"A\")' -- NotifyMessage('B')\n--[==[ NotifyMessage('C') ]==]\n";
    let r = rewrite(src);
    assert!(!r.is_rewritten());
    assert_eq!(r.source, src);
    let src = "NotifyMessage('A', \"NotifyMessage('B')\") -- NotifyMessage('C')\n";
    let r = rewrite(src);
    assert_eq!(r.bakes.len(), 1);
    assert!(
        r.source
            .ends_with("\"NotifyMessage('B')\") -- NotifyMessage('C')\n")
    );
}

#[test]
fn shadowed_and_method_calls_are_untouched() {
    let src = r#"local function f(NotifyMessage) NotifyMessage("In.Param") end
obj:NotifyObjectMessage(self, "Method")
t.NotifyMessage("Field")
NotifyMessage("Global")
local NotifyMessage = print
NotifyMessage("Shadowed")
"#;
    let r = rewrite(src);
    assert_eq!(
        slots_of(&r),
        vec![(1, ApiFunction::NotifyMessage, "Global")]
    );
    for untouched in [
        r#"NotifyMessage("In.Param")"#,
        r#"obj:NotifyObjectMessage(self, "Method")"#,
        r#"t.NotifyMessage("Field")"#,
        r#"NotifyMessage("Shadowed")"#,
    ] {
        assert!(
            r.source.contains(untouched),
            "{untouched} was changed:\n{}",
            r.source
        );
    }
    assert_layout_preserved(src, &r);
}

#[test]
fn distinct_function_key_pairs_get_distinct_slots_and_equal_pairs_share_one() {
    let src = r#"NotifyMessage("A.B")
NotifyMessage("A_B")
NotifyMessage("A.B")
RunHook("A.B", 1)
GMP.NotifyMessage("A.B")
"#;
    let r = rewrite(src);
    assert_eq!(
        slots_of(&r),
        vec![
            (1, ApiFunction::NotifyMessage, "A.B"),
            (2, ApiFunction::NotifyMessage, "A_B"),
            (3, ApiFunction::RunHook, "A.B"),
        ]
    );
    let slots: Vec<usize> = r.bakes.iter().map(|b| b.slot).collect();
    assert_eq!(slots, vec![1, 2, 1, 3, 1]);
    assert_layout_preserved(src, &r);
}

#[test]
fn invalid_and_non_literal_keys_stay_on_the_generic_path() {
    let src = r#"NotifyMessage("Bad Key")
NotifyMessage("")
NotifyMessage("a..b")
NotifyMessage(key)
NotifyMessage(("Paren.Key"))
NotifyMessage("Con" .. "cat")
NotifyMessage(42)
"#;
    let r = rewrite(src);
    assert!(!r.is_rewritten());
    assert_eq!(r.source, src);
}

#[test]
fn parse_error_leaves_the_source_unchanged() {
    let src = "NotifyMessage('A')\nlocal = 1\n";
    let r = rewrite(src);
    assert_eq!(
        r,
        Rewrite {
            source: src.to_owned(),
            bakes: vec![]
        }
    );
    let src = "NotifyMessage('A'";
    assert_eq!(rewrite(src).source, src);
}

/// `#expr` is no statement: Lua refuses the chunk. tree-sitter took the
/// `#` line after a space for a shebang line, so the rewriter used to bake
/// the call on the next line (and moved the `#` off the first line).
#[test]
fn a_length_operator_statement_is_a_syntax_error_and_nothing_is_rewritten() {
    let src = " #NotifyMessage(\"Game.Tick\", 1, 2.5)\nNotifyMessage(\"Game.Tick\", 1, 2.5)\n";
    let r = rewrite(src);
    assert_eq!(r.source, src);
    assert!(r.bakes.is_empty());
    // After a comment too; only a first line starting with `#` is skipped.
    let src = "-- mod\n#!lua\nNotifyMessage('A', 1)\n";
    assert_eq!(rewrite(src).source, src);
}

/// Each source tree-sitter parses without an error node but Lua refuses
/// (one per kind of refusal) keeps its calls as written.
#[test]
fn sources_lua_refuses_are_left_unchanged_though_tree_sitter_parses_them() {
    for refused in [
        "local nil",
        "x = 1\u{a0}y = 2",
        "local x<const>=1",
        "-- --[==[ a\nx = 1 ]==] y = 2",
        "x = 'a\nb'",
        "x = 3y = 2",
        "global x = 1",
        "local x <foo> = 1",
        "local a <const> = 1 a = 2",
        "function f() return ... end",
        "while true do end break",
        "goto continue",
        "::a:: ::a::",
        "goto a local x ::a:: print(x)",
    ] {
        let src = format!("NotifyMessage('A', 1)\n{refused}\nNotifyMessage('B', 2)\n");
        assert!(!parse(&src, None).unwrap().root_node().has_error(), "{src}");
        let r = rewrite(&src);
        assert_eq!(r.source, src);
        assert!(r.bakes.is_empty(), "{src}");
    }
}

/// The prologue's locals take registers under the main chunk's own: a
/// chunk whose top level has a statement with many parts, or many locals,
/// gets fewer of them (or none), and loads after the rewrite as before.
#[cfg(feature = "runtime")]
#[test]
fn a_chunk_lua_loads_still_loads_after_the_rewrite_however_wide_its_statements() {
    let lua = mlua::Lua::new();
    let loads = |source: &str| lua.load(source).set_name("=chunk").into_function().is_ok();
    let calls: String = (0..150)
        .map(|i| format!("NotifyMessage('K.N{i}', 1)\n"))
        .collect();
    let mut checked = 0;
    for width in [10, 100, 110, 150, 200, 230, 245, 250, 253] {
        let concat = format!("x = {}\n", vec!["y"; width].join(".."));
        let args: Vec<String> = (0..width).map(|i| i.to_string()).collect();
        let call = format!("print({})\n", args.join(","));
        let locals: String = (0..width.min(200))
            .map(|i| format!("local v{i}\n"))
            .collect();
        for wide in [concat, call, locals] {
            let src = format!("{calls}{wide}");
            if !loads(&src) {
                continue;
            }
            let r = rewrite(&src);
            assert!(
                loads(&r.source),
                "width {width}: {}",
                &wide[..40.min(wide.len())]
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked}");
    // A narrow chunk keeps every slot a local.
    let r = rewrite(&format!("{calls}x = a..b\n"));
    assert!(r.source.lines().next().unwrap().contains(",__ga150="));
}

#[test]
fn shebang_line_is_replaced_by_the_prologue() {
    let src = "#!/usr/bin/env lua\nNotifyMessage('A', 1)\n";
    let r = rewrite(src);
    let spaces = " ".repeat(13);
    assert_eq!(
        r.source,
        format!("local __ga=...;local __ga1=__ga[1];\n__ga1({spaces}1)\n")
    );
}

#[test]
fn const_and_close_attributes_still_rewrite() {
    let src = "local k <const> = 1\ndo local c <close> = nil; NotifyMessage('A', k) end\n";
    let r = rewrite(src);
    assert_eq!(r.bakes.len(), 1);
    assert_layout_preserved(src, &r);
}

#[test]
fn chunk_reading_its_varargs_is_left_unchanged() {
    let src = "local name = ...\nNotifyMessage('A')\n";
    assert!(!rewrite(src).is_rewritten());
    // `...` inside a function is that function's own.
    let src = "local f = function(...) return ... end\nNotifyMessage('A')\n";
    assert!(rewrite(src).is_rewritten());
}

#[test]
fn prefix_avoids_every_name_in_the_source() {
    let src = "local __ga1 = 5\nNotifyMessage('A', __ga1)\n";
    let r = rewrite(src);
    assert!(
        r.source.starts_with("local __gb=...;local __gb1=__gb[1];"),
        "{}",
        r.source
    );
    assert!(
        r.source
            .ends_with(&format!("__gb1({}__ga1)\n", " ".repeat(13)))
    );
}

#[test]
fn slots_beyond_the_local_budget_are_indexed_from_the_table() {
    let src: String = (1..=200)
        .map(|i| format!("NotifyMessage('K.N{i}', {i})\n"))
        .collect();
    let r = rewrite(&src);
    assert_eq!(r.slot_count(), 200);
    let first = r.source.lines().next().unwrap();
    assert!(
        first.contains(&format!(",__ga{BAKES_PROLOGUE_MAX_LOCALS}=")),
        "{first}"
    );
    assert!(!first.contains(&format!("__ga{}", BAKES_PROLOGUE_MAX_LOCALS + 1)));
    let line_151 = r.source.lines().nth(150).unwrap();
    assert_eq!(line_151, format!("__ga[151]({}151)", " ".repeat(14)));
    assert_layout_preserved(&src, &r);
}

#[test]
fn script_locals_shrink_the_local_budget() {
    let mut src: String = (0..100).map(|i| format!("local v{i} = {i}\n")).collect();
    src.extend((1..=120).map(|i| format!("NotifyMessage('K.N{i}')\n")));
    let r = rewrite(&src);
    let first = r.source.lines().next().unwrap();
    // 190 - 100 script locals = 90 slot locals.
    assert!(first.contains(",__ga90="), "{first}");
    assert!(!first.contains("__ga91"));
    assert!(r.source.contains("__ga[91]("));
}

#[test]
fn callee_that_cannot_fit_on_its_line_stays_generic() {
    let src = "GMP\n.RunHook('Hook.A')\nRunHook('Hook.B')\n";
    let r = rewrite(src);
    assert_eq!(slots_of(&r), vec![(1, ApiFunction::RunHook, "Hook.B")]);
    assert!(r.source.contains("GMP\n.RunHook('Hook.A')\n"));
}

#[test]
fn every_slot_referenced_in_the_text_is_baked() {
    let src: String = (0..400)
        .map(|i| match i % 4 {
            0 => format!("NotifyObjectMessage(self, 'K.S{}', {i})\n", i % 170),
            1 => format!("ListenMessage('K.L{}', self, function(a) end)\n", i % 50),
            2 => format!("NotifyMessage(k{i}, 1)\n"),
            _ => format!("GMP.RunHook \"K.H{}\"\n", i % 30),
        })
        .collect();
    let r = rewrite(&src);
    let n = r.slot_count();
    let slots: Vec<usize> = r.slots().map(|b| b.slot).collect();
    assert_eq!(slots, (1..=n).collect::<Vec<_>>());
    let body = &r.source[prologue_len(&src, &r)..];
    let mut referenced = Vec::new();
    for (i, _) in body.match_indices("__ga") {
        let rest = body[i + 4..].trim_start_matches('[');
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        referenced.push(
            digits
                .parse::<usize>()
                .expect("a slot number after the prefix"),
        );
    }
    assert_eq!(referenced.len(), r.bakes.len());
    assert!(referenced.iter().all(|&s| (1..=n).contains(&s)));
    assert_layout_preserved(&src, &r);
}

#[test]
fn functions_the_script_replaces_stay_on_the_generic_path() {
    let src = r#"NotifyMessage("A")
RunHook("H", 1)
GMP.UnbindMessage("U", 1)
NotifyObjectMessage(self, "O")
NotifyMessage = function(...) end
function GMP.RunHook() end
GMP["UnbindMessage"] = nil
"#;
    let r = rewrite(src);
    assert_eq!(
        slots_of(&r),
        vec![(1, ApiFunction::NotifyObjectMessage, "O")]
    );
    // A local with the same name is not a replacement of the global.
    let src = "local NotifyMessage = 1\nNotifyMessage = 2\n";
    let r = rewrite(&format!("GMP.NotifyMessage('A')\n{src}"));
    assert_eq!(r.bakes.len(), 1);
    // Replacing the environment replaces everything.
    let r = rewrite("NotifyMessage('A')\n_ENV = setmetatable({}, { __index = _ENV })\n");
    assert!(!r.is_rewritten());
}

/// The functions baked in a script calling `NotifyMessage`, `RunHook` and
/// `GMP.UnbindMessage` with literal keys, then doing `snippet` (which must
/// parse cleanly: a source with an error is never rewritten).
fn baked_with(snippet: &str) -> Vec<ApiFunction> {
    let src = format!("NotifyMessage('A')\nRunHook('H')\nGMP.UnbindMessage('U', 1)\n{snippet}\n");
    let tree = parse(&src, None).unwrap();
    assert!(!tree.root_node().has_error(), "{src}");
    rewrite(&src).slots().map(|b| b.function).collect()
}

const ALL_BAKED: [ApiFunction; 3] = [
    ApiFunction::NotifyMessage,
    ApiFunction::RunHook,
    ApiFunction::UnbindMessage,
];

#[test]
fn writes_through_g_or_a_string_key_replace_the_named_function_only() {
    for snippet in [
        "_G.NotifyMessage = f",
        "_G[\"NotifyMessage\"] = f",
        "_G['Notify\\x4dessage'] = f",
        "_ENV[ [[NotifyMessage]] ] = f",
        "_G._G.NotifyMessage = f",
        "_ENV[\"_G\"].NotifyMessage = f",
        "x, _G.NotifyMessage = 1, f",
        "function _G.NotifyMessage() end",
        "function _G:NotifyMessage() end",
        "_G.GMP.NotifyMessage = f",
        "_ENV.GMP[\"NotifyMessage\"] = f",
        "local function g() _G.NotifyMessage = f end",
    ] {
        assert_eq!(
            baked_with(snippet),
            [ApiFunction::RunHook, ApiFunction::UnbindMessage],
            "{snippet}"
        );
    }
    // A key that is no name replaces nothing.
    assert_eq!(baked_with("_G[1] = f; GMP[true] = f"), ALL_BAKED);
}

#[test]
fn a_computed_key_write_through_g_replaces_every_name_of_that_table() {
    for snippet in ["_G[k] = f", "_G._G[k .. 'x'] = f", "_ENV['_G'][k] = f"] {
        assert_eq!(baked_with(snippet), [], "{snippet}");
    }
    for snippet in ["_G.GMP[k] = f", "GMP[k] = f", "_ENV['GMP'][k] = f"] {
        assert_eq!(
            baked_with(snippet),
            [ApiFunction::NotifyMessage, ApiFunction::RunHook],
            "{snippet}"
        );
    }
}

#[test]
fn the_environment_used_as_a_value_replaces_every_name() {
    for snippet in [
        "local env = _ENV",
        "local env = _G",
        "local env <const> = _G._G",
        "local _ENV = _ENV",
        "local _G = _G",
        "rawset(_ENV, 'NotifyMessage', f)",
        "rawset(_G, k, f)",
        "setmetatable(_G, {})",
        "f(_G._G)",
        "t = { _G }",
        "t = { env = _ENV }",
        "t = { [_G] = 1 }",
        "return _G",
        "(_G).NotifyMessage = f",
        "_G:Install()",
        "local v = _G[k]",
        "_G[k](1)",
        "_ENV[k .. 'x']()",
        "if _G == t then end",
        "for _, e in ipairs({ _G }) do end",
        "local function g() local e = _G end",
        "t.x = _G",
        "_ENV = _ENV",
    ] {
        assert_eq!(baked_with(snippet), [], "{snippet}");
    }
}

#[test]
fn gmp_used_as_a_value_replaces_every_gmp_field_only() {
    for snippet in [
        "local g = GMP",
        "local GMP = GMP",
        "rawset(GMP, 'UnbindMessage', f)",
        "f(_ENV.GMP)",
        "_G.GMP:Install()",
        "t = { GMP }",
    ] {
        assert_eq!(
            baked_with(snippet),
            [ApiFunction::NotifyMessage, ApiFunction::RunHook],
            "{snippet}"
        );
    }
}

#[test]
fn reading_load_replaces_every_name() {
    for snippet in [
        "load('NotifyMessage = print')()",
        "load 'NotifyMessage = print' ()",
        "local l = load",
        "local l <const> = load",
        "pcall(load, s)",
        "_G.load(s)",
        "_ENV['load'](s)",
        "_G._G.load(s)",
        "t = { load }",
        "local function g() return load(s) end",
    ] {
        assert_eq!(baked_with(snippet), [], "{snippet}");
    }
}

#[test]
fn names_that_are_not_the_environment_gmp_or_load_keep_the_rewrite() {
    for snippet in [
        "local _G = {}\n_G.NotifyMessage = f\n_G[k] = f\nlocal e = _G",
        "local function load() end\nload()\nlocal l = load",
        "local function g(_G, load) local e = _G; load(_G) end",
        "local function g(_ENV) local e = _ENV; _ENV[k] = f end",
        "t._G = 1; t.load = 2; t.GMP = 3",
        "local x = t._G or t.load or t.GMP",
        "obj:load(); obj.load(1); obj:_G()",
        "x = { _G = 1, load = 2, GMP = 3 }",
        "_G.print('x'); local p = _G.print; local q = _ENV['print']",
        "local real = _G.NotifyMessage; local r2 = GMP.NotifyMessage",
        "local rows = GMP.AllRows; local v = GMP[k]; GMP.Spawn()",
        "_G[1] = 2; _G.x = 1; _G.GMPx = f",
        "for load = 1, 2 do end",
        "for _G, GMP in pairs(t) do end",
        "goto load\n::load::",
        "local s = 'load(_G)' -- load(_G); local e = _ENV",
        "local load2, _Gx, GMP_ = loadx, _Gy, GMPz",
        "local t <const> = 1",
    ] {
        assert_eq!(baked_with(snippet), ALL_BAKED, "{snippet}");
    }
}

/// A script exercising what a cut must carry from the first half into the
/// second: chunk-level locals hiding API names (`NotifyMessage`, `GMP`),
/// global replacements (a later `RunHook = ...` keeps earlier calls
/// generic), locals counted against the prologue's budget, nested
/// functions, long strings and comments. One block in five declares its
/// handler and value as chunk-level locals (Lua allows 200 at a time).
fn varied_script(blocks: usize) -> String {
    let mut s = String::from("NotifyMessage('Start.Before')\n");
    for i in 0..blocks {
        let local = if i % 5 == 0 { "local " } else { "" };
        s.push_str(&format!(
            r#"-- block {i}
{local}function handler_{i}(dmg, NotifyObjectMessage)
    NotifyObjectMessage(self, "Param.Shadow{i}", dmg)
    local text = [[ NotifyMessage("In.Long.String") ]]
    if dmg > {i} then
        NotifyMessage("Block.Hurt{i}", dmg) --[==[ NotifyMessage("In.Comment") ]==]
    end
    return GMP.NotifyMessage("Via.Gmp{i}", text)
end
{local}value_{i} = RunHook("Hook.Run{i}", {i})
ListenMessage("Block.Listen{i}", nil, function(x) handler_{i}(x) end)
"#
        ));
        if i == blocks / 3 {
            s.push_str("local NotifyMessage = print\n");
        }
        if i == blocks / 2 {
            s.push_str("local GMP = {}\n");
        }
    }
    s.push_str("RunHook = function() end\nNotifyMessage('End.After')\n");
    s
}

/// The rewriter may parse a large chunk as two halves at once: cut at any
/// top-level statement, the calls it finds (and so its rewrite) equal one
/// parse's.
#[test]
fn a_chunk_parsed_in_two_halves_scans_like_one_parse() {
    use super::super::scan::scan_chunk;
    use super::super::split::scan_halves;

    let src = varied_script(12);
    let whole = parse(&src, None).unwrap();
    assert!(!whole.root_node().has_error());
    let expected = scan_chunk(&whole, &src);
    let mut cursor = whole.root_node().walk();
    let mut cuts = 0;
    for statement in whole.root_node().children(&mut cursor).skip(1) {
        let at = statement.start_byte();
        let (parts, _) = scan_halves(&src, at).expect("a cut at a statement parses");
        let calls = |scan: &super::super::scan::ChunkScan| {
            scan.calls
                .iter()
                .map(|f| f.call.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(calls(&parts), calls(&expected), "cut at byte {at}");
        assert_eq!(parts.main_locals, expected.main_locals, "cut at byte {at}");
        assert_eq!(parts.reassigned, expected.reassigned, "cut at byte {at}");
        cuts += 1;
    }
    assert!(cuts > 50, "{cuts}");
}

#[test]
fn a_large_chunk_rewrites_the_same_parsed_in_two_halves() {
    let src = varied_script(400);
    assert!(src.len() >= super::super::split::SPLIT_MIN_BYTES);
    let at = super::super::split::split_point(&src).expect("a top-level local to cut at");
    assert!(super::super::split::scan_halves(&src, at).is_some());
    let split = super::rewrite_with(&src, true);
    let single = super::rewrite_with(&src, false);
    assert!(split.is_rewritten());
    assert_eq!(split, single);
    // The shadowing local in the first half keeps the second half's global
    // calls generic; `RunHook` is replaced at the end, so none of its calls
    // are baked.
    assert!(
        split
            .bakes
            .iter()
            .all(|b| b.function != ApiFunction::RunHook)
    );
    assert!(!split.bakes.iter().any(|b| b.key == "End.After"));
    assert!(split.bakes.iter().any(|b| b.key == "Start.Before"));
}

/// A cut carries chunk-level locals named `_G` and `load` into the second
/// half (where they make `_G.RunHook = nil` and `load(s)` no replacement),
/// and the halves' replacements merge into the whole chunk's.
#[test]
fn a_chunk_parsed_in_two_halves_carries_g_and_load_locals_and_merges_replacements() {
    use super::super::scan::scan_chunk;
    use super::super::split::scan_halves;

    for (src, rewritten) in [
        (
            "RunHook('H')\nlocal _G = {}\nlocal load = print\nlocal a = 1\n_G.RunHook = nil\nload('x')\nlocal e = _G\nNotifyMessage('N')\n",
            true,
        ),
        (
            "RunHook('H')\nlocal a = 1\n_G.NotifyMessage = nil\nlocal b = 1\nNotifyMessage('N')\n",
            true,
        ),
        ("RunHook('H')\nlocal a = 1\nload('x')\nlocal b = 1\n", false),
        ("RunHook('H')\nlocal a = 1\nlocal e = _ENV\n", false),
    ] {
        let whole = parse(src, None).unwrap();
        let expected = scan_chunk(&whole, src);
        let mut cursor = whole.root_node().walk();
        for statement in whole.root_node().children(&mut cursor).skip(1) {
            let at = statement.start_byte();
            let (parts, _) = scan_halves(src, at).expect("a cut at a statement parses");
            assert_eq!(parts.reassigned, expected.reassigned, "cut at {at}:\n{src}");
        }
        let r = rewrite(src);
        assert_eq!(r.is_rewritten(), rewritten, "{src}");
        if rewritten {
            assert!(r.bakes.iter().any(|b| b.function == ApiFunction::RunHook));
        }
    }
}

/// Top-level pieces for [`cut_anywhere_is_either_refused_or_exact`]: each
/// puts a `local` where a careless cut would land (inside strings, long
/// brackets, comments, blocks, tables, after a `return`), some shadow API
/// names, and one is a syntax error.
const PIECES: &[&str] = &[
    "local a = 1\n",
    "NotifyMessage('P.One', 1)\n",
    "local NotifyMessage = print\n",
    "local s = 'local x = 1' .. \"local y\"\n",
    "local l = [==[\nlocal inside = 1\n]] ]==]\n",
    "--[[\nlocal commented = 1\nNotifyMessage('In.Comment')\n]]\n",
    "-- local line\n",
    "function f()\n  local body = 1\n  NotifyMessage('P.Body', body)\nend\n",
    "if a then\n  local y = 2\nelse\n  local z = 3\nend\n",
    "t = {\n  local_ = 1, function() local w = 1 end\n}\n",
    "repeat local u = 1 until u\n",
    "for i = 1, 2 do local v = i; GMP.NotifyMessage('P.Loop', v) end\n",
    "local GMP = {}\n",
    "do return end\n",
    "x = (\nlocal broken = 1\n",
    "s2 = 'escaped \\' local q'\n",
    "local function g(NotifyObjectMessage) NotifyObjectMessage(self, 'P.Param') end\n",
    "ListenMessage('P.Listen', nil, function(n) local m = n end)\n",
    "local r <const> = 5\n",
    "local _G = {}\n",
    "_G.RunHook = nil\n",
    "local load = print\n",
    "load('x')\n",
    "local e = _ENV\n",
];

/// A cut may be tried anywhere a `local` token starts, even inside a
/// string, a comment or a block (the lexer never offers those, but the
/// parses are what confirm a cut): either the two-half scan is refused,
/// or it equals one parse's.
#[test]
fn cut_anywhere_is_either_refused_or_exact() {
    use super::super::scan::scan_chunk;
    use super::super::split::scan_halves;

    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..150 {
        let src: String = (0..4 + next(8))
            .map(|_| PIECES[next(PIECES.len())])
            .collect();
        let whole = parse(&src, None).unwrap();
        let clean = !whole.root_node().has_error();
        let expected = scan_chunk(&whole, &src);
        let calls = |scan: &super::super::scan::ChunkScan| {
            scan.calls
                .iter()
                .map(|f| f.call.clone())
                .collect::<Vec<_>>()
        };
        for (at, _) in src.match_indices("local").filter(|(at, _)| *at > 0) {
            match scan_halves(&src, at) {
                Some((parts, _)) => {
                    assert!(
                        clean,
                        "a cut of a script with an error was accepted:\n{src}"
                    );
                    assert_eq!(calls(&parts), calls(&expected), "cut at {at}:\n{src}");
                    assert_eq!(
                        parts.main_locals, expected.main_locals,
                        "cut at {at}:\n{src}"
                    );
                    assert_eq!(parts.reassigned, expected.reassigned, "cut at {at}:\n{src}");
                    accepted += 1;
                }
                None => refused += 1,
            }
        }
        assert_eq!(
            super::rewrite_with(&src, true),
            super::rewrite_with(&src, false),
            "{src}"
        );
    }
    assert!(
        accepted > 100 && refused > 100,
        "{accepted} accepted, {refused} refused"
    );
}
