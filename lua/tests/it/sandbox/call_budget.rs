//! The per-call budget in wall-clock time: a game's per-frame allowance,
//! counted from a call's first instruction, that stops a looping listener
//! at its line and lets the others run.

use std::time::Duration;

use gantry_host::Source;
use gantry_lua::runtime::LuaOptions;

use crate::support::Fixture;

/// A 2 ms call budget, the instruction budget out of the way and the time
/// limit far behind: what stops a call here is the call budget.
fn two_ms() -> LuaOptions {
    LuaOptions {
        budget: None,
        time_limit: Some(Duration::from_secs(5)),
        call_budget: Some(Duration::from_millis(2)),
        ..LuaOptions::default()
    }
}

#[test]
fn a_looping_listener_under_a_call_budget_is_stopped_at_its_line_and_the_next_one_runs() {
    let f = Fixture::with(two_ms());
    f.load(
        "loop.lua",
        "ListenMessage('Game.Tick', nil, function()\n\
           local n = 0\n\
           while true do n = n + 1 end\n\
         end)\n\
         ListenMessage('Game.Tick', nil, function() print('next listener') end)\n",
    );
    let tick = f.hub.key("Game.Tick").unwrap();
    f.hub.send(tick, Source::Global, ()).unwrap();
    let failures = f.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("loop.lua:3: call budget of 2000 µs exceeded"),
        "{failures:?}"
    );
    assert_eq!(f.printed(), vec!["next listener"]);
    // The next tick starts with a whole budget: stopped again, the same way.
    f.hub.send(tick, Source::Global, ()).unwrap();
    assert_eq!(f.failures().len(), 1);
    assert_eq!(f.printed(), vec!["next listener"]);
}

#[test]
fn a_pcall_loop_cannot_swallow_the_call_budget() {
    let f = Fixture::with(two_ms());
    let err =
        f.rt.load_script(
            "swallow.lua",
            "while true do pcall(function() while true do end end) end",
            f.spawn(),
        )
        .expect_err("the top level was stopped")
        .to_string();
    assert!(err.contains("call budget of 2000 µs exceeded"), "{err}");
}

#[test]
fn calls_within_their_budget_run_as_without_one() {
    let f = Fixture::with(two_ms());
    f.load(
        "sum.lua",
        "ListenMessage('Add', nil, function(n)\n\
           local s = 0\n\
           for i = 1, n do s = s + i end\n\
           print(s)\n\
         end)\n",
    );
    for _ in 0..50 {
        f.hub.send_str("Add", Source::Global, (100i64,)).unwrap();
    }
    assert!(f.failures().is_empty());
    assert_eq!(f.printed().len(), 50);
}

#[test]
fn a_call_budget_set_later_applies_to_the_next_call_and_none_lifts_it() {
    let f = Fixture::with(LuaOptions {
        budget: None,
        time_limit: Some(Duration::from_secs(5)),
        ..LuaOptions::default()
    });
    f.load(
        "spin.lua",
        "ListenMessage('Spin', nil, function(n)\n\
           local s = 0\n\
           for i = 1, n do s = s + 1 end\n\
           print(s)\n\
         end)\n",
    );
    f.rt.set_call_budget(Some(Duration::from_micros(100)));
    f.hub
        .send_str("Spin", Source::Global, (1_000_000_000i64,))
        .unwrap();
    let failures = f.failures();
    assert!(
        failures.len() == 1 && failures[0].contains("spin.lua:3: call budget of 100 µs"),
        "{failures:?}"
    );
    f.rt.set_call_budget(None);
    f.hub.send_str("Spin", Source::Global, (1000i64,)).unwrap();
    assert!(f.failures().is_empty());
    assert_eq!(f.printed(), vec!["1000"]);
}

/// A mod allowed 3 ms a frame: a looping listener spends it, the mod's
/// other listeners that frame are skipped, and the stream says who spent
/// it once per frame.
#[test]
fn a_mod_past_its_frame_budget_has_its_other_calls_skipped_and_the_spender_reported() {
    use gantry_host::reports::{FrameBudget, ItemKind, ReportStream};

    let f = Fixture::with(LuaOptions {
        budget: None,
        time_limit: Some(Duration::from_secs(5)),
        ..LuaOptions::default()
    });
    let frame = FrameBudget::new("goblins", Duration::from_millis(3));
    f.rt.set_frame_budget(Some(frame.clone()));
    let stream = ReportStream::new();
    frame.report_to(&stream);
    f.load(
        "loop.lua",
        "ListenMessage('Game.Tick', nil, function()\n\
           while true do end\n\
         end)\n\
         ListenMessage('Game.Tick', nil, function() print('skipped?') end)\n",
    );
    let tick = f.hub.key("Game.Tick").unwrap();
    for _ in 0..2 {
        frame.new_frame();
        stream.end_frame();
        f.hub.send(tick, Source::Global, ()).unwrap();
        assert!(f.printed().is_empty(), "the later listener was skipped");
        let spender = frame.spender().expect("the frame's spender");
        assert_eq!(spender.mod_name, "goblins");
        assert_eq!(spender.place.as_deref(), Some("loop.lua:2"));
        assert!(spender.time >= Duration::from_millis(3), "{spender:?}");
        let failures = f.failures();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(
            failures[0].starts_with(
                "loop.lua:2: mod `goblins` spent its frame budget of 3000 µs at loop.lua:2"
            ),
            "{failures:?}"
        );
        assert!(
            failures[1].starts_with("loop.lua:4: mod `goblins` spent"),
            "{failures:?}"
        );
    }
    let items = stream.drain();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].kind, ItemKind::FrameBudgetSpent);
    assert_eq!(items[0].count, 2);
    // A new frame has the whole budget again.
    frame.new_frame();
    assert!(!frame.is_spent());
    assert_eq!(frame.remaining(), Duration::from_millis(3));
}
