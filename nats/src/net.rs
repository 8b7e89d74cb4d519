//! The network side: an `async-nats` client on a thread of its own, with a
//! small current-thread tokio runtime. It talks to the game thread only
//! through bounded channels and a few atomics, so the game never waits
//! for the network: a send is a `try_send` into [`Out`] (or, a plain
//! publish while connected, straight into the client's own queue, polled
//! once: see `Shared::publish_now`), and what arrives waits in [`In`] (or
//! in the client's subscriptions) until the game's next
//! [`crate::Bridge::pump`].

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::Subject;
use async_nats::jetstream::{self, kv};
use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::watch;

use crate::config::BridgeConfig;
use crate::event::BridgeEvent;
use crate::queue;

/// Sent from the game thread to the network thread.
pub(crate) enum Out {
    /// A subject is a cheap clone (shared bytes): the game thread keeps
    /// one per key instead of formatting it per send.
    Publish { subject: Subject, payload: Bytes },
    /// A stored message: the cluster's latest value of `key`.
    Put { key: String, payload: Bytes },
    Request {
        id: u64,
        subject: String,
        payload: Bytes,
        timeout: Duration,
    },
    /// A stored once: into the cluster's work-queue stream.
    Enqueue {
        key: String,
        subject: String,
        payload: Bytes,
    },
    /// The game thread's subscriptions, given back to be dropped here: a
    /// subscription unsubscribes through the runtime as it drops, and
    /// the game thread has none.
    Release(Vec<async_nats::Subscriber>),
}

/// Sent from the network thread to the game thread.
pub(crate) enum In {
    /// A stored once from the work-queue stream, taken by this node
    /// already (acknowledged: gone from the stream for every node).
    Queued {
        subject: Subject,
        payload: Bytes,
    },
    Stored {
        key: String,
        payload: Bytes,
    },
    /// The first answer to request `id`; `None`: none in time, or nobody
    /// listens anywhere.
    Reply {
        id: u64,
        answer: Option<Bytes>,
    },
}

/// The most status events kept between two pumps.
const MAX_STATUS: usize = 64;

/// What both threads read: connection state and counters.
#[derive(Default)]
pub(crate) struct NetShared {
    pub connected: AtomicBool,
    /// Subscribed and flushed: a peer's send from now on is heard.
    /// Cleared at each (re)connection until the client's subscriptions,
    /// which it sends again then, are flushed through the server.
    pub ready: AtomicBool,
    pub subscribed: AtomicBool,
    /// The subscriptions to the imported subtrees, made here and taken by
    /// the game thread, which polls them at each pump: a peer's message
    /// goes from the client's reader straight to the game thread, with
    /// no task or queue of the bridge's between them.
    pub subscribers: Mutex<Vec<async_nats::Subscriber>>,
    reconnected: tokio::sync::Notify,
    pub incoming_dropped: AtomicU64,
    /// The client, once made: the game thread publishes through it
    /// itself when nothing of its waits here (see `Shared::publish_now`).
    pub client: Mutex<Option<async_nats::Client>>,
    /// Messages the game thread queued for this thread and this thread
    /// has not handed to the client yet: while any is, a publish takes the
    /// queue too, behind them, so the client gets everything in the
    /// order the game sent it.
    pub in_flight: AtomicUsize,
    status: Mutex<VecDeque<BridgeEvent>>,
    /// Something waits in `status`: a pump that finds nothing there takes
    /// no lock.
    has_status: AtomicBool,
}

impl NetShared {
    pub(crate) fn push(&self, event: BridgeEvent) {
        if let Ok(mut status) = self.status.lock()
            && status.len() < MAX_STATUS
        {
            status.push_back(event);
            self.has_status.store(true, Ordering::Release);
        }
    }

    pub(crate) fn take(&self) -> VecDeque<BridgeEvent> {
        // A load first: a pump that finds nothing writes nothing either.
        if !self.has_status.load(Ordering::Acquire)
            || !self.has_status.swap(false, Ordering::AcqRel)
        {
            return VecDeque::new();
        }
        self.status
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }
}

