//! A recording holds every dispatch of the run, in order, whoever
//! delivers it: the hub, or the Lua lane delivering a script's sends
//! itself (which a recording keeps on). What it writes is the same as
//! when every send goes through the hub, and it is whole once the run
//! ends, however many buffers its writer thread wrote.

use std::cell::Cell;
use std::path::Path;
use std::rc::Rc;

use gantry_host::{Source, TraceEvent};
use gantry_loader::record::{Line, Recorder, Recording};
use gantry_loader::{Game, Options, TableChoice};

/// Lane sends (`Hit`, `Echo`) interleaved with sends the hub takes (a
/// table to `Bag`, a Rhai listener's `Told`) and nested ones (`Echo` from
/// `Hit`'s listener).
const LUA: &str = r#"
ListenMessage("Hit", nil, function(i, x, s, b)
  if i % 3 == 0 then NotifyMessage("Echo", i) end
end)
ListenMessage("Echo", nil, function(i) end)
ListenMessage("Bag", nil, function(t) end)
ListenMessage("Run", nil, function(n)
  for i = 1, n do
    NotifyMessage("Hit", i, 1.5, "s" .. i, i % 2 == 0)
    if i % 5 == 0 then NotifyMessage("Bag", {i, i + 1}) end
  end
end)
"#;

const RHAI: &str = r#"
ListenMessage("Echo", (), |i| {
    if i == 6 {
        NotifyMessage("Told", "six");
    }
});
"#;

fn open(dir: &Path, lua: &str) -> Game {
    std::fs::write(dir.join("main.lua"), lua).unwrap();
    std::fs::write(dir.join("told.rhai"), RHAI).unwrap();
    let options = Options {
        table: TableChoice::Off,
        // Tens of thousands of sends in one call of a debug build on a
        // loaded machine: the recording is under test, not the time limit.
        lua: gantry_lua::runtime::LuaOptions {
            time_limit: Some(std::time::Duration::from_secs(120)),
            ..Default::default()
        },
        ..Options::default()
    };
    Game::open(dir, options).expect("the mod opens")
}

/// Records a run of `game` in which the host sends `Run(n)` on tick 1;
/// `finish`: the run ends cleanly (else the recorder is dropped).
fn record(game: &mut Game, file: &Path, n: i64, finish: bool) -> String {
    let tick = Rc::new(Cell::new(0u32));
    let recorder = Recorder::create(file, game, tick.clone()).expect("a recording");
    game.load();
    assert!(!game.failed(), "the scripts load");
    recorder.loaded();
    tick.set(1);
    let run = game.hub().key("Run").unwrap();
    game.hub().send(run, Source::Global, (n,)).unwrap();
    let reports = game.hub().take_reports();
    assert!(reports.is_empty(), "the scripts ran: {reports:?}");
    if finish {
        recorder.finish().expect("the recording is written");
    } else {
        drop(recorder);
    }
    std::fs::read_to_string(file).unwrap()
}

