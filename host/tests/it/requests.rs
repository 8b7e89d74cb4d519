//! Requests: each listener gets a responder; the reply callback is called
//! once (an extra answer is ignored and reported), later answers are fine,
//! and a request nobody answers is reported unanswered to the requester's
//! call site. Requests of different sources never cross.

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::{Hub, KeyDecl, ListenOptions, Reply, Report, Responder, Source, Type, Value};
use gantry_test_support::log::{Log, log, taken};

/// "Request and reply are matched by an incrementing Seq".
#[test]
fn request_sequence_numbers_increment_and_name_the_responder() {
    let hub = Hub::new();
    let seen: Rc<RefCell<Vec<u64>>> = Rc::default();
    let s = seen.clone();
    let _h = hub
        .listen_message("Ask", Source::Global, ListenOptions::new(), move |m| {
            let responder = m.responder.unwrap();
            s.borrow_mut().push(responder.seq());
            responder.respond((responder.seq() as i64,));
        })
        .unwrap();
    let key = hub.key("Ask").unwrap();
    let replies = log();
    let mut seqs = Vec::new();
    for _ in 0..3 {
        let r = replies.clone();
        seqs.push(
            hub.request(key, Source::Global, (), move |reply| {
                if let Reply::Answer(v) = reply {
                    r.borrow_mut().push(v[0].to_string());
                }
            })
            .unwrap(),
        );
    }
    assert_eq!(seqs[1], seqs[0] + 1);
    assert_eq!(seqs[2], seqs[1] + 1);
    assert_eq!(*seen.borrow(), seqs);
    let expected: Vec<String> = seqs.iter().map(|s| s.to_string()).collect();
    assert_eq!(taken(&replies), expected);
}

/// "the callback is one-shot and destroyed when used".
#[test]
fn request_reply_callback_is_destroyed_once_used_even_while_responders_live() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Vec<gantry_host::Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Ask", Source::Global, ListenOptions::new(), move |m| {
            let responder = m.responder.unwrap().clone();
            responder.respond((1i64,));
            k.borrow_mut().push(responder);
        })
        .unwrap();
    let captured = Rc::new(());
    let inside = captured.clone();
    let calls = Rc::new(RefCell::new(0));
    let c = calls.clone();
    let key = hub.key("Ask").unwrap();
    hub.request(key, Source::Global, (), move |_| {
        let _keep = &inside;
        *c.borrow_mut() += 1;
    })
    .unwrap();
    assert_eq!(*calls.borrow(), 1);
    assert_eq!(
        Rc::strong_count(&captured),
        1,
        "the callback (and what it captured) is gone though a responder is kept"
    );
    assert!(!kept.borrow()[0].respond((2i64,)));
    assert_eq!(*calls.borrow(), 1);
}

/// "an unanswered request is reported, not silently lost" — with no
/// listener at all, the requester hears `Unanswered` once, before the
/// request returns.
#[test]
fn request_with_nobody_listening_calls_back_unanswered_once_before_returning() {
    let hub = Hub::new();
    let key = hub.key("Nobody").unwrap();
    let got = log();
    let g = got.clone();
    hub.request(key, Source::Global, (1i64,), move |reply| {
        g.borrow_mut().push(format!("{reply:?}"))
    })
    .unwrap();
    assert_eq!(taken(&got), ["Unanswered"]);
    let reports = hub.take_reports();
    assert_eq!(
        reports
            .iter()
            .filter(|r| matches!(r, Report::Unanswered { .. }))
            .count(),
        1
    );
}

#[test]
fn request_answered_later_exactly_once_and_reported_unanswered_when_dropped_only() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Vec<gantry_host::Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Q", Source::Global, ListenOptions::new(), move |m| {
            k.borrow_mut().push(m.responder.unwrap().clone());
        })
        .unwrap();
    let k = kept.clone();
    let _h2 = hub
        .listen_message("Q", Source::Global, ListenOptions::new(), move |m| {
            k.borrow_mut().push(m.responder.unwrap().clone());
        })
        .unwrap();
    let out = log();
    let o = out.clone();
    let key = hub.key("Q").unwrap();
    hub.request(key, Source::Global, (), move |reply| {
        o.borrow_mut().push(match reply {
            Reply::Answer(v) => format!("answer {}", v[0]),
            Reply::Unanswered => "unanswered".into(),
        })
    })
    .unwrap();
    assert!(taken(&out).is_empty());
    let responders = std::mem::take(&mut *kept.borrow_mut());
    assert!(responders[1].respond((2i64,)));
    assert!(!responders[0].respond((1i64,)));
    drop(responders);
    assert_eq!(taken(&out), ["answer 2"]);
    let reports = hub.take_reports();
    assert!(
        !reports
            .iter()
            .any(|r| matches!(r, Report::Unanswered { .. })),
        "{reports:?}"
    );
}