/// What the network thread subscribes to, worked out on the game thread.
pub(crate) struct Plan {
    pub config: BridgeConfig,
    /// Plain subscriptions (global and world lanes).
    pub filters: Vec<String>,
    /// Queue subscriptions (once lane), in queue group `queue`.
    pub once_filters: Vec<String>,
    pub queue: String,
    /// KV keys watched (imported subtrees).
    pub kv_filters: Vec<String>,
    pub bucket: String,
    /// The work-queue stream of stored once messages, what it keeps, and
    /// whether this node takes from it (it imports something).
    pub queue_stream: String,
    pub queue_subjects: String,
    pub takes_queued: bool,
    /// The cluster's subjects and the imported subtrees, for telling which
    /// stored onces this node takes.
    pub subjects: crate::subject::Subjects,
    pub imports: Vec<String>,
    /// A subject nobody serves: the server's "no responders" to a
    /// request on it proves this node's subscriptions are in effect.
    pub probe: String,
}

pub(crate) fn spawn(
    plan: Plan,
    out: queue::Receiver<Out>,
    incoming: queue::Sender<In>,
    shared: Arc<NetShared>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("gantry-nats".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    shared.push(BridgeEvent::Failed {
                        reason: format!("no runtime for the bridge: {e}"),
                    });
                    return;
                }
            };
            runtime.block_on(run(plan, out, incoming, shared));
        })
}

async fn options(
    config: &BridgeConfig,
    shared: Arc<NetShared>,
    state: watch::Sender<bool>,
) -> Result<async_nats::ConnectOptions, String> {
    let mut options = match &config.credentials {
        Some(path) => async_nats::ConnectOptions::with_credentials_file(path)
            .await
            .map_err(|e| format!("credentials file {}: {e}", path.display()))?,
        None => async_nats::ConnectOptions::new(),
    };
    if let Some(token) = &config.token {
        options = options.token(token.clone());
    }
    if let (Some(user), Some(password)) = (&config.user, &config.password) {
        options = options.user_and_password(user.clone(), password.clone());
    }
    if config.tls.required {
        options = options.require_tls(true);
    }
    if let Some(roots) = &config.tls.root_certificates {
        options = options.add_root_certificates(roots.clone());
    }
    if let (Some(cert), Some(key)) = (&config.tls.client_certificate, &config.tls.client_key) {
        options = options.add_client_certificate(cert.clone(), key.clone());
    }
    if let Some(name) = &config.name {
        options = options.name(name);
    }
    Ok(options
        .subscription_capacity(config.buffer)
        // The server does not send this connection's own messages back
        // to it: a node would only drop them (it heard its sends
        // locally), after reading and parsing each one.
        .no_echo()
        .retry_on_initial_connect()
        .max_reconnects(None)
        .connection_timeout(Duration::from_secs(2))
        // Backoff from 50 ms doubling to 2 s: a restarted server is found
        // within 2 s, a dead one is not hammered.
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis(50u64 << attempts.min(6)).min(Duration::from_secs(2))
        })
        .event_callback(move |event| {
            let shared = shared.clone();
            let state = state.clone();
            async move {
                match event {
                    async_nats::Event::Connected => {
                        shared.ready.store(false, Ordering::SeqCst);
                        shared.reconnected.notify_one();
                        let _ = state.send(true);
                        shared.connected.store(true, Ordering::SeqCst);
                        shared.push(BridgeEvent::Connected);
                    }
                    async_nats::Event::Disconnected => {
                        // The network loop hears of it before the game
                        // can: nothing sent after the game sees
                        // "disconnected" is taken from the buffer.
                        let _ = state.send(false);
                        shared.push(BridgeEvent::Disconnected);
                        shared.connected.store(false, Ordering::SeqCst);
                    }
                    async_nats::Event::ServerError(e) => shared.push(BridgeEvent::Failed {
                        reason: format!("server error: {e}"),
                    }),
                    async_nats::Event::ClientError(e) => shared.push(BridgeEvent::Failed {
                        reason: format!("client error: {e}"),
                    }),
                    // A subscription's queue (`buffer` long) was full: the
                    // game did not pump in time, and the client dropped one.
                    async_nats::Event::SlowConsumer(_) => {
                        shared.incoming_dropped.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => {}
                }
            }
        }))
}

