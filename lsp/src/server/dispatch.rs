//! Typed dispatch, rust-analyzer style: `on::<R>(handler)` per method.
//!
//! Malformed params answer `InvalidParams`; an unknown method answers
//! `MethodNotFound`; a handler that fails answers `InternalError` — and one
//! that panics does too, so a bug in one request never takes the server down.

use std::panic::{AssertUnwindSafe, catch_unwind};

use lsp_server::{ErrorCode, Notification, Request, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::state::{GlobalState, Snapshot};

pub struct RequestDispatcher<'a> {
    pub(crate) request: Option<Request>,
    pub(crate) state: &'a mut GlobalState,
}

impl RequestDispatcher<'_> {
    /// Handles the request if it is an `R`, with a read-only snapshot.
    pub fn on<R>(
        &mut self,
        handler: fn(Snapshot<'_>, R::Params) -> anyhow::Result<R::Result>,
    ) -> &mut Self
    where
        R: lsp_types::request::Request,
        R::Params: DeserializeOwned,
        R::Result: Serialize,
    {
        let Some(request) = self.request.take_if(|r| r.method == R::METHOD) else {
            return self;
        };
        let id = request.id.clone();
        let response = match serde_json::from_value::<R::Params>(request.params) {
            Err(e) => Response::new_err(
                id,
                ErrorCode::InvalidParams as i32,
                format!("invalid params for {}: {e}", R::METHOD),
            ),
            Ok(params) => {
                let snapshot = self.state.snapshot();
                match catch_unwind(AssertUnwindSafe(|| handler(snapshot, params))) {
                    Ok(Ok(result)) => Response::new_ok(id, result),
                    // A request the server declines (a rename it cannot
                    // follow) failed; anything else is the server's fault.
                    Ok(Err(e)) if e.is::<super::requests::Declined>() => {
                        Response::new_err(id, ErrorCode::RequestFailed as i32, e.to_string())
                    }
                    Ok(Err(e)) => {
                        Response::new_err(id, ErrorCode::InternalError as i32, e.to_string())
                    }
                    Err(_) => {
                        tracing::error!(method = R::METHOD, "request handler panicked");
                        Response::new_err(
                            id,
                            ErrorCode::InternalError as i32,
                            format!("internal error while handling {}", R::METHOD),
                        )
                    }
                }
            }
        };
        self.state.send(response);
        self
    }

    /// Answers whatever no `on` took with `MethodNotFound`.
    pub fn finish(&mut self) {
        if let Some(request) = self.request.take() {
            self.state.send(Response::new_err(
                request.id,
                ErrorCode::MethodNotFound as i32,
                format!("unknown method {}", request.method),
            ));
        }
    }
}

pub struct NotificationDispatcher<'a> {
    pub(crate) notification: Option<Notification>,
    pub(crate) state: &'a mut GlobalState,
}

impl NotificationDispatcher<'_> {
    /// Handles the notification if it is an `N`. Notifications cannot be
    /// answered, so malformed params and failures are logged.
    pub fn on<N>(
        &mut self,
        handler: fn(&mut GlobalState, N::Params) -> anyhow::Result<()>,
    ) -> &mut Self
    where
        N: lsp_types::notification::Notification,
        N::Params: DeserializeOwned,
    {
        let Some(notification) = self.notification.take_if(|n| n.method == N::METHOD) else {
            return self;
        };
        match serde_json::from_value::<N::Params>(notification.params) {
            Err(e) => {
                tracing::warn!(method = N::METHOD, error = %e, "ignoring malformed notification")
            }
            Ok(params) => match catch_unwind(AssertUnwindSafe(|| handler(self.state, params))) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(method = N::METHOD, error = %e, "notification failed"),
                Err(_) => tracing::error!(method = N::METHOD, "notification handler panicked"),
            },
        }
        self
    }

    pub fn finish(&mut self) {
        if let Some(n) = self.notification.take() {
            tracing::debug!(method = %n.method, "ignoring unhandled notification");
        }
    }
}
