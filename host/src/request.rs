//! Request and response: a send that carries a reply callback.
//!
//! A listener registered to take a responder gets one; it may answer at once
//! or keep the responder and answer later, exactly once. A request nobody
//! answers is not lost: when the last responder is dropped unanswered, the
//! requester's callback is called with [`Reply::Unanswered`] and a
//! [`Report::Unanswered`] is filed. Each request has its own state, so
//! concurrent requests cannot cross-talk; the sequence number names it in
//! reports.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::fmt;
use std::panic::Location;
use std::rc::{Rc, Weak};

use crate::hub::{Caller, Hub, HubError, HubInner};
use crate::key::Key;
use crate::report::Report;
use crate::signature::{Site, ints_widened};
use crate::source::Source;
use crate::typed::IntoArgs;
use crate::value::Value;

/// What a requester's callback learns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reply<'a> {
    /// The response values.
    Answer(&'a [Value]),
    /// Every responder was dropped without answering (or nobody took one).
    Unanswered,
}

type ReplyFn = Box<dyn FnOnce(Reply<'_>)>;

/// One request's state, shared by its responders (see [`Responder`]).
pub(crate) struct RequestState {
    seq: u64,
    key: Rc<str>,
    hub: Weak<HubInner>,
    reply: RefCell<Option<ReplyFn>>,
    site: Option<Site>,
}

impl Drop for RequestState {
    fn drop(&mut self) {
        if let Some(reply) = self.reply.get_mut().take() {
            if let Some(inner) = self.hub.upgrade() {
                Hub::from_inner(inner).report(Report::Unanswered {
                    key: self.key.to_string(),
                    seq: self.seq,
                    site: self.site.clone(),
                });
            }
            reply(Reply::Unanswered);
        }
    }
}

/// The handle type lives with [`Message`](struct@crate::Message) in the hub's
/// core, which only passes it to listeners; answering it is this module's.
pub use crate::hub::Responder;

impl fmt::Debug for Responder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Responder(#{} on `{}`)", self.state.seq, self.state.key)
    }
}

impl Responder {
    /// The request's sequence number.
    pub fn seq(&self) -> u64 {
        self.state.seq
    }

    pub fn is_answered(&self) -> bool {
        self.state.reply.borrow().is_none()
    }

    /// Answers with a tuple of Rust values. Returns false (and reports) if the
    /// request was already answered or the values contradict the recorded
    /// response types.
    pub fn respond<A: IntoArgs>(&self, values: A) -> bool {
        self.respond_values(values.into_args().as_ref())
    }

    /// Answers with dynamic values.
    pub fn respond_values(&self, values: &[Value]) -> bool {
        let hub = self.state.hub.upgrade().map(Hub::from_inner);
        let Some(reply) = self.state.reply.borrow_mut().take() else {
            if let Some(hub) = &hub
                && hub.is_checked()
            {
                hub.report(Report::AnsweredTwice {
                    key: self.state.key.to_string(),
                    seq: self.state.seq,
                });
            }
            return false;
        };
        let mut answer = Cow::Borrowed(values);
        if let Some(hub) = &hub {
            let checked = hub.is_checked();
            let verdict = hub.with_state(|s| -> Result<_, crate::types::Mismatch> {
                if checked {
                    s.table.check_response(&self.state.key, values)?;
                }
                let widened = match s.table.get(&self.state.key) {
                    Some(entry) => ints_widened(
                        &s.table.structs,
                        values,
                        entry.response.as_deref().unwrap_or(&[]),
                    ),
                    None => Cow::Borrowed(values),
                };
                Ok((s.table.record_response(&self.state.key, values), widened))
            });
            match verdict {
                Ok((recorded, widened)) => {
                    if recorded == crate::signature::Recorded::Changed {
                        hub.mark_table_dirty();
                    }
                    answer = widened;
                }
                Err(m) => {
                    hub.report(Report::Mismatch {
                        key: self.state.key.to_string(),
                        position: m.position,
                        expected: format!("response {}", m.expected),
                        got: m.got,
                        site: self.state.site.clone(),
                        listener_site: None,
                    });
                    // Not an answer: put the callback back.
                    *self.state.reply.borrow_mut() = Some(reply);
                    return false;
                }
            }
        }
        reply(Reply::Answer(&answer));
        true
    }
}

/// What the hub keeps for requests: the sequence that names them in
/// reports (each request's own state lives in its responders).
#[derive(Default)]
pub(crate) struct Requests {
    seq: Cell<u64>,
}

impl Requests {
    /// The number of a new request: 1, 2, 3...
    fn next_seq(&self) -> u64 {
        let seq = self.seq.get() + 1;
        self.seq.set(seq);
        seq
    }
}

impl Hub {
    /// Sends a request: listeners that take a responder may answer; plain
    /// listeners still get the arguments. Returns the request's sequence
    /// number.
    #[track_caller]
    pub fn request<A: IntoArgs>(
        &self,
        key: Key,
        source: impl Into<Source>,
        args: A,
        reply: impl FnOnce(Reply<'_>) + 'static,
    ) -> Result<u64, HubError> {
        let mut args = args.into_args();
        self.request_values(
            key,
            source.into(),
            args.as_mut(),
            Caller::Rust(Location::caller()),
            Box::new(reply),
        )
    }

    /// The request entry every face goes through.
    /// Outside the crate, a script face reaches it through
    /// [`crate::face::Faced`].
    pub(crate) fn request_values(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        reply: Box<dyn FnOnce(Reply<'_>)>,
    ) -> Result<u64, HubError> {
        let seq = self.inner.requests.next_seq();
        let site = caller.site();
        let responder = Responder {
            state: Rc::new(RequestState {
                seq,
                key: self.key_name(key),
                hub: self.downgrade(),
                reply: RefCell::new(Some(reply)),
                site,
            }),
        };
        self.dispatch(key, source, args, caller, Some(&responder))?;
        Ok(seq)
    }
}
