//! Stored once messages across the cluster: a JetStream stream with
//! work-queue retention, which keeps each message until one consumer
//! acknowledges it, and then deletes it for everybody.
//!
//! Every node that imports keys pulls from one durable consumer (a
//! work-queue stream takes one consumer per subject, so the nodes share
//! it): the server hands each message to one of them at a time. The node
//! hands it to its game thread, which delivers it as a local `once` (its
//! first listener consumes it, now or when one comes) and settles it at
//! the same pump: taken (acknowledged: gone for good, a restart included),
//! not for this node (a key it does not import: offered again, to any
//! node, a second later), or refused (unreadable: dropped).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream::{self, AckKind, consumer, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::watch;

use crate::event::BridgeEvent;
use crate::net::{In, NetShared, Settle, oversized};
use crate::queue;

/// How long a stored once this node left waits before the stream offers
/// it again (to any node).
const LATER: Duration = Duration::from_secs(1);
/// How long a node may hold a stored once before the stream offers it to
/// another: far past a tick, since the game settles it at its next pump.
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
}

/// Stored once messages handed to the game thread and not settled yet
/// (at most [`MAX_HELD`]: the server hands out no more unacknowledged).
#[derive(Clone, Default)]
pub(crate) struct Held(Arc<Mutex<HashMap<u64, jetstream::Message>>>);

impl Held {
    fn hold(&self, id: u64, message: jetstream::Message) {
        if let Ok(mut held) = self.0.lock() {
            held.insert(id, message);
        }
    }

    fn take(&self, id: u64) -> Option<jetstream::Message> {
        self.0.lock().ok()?.remove(&id)
    }

    /// Tells the server what became of `id`.
    pub(crate) async fn settle(&self, id: u64, settle: Settle) {
        if let Some(message) = self.take(id) {
            let _ = message.ack_with(kind(settle)).await;
        }
    }
}

fn kind(settle: Settle) -> AckKind {
    match settle {
        Settle::Taken => AckKind::Ack,
        Settle::Later => AckKind::Nak(Some(LATER)),
        Settle::Refused => AckKind::Term,
    }
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
    held: Held,
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
    let mut next_id = 0u64;
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
            if oversized(&shared, &message.subject, message.payload.len(), plan.max) {
                let _ = message.ack_with(AckKind::Term).await;
                continue;
            }
            next_id += 1;
            let (subject, payload) = (message.subject.clone(), message.payload.clone());
            held.hold(next_id, message);
            let handed = In::Queued {
                id: next_id,
                subject,
                payload,
            };
            if incoming.try_send(handed).is_err() {
                // The game is behind: offered again later, to any node.
                held.settle(next_id, Settle::Later).await;
                forward_dropped(&shared);
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
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
