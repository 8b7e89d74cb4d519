//! What a bridge reports: every fault and every message it had to drop.
//!
//! Nothing a bridge meets is a panic or an error the game must handle: a
//! peer's bad payload, a full buffer, a lost server are events, logged with
//! `tracing` (so `gantry run --trace` shows them) and kept for
//! [`crate::Bridge::take_events`].

use std::fmt;

/// One thing a bridge reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BridgeEvent {
    /// Connected to the server (again, after [`BridgeEvent::Disconnected`]).
    Connected,
    /// Lost the server; sends wait in the buffer until it comes back.
    Disconnected,
    /// The buffer of sends waiting to go out was full: `count` sends
    /// (counted from the first) were dropped. Reported at the first drop
    /// of a run of them and again, with the total, when the run ends.
    SendsDropped { count: u64, ended: bool },
    /// Messages from the cluster came faster than the game pumped them:
    /// `count` more were dropped.
    IncomingDropped { count: u64 },
    /// A peer's payload was bigger than `max_payload`; dropped unread.
    Oversized {
        subject: String,
        bytes: usize,
        limit: usize,
    },
    /// A peer's payload could not be read; dropped.
    Malformed { subject: String, reason: String },
    /// A message on a subject outside this node's imports; dropped.
    Outside { subject: String },
    /// This node's hub refused a peer's message (its arguments contradict
    /// the key's signature here, say); dropped, and the hub reported it.
    Refused { key: String, reason: String },
    /// A local send could not go out (an object argument, too big).
    NotSent { key: String, reason: String },
    /// The client failed (bad credentials, a TLS file, the server said no).
    Failed { reason: String },
}

impl fmt::Display for BridgeEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BridgeEvent::Connected => f.write_str("bridge connected"),
            BridgeEvent::Disconnected => {
                f.write_str("bridge disconnected; sends are buffered until it reconnects")
            }
            BridgeEvent::SendsDropped {
                count,
                ended: false,
            } => write!(f, "bridge buffer full: dropping sends ({count} so far)"),
            BridgeEvent::SendsDropped { count, ended: true } => {
                write!(f, "bridge dropped {count} sends while its buffer was full")
            }
            BridgeEvent::IncomingDropped { count } => write!(
                f,
                "bridge dropped {count} incoming messages: the game did not pump them in time"
            ),
            BridgeEvent::Oversized {
                subject,
                bytes,
                limit,
            } => write!(
                f,
                "bridge dropped a {bytes}-byte message on `{subject}` (limit {limit} bytes)"
            ),
            BridgeEvent::Malformed { subject, reason } => {
                write!(
                    f,
                    "bridge dropped a malformed message on `{subject}`: {reason}"
                )
            }
            BridgeEvent::Outside { subject } => {
                write!(
                    f,
                    "bridge dropped a message on `{subject}`: not an imported key"
                )
            }
            BridgeEvent::Refused { key, reason } => {
                write!(f, "bridge: `{key}` from another node refused: {reason}")
            }
            BridgeEvent::NotSent { key, reason } => {
                write!(f, "bridge: `{key}` not sent to the cluster: {reason}")
            }
            BridgeEvent::Failed { reason } => write!(f, "bridge: {reason}"),
        }
    }
}
