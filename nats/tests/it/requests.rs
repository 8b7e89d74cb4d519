//! Requests on shared keys are answered by whichever node answers first;
//! nobody answering is the hub's usual unanswered notice, in time.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use gantry_host::{ListenOptions, Reply, Report, Source, Value};

use crate::cluster::{Node, pump_until, ready, server_or_skip, sharing};

type Answers = Rc<RefCell<Vec<Option<Vec<Value>>>>>;

fn ask(node: &Node, key: &str, args: (i64,)) -> Answers {
    let answers: Answers = Rc::default();
    let sink = answers.clone();
    let key = node.hub.key(key).unwrap();
    node.hub
        .request(key, Source::Global, args, move |reply| {
            sink.borrow_mut().push(match reply {
                Reply::Answer(values) => Some(values.to_vec()),
                Reply::Unanswered => None,
            });
        })
        .unwrap();
    answers
}

#[test]
fn a_request_is_answered_by_the_other_node() {
    let server = server_or_skip!();
    let a = Node::start(sharing(&server, &["Shop"]));
    let b = Node::start(sharing(&server, &["Shop"]));
    b.hub
        .listen_message("Shop.Price", Source::Global, ListenOptions::new(), |m| {
            let item = m.args[0].as_int().unwrap_or(0);
            if let Some(responder) = m.responder {
                responder.respond((item * 10,));
            }
        })
        .unwrap()
        .detach();
    ready(&[&a, &b]);

    let answers = ask(&a, "Shop.Price", (7,));
    assert!(pump_until(&[&a, &b], || !answers.borrow().is_empty()));
    let answers = answers.borrow();
    assert_eq!(answers.len(), 1);
    let answer = answers[0].as_ref().expect("answered");
    assert_eq!(answer[0].as_int(), Some(70));
}

#[test]
fn a_request_nobody_answers_is_unanswered_after_the_timeout() {
    let server = server_or_skip!();
    let timeout = Duration::from_millis(300);
    let a = Node::start(sharing(&server, &["Shop"]).request_timeout(timeout));
    let b = Node::start(sharing(&server, &["Shop"]));
    // b hears the request but does not answer.
    let heard_by_b = b.record("Shop");
    ready(&[&a, &b]);

    let start = Instant::now();
    let answers = ask(&a, "Shop.Price", (7,));
    assert!(pump_until(&[&a, &b], || !answers.borrow().is_empty()));
    assert_eq!(*answers.borrow(), [None]);
    // Not before the cluster had its chance, and not much after.
    assert!(start.elapsed() >= timeout - Duration::from_millis(20));
    assert!(start.elapsed() < timeout * 5);
    assert!(
        pump_until(&[&b], || heard_by_b.borrow().len() == 1),
        "b heard the request: {:?} {:?}",
        b.bridge.stats(),
        b.bridge.take_events()
    );
    assert!(a.hub.take_reports().iter().any(|r| matches!(
        r,
        Report::Unanswered { key, .. } if key == "Shop.Price"
    )));
}