#[test]
fn request_unanswered_report_names_the_requesters_site() {
    let hub = Hub::new();
    let key = hub.key("Nobody.Home").unwrap();
    let line = line!() + 1;
    hub.request(key, Source::Global, (), |_| {}).unwrap();
    let reports = hub.take_reports();
    let Some(Report::Unanswered {
        key,
        site: Some(site),
        ..
    }) = reports.first()
    else {
        panic!("unexpected reports {reports:?}");
    };
    assert_eq!(key, "Nobody.Home");
    assert!(
        site.file.ends_with("requests.rs") && site.line == line,
        "{site}"
    );
}

#[test]
fn request_an_int_answered_for_a_float_response_is_converted() {
    let hub = Hub::new();
    hub.declare("Price", KeyDecl::event().response("value", Type::Float))
        .unwrap();
    let _h = hub
        .listen_message("Price", Source::Global, ListenOptions::new(), |m| {
            assert!(m.responder.unwrap().respond((5i64,)));
        })
        .unwrap();
    let got = log();
    let g = got.clone();
    let key = hub.key("Price").unwrap();
    hub.request(key, Source::Global, (), move |reply| {
        if let Reply::Answer(values) = reply {
            g.borrow_mut()
                .extend(values.iter().map(|v| format!("{v:?}")));
        }
    })
    .unwrap();
    assert_eq!(taken(&got), ["Float(5.0)"]);
}

fn listen_ints(
    hub: &Hub,
    key: &str,
    scope: impl Into<Source>,
    log: &Log,
    name: &'static str,
) -> gantry_host::ListenerHandle {
    let l = log.clone();
    hub.listen(key, scope, move |n: i64| {
        l.borrow_mut().push(format!("{name} {n}"))
    })
    .unwrap()
}

fn answer_doubler(hub: &Hub) -> gantry_host::ListenerHandle {
    hub.listen_message("Math.Double", Source::Global, ListenOptions::new(), |m| {
        let n = m.args[0].as_int().unwrap();
        m.responder.unwrap().respond((n * 2,));
    })
    .unwrap()
}

fn collect_reply(out: &Rc<RefCell<Vec<String>>>) -> impl FnOnce(Reply<'_>) + 'static {
    let out = out.clone();
    move |reply| {
        out.borrow_mut().push(match reply {
            Reply::Answer(values) => values
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(","),
            Reply::Unanswered => "unanswered".into(),
        })
    }
}

#[test]
fn request_basic() {
    let hub = Hub::new();
    let _h = answer_doubler(&hub);
    let out = log();
    let key = hub.key("Math.Double").unwrap();
    hub.request(key, Source::Global, (21i64,), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["42"]);
    let t = hub.table();
    assert_eq!(
        t.get("Math.Double").unwrap().response.as_ref().unwrap()[0].ty,
        Type::Int
    );
}

#[test]
fn request_multi_argument() {
    let hub = Hub::new();
    let _h = hub
        .listen_message("Shop.Price", Source::Global, ListenOptions::new(), |m| {
            let item = m.args[0].as_str().unwrap().to_owned();
            let count = m.args[1].as_int().unwrap();
            m.responder
                .unwrap()
                .respond((format!("{item}x{count}"), count * 5, true));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Shop.Price").unwrap();
    hub.request(key, Source::Global, ("sword", 2i64), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["\"swordx2\",10,true"]);
}

#[test]
fn request_deferred_answer() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Option<Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Later", Source::Global, ListenOptions::new(), move |m| {
            *k.borrow_mut() = m.responder.cloned();
        })
        .unwrap();
    let out = log();
    let key = hub.key("Later").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert!(taken(&out).is_empty());
    kept.borrow_mut().take().unwrap().respond((1i64,));
    assert_eq!(taken(&out), ["1"]);
}

