//! Load-time rewriting changes nothing a script can see: every script runs
//! rewritten into baked calls and through the generic functions only, and
//! what each listener received (and in what order), what was printed and
//! every error with its file:line are the same — on a hand-written corpus
//! of tricky layouts, generated scripts, and scripts replacing API
//! functions out of the rewriter's sight.

use gantry_host::face::ScriptRuntime;
use gantry_host::{KeyDecl, Language, Role, Source, Type};
use gantry_lua::runtime::LuaOptions;

use crate::support::Fixture;

fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::new();
        f.rt.set_rewrite(rewrite);
        test(&f, rewrite);
    }
}

/// "The rewrite must preserve behaviour ... never turn a call into a
/// call of something [other than what Lua would call]"; and "Designers keep
/// writing the same generic NotifyObjectMessage" — a script that replaces
/// the API function through `_G` (the script's own environment) calls its
/// replacement, rewritten or not.
#[test]
fn rewrite_preserves_behaviour_when_a_script_replaces_an_api_function_through_g() {
    let failed = std::cell::RefCell::new(Vec::new());
    for (how, replace) in [
        ("_G field", "_G.NotifyMessage = mine"),
        ("_G index", "_G[\"NotifyMessage\"] = mine"),
        ("rawset", "rawset(_ENV, \"NotifyMessage\", mine)"),
        ("_ENV index", "_ENV[\"NotifyMessage\"] = mine"),
        ("plain global", "NotifyMessage = mine"),
        (
            "alias of _ENV",
            "local env = _ENV; env.NotifyMessage = mine",
        ),
        ("load", "load(\"local f = ...; NotifyMessage = f\")(mine)"),
    ] {
        both_ways(|f, rewrite| {
            let source = format!(
                r#"
                ListenMessage("Wrapped", nil, function(n) print("hub", n) end)
                local real = NotifyMessage
                local function mine(key, n)
                    print("mine", key, n)
                    real(key, n + 100)
                end
                {replace}
                NotifyMessage("Wrapped", 1)
                "#
            );
            f.load("wrap.lua", &source);
            let printed = f.printed();
            if printed != ["mine\tWrapped\t1", "hub\t101"] {
                failed
                    .borrow_mut()
                    .push(format!("{how}, rewrite {rewrite}: {printed:?}"));
            }
        });
    }
    let failed = failed.into_inner();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Literal keys written with escapes or as a call with a string argument
/// (`f"str"`) are the same key to Lua: heard the same rewritten or not, and
/// recorded under the key Lua sees.
#[test]
fn rewrite_preserves_behaviour_of_escaped_keys_and_string_call_syntax() {
    both_ways(|f, rewrite| {
        f.load(
            "esc.lua",
            r#"
            ListenMessage("Esc.Key", nil, function() print("esc") end)
            ListenMessage("Ping", nil, function() print("ping") end)
            NotifyMessage("Esc\x2eKey")
            NotifyMessage("Esc\u{2E}Key")
            NotifyMessage [[Esc.Key]]
            NotifyMessage "Ping"
            GMP.NotifyMessage"Ping"
            "#,
        );
        assert_eq!(
            f.printed(),
            ["esc", "esc", "esc", "ping", "ping"],
            "rewrite {rewrite}"
        );
        let table = f.hub.table();
        assert!(
            table
                .keys
                .keys()
                .all(|k| !k.contains('\\') && !k.contains('[')),
            "rewrite {rewrite}: {:?}",
            table.keys.keys().collect::<Vec<_>>()
        );
        let sends: Vec<u32> = table
            .get("Esc.Key")
            .unwrap()
            .sites_with_role(Role::Send)
            .filter(|s| s.file == "esc.lua")
            .map(|s| s.line)
            .collect();
        assert_eq!(sends, [4, 5, 6], "rewrite {rewrite}");
    });
}

/// "Every script send and listen records the call site's file and
/// line" — a call spread over lines is recorded at the line of the call,
/// the same with the rewrite on or off, and an error names that line too.
#[test]
fn call_site_of_a_multi_line_call_is_the_same_line_baked_or_generic() {
    both_ways(|f, rewrite| {
        f.hub
            .declare("Multi.Line", KeyDecl::event().param("n", Type::Int))
            .unwrap();
        f.load(
            "ml.lua",
            "\nNotifyMessage(\n  \"Multi.Line\",\n  1)\nListenMessage(\n  \"Multi.Line\",\n  nil,\n  function() end)\n",
        );
        let table = f.hub.table();
        let sites: Vec<(u32, Role)> = table
            .get("Multi.Line")
            .unwrap()
            .sites
            .iter()
            .filter(|s| s.file == "ml.lua" && s.language == Language::Lua)
            .map(|s| (s.line, s.role))
            .collect();
        assert_eq!(
            sites,
            [(2, Role::Send), (5, Role::Listen)],
            "rewrite {rewrite}"
        );
        drop(table);
        let err =
            f.rt.load_script(
                "bad.lua",
                "\n\nNotifyMessage(\n  \"Multi.Line\",\n  'x')\n",
                f.spawn(),
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad.lua:3:"), "rewrite {rewrite}: {err}");
    });
}

/// What a run showed: printed lines, load error and hub reports, each
/// error cut to its first line (tracebacks name the baked function).
fn trace(source: &str, rewrite: bool) -> Vec<String> {
    let f = Fixture::with(LuaOptions {
        rewrite,
        ..LuaOptions::default()
    });
    let mut out = Vec::new();
    let object = f.spawn();
    if let Err(e) = f.rt.load_script("gen.lua", source, object) {
        out.push(format!("load error: {}", first_line(&e.to_string())));
    }
    let tick = f.hub.key("Game.Tick").unwrap();
    for n in 1..=2i64 {
        let _ = f.hub.send(tick, Source::Global, (n, 0.25f64));
    }
    let lines = f.printed();
    out.extend(lines.into_iter().map(|l| format!("print: {l}")));
    for report in f.failures() {
        out.push(format!("report: {}", first_line(&report)));
    }
    for error in f.rt.take_errors() {
        out.push(format!("error: {}", first_line(&error.to_string())));
    }
    out
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_owned()
}

fn assert_same(source: &str) {
    let baked = trace(source, true);
    let generic = trace(source, false);
    assert_eq!(baked, generic, "traces differ for:\n{source}");
}

const HAND_MADE: &[&str] = &[
    // multi-line calls before an error: the error keeps its line
    "NotifyMessage(\n  'A.B',\n  1,\n  2\n)\nListenMessage('A.B', nil, function(a, b)\n  print(a, b)\nend)\nNotifyMessage('A.B',\n 3, 4)\nlocal t = nil\nprint(t.x)\n",
    // a local shadowing the API name, and strings/comments with calls
    "local s = \"NotifyMessage('X.Y', 1)\"\n-- NotifyMessage('X.Y', 2)\n--[[ NotifyMessage('X.Y', 3) ]]\nListenMessage('X.Y', nil, function(n) print('got', n) end)\ndo\n  local NotifyMessage = function(k, n) print('mine', k, n) end\n  NotifyMessage('X.Y', 4)\nend\nNotifyMessage('X.Y', 5)\nprint(s)\n",
    // GMP. calls, method calls on other tables left alone, parenthesised keys
    "local t = {NotifyMessage = function(self, k) print('method', k) end}\nt:NotifyMessage('M.N')\nListenMessage('M.N', nil, function(...) print('hub', ...) end)\nGMP.NotifyMessage('M.N', 1)\nNotifyMessage(('M.N'), 2)\nNotifyMessage('M' .. '.N', 3)\n",
    // requests, stores, hooks and unbind by id
    "ListenObjectMessage(self, 'Q.Ask', nil, function(x, rsp) rsp:Response(x * 2) end)\nSendObjectMessage(self, 'Q.Ask', 21, function(v) print('answer', v) end)\nStoreObjectMessage(self, 'S.Val', 'kept')\nListenObjectMessage(self, 'S.Val', nil, function(v) print('stored', v) end)\nListenHook('H.K', nil, function(p) p.n = p.n + 1 end)\nlocal r, p = RunHook('H.K', {__struct = 'P', n = 1})\nprint(r.ran, p.n)\nlocal id = ListenMessage('U.K', nil, function() print('never') end)\nUnbindMessage('U.K', id)\nNotifyMessage('U.K')\n",
    // errors raised by the API itself keep the caller's line
    "ListenMessage('E.K', nil, function() end)\n\nNotifyMessage('E.K', {a = 1})\n",
    "NotifyMessage('bad key!', 1)\n",
    "ListenMessage('Game.Tick', nil, function(n, dt)\n  if n == 2 then\n    error('tick two')\n  end\n  print('tick', n, dt)\nend)\n",
    // a syntax error: Lua's own message, same either way
    "NotifyMessage('A.B', 1\nprint('x')\n",
];

#[test]
fn differential_hand_made_corpus_gives_identical_traces() {
    for source in HAND_MADE {
        assert_same(source);
    }
}

/// A tiny seeded generator of scripts over the API.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    fn value(&mut self) -> String {
        match self.below(5) {
            0 => self.below(100).to_string(),
            1 => format!("{}.5", self.below(10)),
            2 => format!("\"s{}\"", self.below(5)),
            3 => "true".to_owned(),
            _ => "n".to_owned(),
        }
    }

    fn key(&mut self) -> &'static str {
        self.pick(&["A", "A.B", "A.B.C", "Game.Tick.Echo", "Z"])
    }

    fn statement(&mut self, depth: usize) -> String {
        let key = self.key();
        match self.below(16) {
            0 | 1 => {
                let opts = match self.below(4) {
                    0 => ", {times = 1}".to_owned(),
                    1 => format!(", {{order = {}}}", self.below(3) as i64 - 1),
                    2 => ", {match = \"partial\"}".to_owned(),
                    _ => String::new(),
                };
                let body = if depth < 2 && self.below(3) == 0 {
                    self.statement(depth + 1)
                } else {
                    format!("print('{key}', ...)")
                };
                format!("ListenMessage(\"{key}\", nil, function(...)\n  {body}\nend{opts})")
            }
            2 => format!(
                "ListenObjectMessage(self, \"{key}\", nil, function(a) print('obj {key}', a) end)"
            ),
            3 | 4 => format!(
                "NotifyMessage(\"{key}\", {}, {})",
                self.value(),
                self.value()
            ),
            5 => format!(
                "NotifyObjectMessage(self,\n  \"{key}\",\n  {})",
                self.value()
            ),
            6 => format!("local k = \"{key}\"\nNotifyMessage(k, {})", self.value()),
            7 => format!("GMP.NotifyMessage(\"{key}\")"),
            8 => format!("StoreObjectMessage(self, \"{key}\", {})", self.value()),
            9 => "local t = nil\nif n > 50 then print(t.boom) end".to_owned(),
            10 => format!("-- NotifyMessage(\"{key}\", 1)\nprint(\"NotifyMessage('{key}')\")"),
            // A listener that fails on some sends.
            12 => format!(
                "ListenMessage(\"{key}\", nil, function(a, ...)\n  if a == {} then error('boom ' .. tostring(a)) end\n  print('{key} ok', a, ...)\nend)",
                self.value()
            ),
            // A listener that removes itself during a send.
            13 => format!(
                "local id\nid = ListenMessage(\"{key}\", nil, function(...)\n  print('{key} self-removing', ...)\n  UnbindMessage(\"{key}\", id)\nend)"
            ),
            // Sends from inside the host's tick (sends of a call the host made).
            14 => format!(
                "ListenMessage(\"Game.Tick\", nil, function(t, dt)\n  NotifyMessage(\"{key}\", t, {})\nend)",
                self.value()
            ),
            _ => format!("UnbindMessage(\"{key}\", self)"),
        }
    }

    fn script(&mut self) -> String {
        let mut out = format!("local n = {}\n", self.below(100));
        for _ in 0..(3 + self.below(10)) {
            out.push_str(&self.statement(0));
            out.push('\n');
        }
        out
    }
}

