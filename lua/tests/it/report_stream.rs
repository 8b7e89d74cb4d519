//! One report stream for a game: the hub's reports and the Lua runtime's
//! errors as one kind of item, each fault once per frame and each text
//! once per run with its count.

use gantry_host::Source;
use gantry_host::face::ScriptRuntime;
use gantry_host::reports::{ItemKind, ReportStream};

use crate::support::Fixture;

#[test]
fn a_listener_failing_every_tick_and_a_failing_top_level_are_two_items_with_counts() {
    let f = Fixture::new();
    let stream = ReportStream::new();
    stream.collect_from(&f.hub);
    f.rt.on_error(stream.error_sink());
    f.load(
        "goblin.lua",
        "ListenMessage('Game.Tick', nil, function(n)\n\
           local t = nil\n\
           return t.x\n\
         end)\n",
    );
    let tick = f.hub.key("Game.Tick").unwrap();
    for n in 0..4i64 {
        f.hub.send(tick, Source::Global, (n,)).unwrap();
        stream.end_frame();
    }
    let err =
        f.rt.load_script("broken.lua", "local x = nil\nx.y = 1\n", f.spawn());
    let err = err.expect_err("the top level fails");
    stream.push_error(&gantry_host::face::ScriptError::from_message(
        "broken.lua",
        err.to_string(),
    ));
    let items = stream.drain();
    let seen: Vec<_> = items
        .iter()
        .map(|i| (i.kind, i.file.as_deref(), i.line, i.count))
        .collect();
    assert_eq!(
        seen,
        [
            (ItemKind::ListenerFailed, Some("goblin.lua"), Some(1), 4),
            (ItemKind::ScriptError, Some("broken.lua"), Some(2), 1),
        ],
        "{items:#?}"
    );
    assert!(items[0].message.contains("goblin.lua:3: attempt to index"));
    assert_eq!(stream.count(), 5);
}
