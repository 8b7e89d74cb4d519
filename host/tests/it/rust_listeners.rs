//! What a Rust listener may be: a closure taking owned values or borrows
//! of the message's (`&str`, `&Value`), returning nothing or a `Result`
//! whose `Err` is reported with the line it was registered on, as a
//! script's error is.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{Hub, KeyDecl, Report, Source, Type, Value};

#[test]
fn a_rust_listener_err_is_reported_with_the_line_it_was_registered_on() {
    let hub = Hub::new();
    let line = line!() + 2;
    let _failing = hub
        .listen("Door.Open", Source::Global, |who: &str| {
            if who == "ghost" {
                return Err(format!("{who} cannot open doors"));
            }
            Ok(())
        })
        .unwrap();
    hub.send_str("Door.Open", Source::Global, ("ghost",))
        .unwrap();
    let reports = hub.take_reports();
    let [Report::ListenerFailed { key, message, site }] = reports.as_slice() else {
        panic!("expected one listener failure, got {reports:?}");
    };
    assert_eq!(key, "Door.Open");
    assert_eq!(message, "ghost cannot open doors");
    let site = site.as_ref().expect("the listener's site");
    assert!(site.file.ends_with("rust_listeners.rs"), "{site}");
    assert_eq!(site.line, line);
    assert!(
        reports[0]
            .to_string()
            .contains(&format!("rust_listeners.rs:{line}")),
        "{}",
        reports[0]
    );
}

#[test]
fn a_failing_rust_listener_does_not_stop_the_next_one() {
    let hub = Hub::new();
    let heard = Rc::new(RefCell::new(0));
    let count = heard.clone();
    let _first = hub
        .listen("Tick", Source::Global, |_n: i64| Err::<(), _>("broken"))
        .unwrap();
    let _second = hub
        .listen("Tick", Source::Global, move |n: i64| {
            *count.borrow_mut() += n
        })
        .unwrap();
    let delivered = hub.send("Tick", Source::Global, (2i64,)).unwrap();
    assert_eq!(delivered.listeners, 2);
    assert_eq!(*heard.borrow(), 2);
    assert_eq!(hub.take_reports().len(), 1);
}

#[test]
fn a_typed_key_send_still_reports_a_fallible_listeners_err() {
    let hub = Hub::new();
    let key = hub.typed_key::<(i64,)>("Score.Add").unwrap();
    let _listener = hub
        .listen("Score.Add", Source::Global, |n: i64| {
            if n < 0 { Err("negative score") } else { Ok(()) }
        })
        .unwrap();
    for _ in 0..3 {
        hub.send(key, Source::Global, (-1i64,)).unwrap();
    }
    let failures = hub
        .take_reports()
        .into_iter()
        .filter(|r| matches!(r, Report::ListenerFailed { .. }))
        .count();
    assert_eq!(failures, 3);
}

#[test]
fn a_rust_listener_takes_a_borrowed_str_and_declares_a_string() {
    let hub = Hub::new();
    hub.declare(
        "Chat.Say",
        KeyDecl::event()
            .param("who", Type::String)
            .param("text", Type::String),
    )
    .unwrap();
    let said = Rc::new(RefCell::new(Vec::new()));
    let into = said.clone();
    let _listener = hub
        .listen("Chat.Say", Source::Global, move |who: &str, text: &str| {
            into.borrow_mut().push(format!("{who}: {text}"))
        })
        .unwrap();
    hub.send_str("Chat.Say", Source::Global, ("ana", "hello"))
        .unwrap();
    assert_eq!(*said.borrow(), vec!["ana: hello".to_owned()]);
    // A borrowed `&str` is held to `string` like an owned one.
    let refused = hub.listen("Chat.Say", Source::Global, |_who: i64| ());
    assert!(refused.is_err());
}

#[test]
fn a_rust_listener_takes_a_borrowed_value_of_any_type() {
    let hub = Hub::new();
    hub.declare("Debug.Show", KeyDecl::event().param("n", Type::Int))
        .unwrap();
    let seen = Rc::new(RefCell::new(Vec::new()));
    let into = seen.clone();
    let _listener = hub
        .listen("Debug.Show", Source::Global, move |v: &Value| {
            into.borrow_mut().push(v.to_string())
        })
        .unwrap();
    hub.send_str("Debug.Show", Source::Global, (5i64,)).unwrap();
    assert_eq!(*seen.borrow(), vec!["5".to_owned()]);
}
