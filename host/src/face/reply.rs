//! Replies to a request: a reply function called with the answer, and the
//! answer given during the send, which `GMP.Request` returns directly.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::{Caller, Hub, HubError, Key, Reply, Source, Value};

/// The reply callback the hub calls with an answer; an unanswered request
/// calls nothing (the hub reports it).
pub fn on_answer(f: impl FnOnce(&[Value]) + 'static) -> Box<dyn FnOnce(Reply<'_>)> {
    Box::new(move |reply: Reply<'_>| {
        if let Reply::Answer(values) = reply {
            f(values);
        }
    })
}

/// An answer: the reply's values, or `None` when nobody answered.
pub type Answer = Option<Vec<Value>>;

/// Sends a request and returns the answer when it came during the send
/// (`None`: it did not come yet); an answer that comes later goes to
/// `later`.
pub fn request_during_send(
    hub: &Hub,
    key: Key,
    source: Source,
    values: &mut [Value],
    caller: Caller<'_>,
    later: impl FnOnce(Answer) + 'static,
) -> Result<Option<Answer>, HubError> {
    let early: Rc<RefCell<Option<Answer>>> = Rc::new(RefCell::new(None));
    let sent = Rc::new(Cell::new(false));
    let on_reply = {
        let early = early.clone();
        let sent = sent.clone();
        Box::new(move |reply: Reply<'_>| {
            let answer = match reply {
                Reply::Answer(values) => Some(values.to_vec()),
                Reply::Unanswered => None,
            };
            if sent.get() {
                later(answer);
            } else {
                *early.borrow_mut() = Some(answer);
            }
        })
    };
    let result = hub.request_values(key, source, values, caller, on_reply);
    sent.set(true);
    result?;
    Ok(early.borrow_mut().take())
}