/// The lines a run of `Run(n)` records after its header.
fn expected(n: i64) -> Vec<String> {
    let mut lines =
        vec![r#"{"t":1,"in":"Run","src":"global","args":[20]}"#.replace("20", &n.to_string())];
    for i in 1..=n {
        lines.push(format!(
            r#"{{"t":1,"out":"Hit","src":"global","args":[{i},1.5,"s{i}",{}]}}"#,
            i % 2 == 0
        ));
        if i % 3 == 0 {
            lines.push(format!(
                r#"{{"t":1,"out":"Echo","src":"global","args":[{i}]}}"#
            ));
            if i == 6 {
                lines.push(r#"{"t":1,"out":"Told","src":"global","args":["six"]}"#.into());
            }
        }
        if i % 5 == 0 {
            lines.push(format!(
                r#"{{"t":1,"out":"Bag","src":"global","args":[[{i},{}]]}}"#,
                i + 1
            ));
        }
    }
    lines
}

#[test]
fn a_recording_made_while_the_lua_lane_takes_the_sends_holds_every_send_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut game = open(dir.path(), LUA);
    let file = dir.path().join("play.gantry-rec");
    let text = record(&mut game, &file, 20, true);
    let hit = game.hub().key("Hit").unwrap();
    assert!(
        game.hub().lane_snapshot(hit, Source::Global).is_ok(),
        "the lane was open to the sends while recording"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(r#"{"gantry_recording":1,"#),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1..lines.len() - 1], expected(20));
    assert_eq!(lines[lines.len() - 1], r#"{"end":true,"ticks":1}"#);
}

#[test]
fn a_recording_with_the_lua_lane_on_is_the_recording_made_through_the_hub() {
    let lane = tempfile::tempdir().unwrap();
    let mut game = open(lane.path(), LUA);
    let with_lane = record(&mut game, &lane.path().join("a.rec"), 40, true);
    // A tracer keeps every send on the hub's way.
    let hub = tempfile::tempdir().unwrap();
    let mut game = open(hub.path(), LUA);
    game.set_tracer(Some(Rc::new(|_: &TraceEvent<'_>| {})));
    let through_hub = record(&mut game, &hub.path().join("a.rec"), 40, true);
    // Past the header (which names the mod by its folder).
    let dispatches = |text: &str| text.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(dispatches(&with_lane), dispatches(&through_hub));
}

#[test]
fn a_recording_of_many_sends_is_complete_once_the_run_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut game = open(dir.path(), LUA);
    let file = dir.path().join("many.gantry-rec");
    // Some 3 MB of lines: many buffers for the writer thread.
    let n = 30_000;
    let text = record(&mut game, &file, n, true);
    let recording = Recording::read(&file).unwrap();
    assert!(recording.complete, "the end line is written");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1..lines.len() - 1], expected(n));
    let hits = recording
        .lines
        .iter()
        .filter(|l| matches!(l, Line::Output(d) if d.key == "Hit"))
        .count();
    assert_eq!(hits, n as usize);
}

#[test]
fn a_recorder_dropped_before_the_end_leaves_every_dispatch_without_the_end_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut game = open(dir.path(), LUA);
    let file = dir.path().join("cut.gantry-rec");
    let text = record(&mut game, &file, 50, false);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1..], expected(50));
    let recording = Recording::read(&file).unwrap();
    assert!(!recording.complete, "no end line: the run did not end");
}

/// Lane sends from an object and from a world, nested in the host's `Run`.
const SOURCED: &str = r#"
local o = GMP.Spawn()
local w = GMP.World()
ListenObjectMessage(o, "Poke", nil, function(i, s) end)
ListenWorldMessage(w, "Ring", nil, function(b) end)
ListenMessage("Run", nil, function(n)
  for i = 1, n do
    NotifyObjectMessage(o, "Poke", i, "p" .. i)
    NotifyWorldMessage(w, "Ring", i % 2 == 0)
  end
end)
"#;

#[test]
fn a_lane_sending_from_an_object_or_a_world_is_recorded_as_the_hub_records_it() {
    let lane = tempfile::tempdir().unwrap();
    let mut game = open(lane.path(), SOURCED);
    let with_lane = record(&mut game, &lane.path().join("a.rec"), 30, true);
    let hub = tempfile::tempdir().unwrap();
    let mut game = open(hub.path(), SOURCED);
    game.set_tracer(Some(Rc::new(|_: &TraceEvent<'_>| {})));
    let through_hub = record(&mut game, &hub.path().join("a.rec"), 30, true);
    let dispatches = |text: &str| text.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    let lines = dispatches(&with_lane);
    assert_eq!(lines, dispatches(&through_hub));
    let pokes: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains(r#""out":"Poke""#))
        .collect();
    assert_eq!(pokes.len(), 30, "{lines:?}");
    assert!(pokes[0].contains(r#""src":"object#"#), "{}", pokes[0]);
    assert!(pokes[0].ends_with(r#""args":[1,"p1"]}"#), "{}", pokes[0]);
    let rings = lines.iter().filter(|l| l.contains(r#""out":"Ring""#));
    assert_eq!(rings.count(), 30, "{lines:?}");
}

/// Lane sends (`Hit`) around a send to a Rust listener that moves the
/// host's tick (`Tock`), all nested in the host's `Run`; `Big` sends a
/// string of `n` bytes.
const TICKING: &str = r#"
ListenMessage("Hit", nil, function(i, x, s, b) end)
ListenMessage("Big", nil, function(i, s) end)
ListenMessage("Run", nil, function(n)
  for i = 1, n do
    NotifyMessage("Hit", i, 1.5, "s", true)
    NotifyMessage("Hit", i, 2.5, "t", false)
    NotifyMessage("Tock", i)
  end
end)
ListenMessage("Huge", nil, function(n)
  local big = string.rep("x", n)
  NotifyMessage("Big", 1, big)
  NotifyMessage("Big", 2, "small")
  NotifyMessage("Big", 3, big)
end)
"#;

/// Opens `TICKING` with the recorder on `tick`, whose `Tock` listener
/// moves the tick on; sends `key(n)` on tick 1 and returns the lines
/// after the header.
fn record_ticking(dir: &Path, key: &str, n: i64, stop_at: Option<i64>) -> Vec<String> {
    let mut game = open(dir, TICKING);
    let file = dir.join("ticking.gantry-rec");
    let tick = Rc::new(Cell::new(0u32));
    let recorder = Rc::new(Recorder::create(&file, &game, tick.clone()).expect("a recording"));
    game.load();
    assert!(!game.failed(), "the scripts load");
    recorder.loaded();
    let (moved, stopper) = (tick.clone(), recorder.clone());
    let _tock = game
        .hub()
        .listen("Tock", Source::Global, move |i: i64| {
            moved.set(moved.get() + 1);
            if Some(i) == stop_at {
                stopper.finish().expect("the recording is written");
            }
        })
        .unwrap();
    tick.set(1);
    let run = game.hub().key(key).unwrap();
    game.hub().send(run, Source::Global, (n,)).unwrap();
    assert!(game.hub().take_reports().is_empty(), "the scripts ran");
    let hit = game.hub().key("Hit").unwrap();
    assert!(
        game.hub().lane_snapshot(hit, Source::Global).is_ok(),
        "the lane was open to the sends"
    );
    recorder.finish().expect("the recording is written");
    let text = std::fs::read_to_string(&file).unwrap();
    text.lines().skip(1).map(str::to_owned).collect()
}

/// What `Run(n)` of `TICKING` records: each round at the tick it began
/// in, `Tock` moving it on.
fn ticking(n: i64) -> Vec<String> {
    let mut lines = vec![format!(
        r#"{{"t":1,"in":"Run","src":"global","args":[{n}]}}"#
    )];
    for i in 1..=n {
        lines.push(format!(
            r#"{{"t":{i},"out":"Hit","src":"global","args":[{i},1.5,"s",true]}}"#
        ));
        lines.push(format!(
            r#"{{"t":{i},"out":"Hit","src":"global","args":[{i},2.5,"t",false]}}"#
        ));
        lines.push(format!(
            r#"{{"t":{i},"out":"Tock","src":"global","args":[{i}]}}"#
        ));
    }
    lines
}

#[test]
fn a_tick_that_moves_between_lane_sends_records_each_send_at_its_own_tick() {
    let dir = tempfile::tempdir().unwrap();
    let lines = record_ticking(dir.path(), "Run", 5, None);
    let mut expected = ticking(5);
    expected.push(r#"{"end":true,"ticks":6}"#.into());
    assert_eq!(lines, expected);
}

#[test]
fn a_recording_finished_while_the_mods_send_ends_whole_after_the_last_send_it_took() {
    let dir = tempfile::tempdir().unwrap();
    let lines = record_ticking(dir.path(), "Run", 6, Some(3));
    // Finished in `Tock(3)`'s listener, after it moved the tick to 4.
    let mut expected = ticking(3);
    expected[0] = r#"{"t":1,"in":"Run","src":"global","args":[6]}"#.into();
    expected.push(r#"{"end":true,"ticks":4}"#.into());
    assert_eq!(lines, expected);
    let recording = Recording::read(&dir.path().join("ticking.gantry-rec")).unwrap();
    assert!(recording.complete);
    assert_eq!(recording.lines.len(), 10);
}

#[test]
fn a_string_larger_than_the_recorders_buffer_is_recorded_whole_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1 << 20;
    let lines = record_ticking(dir.path(), "Huge", n, None);
    let big = "x".repeat(n as usize);
    let expected = [
        format!(r#"{{"t":1,"in":"Huge","src":"global","args":[{n}]}}"#),
        format!(r#"{{"t":1,"out":"Big","src":"global","args":[1,"{big}"]}}"#),
        r#"{"t":1,"out":"Big","src":"global","args":[2,"small"]}"#.to_owned(),
        format!(r#"{{"t":1,"out":"Big","src":"global","args":[3,"{big}"]}}"#),
        r#"{"end":true,"ticks":1}"#.to_owned(),
    ];
    assert_eq!(lines.len(), expected.len());
    for (got, want) in lines.iter().zip(&expected) {
        assert!(got == want, "{:.80} is not {:.80}", got, want);
    }
}