async fn run(
    plan: Plan,
    mut out: queue::Receiver<Out>,
    incoming: queue::Sender<In>,
    shared: Arc<NetShared>,
) {
    let (state_tx, mut state) = watch::channel(false);
    let options = match options(&plan.config, shared.clone(), state_tx).await {
        Ok(options) => options,
        Err(reason) => return shared.push(BridgeEvent::Failed { reason }),
    };
    let client = match options.connect(plan.config.url.as_str()).await {
        Ok(client) => client,
        Err(e) => {
            return shared.push(BridgeEvent::Failed {
                reason: format!("cannot connect to {}: {e}", plan.config.url),
            });
        }
    };
    if let Ok(mut shared_client) = shared.client.lock() {
        *shared_client = Some(client.clone());
    }
    let max = plan.config.max_payload;
    tokio::spawn(listen(
        client.clone(),
        plan.filters.clone(),
        plan.once_filters.clone(),
        plan.queue.clone(),
        shared.clone(),
    ));
    // After a (re)connection, ready once a round trip has gone through the
    // server behind the subscriptions the client sent again: a request on
    // a subject nobody serves, answered by the server itself ("no
    // responders"), after it took every subscription before it. (Not an
    // echo of our own message: the connection asks for none, see
    // `no_echo` in `options`.)
    let (again, ready_shared, probe) = (client.clone(), shared.clone(), plan.probe.clone());
    tokio::spawn(async move {
        loop {
            ready_shared.reconnected.notified().await;
            while !ready_shared.subscribed.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            loop {
                let request = async_nats::Request::new().timeout(Some(Duration::from_millis(500)));
                let answered = match again.send_request(probe.clone(), request).await {
                    Ok(_) => true,
                    Err(e) => e.kind() == async_nats::RequestErrorKind::NoResponders,
                };
                if answered {
                    ready_shared.ready.store(true, Ordering::SeqCst);
                    break;
                }
                if !ready_shared.connected.load(Ordering::SeqCst) {
                    break;
                }
            }
        }
    });
    let (kv_tx, kv_rx) = watch::channel(None::<kv::Store>);
    let (queue_tx, queue_rx) = watch::channel(false);
    tokio::spawn(crate::queued::take(
        client.clone(),
        crate::queued::Stream {
            name: plan.queue_stream.clone(),
            subjects: plan.queue_subjects.clone(),
            takes: plan.takes_queued,
            max,
            cluster: plan.subjects.clone(),
            imports: plan.imports.clone(),
        },
        queue_tx,
        incoming.clone(),
        shared.clone(),
    ));
    let mut jet = Jet { kv_rx, queue_rx };
    tokio::spawn(stored(
        client.clone(),
        plan.bucket.clone(),
        plan.kv_filters.clone(),
        kv_tx,
        incoming.clone(),
        shared.clone(),
        (max, plan.config.store_max_bytes),
    ));

    loop {
        // Disconnected: nothing is taken from the buffer, so the game's
        // sends wait there, up to its bound, until the server is back.
        while !*state.borrow_and_update() {
            if out.is_closed() {
                return;
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), state.changed()).await;
        }
        let next = tokio::select! {
            biased;
            _ = state.changed() => continue,
            next = out.recv() => next,
        };
        let Some(next) = next else {
            let _ = client.flush().await;
            return;
        };
        send(next, &client, &mut jet, &incoming, &shared).await;
        shared.in_flight.fetch_sub(1, Ordering::AcqRel);
        // What else waits goes out without a select per message, while
        // the connection stands (the flag is read without a lock).
        let mut yielded = false;
        for _ in 0..256 {
            if !shared.connected.load(Ordering::SeqCst) {
                break;
            }
            match out.try_recv() {
                Some(next) => {
                    send(next, &client, &mut jet, &incoming, &shared).await;
                    shared.in_flight.fetch_sub(1, Ordering::AcqRel);
                }
                // Empty: the client writes what it has first (its task
                // runs on this thread), and meanwhile the game may send
                // more. Only then does this loop sleep: a game sending a
                // burst wakes this thread once, not once per send (a
                // wake is a system call on the game thread).
                None if !yielded => {
                    yielded = true;
                    tokio::task::yield_now().await;
                }
                None => break,
            }
        }
    }
}

