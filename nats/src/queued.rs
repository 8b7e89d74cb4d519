//! Stored once messages across the cluster: a JetStream stream with
//! work-queue retention, which keeps each message until one consumer
//! acknowledges it, and then deletes it for everybody.
//!
//! Every node that imports keys pulls from one durable consumer (a
//! work-queue stream takes one consumer per subject, so the nodes share
//! it): the server hands each message to one of them at a time. A node
//! settles it here, on the network thread, before the game sees it: a key
//! it imports is acknowledged, and only once the server confirmed the
//! acknowledgement (a double ack) is it handed to the game thread, which
//! delivers it as a local `once` at its next pump. So a game that does not
//! pump for a while holds the message, and the stream never offers it to
//! another node meanwhile: taken is taken, by one node. (An acknowledgement
//! the server does not confirm — the connection lost just then — leaves
//! the message undelivered here; the server may offer it again, to any
//! node: at most one node ever delivers it.) A key it does not import is
//! offered again, to any node, a second later; an unreadable one is
//! dropped.
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, AckKind, consumer, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::watch;

use crate::event::BridgeEvent;
use crate::net::{In, NetShared, oversized};
use crate::queue;
use crate::subject::{Subjects, in_subtree};

/// How long a stored once this node left waits before the stream offers
/// it again (to any node).
const LATER: Duration = Duration::from_secs(1);
/// How long a node may hold a stored once unsettled before the stream
/// offers it to another: the network thread settles it as it arrives,
/// whether or not the game pumps.
const ACK_WAIT: Duration = Duration::from_secs(30);
/// The most stored once messages a node holds unsettled at a time.
const MAX_HELD: i64 = 256;
/// The most stored once messages the cluster keeps, and their most
/// bytes; past either, a new one is refused (and reported) rather than an
/// old one dropped.
const MAX_QUEUED: i64 = 100_000;
const MAX_QUEUED_BYTES: i64 = 64 * 1024 * 1024;
/// The consumer every node shares.
const CONSUMER: &str = "gantry";

/// The stream, as this node sees it.
pub(crate) struct Stream {
    pub name: String,
    /// The subjects it keeps (`<cluster>-queue.>`).
    pub subjects: String,
    /// Does this node take from it (it imports something)?
    pub takes: bool,
    /// The largest payload.
    pub max: usize,
    /// The cluster's subjects, and the subtrees this node imports.
    pub cluster: Subjects,
    pub imports: Vec<String>,
}

/// Puts a stored once into the stream and waits for the server to say it
/// keeps it.
pub(crate) async fn put(
    client: &async_nats::Client,
    subject: String,
    payload: Bytes,
) -> Result<(), String> {
    let js = jetstream::new(client.clone());
    let ack = js
        .publish(subject, payload)
        .await
        .map_err(|e| format!("queueing in the cluster: {e}"))?;
    match tokio::time::timeout(Duration::from_secs(5), ack).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("queueing in the cluster: {e}")),
        Err(_) => Err("queueing in the cluster: no answer within 5 s".into()),
    }
}

/// Makes (or opens) the stream, says so, and, when this node takes from
/// it, hands its messages to the game thread for as long as it runs.
pub(crate) async fn take(
    client: async_nats::Client,
    plan: Stream,
    ready: watch::Sender<bool>,
    incoming: queue::Sender<In>,
    shared: Arc<NetShared>,
) {
    let js = jetstream::new(client);
    let mut delay = Duration::from_millis(50);
    let mut told = false;
    let consumer = loop {
        match open(&js, &plan).await {
            Ok(consumer) => break consumer,
            Err(reason) => {
                if !told {
                    told = true;
                    shared.push(BridgeEvent::Failed { reason });
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
        }
    };
    let _ = ready.send(true);
    let Some(consumer) = consumer else {
        return;
    };
    loop {
        let messages = consumer
            .stream()
            .max_messages_per_batch(16)
            .messages()
            .await;
        let mut messages = match messages {
            Ok(messages) => messages,
            Err(_) => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        while let Some(message) = messages.next().await {
            // A missed heartbeat or a lost server: the stream says so and
            // goes on; the client resumes the pull once reconnected.
            let Ok(message) = message else { continue };
            settle(&plan, message, &incoming, &shared).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Takes, leaves or drops one stored once, and hands a taken one to the
/// game thread.
async fn settle(
    plan: &Stream,
    message: jetstream::Message,
    incoming: &queue::Sender<In>,
    shared: &NetShared,
) {
    if oversized(shared, &message.subject, message.payload.len(), plan.max) {
        let _ = message.ack_with(AckKind::Term).await;
        return;
    }
    let imported = match plan.cluster.parse_queued(&message.subject) {
        Some((_, key)) => plan.imports.iter().any(|root| in_subtree(key, root)),
        _ => {
            shared.push(BridgeEvent::Outside {
                subject: message.subject.to_string(),
            });
            let _ = message.ack_with(AckKind::Term).await;
            return;
        }
    };
    // Not for this node, or the game is behind: offered again later, to
    // any node (the game's queue is checked before the message is taken,
    // since a taken one must not be dropped).
    if !imported || incoming.len() >= incoming.bound() {
        if imported {
            forward_dropped(shared);
        }
        let _ = message.ack_with(AckKind::Nak(Some(LATER))).await;
        return;
    }
    if message.double_ack().await.is_err() {
        // Not confirmed: maybe offered again, to any node; not here.
        return;
    }
    // Past the bound by at most this one: the check above is a moment old.
    incoming.send_anyway(In::Queued {
        subject: message.subject.clone(),
        payload: message.payload.clone(),
    });
}

fn forward_dropped(shared: &NetShared) {
    shared
        .incoming_dropped
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// The stream (made when missing) and, for a node that takes from it, the
/// shared consumer.
async fn open(
    js: &jetstream::Context,
    plan: &Stream,
) -> Result<Option<consumer::PullConsumer>, String> {
    let config = stream::Config {
        name: plan.name.clone(),
        subjects: vec![plan.subjects.clone()],
        retention: stream::RetentionPolicy::WorkQueue,
        discard: stream::DiscardPolicy::New,
        max_messages: MAX_QUEUED,
        max_bytes: MAX_QUEUED_BYTES,
        max_message_size: i32::try_from(plan.max).unwrap_or(i32::MAX),
        storage: stream::StorageType::File,
        ..Default::default()
    };
    let made = match js.get_or_create_stream(config).await {
        Ok(made) => made,
        Err(e) => js
            .get_stream(&plan.name)
            .await
            .map_err(|_| format!("opening the cluster's queue `{}`: {e}", plan.name))?,
    };
    if !plan.takes {
        return Ok(None);
    }
    made.get_or_create_consumer(
        CONSUMER,
        consumer::pull::Config {
            durable_name: Some(CONSUMER.into()),
            ack_policy: consumer::AckPolicy::Explicit,
            ack_wait: ACK_WAIT,
            max_ack_pending: MAX_HELD,
            ..Default::default()
        },
    )
    .await
    .map(Some)
    .map_err(|e| format!("joining the cluster's queue `{}`: {e}", plan.name))
}