#[test]
fn differential_generated_scripts_give_identical_traces() {
    let mut generator = Gen(0x9E37_79B9_7F4A_7C15);
    for _ in 0..300 {
        let script = generator.script();
        assert_same(&script);
    }
}

#[test]
fn error_line_numbers_survive_multi_line_calls_before_them() {
    let source = "NotifyMessage(\n  'A.B',\n  1)\nNotifyObjectMessage(self,\n  'A.C',\n\n  2)\nlocal x = nil\nreturn x.y\n";
    for rewrite in [true, false] {
        let t = trace(source, rewrite);
        assert!(t[0].starts_with("load error: gen.lua:9:"), "{t:?}");
    }
}

/// Ways a script may replace an API function (or all of them) that the
/// rewriter cannot follow by name: through `_G` (the environment itself),
/// an alias of the environment or `GMP`, `rawset`, `load`, a computed key.
const REPLACEMENTS: &[&str] = &[
    "_G.NotifyMessage = mine",
    "_G[\"NotifyMessage\"] = mine",
    "_G._G.NotifyMessage = mine",
    "function _G.NotifyMessage(k, n) mine(k, n) end",
    "rawset(_ENV, \"NotifyMessage\", mine)",
    "rawset(_G, 'NotifyMessage', mine)",
    "local set = rawset; set(_ENV, 'NotifyMessage', mine)",
    "local env = _ENV; env.NotifyMessage = mine",
    "local env = _G; env[\"NotifyMessage\"] = mine",
    "local t = { env = _G }; t.env.NotifyMessage = mine",
    ";(function(e) e.NotifyMessage = mine end)(_ENV)",
    "function _G.Install(e) e.NotifyMessage = mine end; _G:Install()",
    "local k = 'Notify' .. 'Message'; _G[k] = mine",
    "load(\"local f = ...; NotifyMessage = f\")(mine)",
    "local l = load; l('GMP.NotifyMessage = ...')(mine)",
    "_G['lo' .. 'ad']('NotifyMessage = ...')(mine)",
    "pcall(load('local f = ...; NotifyMessage = f'), mine)",
    "local g = GMP; g.NotifyMessage = mine",
    "_G.GMP.NotifyMessage = mine",
    "rawset(GMP, 'NotifyMessage', mine)",
    "coroutine.wrap(function() _G.NotifyMessage = mine end)()",
];

/// Each replacement takes effect, and the script behaves the same
/// rewritten or not: calls before it, after it, and from a listener run
/// later.
#[test]
fn differential_scripts_replacing_api_functions_out_of_the_rewriters_sight_give_identical_traces() {
    for replace in REPLACEMENTS {
        let source = format!(
            "ListenMessage('W.K', nil, function(n) print('hub', n) end)\n\
             local real = NotifyMessage\n\
             local function mine(key, n) print('mine', key, n) real(key, n + 100) end\n\
             NotifyMessage('W.K', 1)\n\
             ListenMessage('Game.Tick', nil, function(t) NotifyMessage('W.K', t * 10) end)\n\
             {replace}\n\
             NotifyMessage('W.K', 2)\n\
             GMP.NotifyMessage('W.K', 3)\n"
        );
        assert_same(&source);
        let t = trace(&source, true);
        assert!(
            t.iter().any(|line| line.starts_with("print: mine")),
            "the replacement did not take effect: {replace}\n{t:#?}"
        );
        assert!(
            !t.iter().any(|line| line.contains("error")),
            "{replace}\n{t:#?}"
        );
    }
}
