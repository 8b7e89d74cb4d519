//! Keys: a malformed key is an error naming its text and position at every
//! entry point, never a panic; a baked key and its text reach the same
//! listeners.

use gantry_host::{
    HookOptions, Hub, HubError, KeyDecl, Language, ListenOptions, Match, Role, Router, Source,
    Value,
};
use gantry_test_support::log::{Log, log, taken};

fn push(log: &Log, s: impl Into<String>) {
    log.borrow_mut().push(s.into());
}

#[test]
fn bad_keys_are_errors_naming_text_and_position() {
    let hub = Hub::new();
    for bad in ["", "A..B", "Player Hurt", "x.", "Ünïcode"] {
        let err = hub.send_str(bad, Source::Global, ()).unwrap_err();
        assert!(matches!(err, HubError::Key(_)), "{bad:?}: {err}");
        assert!(hub.listen(bad, Source::Global, || {}).is_err());
    }
    let text = hub.key("Player Hurt").unwrap_err().to_string();
    assert!(
        text.contains("Player Hurt") && text.contains("byte 6"),
        "{text}"
    );
}

#[test]
fn baked_key_and_string_key_reach_the_same_listeners() {
    let hub = Hub::new();
    let log = log();
    let l = log.clone();
    let _h = hub
        .listen("K", Source::Global, move |n: i64| push(&l, n.to_string()))
        .unwrap();
    let key = hub.key("K").unwrap();
    hub.send(key, Source::Global, (1i64,)).unwrap();
    hub.send_str("K", Source::Global, (2i64,)).unwrap();
    assert_eq!(taken(&log), ["1", "2"]);
}

#[test]
fn keys_bad_key_is_an_error_at_every_entry_point_never_a_panic() {
    let hub = Hub::new();
    for bad in ["", ".", "A..B", ".A", "A.", "A B", "A-B", "Ä", "A.B\n"] {
        assert!(hub.key(bad).is_err(), "{bad:?}");
        assert!(
            matches!(hub.declare(bad, KeyDecl::event()), Err(HubError::Key(_))),
            "{bad:?}"
        );
        assert!(
            matches!(
                hub.listen_message(bad, Source::Global, ListenOptions::new(), |_| {}),
                Err(HubError::Key(_))
            ),
            "{bad:?}"
        );
        assert!(
            matches!(
                hub.listen_hook(bad, HookOptions::new(), |_| {}),
                Err(HubError::Key(_))
            ),
            "{bad:?}"
        );
        assert!(
            matches!(
                hub.send_str(bad, Source::Global, (1i64,)),
                Err(HubError::Key(_))
            ),
            "{bad:?}"
        );
        // Recording a site under a bad key is ignored, not stored.
        hub.record_site(
            bad,
            gantry_host::Site::new("x.lua", 1, Language::Lua, Role::Send),
        );
        assert!(hub.table().get(bad).is_none());
    }
    // A hook heard (partially, from above) on a bad key below it is an error too.
    let _h = hub
        .listen_hook("Combat", HookOptions::new().partial(), |_| {})
        .unwrap();
    let mut payload = Value::Int(1);
    assert!(matches!(
        hub.run_hook("Combat.Bad Key", &mut payload),
        Err(HubError::Key(_))
    ));
    let router = Router::new();
    assert!(
        router
            .register("A..B", None, Match::Exact, None, |_, _| {})
            .is_err()
    );
    assert!(router.broadcast("no good", Value::Nil).is_err());
}