/// Sends one message from the game thread. A publish, the common case,
/// is sent here; the rest in [`handle`], boxed: its futures (a KV put)
/// are large, and building one in place per message would copy
/// kilobytes for every publish.
async fn send(
    next: Out,
    client: &async_nats::Client,
    jet: &mut Jet,
    incoming: &queue::Sender<In>,
    shared: &NetShared,
) {
    match next {
        Out::Publish { subject, payload } => publish(client, subject, payload, shared).await,
        Out::Release(subscribers) => drop(subscribers),
        other => Box::pin(handle(other, client, jet, incoming, shared)).await,
    }
}

async fn publish(
    client: &async_nats::Client,
    subject: Subject,
    payload: Bytes,
    shared: &NetShared,
) {
    if let Err(e) = client.publish(subject, payload).await {
        shared.push(BridgeEvent::Failed {
            reason: format!("publish: {e}"),
        });
    }
}

/// What the JetStream side of the loop waits on.
struct Jet {
    /// The cluster's KV bucket, once open.
    kv_rx: watch::Receiver<Option<kv::Store>>,
    /// The work-queue stream exists.
    queue_rx: watch::Receiver<bool>,
}

/// Sends a message that is not a publish.
async fn handle(
    next: Out,
    client: &async_nats::Client,
    jet: &mut Jet,
    incoming: &queue::Sender<In>,
    shared: &NetShared,
) {
    match next {
        Out::Publish { subject, payload } => publish(client, subject, payload, shared).await,
        Out::Release(subscribers) => drop(subscribers),
        Out::Put { key, payload } => {
            let store = match tokio::time::timeout(
                Duration::from_secs(5),
                jet.kv_rx.wait_for(Option::is_some),
            )
            .await
            {
                Ok(Ok(store)) => store.clone(),
                _ => {
                    shared.push(BridgeEvent::NotSent {
                        key,
                        reason: "the cluster's store (JetStream) is not available".into(),
                    });
                    return;
                }
            };
            if let Some(store) = store
                && let Err(e) = store.put(&key, payload).await
            {
                shared.push(BridgeEvent::NotSent {
                    key,
                    reason: format!("storing in the cluster: {e}"),
                });
            }
        }
        Out::Enqueue {
            key,
            subject,
            payload,
        } => {
            let ready =
                tokio::time::timeout(Duration::from_secs(5), jet.queue_rx.wait_for(|r| *r)).await;
            if !matches!(ready, Ok(Ok(_))) {
                return shared.push(BridgeEvent::NotSent {
                    key,
                    reason: "the cluster's queue (JetStream) is not available".into(),
                });
            }
            if let Err(reason) = crate::queued::put(client, subject, payload).await {
                shared.push(BridgeEvent::NotSent { key, reason });
            }
        }
        Out::Request {
            id,
            subject,
            payload,
            timeout,
        } => {
            let client = client.clone();
            let incoming = incoming.clone();
            tokio::spawn(async move {
                let request = async_nats::Request::new()
                    .payload(payload)
                    .timeout(Some(timeout));
                let answer = client
                    .send_request(subject, request)
                    .await
                    .ok()
                    .map(|m| m.payload);
                incoming.send_anyway(In::Reply { id, answer });
            });
        }
    }
}

