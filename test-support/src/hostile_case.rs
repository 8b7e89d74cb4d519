//! One hostile case for a script face, shared by the Lua and Rhai
//! hostile-program tests (beside `guard` and `hub_poke`).

use std::time::Duration;

use proptest::prelude::*;

/// The longest single call of a hostile case, run on its own thread within
/// `deadline`: `start` builds a runtime on the hub, `load` loads the
/// hostile script on an object; then the hub sends three `Game.Tick`s and
/// pokes a few keys every way ([`crate::hub_poke`]). Each of those calls is timed.
pub fn longest_call<R>(
    deadline: Duration,
    start: impl FnOnce(&gantry_host::Hub) -> R + Send + 'static,
    load: impl FnOnce(&R, gantry_host::ObjectId) + Send + 'static,
) -> Duration {
    use gantry_host::face::Faced;
    use gantry_host::{Caller, Hub, Source, Value};
    use std::time::Instant;
    crate::guard::within(deadline, move || {
        let hub = Hub::new();
        let world = hub.create_world();
        let runtime = start(&hub);
        let mut longest = Duration::ZERO;
        let mut timed = |call: &mut dyn FnMut()| {
            let started = Instant::now();
            call();
            longest = longest.max(started.elapsed());
        };
        let object = hub.spawn(world).expect("object");
        let mut load = Some(load);
        timed(&mut || (load.take().expect("loaded once"))(&runtime, object));
        let tick = hub.key("Game.Tick").expect("key");
        for n in 0..3 {
            timed(&mut || {
                let mut args = vec![Value::Int(n), Value::Float(0.1)];
                let _ = hub.send_values(tick, Source::Global, &mut args, Caller::Unrecorded);
            });
        }
        timed(&mut || crate::hub_poke::poke(&hub, world, object, &["A", "A.B", "Hook.Go"]));
        let _ = hub.take_reports();
        let _ = hub.destroy(object);
        drop(runtime);
        longest
    })
}

/// A hostile program: one to five statements drawn from `templates`, each
/// with its holes filled (`{k}` a hostile key, `{n}` and `{m}` sizes from
/// `sizes`), half of them passed through `guarded` (the language's way to
/// catch an ordinary error, so that the program goes on after it).
pub fn program(
    templates: &'static [&'static str],
    sizes: &'static [&'static str],
    guarded: fn(&str) -> String,
) -> impl Strategy<Value = String> {
    let statement = (
        prop::sample::select(templates),
        prop::sample::select(crate::guard::hostile_keys()),
        prop::sample::select(sizes),
        prop::sample::select(sizes),
        any::<bool>(),
    )
        .prop_map(move |(template, key, n, m, guard)| {
            let text = template
                .replace("{k}", &key.replace('"', ""))
                .replace("{n}", n)
                .replace("{m}", m);
            if guard {
                guarded(&text)
            } else {
                format!("{text}\n")
            }
        });
    prop::collection::vec(statement, 1..6).prop_map(|s| s.concat())
}
