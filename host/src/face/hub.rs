//! The hub's entries for script faces: dynamic values in, callbacks over
//! [`Value`]s registered, sites given by the caller. A game programmer
//! uses the hub's typed API (`send`, `listen`, `store`, ...); a script
//! runtime (or a tool that pokes the hub with dynamic values) imports
//! [`Faced`] and reaches these.

use std::rc::Rc;

use crate::collection::{RowFn, TableFn};
use crate::hook::HookOptions;
use crate::listener::{HookFn, MessageFn};
use crate::{
    Caller, Delivered, Hub, HubError, Key, ListenOptions, ListenSpec, ListenerId, Reply, Site,
    Source, Value,
};

/// The hub as a script face drives it.
pub trait Faced {
    /// Sends dynamic values.
    fn send_values(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
    ) -> Result<Delivered, HubError>;

    /// Stores dynamic values (`once`: a once message).
    fn store_values(
        &self,
        key: Key,
        source: Source,
        args: Vec<Value>,
        once: bool,
        caller: Caller<'_>,
    ) -> Result<Delivered, HubError>;

    /// Sends a request of dynamic values; `reply` hears the answer.
    fn request_values(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        reply: Box<dyn FnOnce(Reply<'_>)>,
    ) -> Result<u64, HubError>;

    /// Registers a message listener as `spec` describes it.
    fn listen_raw(&self, key: &str, spec: ListenSpec) -> Result<ListenerId, HubError>;

    /// Registers a hook listener.
    fn listen_hook_raw(
        &self,
        key: &str,
        options: HookOptions,
        site: Option<Site>,
        callback: Rc<HookFn>,
    ) -> Result<ListenerId, HubError>;

    /// Registers a whole-table listener.
    fn listen_table_raw(
        &self,
        key: &str,
        scope: Source,
        options: ListenOptions,
        site: Option<Site>,
        f: Rc<TableFn>,
    ) -> Result<ListenerId, HubError>;

    /// Registers a listener of two parameters on a key not known yet: a
    /// table listener for tables, a message listener for the rest.
    fn listen_table_or_message_raw(
        &self,
        key: &str,
        scope: Source,
        options: ListenOptions,
        site: Option<Site>,
        table: Rc<TableFn>,
        message: Rc<MessageFn>,
    ) -> Result<ListenerId, HubError>;

    /// Registers a row listener; `index` in the `~` encoding.
    fn listen_rows_raw(
        &self,
        key: &str,
        scope: Source,
        index: i32,
        options: ListenOptions,
        site: Option<Site>,
        f: Rc<RowFn>,
    ) -> Result<ListenerId, HubError>;
}

impl Faced for Hub {
    fn send_values(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
    ) -> Result<Delivered, HubError> {
        Hub::send_values(self, key, source, args, caller)
    }

    fn store_values(
        &self,
        key: Key,
        source: Source,
        args: Vec<Value>,
        once: bool,
        caller: Caller<'_>,
    ) -> Result<Delivered, HubError> {
        Hub::store_values(self, key, source, args, once, caller)
    }

    fn request_values(
        &self,
        key: Key,
        source: Source,
        args: &mut [Value],
        caller: Caller<'_>,
        reply: Box<dyn FnOnce(Reply<'_>)>,
    ) -> Result<u64, HubError> {
        Hub::request_values(self, key, source, args, caller, reply)
    }

    fn listen_raw(&self, key: &str, spec: ListenSpec) -> Result<ListenerId, HubError> {
        Hub::listen_raw(self, key, spec)
    }

    fn listen_hook_raw(
        &self,
        key: &str,
        options: HookOptions,
        site: Option<Site>,
        callback: Rc<HookFn>,
    ) -> Result<ListenerId, HubError> {
        Hub::listen_hook_raw(self, key, options, site, callback)
    }

    fn listen_table_raw(
        &self,
        key: &str,
        scope: Source,
        options: ListenOptions,
        site: Option<Site>,
        f: Rc<TableFn>,
    ) -> Result<ListenerId, HubError> {
        Hub::listen_table_raw(self, key, scope, options, site, f)
    }

    fn listen_table_or_message_raw(
        &self,
        key: &str,
        scope: Source,
        options: ListenOptions,
        site: Option<Site>,
        table: Rc<TableFn>,
        message: Rc<MessageFn>,
    ) -> Result<ListenerId, HubError> {
        Hub::listen_table_or_message_raw(self, key, scope, options, site, table, message)
    }

    fn listen_rows_raw(
        &self,
        key: &str,
        scope: Source,
        index: i32,
        options: ListenOptions,
        site: Option<Site>,
        f: Rc<RowFn>,
    ) -> Result<ListenerId, HubError> {
        Hub::listen_rows_raw(self, key, scope, index, options, site, f)
    }
}
