//! # gantry-nats — a hub's keys across game servers over NATS
//!
//! A game that outgrows one process (shards of one world, a lobby beside
//! match servers, a chat that spans them) wants the same keys to reach
//! listeners on other machines. The hub stays single-process and free of
//! any async runtime; this crate bridges it to NATS, whose subjects are
//! dot-separated tokens like keys, whose `>` is the hub's partial match,
//! whose JetStream KV keeps "the latest value" like a stored message, and
//! which has request/reply and queue groups built in.
//!
//! ## Threads
//! The hub is `!Send`: it never leaves its thread. A [`Bridge`] owns an
//! `async-nats` client on a thread of its own (a current-thread tokio
//! runtime) and trades messages with the hub's thread through two bounded
//! channels, which the host empties once per tick with [`Bridge::pump`].
//! Nothing on the game thread waits for the network.
//!
//! ## What crosses
//! - **Sends**: a global send on an exported key goes out on
//!   `<cluster>.<key>`; a node subscribes to `<cluster>.<subtree>` and
//!   `<cluster>.<subtree>.>` for each imported subtree, and to nothing else,
//!   so a peer cannot inject a key outside them (and a subject outside them
//!   is dropped and reported even so). Sends on a world named with
//!   [`Bridge::name_world`] cross to the world of that name on other
//!   nodes (`<cluster>-w.<world>.<key>`); sends on an object named with
//!   [`Bridge::name_object`] to the object of that name
//!   (`<cluster>-o.<object>.<key>`). A name is one subject token of
//!   `[A-Za-z0-9_]`, checked when given and on arrival. Other object
//!   sends stay local: an object id means nothing elsewhere.
//! - **Stored messages** go into a JetStream KV bucket (`gantry_<cluster>`,
//!   one value per key); each node watches its imported keys there, so a
//!   node that starts later replays the cluster's latest value, as a late
//!   listener gets one locally. The bucket is bounded (`store_max_bytes`,
//!   the server refusing new puts past it, from any peer) and a node puts
//!   at most `max_stored_keys` distinct keys there (past it a store stays
//!   local, reported and counted).
//! - **Requests** become NATS requests: the first answer from any node
//!   replies; none within `request_timeout_ms` is the hub's usual
//!   unanswered notice. (A node that hears a request and has nobody to
//!   answer it files its own unanswered notice too.)
//! - **Once**: a live one ([`Bridge::once`]) goes to a queue group every
//!   importing node joins: NATS hands it to exactly one of them (never
//!   its sender: the server echoes no node's messages back to it), which
//!   delivers it as a local once. A stored one ([`Bridge::store_once`])
//!   goes into a JetStream stream with work-queue retention
//!   (`gantry_<cluster>_once`), kept by the server until one importing
//!   node (up now, or the first to start later) pulls it from the
//!   consumer all nodes share, delivers it as a local once and
//!   acknowledges it: then it is gone for every node.
//!   A stored once is taken (acknowledged, the server confirming it) by
//!   the node's network thread as it arrives, before the game pumps: a
//!   game that does not pump for a while holds it, and the stream offers
//!   it to no other node meanwhile.
//!   A once made on the hub (a script's `OnceObjectMessage` on the run's
//!   named world, [`gantry_host::Hub::once`]) on an exported key is first
//!   the hub's: if a listener here takes it, it never crosses; if none
//!   does (the hub would keep it for the first listener to come), it goes
//!   into that stream instead (`<cluster>-queue.<key>`, with `.w-<world>`
//!   or `.o-<object>` after a named world's or object's), for the first
//!   importing node to take — this one included, if it imports the key —
//!   and is not kept here. The hub tells the bridge a once from a send
//!   ([`gantry_host::Message::is_once`]) and how many listeners took it
//!   ([`gantry_host::Hub::set_once_relay`]).
//! - **Hooks stay local**: a hook's listeners change its payload in place,
//!   one after another, within one call.
//!
//! ## Payloads
//! A small hand-written binary format over the hub's values ([`wire`]):
//! typed, compact, bounded in size and depth; see that module for why
//! not serde. A peer's payload is checked against this hub's table like
//! any send: a mismatch is refused by the hub, reported, and dropped.
//!
//! ## Faults
//! The server absent at start, killed or restarted: the game keeps running
//! on its hub; the client reconnects with backoff (50 ms doubling to 2 s);
//! sends made while disconnected wait in the buffer up to its bound, then
//! are counted as dropped. Every such event is a [`BridgeEvent`], logged
//! with `tracing` and kept for [`Bridge::take_events`].

mod bridge;
pub mod config;
mod event;
mod net;
mod queue;
mod queued;
pub mod subject;
pub mod wire;

pub use bridge::{Bridge, BridgeError, BridgeStats, Pumped};
pub use config::{BridgeConfig, ConfigError, TlsConfig};
pub use event::BridgeEvent;
