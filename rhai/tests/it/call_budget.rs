//! The per-call budget in wall-clock time: a game's per-frame allowance,
//! counted from a call's first operation, that stops a looping listener
//! and lets the others run; and a site recorded per load, not per edit.

use std::time::Duration;

use gantry_host::{Language, Source};
use gantry_rhai::runtime::RhaiOptions;

use crate::support::Fixture;

/// A 2 ms call budget, the operation limit out of the way and the time
/// limit far behind: what stops a call here is the call budget.
fn two_ms() -> RhaiOptions {
    RhaiOptions {
        budget: None,
        top_level_budget: None,
        time_limit: Some(Duration::from_secs(5)),
        call_budget: Some(Duration::from_millis(2)),
        ..RhaiOptions::default()
    }
}

#[test]
fn a_looping_listener_under_a_call_budget_is_stopped_and_the_next_one_runs() {
    let f = Fixture::with(two_ms());
    f.load(
        "spin.rhai",
        "ListenMessage(\"Game.Tick\", (), || {\n    loop { }\n});\nListenMessage(\"Game.Tick\", (), || print(\"next listener\"));\n",
    );
    let tick = f.hub.key("Game.Tick").unwrap();
    for _ in 0..2 {
        f.hub.send(tick, Source::Global, ()).unwrap();
        assert_eq!(f.printed(), vec!["next listener"]);
        let errors = f.errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].starts_with("spin.rhai:1:"), "{errors:?}");
        assert!(
            errors[0].contains("time limit exceeded") && errors[0].contains("2ms"),
            "{errors:?}"
        );
    }
}

#[test]
fn a_top_level_past_its_call_budget_names_its_line() {
    let f = Fixture::with(two_ms());
    let err = f.load_err("spin.rhai", "let x = 0;\nloop { x += 1; }\n");
    assert!(err.starts_with("spin.rhai:2:"), "{err}");
    assert!(err.contains("time limit exceeded"), "{err}");
}

#[test]
fn a_call_budget_set_later_applies_to_the_next_call_and_none_lifts_it() {
    let f = Fixture::with(RhaiOptions {
        budget: None,
        time_limit: Some(Duration::from_secs(5)),
        ..RhaiOptions::default()
    });
    f.load(
        "count.rhai",
        "ListenMessage(\"Count\", (), |n| {\n    let s = 0;\n    for i in 0..n { s += 1; }\n    print(s);\n});\n",
    );
    f.rt.set_call_budget(Some(Duration::from_micros(100)));
    f.hub
        .send_str("Count", Source::Global, (1_000_000_000i64,))
        .unwrap();
    assert_eq!(f.errors().len(), 1);
    f.rt.set_call_budget(None);
    f.hub.send_str("Count", Source::Global, (1000i64,)).unwrap();
    assert!(f.errors().is_empty());
    assert_eq!(f.printed(), vec!["1000"]);
}

#[test]
fn a_reloaded_script_keeps_only_the_sites_of_its_new_text() {
    let f = crate::support::Fixture::new();
    let source = "NotifyMessage(\"Orc.Roar\", 1);\n";
    f.load("orc.rhai", source);
    f.load("orc.rhai", &format!("\n\n{source}"));
    let table = f.hub.table();
    let lines: Vec<u32> = table
        .get("Orc.Roar")
        .unwrap()
        .sites
        .iter()
        .filter(|s| s.language == Language::Rhai)
        .map(|s| s.line)
        .collect();
    assert_eq!(lines, [3]);
}

#[test]
fn a_mod_past_its_frame_budget_has_its_other_calls_skipped_and_the_spender_kept() {
    use gantry_host::reports::FrameBudget;

    let f = Fixture::with(RhaiOptions {
        budget: None,
        time_limit: Some(Duration::from_secs(5)),
        ..RhaiOptions::default()
    });
    let frame = FrameBudget::new("orcs", Duration::from_millis(3));
    f.rt.set_frame_budget(Some(frame.clone()));
    f.load(
        "spin.rhai",
        "ListenMessage(\"Game.Tick\", (), || {\n    loop { }\n});\nListenMessage(\"Game.Tick\", (), || print(\"skipped?\"));\n",
    );
    let tick = f.hub.key("Game.Tick").unwrap();
    for _ in 0..2 {
        frame.new_frame();
        f.hub.send(tick, Source::Global, ()).unwrap();
        assert!(f.printed().is_empty(), "the later listener was skipped");
        let spender = frame.spender().expect("the frame's spender");
        assert_eq!(spender.mod_name, "orcs");
        assert!(spender.time >= Duration::from_millis(3), "{spender:?}");
        let errors = f.errors();
        assert_eq!(errors.len(), 2, "{errors:?}");
        for error in &errors {
            assert!(
                error.contains("mod `orcs` spent its frame budget of 3000 µs"),
                "{errors:?}"
            );
        }
    }
    frame.new_frame();
    assert_eq!(frame.remaining(), Duration::from_millis(3));
}