#[test]
fn request_answer_twice_is_ignored_and_reported() {
    let hub = Hub::new();
    let _h = hub
        .listen_message("Twice", Source::Global, ListenOptions::new(), |m| {
            let r = m.responder.unwrap();
            assert!(r.respond((1i64,)));
            assert!(!r.respond((2i64,)));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Twice").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["1"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::AnsweredTwice { .. }))
    );
}

#[test]
fn request_chained_reply_callback_issues_another_request() {
    let hub = Hub::new();
    let _h = answer_doubler(&hub);
    let out = log();
    let key = hub.key("Math.Double").unwrap();
    let (hub2, out2) = (hub.clone(), out.clone());
    hub.request(key, Source::Global, (1i64,), move |reply| {
        let Reply::Answer(v) = reply else {
            panic!("no answer")
        };
        let n = v[0].as_int().unwrap();
        hub2.request(key, Source::Global, (n,), collect_reply(&out2))
            .unwrap();
    })
    .unwrap();
    assert_eq!(taken(&out), ["4"]);
}

#[test]
fn request_concurrent_requests_never_cross_talk() {
    let hub = Hub::new();
    let kept: Rc<RefCell<Vec<(i64, Responder)>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Slow", Source::Global, ListenOptions::new(), move |m| {
            k.borrow_mut()
                .push((m.args[0].as_int().unwrap(), m.responder.unwrap().clone()));
        })
        .unwrap();
    let key = hub.key("Slow").unwrap();
    let (a, b) = (log(), log());
    let seq_a = hub
        .request(key, Source::Global, (1i64,), collect_reply(&a))
        .unwrap();
    let seq_b = hub
        .request(key, Source::Global, (2i64,), collect_reply(&b))
        .unwrap();
    assert_ne!(seq_a, seq_b);
    // Answer in reverse order.
    let mut pending = kept.borrow_mut().drain(..).collect::<Vec<_>>();
    pending.reverse();
    for (n, r) in pending {
        r.respond((n * 100,));
    }
    assert_eq!(taken(&a), ["100"]);
    assert_eq!(taken(&b), ["200"]);
}

#[test]
fn request_source_isolation() {
    let hub = Hub::new();
    let world = hub.create_world();
    let a = hub.spawn(world).unwrap();
    let b = hub.spawn(world).unwrap();
    let _ha = hub
        .listen_message("Ask", a, ListenOptions::new(), |m| {
            m.responder.unwrap().respond(("a",));
        })
        .unwrap();
    let _hb = hub
        .listen_message("Ask", b, ListenOptions::new(), |m| {
            m.responder.unwrap().respond(("b",));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Ask").unwrap();
    hub.request(key, b, (), collect_reply(&out)).unwrap();
    assert_eq!(taken(&out), ["\"b\""]);
}

#[test]
fn request_unanswered_is_reported_to_the_requester() {
    let hub = Hub::new();
    let out = log();
    let key = hub.key("Nobody").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["unanswered"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::Unanswered { .. }))
    );
    // A kept responder dropped without answering also counts.
    let kept: Rc<RefCell<Option<Responder>>> = Rc::default();
    let k = kept.clone();
    let _h = hub
        .listen_message("Nobody", Source::Global, ListenOptions::new(), move |m| {
            *k.borrow_mut() = m.responder.cloned();
        })
        .unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert!(taken(&out).is_empty());
    kept.borrow_mut().take();
    assert_eq!(taken(&out), ["unanswered"]);
}

#[test]
fn request_plain_listener_sees_request_arguments() {
    let hub = Hub::new();
    let _answer = answer_doubler(&hub);
    let seen = log();
    let _plain = listen_ints(&hub, "Math.Double", Source::Global, &seen, "plain");
    let out = log();
    let key = hub.key("Math.Double").unwrap();
    hub.request(key, Source::Global, (5i64,), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&seen), ["plain 5"]);
    assert_eq!(taken(&out), ["10"]);
}

#[test]
fn request_response_types_are_checked() {
    let hub = Hub::new();
    hub.declare("Q", KeyDecl::event().response("answer", Type::Int))
        .unwrap();
    let _h = hub
        .listen_message("Q", Source::Global, ListenOptions::new(), |m| {
            assert!(!m.responder.unwrap().respond(("not an int",)));
        })
        .unwrap();
    let out = log();
    let key = hub.key("Q").unwrap();
    hub.request(key, Source::Global, (), collect_reply(&out))
        .unwrap();
    assert_eq!(taken(&out), ["unanswered"]);
    assert!(
        hub.take_reports()
            .iter()
            .any(|r| matches!(r, Report::Mismatch { .. }))
    );
}
