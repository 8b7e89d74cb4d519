//! The tag-channel router (a channel name, and listeners that each take
//! one struct) as a private bus.
//!
//! A system or a test can own one. It is a thin face over its own [`Hub`]
//! (unchecked: a channel may carry different structs, and each listener
//! filters by the struct it names), so ordering, owners and re-entrancy are
//! the hub's and cannot drift apart.

use std::rc::Rc;

use crate::hook::{HookCall, HookOptions, HookResult};
use crate::hub::{Hub, HubError, ListenSpec, Message};
use crate::listener::{ListenOptions, ListenerId, ListenerParams, Match, MessageFn, Owner};
use crate::source::Source;
use crate::types::StructDef;
use crate::value::Value;

/// A private message bus on gameplay-tag channels.
pub struct Router {
    hub: Hub,
}

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

impl Router {
    pub fn new() -> Self {
        let hub = Hub::new();
        hub.set_checked(false);
        Router { hub }
    }

    /// Declares a struct (and its parent) so that a listener expecting the
    /// parent also gets payloads of the child.
    pub fn declare_struct(&self, name: &str, def: StructDef) {
        self.hub.edit_table(|t| t.declare_struct(name, def));
    }

    /// Adds a listener. `expects` names the struct it takes (`None`: any).
    /// Returns its id, never 0.
    pub fn register(
        &self,
        channel: &str,
        expects: Option<&str>,
        matching: Match,
        owner: Option<Owner>,
        callback: impl Fn(&str, &Value) + 'static,
    ) -> Result<u64, HubError> {
        let f: Rc<MessageFn> = Rc::new(move |m: &Message<'_>| {
            let channel = m.key_name();
            callback(&channel, m.args.first().unwrap_or(&Value::Nil));
            Ok(())
        });
        let options = ListenOptions {
            matching,
            owner,
            ..ListenOptions::default()
        };
        let spec = ListenSpec::message(Source::Global, options, ListenerParams::Dynamic, f)
            .expecting(expects);
        Ok(self.hub.listen_raw(channel, spec)?.get())
    }

    /// Removes a listener by the channel and id `register` gave. Unknown
    /// ids, another channel's id and a hook listener's id do nothing;
    /// returns whether a listener was removed.
    pub fn unregister(&self, channel: &str, id: u64) -> bool {
        self.hub
            .unlisten_on(channel, ListenerId::from_raw(id), false)
    }

    /// Sends to everyone on `channel`, then to partial listeners above it.
    /// Returns how many listeners it was delivered to.
    pub fn broadcast(&self, channel: &str, payload: Value) -> Result<usize, HubError> {
        let key = self.hub.key(channel)?;
        let mut args = [payload];
        let delivered = self.hub.send_values(
            key,
            Source::Global,
            &mut args,
            crate::hub::Caller::Unrecorded,
        )?;
        Ok(delivered.listeners)
    }

    /// How many message listeners are registered (owners not yet checked).
    pub fn num(&self) -> usize {
        self.hub.listener_count()
    }

    /// Removes every listener and hook listener.
    pub fn reset(&self) {
        self.hub.reset();
    }

    /// Adds a hook listener; higher priority runs first.
    pub fn register_hook(
        &self,
        channel: &str,
        expects: Option<&str>,
        matching: Match,
        priority: i32,
        owner: Option<Owner>,
        callback: impl Fn(&mut HookCall<'_>) + 'static,
    ) -> Result<u64, HubError> {
        let options = HookOptions {
            priority,
            matching,
            owner,
            expects: expects.map(str::to_owned),
        };
        let f = Rc::new(move |call: &mut HookCall<'_>| {
            callback(call);
            Ok(())
        });
        Ok(self.hub.listen_hook_raw(channel, options, None, f)?.get())
    }

    /// Removes a hook listener by the channel and id `register_hook` gave;
    /// anything else does nothing. Returns whether one was removed.
    pub fn unregister_hook(&self, channel: &str, id: u64) -> bool {
        self.hub
            .unlisten_on(channel, ListenerId::from_raw(id), true)
    }

    /// Runs a hook; the payload is changed in place.
    pub fn run_hook(&self, channel: &str, payload: &mut Value) -> Result<HookResult, HubError> {
        self.hub.run_hook(channel, payload)
    }

    pub fn has_hook_listeners(&self, channel: &str) -> bool {
        self.hub.has_hook_listeners(channel)
    }

    /// The hub underneath, for reports.
    pub fn hub(&self) -> &Hub {
        &self.hub
    }
}