/// Hands a message to the game thread, or counts it dropped when the game
/// has not pumped what came before.
pub(crate) fn forward(incoming: &queue::Sender<In>, shared: &NetShared, message: In) {
    if incoming.try_send(message).is_err() {
        shared.incoming_dropped.fetch_add(1, Ordering::Relaxed);
    }
}

pub(crate) fn oversized(shared: &NetShared, subject: &str, bytes: usize, limit: usize) -> bool {
    if bytes > limit {
        shared.push(BridgeEvent::Oversized {
            subject: subject.to_owned(),
            bytes,
            limit,
        });
        return true;
    }
    false
}

async fn listen(
    client: async_nats::Client,
    filters: Vec<String>,
    once_filters: Vec<String>,
    queue: String,
    shared: Arc<NetShared>,
) {
    let mut subscribers = Vec::new();
    for filter in filters {
        match client.subscribe(filter.clone()).await {
            Ok(s) => subscribers.push(s),
            Err(e) => shared.push(BridgeEvent::Failed {
                reason: format!("subscribing to `{filter}`: {e}"),
            }),
        }
    }
    for filter in once_filters {
        match client.queue_subscribe(filter.clone(), queue.clone()).await {
            Ok(s) => subscribers.push(s),
            Err(e) => shared.push(BridgeEvent::Failed {
                reason: format!("subscribing to `{filter}`: {e}"),
            }),
        }
    }
    if let Ok(mut taken) = shared.subscribers.lock() {
        taken.extend(subscribers);
    }
    // Ready once the probe comes back (see `run`).
    shared.subscribed.store(true, Ordering::SeqCst);
}

/// Opens the cluster's KV bucket (retrying until JetStream answers) and
/// watches the imported keys: their latest values first, then each new one.
async fn stored(
    client: async_nats::Client,
    bucket: String,
    filters: Vec<String>,
    store_tx: watch::Sender<Option<kv::Store>>,
    incoming: queue::Sender<In>,
    shared: Arc<NetShared>,
    (max, max_bytes): (usize, u64),
) {
    let js = jetstream::new(client);
    let mut delay = Duration::from_millis(50);
    let mut told = false;
    let store = loop {
        let made = js
            .create_key_value(kv::Config {
                bucket: bucket.clone(),
                history: 1,
                max_value_size: i32::try_from(max).unwrap_or(i32::MAX),
                max_bytes: i64::try_from(max_bytes).unwrap_or(i64::MAX),
                ..Default::default()
            })
            .await;
        match made {
            Ok(store) => break store,
            Err(e) => {
                // An existing bucket (made by a peer) is opened as is;
                // one made with no bound on its size is reported.
                if let Ok(store) = js.get_key_value(&bucket).await {
                    if let Ok(status) = store.status().await
                        && status.info.config.max_bytes <= 0
                    {
                        shared.push(BridgeEvent::Failed {
                            reason: format!(
                                "the cluster's store `{bucket}` has no bound on its size \
                                 (made by another program?)"
                            ),
                        });
                    }
                    break store;
                }
                if !told {
                    told = true;
                    shared.push(BridgeEvent::Failed {
                        reason: format!("opening the cluster's store `{bucket}`: {e}"),
                    });
                }
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
        }
    };
    let _ = store_tx.send(Some(store.clone()));
    for filter in filters {
        let watch = match store.watch_with_history(&filter).await {
            Ok(watch) => watch,
            Err(e) => {
                shared.push(BridgeEvent::Failed {
                    reason: format!("watching stored `{filter}`: {e}"),
                });
                continue;
            }
        };
        let incoming = incoming.clone();
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut watch = watch;
            while let Some(entry) = watch.next().await {
                let Ok(entry) = entry else { continue };
                if entry.operation != kv::Operation::Put
                    || oversized(&shared, &entry.key, entry.value.len(), max)
                {
                    continue;
                }
                forward(
                    &incoming,
                    &shared,
                    In::Stored {
                        key: entry.key,
                        payload: entry.value,
                    },
                );
            }
        });
    }
}
