//! What a modder reads when a Lua script is wrong: tracebacks of the mod's
//! own frames with its calls named as written, a dot-for-colon call on a
//! handle, and a refused send that stops the code that sent.

use gantry_host::{Report, Source};

use crate::support::Fixture;

/// Two functions deep in a mod file, under a listener.
const TWO_DEEP: &str = "local function inner(n)\n\
                        \x20 error('bad ' .. n)\n\
                        end\n\
                        local function outer(n)\n\
                        \x20 inner(n)\n\
                        end\n";

fn go(f: &Fixture, key: &str) {
    f.hub
        .send(f.hub.key(key).unwrap(), Source::Global, ())
        .unwrap();
}

/// The message of the one failed listener of a run.
fn the_failure(f: &Fixture) -> String {
    let reports = f.hub.take_reports();
    let failed: Vec<&String> = reports
        .iter()
        .filter_map(|r| match r {
            Report::ListenerFailed { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "{reports:?}");
    failed[0].clone()
}

#[test]
fn a_listener_error_two_calls_deep_shows_only_the_mods_frames() {
    let f = Fixture::new();
    f.load(
        "mod.lua",
        &format!("{TWO_DEEP}ListenMessage('Player.Hurt', nil, function(n)\n  outer(n)\nend)\n"),
    );
    f.hub
        .send(f.hub.key("Player.Hurt").unwrap(), Source::Global, (1i64,))
        .unwrap();
    assert_eq!(
        the_failure(&f),
        "mod.lua:2: bad 1\n\
         stack traceback:\n\
         \tmod.lua:2: in upvalue 'inner'\n\
         \tmod.lua:5: in upvalue 'outer'\n\
         \tmod.lua:8: in function <mod.lua:7>"
    );
}

#[test]
fn a_baked_send_in_a_traceback_is_named_as_the_modder_wrote_it() {
    let f = Fixture::new();
    f.load(
        "mod.lua",
        &format!(
            "{TWO_DEEP}ListenMessage('Player.Hurt', nil, function(n)\n  outer(n)\nend)\n\
             ListenMessage('Go', nil, function()\n  NotifyObjectMessage(self, 'Player.Hurt', 5)\nend)\n"
        ),
    );
    go(&f, "Go");
    assert_eq!(
        the_failure(&f),
        "mod.lua:2: bad 5\n\
         stack traceback:\n\
         \tmod.lua:2: in upvalue 'inner'\n\
         \tmod.lua:5: in upvalue 'outer'\n\
         \tmod.lua:8: in function <mod.lua:7>\n\
         \t[C]: in function 'NotifyObjectMessage'\n\
         \tmod.lua:11: in function <mod.lua:10>"
    );
}

#[test]
fn a_send_the_hub_delivers_itself_shows_the_same_traceback() {
    // A listener owned by a table is called by the hub, not from Lua.
    let f = Fixture::new();
    f.load(
        "mod.lua",
        &format!(
            "{TWO_DEEP}local owner = {{}}\n\
             ListenMessage('Player.Hurt', owner, function(n)\n  outer(n)\nend)\n\
             ListenMessage('Go', nil, function()\n  NotifyObjectMessage(self, 'Player.Hurt', 5)\nend)\n"
        ),
    );
    go(&f, "Go");
    assert_eq!(
        the_failure(&f),
        "mod.lua:2: bad 5\n\
         stack traceback:\n\
         \tmod.lua:2: in upvalue 'inner'\n\
         \tmod.lua:5: in upvalue 'outer'\n\
         \tmod.lua:9: in function <mod.lua:8>\n\
         \t[C]: in function 'NotifyObjectMessage'\n\
         \tmod.lua:12: in function <mod.lua:11>"
    );
}

#[test]
fn a_library_function_calling_back_into_the_mod_stays_in_the_traceback() {
    let f = Fixture::new();
    f.load(
        "mod.lua",
        &format!(
            "{TWO_DEEP}ListenMessage('Go', nil, function()\n\
             \x20 table.sort({{2, 1}}, function(a, b) inner('in sort') end)\n\
             end)\n"
        ),
    );
    go(&f, "Go");
    assert_eq!(
        the_failure(&f),
        "mod.lua:2: bad in sort\n\
         stack traceback:\n\
         \tmod.lua:2: in upvalue 'inner'\n\
         \tmod.lua:8: in function <mod.lua:8>\n\
         \t[C]: in function 'table.sort'\n\
         \tmod.lua:8: in function <mod.lua:7>"
    );
}

#[test]
fn a_request_through_gmp_request_is_named_as_written() {
    let f = Fixture::new();
    f.load(
        "mod.lua",
        &format!(
            "{TWO_DEEP}ListenMessage('Ask', nil, function(n, rsp)\n  outer(n)\nend)\n\
             ListenMessage('Go', nil, function()\n\
             \x20 coroutine.wrap(function() GMP.Request(self, 'Ask', 3) end)()\n\
             end)\n"
        ),
    );
    go(&f, "Go");
    let failure = the_failure(&f);
    assert!(
        failure.ends_with(
            "\tmod.lua:8: in function <mod.lua:7>\n\
             \t[C]: in function 'GMP.Request'\n\
             \tmod.lua:11: in function <mod.lua:11>"
        ),
        "{failure}"
    );
}

#[test]
fn a_top_level_error_shows_the_scripts_frames_only() {
    let f = Fixture::new();
    let error =
        f.rt.load_script("top.lua", &format!("{TWO_DEEP}outer(7)\n"), f.spawn())
            .unwrap_err();
    assert_eq!(
        error.to_string(),
        "top.lua:2: bad 7\n\
         stack traceback:\n\
         \ttop.lua:2: in upvalue 'inner'\n\
         \ttop.lua:5: in local 'outer'\n\
         \ttop.lua:7: in main chunk"
    );
}

#[test]
fn a_method_called_with_a_dot_says_to_use_a_colon() {
    let f = crate::support::inventory(Default::default());
    f.load(
        "dots.lua",
        "ListenMessage('Obj', nil, function() self.World() end)\n\
         ListenMessage('World', nil, function() local w = self:World(); w.Id() end)\n\
         ListenMessage('Alive', nil, function() self.IsAlive(5) end)\n\
         ListenMessage('Writer', nil, function()\n\
         \x20 local items <close> = GMP.StoredArray(self, 'Inv.Items')\n\
         \x20 items.Add({ __struct = 'Item', name = 'x', count = 1 })\n\
         end)\n\
         ListenMessage('Ask', nil, function(rsp) rsp.Response(1) end)\n",
    );
    let first_lines = |key: &str| {
        go(&f, key);
        the_failure(&f).lines().next().unwrap().to_owned()
    };
    assert_eq!(
        first_lines("Obj"),
        "dots.lua:1: use self:World(), not self.World() (a method is called with a colon)"
    );
    assert_eq!(
        first_lines("World"),
        "dots.lua:2: use world:Id(), not world.Id() (a method is called with a colon)"
    );
    assert_eq!(
        first_lines("Alive"),
        "dots.lua:3: use self:IsAlive(), not self.IsAlive() (a method is called with a colon)"
    );
    assert_eq!(
        first_lines("Writer"),
        "dots.lua:6: use items:Add(), not items.Add() (a method is called with a colon)"
    );
    let ask = f.hub.key("Ask").unwrap();
    f.hub.request(ask, Source::Global, (), |_| {}).unwrap();
    let reports = f.hub.take_reports();
    assert!(
        reports.iter().any(|r| r.to_string().contains(
            "dots.lua:8: use rsp:Response(), not rsp.Response() (a method is called with a colon)"
        )),
        "{reports:?}"
    );
}

#[test]
fn a_method_called_with_a_colon_still_works_and_checks_its_arguments() {
    let f = crate::support::inventory(Default::default());
    f.load(
        "colons.lua",
        "print(self:IsAlive(), self:World():Id() == GMP.World():Id())\n\
         local items <close> = GMP.StoredArray(self, 'Inv.Items')\n\
         print(pcall(items.Get, items, 'first'))\n",
    );
    let printed = f.printed();
    assert_eq!(printed[0], "true\ttrue");
    assert!(
        printed[1].starts_with("false\t") && printed[1].contains("colons.lua:3: items:Get: "),
        "{printed:?}"
    );
}

#[test]
fn a_refused_send_says_the_script_stopped_at_its_line() {
    let f = Fixture::new();
    f.load(
        "send.lua",
        "NotifyMessage('Hp', 1)\n\
         ListenMessage('Go', nil, function()\n\
         \x20 print('before')\n\
         \x20 NotifyMessage('Hp', 'ten')\n\
         \x20 print('after')\n\
         end)\n",
    );
    go(&f, "Go");
    assert_eq!(f.printed(), ["before"]);
    let failure = the_failure(&f);
    assert_eq!(
        failure.lines().next().unwrap(),
        "send.lua:4: `Hp` argument 1: expected int, got string; dispatch aborted, \
         and the script stopped at this line"
    );
}

#[test]
fn a_refusal_caught_by_pcall_is_its_message_as_a_string() {
    let f = Fixture::new();
    f.load(
        "mod.lua",
        r#"
        local ok, err = pcall(NotifyMessage, "bad key!", 1)
        print(ok, type(err), err)
        print(err:find("stack traceback", 1, true))
        local key = "also bad"
        ok, err = pcall(function() ListenMessage(key, nil, function() end) end)
        print(ok, type(err), err)
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 3, "{printed:?}");
    assert!(
        printed[0].starts_with("false\tstring\tmod.lua:2: ") && printed[0].contains("bad key!"),
        "{printed:?}"
    );
    assert_eq!(printed[1], "nil");
    assert!(
        printed[2].starts_with("false\tstring\tmod.lua:6: ") && printed[2].contains("also bad"),
        "{printed:?}"
    );
}

#[test]
fn a_refusal_reaches_an_xpcall_handler_a_resume_and_a_close_as_its_message() {
    let f = Fixture::new();
    f.load(
        "mod.lua",
        r#"
        print(xpcall(NotifyMessage, function(e) return "handled: " .. e end, "bad key!", 1))
        local co = coroutine.create(function() NotifyMessage("bad key!", 1) end)
        local ok, err = coroutine.resume(co)
        print(ok, type(err), err)
        print(pcall(error, { code = 7 }))
        print(coroutine.close(co))
        "#,
    );
    let printed = f.printed();
    assert_eq!(printed.len(), 4, "{printed:?}");
    assert!(
        printed[0].starts_with("false\thandled: mod.lua:2: "),
        "{printed:?}"
    );
    assert!(
        printed[1].starts_with("false\tstring\tmod.lua:3: ") && !printed[1].contains("traceback"),
        "{printed:?}"
    );
    // A script's own error object is caught as it was raised.
    assert!(printed[2].starts_with("false\ttable: "), "{printed:?}");
    assert!(
        printed[3].starts_with("false\tmod.lua:3: ") && !printed[3].contains("traceback"),
        "{printed:?}"
    );
}
