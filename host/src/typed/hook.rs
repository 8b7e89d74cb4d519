//! Typed hooks: a hook whose payload is a Rust struct
//! (`#[derive(Message)]` with `kind = "hook"`), run with `&mut` the
//! struct and listened to by closures that change it in place.
//!
//! Built on [`Hub::run_hook_key`] and the hook listeners: the payload
//! crosses as the struct's value, so script listeners (Lua, Rhai) see and
//! change the same fields.

use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::rc::Rc;

use crate::hook::{HookCall, HookOptions, HookResult};
use crate::hub::{Hub, HubError};
use crate::listener::{HookFn, ListenerError, ListenerHandle};
use crate::report::Report;
use crate::signature::{Role, Site};
use crate::value::{FromValue, IntoValue};

use super::arg::ListenerReturn;
use super::message::{MessageKey, MessageType, kinds};
use super::schema::StructType;

/// What a typed hook listener gets: the payload (through `Deref`, so
/// `hit.damage *= 2.0` reads as the struct), and the run's controls.
pub struct TypedHookCall<'a, M> {
    /// The payload; what the listener leaves here is what the next
    /// listener and the caller see.
    pub payload: M,
    /// The hub, for sends from inside the listener.
    pub hub: &'a Hub,
    handled: bool,
    cancelled: bool,
}

impl<M> TypedHookCall<'_, M> {
    /// Marks the payload handled; later listeners still run.
    pub fn handled(&mut self) {
        self.handled = true;
    }
    /// Stops the rest of the listeners (the caller sees `cancelled`).
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }
}

impl<M> Deref for TypedHookCall<'_, M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.payload
    }
}

impl<M> DerefMut for TypedHookCall<'_, M> {
    fn deref_mut(&mut self) -> &mut M {
        &mut self.payload
    }
}

/// What a typed hook's payload is: the message struct, a struct of the
/// table that converts both ways (`#[derive(Message)]` with `kind =
/// "hook"` gives all of it) and clones (the caller keeps its `&mut`).
pub trait HookPayload:
    MessageType<Kind = kinds::Hook> + StructType + IntoValue + FromValue + Clone
{
}
impl<M> HookPayload for M where
    M: MessageType<Kind = kinds::Hook> + StructType + IntoValue + FromValue + Clone
{
}

impl<M: HookPayload> MessageKey<M> {
    /// Runs the hook with `payload`: listeners (Rust and script) in
    /// priority order, each changing it in place, until one cancels. A
    /// hook nobody listens to returns at once and leaves `payload` as is.
    ///
    /// A listener that leaves a field of the wrong type (a script can)
    /// leaves `payload` as it was before the run, and is reported.
    #[track_caller]
    pub fn run_hook(self, hub: &Hub, payload: &mut M) -> Result<HookResult, HubError> {
        if !hub.has_hook_listeners(M::KEY) {
            return Ok(HookResult::default());
        }
        hub.record_rust_site(self.key(), Location::caller());
        let mut value = payload.clone().into_value();
        let result = hub.run_hook_key(self.key(), &mut value);
        match M::from_value(&value) {
            Some(changed) => *payload = changed,
            None => hub.report(Report::ListenerFailed {
                key: M::KEY.to_owned(),
                message: format!(
                    "the hook's payload came back as {}, not a {}: left as it was",
                    value.short(80),
                    M::NAME
                ),
                site: Some(Site::rust(Location::caller(), Role::Send)),
            }),
        }
        Ok(result)
    }

    /// Listens to the hook with a closure over the payload struct
    /// (through a [`TypedHookCall`]), default priority. Payloads of
    /// another struct are skipped (and reported). The closure may return
    /// `Result<(), E: Display>`: an `Err` is reported with this call's
    /// line, and what it changed before stays.
    #[track_caller]
    pub fn listen_hook<R: ListenerReturn>(
        self,
        hub: &Hub,
        options: HookOptions,
        f: impl Fn(&mut TypedHookCall<'_, M>) -> R + 'static,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let callback: Rc<HookFn> = Rc::new(move |call: &mut HookCall<'_>| {
            let payload = M::from_value(call.payload).ok_or_else(|| {
                ListenerError::new(format!(
                    "payload: expected {}, got {}",
                    M::NAME,
                    call.payload.kind_name()
                ))
            })?;
            let mut typed = TypedHookCall {
                payload,
                hub: call.hub,
                handled: false,
                cancelled: false,
            };
            let outcome = f(&mut typed).into_result();
            let (handled, cancelled) = (typed.handled, typed.cancelled);
            *call.payload = typed.payload.into_value();
            if handled {
                call.handled();
            }
            if cancelled {
                call.cancel();
            }
            outcome
        });
        let options = HookOptions {
            expects: Some(M::NAME.to_owned()),
            ..options
        };
        let key = hub.key_name(self.key());
        let id = hub.listen_hook_raw(&key, options, Some(site), callback)?;
        Ok(ListenerHandle {
            hub: hub.downgrade(),
            id,
        })
    }
}
