//! The game thread's side of a bridge: the export listeners, the pump,
//! requests waiting for a peer's answer, and what is reported.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use async_nats::Subject;
use bytes::{Bytes, BytesMut};
use gantry_host::face::Faced;
use gantry_host::store::OnceFate;
use gantry_host::{
    Caller, Hub, Key, ListenOptions, ListenSpec, ListenerId, ListenerParams, Message, ObjectId,
    Reply, Responder, Source, Value, WorldId,
};
use thiserror::Error;

use crate::config::{BridgeConfig, ConfigError};
use crate::event::BridgeEvent;
use crate::net::{self, In, NetShared, Out, Plan};
use crate::queue;
use crate::subject::{Lane, Subjects, check_name, in_subtree, outermost};
use crate::wire;

/// The most reports kept between two [`Bridge::take_events`].
const MAX_KEPT_EVENTS: usize = 1024;

/// The bytes [`Shared::encode`] takes at a time for payloads.
const ARENA: usize = 16 * 1024;

/// Below this much room left, the arena takes [`ARENA`] more before a
/// payload is written (a larger payload grows it as it is written).
const ARENA_LOW: usize = 512;

/// The most subjects remembered with their keys (see `known_subjects`).
const MAX_KNOWN_SUBJECTS: usize = 1024;

/// Why a bridge could not start, or a bridge call was refused.
#[derive(Debug, Error)]
pub enum BridgeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("bridge: listening on `{key}`: {reason}")]
    Listen { key: String, reason: String },
    #[error("bridge: no thread for the network: {0}")]
    Thread(#[from] std::io::Error),
    #[error("bridge: `{key}` is not in the exported keys")]
    NotExported { key: String },
    #[error("bridge: `{key}`: {reason}")]
    Payload { key: String, reason: String },
    #[error("bridge: the buffer is full; `{key}` was dropped")]
    Full { key: String },
}

/// Counters since the bridge started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BridgeStats {
    /// Messages handed to the network (sends, stores, requests, answers).
    pub sent: u64,
    /// Messages from peers delivered to this hub.
    pub received: u64,
    /// Local sends dropped because the buffer was full.
    pub dropped_sends: u64,
    /// Peers' messages dropped because the game did not pump in time.
    pub dropped_incoming: u64,
    /// Peers' messages refused: malformed, oversized, outside the imports,
    /// or contradicting this hub's table.
    pub refused: u64,
    /// Stored messages kept here but not put in the cluster's store: on
    /// new keys past `max_stored_keys`.
    pub stores_refused: u64,
}

/// What one [`Bridge::pump`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pumped {
    /// Peers' messages delivered to the hub.
    pub delivered: usize,
    /// Peers' messages dropped (and reported).
    pub dropped: usize,
}

/// A hub's keys shared with other nodes of a cluster through NATS.
///
/// Start one beside the hub ([`Bridge::start`]) and call [`Bridge::pump`]
/// once per tick on the hub's thread. Global sends (and sends on worlds
/// named with [`Bridge::name_world`]) on exported keys go out; peers'
/// sends on imported keys come in at the next pump, checked against this
/// hub's table like any send. Object sends stay local (an object id
/// means nothing on another node) unless the game gives the object a
/// cluster name ([`Bridge::name_object`]). Hooks stay local too: a hook's listeners
/// change its payload in place, within one call, which a network round
/// trip per listener cannot do.
pub struct Bridge {
    shared: Rc<Shared>,
    hub: Hub,
    listeners: Vec<ListenerId>,
    incoming: RefCell<queue::Receiver<In>>,
    /// The imported subtrees' subscriptions, once the network thread made
    /// them (see [`NetShared::subscribers`]). Never dropped here.
    subscribers: RefCell<Vec<async_nats::Subscriber>>,
    /// Set when a subscription got a message since it was found empty.
    arrived: Arc<Arrived>,
    /// [`Bridge::arrived`] as a waker.
    waker: std::task::Waker,
    net: Arc<NetShared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A host's event sink.
type EventFn = dyn Fn(&BridgeEvent);

/// What the export listeners and the pump share on the game thread.
struct Shared {
    node: u64,
    subjects: Subjects,
    export: Vec<String>,
    import: Vec<String>,
    max_payload: usize,
    buffer: usize,
    request_timeout: Duration,
    out: queue::Sender<Out>,
    /// The key of a peer's message being delivered now: the export
    /// listener (called first, see `ORDER`) lets it pass without sending
    /// it back out. A send a local listener makes in reply still goes out.
    injecting: Cell<Option<Key>>,
    worlds: RefCell<Vec<(WorldId, String)>>,
    objects: RefCell<Vec<(ObjectId, String)>>,
    pending: RefCell<HashMap<u64, (Responder, Instant)>>,
    next_request: Cell<u64>,
    events: RefCell<VecDeque<BridgeEvent>>,
    on_event: RefCell<Option<Rc<EventFn>>>,
    stats: Cell<BridgeStats>,
    /// Sends dropped in the current run of a full buffer.
    dropping: Cell<u64>,
    net: Arc<NetShared>,
    /// Global subjects by key index: a key's is made once.
    global_subjects: RefCell<Vec<Option<Subject>>>,
    /// Where payloads are written: one allocation serves many small
    /// payloads (each a shared slice of it), not one per send.
    arena: RefCell<BytesMut>,
    /// Global subjects peers' messages came on, with their keys' handles.
    known_subjects: RefCell<HashMap<Box<str>, Key>>,
    /// Local once messages on exported keys the export listener heard, by
    /// their values' address, until the hub's once relay (after the
    /// delivery) says whether another listener here took them.
    heard_once: RefCell<Vec<HeardOnce>>,
    /// The keys this node put in the cluster's store, at most
    /// `max_stored_keys` of them.
    stored_keys: RefCell<std::collections::HashSet<Box<str>>>,
    max_stored_keys: usize,
    /// The network thread's client, once it made one (see
    /// [`Shared::publish_now`]).
    client: RefCell<Option<async_nats::Client>>,
    /// The room of the last peer's send's values, for the next one's (a
    /// delivery inside a delivery makes its own).
    args: RefCell<Vec<Value>>,
    /// The last peer's send's values: its texts are shared by the next
    /// one's where equal (see [`wire::decode_after`]).
    last_args: RefCell<Vec<Value>>,
    /// The last global subject a peer's message came on, with its key's
    /// handle: a stream of one key's sends compares bytes, not hashes.
    last_subject: RefCell<Option<(Subject, Key)>>,
}

/// A local once the export listener heard: its values' address, its
/// key's handle, where it would cross, and its key.
type HeardOnce = (*const Value, Key, Lane, Rc<str>);

/// How a peer's message arrived: what the hub is asked to do with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrival {
    /// A send (or a request, with a reply subject).
    Live,
    /// The cluster's latest stored value.
    Stored,
    /// A once this node took: delivered as a local once.
    Once,
}

/// The most local once messages heard and not yet relayed (nested ones).
const MAX_HEARD_ONCE: usize = 64;

/// The export listener runs before every other listener of its key, so it
/// is the first to see a peer's message delivered (see `injecting`).
const ORDER: i32 = i32::MIN;

/// A node id unlikely to repeat between processes: std's per-process
/// random hash keys, the process id and the time.
fn node_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() | 1
}

impl Bridge {
    /// Starts a bridge for `hub`: checks the configuration, listens on the
    /// exported subtrees and starts the network thread. Returns at once,
    /// whether or not the server is up: the client connects (and later
    /// reconnects) in the background, and [`Bridge::is_connected`] says
    /// when it is.
    pub fn start(hub: &Hub, config: BridgeConfig) -> Result<Bridge, BridgeError> {
        let config = config.checked()?;
        let subjects = Subjects::new(&config.cluster)?;
        let export = outermost(&config.export);
        let import = outermost(&config.import);
        let (out_tx, out_rx) = queue::bounded(config.buffer);
        let (in_tx, in_rx) = queue::bounded(config.buffer);
        let net = Arc::new(NetShared::default());
        let shared = Rc::new(Shared {
            node: node_id(),
            subjects: subjects.clone(),
            export: export.clone(),
            import: import.clone(),
            max_payload: config.max_payload,
            buffer: config.buffer,
            request_timeout: config.request_timeout_duration(),
            out: out_tx,
            injecting: Cell::new(None),
            worlds: RefCell::new(Vec::new()),
            objects: RefCell::new(Vec::new()),
            pending: RefCell::new(HashMap::new()),
            next_request: Cell::new(0),
            events: RefCell::new(VecDeque::new()),
            on_event: RefCell::new(None),
            stats: Cell::new(BridgeStats::default()),
            dropping: Cell::new(0),
            net: net.clone(),
            global_subjects: RefCell::new(Vec::new()),
            arena: RefCell::new(BytesMut::new()),
            known_subjects: RefCell::new(HashMap::new()),
            heard_once: RefCell::new(Vec::new()),
            stored_keys: RefCell::new(Default::default()),
            max_stored_keys: config.max_stored_keys,
            client: RefCell::new(None),
            args: RefCell::new(Vec::new()),
            last_args: RefCell::new(Vec::new()),
            last_subject: RefCell::new(None),
        });
        let weak = Rc::downgrade(&shared);
        hub.set_once_relay(Some(Rc::new(move |key, _source, args, listeners| {
            weak.upgrade().map_or(OnceFate::AsUsual, |shared| {
                shared.relay_once(key, args, listeners)
            })
        })));
        let mut listeners = Vec::new();
        for subtree in &export {
            let weak = Rc::downgrade(&shared);
            let callback = Rc::new(move |m: &Message<'_>| {
                if let Some(shared) = weak.upgrade() {
                    shared.on_local(m);
                }
                Ok(())
            });
            let spec = ListenSpec::message(
                Source::Global,
                ListenOptions::new().partial().order(ORDER),
                ListenerParams::Dynamic,
                callback,
            )
            .with_responder();
            let id = hub
                .listen_raw(subtree, spec)
                .map_err(|e| BridgeError::Listen {
                    key: subtree.clone(),
                    reason: e.to_string(),
                })?;
            listeners.push(id);
        }
        let mut filters = Vec::new();
        let mut once_filters = Vec::new();
        let mut kv_filters = Vec::new();
        for subtree in &import {
            filters.extend(subjects.filters(&Lane::Global, subtree));
            filters.extend(subjects.filters(&Lane::World(String::new()), subtree));
            filters.extend(subjects.filters(&Lane::Object(String::new()), subtree));
            once_filters.extend(subjects.filters(&Lane::Once, subtree));
            kv_filters.push(subtree.clone());
            kv_filters.push(format!("{subtree}.>"));
        }
        let plan = Plan {
            probe: format!("{}-probe.{:x}", config.cluster, shared.node),
            bucket: format!("gantry_{}", config.cluster),
            queue_stream: format!("gantry_{}_once", config.cluster),
            queue_subjects: subjects.queued_all(),
            takes_queued: !import.is_empty(),
            subjects: subjects.clone(),
            imports: import.clone(),
            queue: format!("{}-once", config.cluster),
            config,
            filters,
            once_filters,
            kv_filters,
        };
        // The thread ends by itself once the bridge (the only sender) is
        // gone: dropping a bridge never waits for it ([`Bridge::close`]
        // does, within a bound).
        let thread = net::spawn(plan, out_rx, in_tx, net.clone())?;
        let arrived = Arc::new(Arrived(std::sync::atomic::AtomicBool::new(true)));
        Ok(Bridge {
            shared,
            hub: hub.clone(),
            listeners,
            incoming: RefCell::new(in_rx),
            subscribers: RefCell::new(Vec::new()),
            waker: std::task::Waker::from(arrived.clone()),
            arrived,
            net,
            thread: Some(thread),
        })
    }

    /// Stops the bridge, giving what waits in the buffer up to `within`
    /// to reach the server (a game's last sends before it exits). True
    /// when everything left; false when the time ran out (the rest is
    /// dropped, as it would be by dropping the bridge).
    pub fn close(mut self, within: Duration) -> bool {
        let thread = self.thread.take();
        // The listeners go and the last sender to the network thread with
        // them: it sends what is left, flushes and ends.
        drop(self);
        let Some(thread) = thread else {
            return true;
        };
        let deadline = Instant::now() + within;
        while !thread.is_finished() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        thread.join().is_ok()
    }

    /// This node's id, as its payloads carry it.
    pub fn node(&self) -> u64 {
        self.shared.node
    }

    /// Is the client connected to the server now?
    pub fn is_connected(&self) -> bool {
        self.net.connected.load(Ordering::SeqCst)
    }

    /// Connected and subscribed: a peer's send from now on is heard.
    pub fn is_ready(&self) -> bool {
        self.is_connected() && self.net.ready.load(Ordering::SeqCst)
    }

    /// Messages waiting in the buffer for the network (all of them while
    /// disconnected, up to the bound).
    pub fn waiting(&self) -> usize {
        self.shared.out.len()
    }

    pub fn stats(&self) -> BridgeStats {
        let mut stats = self.shared.stats.get();
        stats.dropped_incoming = self.net.incoming_dropped.load(Ordering::Relaxed);
        stats
    }

    /// Reports kept since the last call (at most 1024 are kept).
    pub fn take_events(&self) -> Vec<BridgeEvent> {
        self.shared.events.borrow_mut().drain(..).collect()
    }

    /// Called for every report as it happens (after the tracing event).
    pub fn on_event(&self, f: impl Fn(&BridgeEvent) + 'static) {
        *self.shared.on_event.borrow_mut() = Some(Rc::new(f));
    }

    /// Names `world` for the cluster: sends on it cross to the world of
    /// the same name on other nodes (which name theirs too). A name is one
    /// token of `[A-Za-z0-9_]`.
    pub fn name_world(&self, world: WorldId, name: &str) -> Result<(), BridgeError> {
        check_name("world", name)?;
        let mut worlds = self.shared.worlds.borrow_mut();
        worlds.retain(|(w, n)| *w != world && n != name);
        worlds.push((world, name.to_owned()));
        Ok(())
    }

    /// Names `object` for the cluster: sends on it (and messages stored on
    /// it) cross, on `<cluster>-o.<name>.<key>`, to the object of the same
    /// name on other nodes (which name theirs too); a peer's send on that
    /// name reaches this object's listeners. An object without a name
    /// keeps its sends on this node: its id means nothing elsewhere. A
    /// name is one token of `[A-Za-z0-9_]` (at most 64), so it can never
    /// reach past its own subject token; naming another object with it
    /// moves the name. An object's named sources ([`Hub::named`]) stay
    /// local.
    pub fn name_object(&self, object: ObjectId, name: &str) -> Result<(), BridgeError> {
        check_name("object", name)?;
        let mut objects = self.shared.objects.borrow_mut();
        objects.retain(|(o, n)| *o != object && n != name);
        objects.push((object, name.to_owned()));
        Ok(())
    }

    /// Takes `object`'s cluster name away: its sends stay here again.
    /// True when it had one.
    pub fn unname_object(&self, object: ObjectId) -> bool {
        let mut objects = self.shared.objects.borrow_mut();
        let before = objects.len();
        objects.retain(|(o, _)| *o != object);
        objects.len() != before
    }

    /// A live once message for the cluster: consumed by exactly one of
    /// the other nodes connected now, the one NATS's queue group hands it
    /// to (every node that imports the key is a member; the server sends
    /// no node its own messages, so not this one);
    /// that node delivers it as a local `once` (its first listener
    /// consumes it, or the first to arrive there). Not delivered here
    /// otherwise; lost when no node imports it now (see
    /// [`Bridge::store_once`]). A `once` made on the hub (by a script, or
    /// [`Hub::once`]) on an exported key is not this: taken by a listener
    /// here, it stays here; taken by none, it goes as a
    /// [`Bridge::store_once`] does (and the hub keeps it for no later
    /// listener of its own).
    pub fn once(&self, key: &str, args: &[Value]) -> Result<(), BridgeError> {
        let payload = self.cluster_payload(key, args)?;
        let subject = self.shared.subjects.of(&Lane::Once, key).into();
        self.push_or_full(key, Out::Publish { subject, payload })
    }

    /// A stored once message for the cluster: kept by the server (a
    /// JetStream stream with work-queue retention, `gantry_<cluster>_once`)
    /// until one node that imports the key takes it — one up now, or the
    /// first to start later — which delivers it as a local `once`. Taken,
    /// it is gone from the stream for every node, restarts included. A
    /// node that does not import the key leaves it for another.
    pub fn store_once(&self, key: &str, args: &[Value]) -> Result<(), BridgeError> {
        let payload = self.cluster_payload(key, args)?;
        let subject = self.shared.subjects.queued(&Lane::Global, key);
        self.push_or_full(
            key,
            Out::Enqueue {
                key: key.into(),
                subject,
                payload,
            },
        )
    }

    /// The payload of a message made for the cluster on exported `key`.
    fn cluster_payload(&self, key: &str, args: &[Value]) -> Result<Bytes, BridgeError> {
        if !self.shared.exports(key) {
            return Err(BridgeError::NotExported { key: key.into() });
        }
        self.shared.encode(key, args)
    }

    fn push_or_full(&self, key: &str, out: Out) -> Result<(), BridgeError> {
        if self.shared.push(key, out) {
            Ok(())
        } else {
            Err(BridgeError::Full { key: key.into() })
        }
    }

    /// Hands peers' messages that arrived since the last pump to `hub`
    /// (at most the buffer's bound per call: a flood cannot stall a
    /// tick), answers requests, expires the ones whose time is up, and
    /// files what happened on the network. Never waits.
    pub fn pump(&self, hub: &Hub) -> Pumped {
        let shared = &self.shared;
        shared.absorb_status();
        let dropped_in = self.net.incoming_dropped.load(Ordering::Relaxed);
        let mut stats = shared.stats.get();
        if dropped_in > stats.dropped_incoming {
            shared.event(BridgeEvent::IncomingDropped {
                count: dropped_in - stats.dropped_incoming,
            });
            stats.dropped_incoming = dropped_in;
            shared.stats.set(stats);
        }
        let mut pumped = Pumped::default();
        let mut incoming = self.incoming.borrow_mut();
        for _ in 0..shared.buffer {
            let Some(message) = incoming.try_recv() else {
                break;
            };
            if shared.take_in(hub, message) {
                pumped.delivered += 1;
            } else {
                pumped.dropped += 1;
            }
        }
        drop(incoming);
        let budget = shared
            .buffer
            .saturating_sub(pumped.delivered + pumped.dropped);
        self.pump_subscriptions(hub, budget, &mut pumped);
        shared.expire();
        pumped
    }

    /// Takes what the subscriptions hold, at most `budget` messages. They
    /// are polled with a waker that does nothing: the client's reader
    /// never wakes this thread, which looks at each pump.
    fn pump_subscriptions(&self, hub: &Hub, mut budget: usize, pumped: &mut Pumped) {
        use futures_util::StreamExt;
        let mut subscribers = std::mem::take(&mut *self.subscribers.borrow_mut());
        if subscribers.is_empty()
            && self.net.subscribed.load(Ordering::SeqCst)
            && let Ok(mut made) = self.net.subscribers.lock()
            && !made.is_empty()
        {
            subscribers.append(&mut made);
            self.arrived.0.store(true, Ordering::Release);
        }
        // Nothing arrived since every subscription was last found empty:
        // none is polled (a poll of an empty one costs atomics).
        if self.arrived.0.load(Ordering::Acquire) && self.arrived.0.swap(false, Ordering::AcqRel) {
            let mut cx = std::task::Context::from_waker(&self.waker);
            'all: for subscriber in &mut subscribers {
                loop {
                    if budget == 0 {
                        // Left unread: looked at again next pump.
                        self.arrived.0.store(true, Ordering::Release);
                        break 'all;
                    }
                    let std::task::Poll::Ready(Some(message)) = subscriber.poll_next_unpin(&mut cx)
                    else {
                        break;
                    };
                    budget -= 1;
                    if self.shared.take_message(hub, message) {
                        pumped.delivered += 1;
                    } else {
                        pumped.dropped += 1;
                    }
                }
            }
        }
        let mut kept = self.subscribers.borrow_mut();
        // A pump from inside a listener found none and made none.
        subscribers.append(&mut kept);
        *kept = subscribers;
    }
}

/// The waker the game thread polls subscriptions with: the client's
/// reader, putting a message in an empty one, sets the flag (an atomic
/// store, no system call: the game thread is not woken, it looks at its
/// next pump).
struct Arrived(std::sync::atomic::AtomicBool);

impl std::task::Wake for Arrived {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

impl Drop for Bridge {
    /// The export listeners go with the bridge; the network thread ends
    /// once the last sender to it is gone.
    fn drop(&mut self) {
        self.hub.set_once_relay(None);
        for id in self.listeners.drain(..) {
            self.hub.unlisten(id);
        }
        // Subscriptions unsubscribe through a runtime as they drop: they
        // go back to the network thread's. Gone already, it took the
        // connection with it; they are let go without a word to it.
        let mut subscribers = std::mem::take(&mut *self.subscribers.borrow_mut());
        if let Ok(mut made) = self.net.subscribers.lock() {
            subscribers.append(&mut made);
        }
        if !subscribers.is_empty() {
            // Counted as every queued message is (the network thread
            // counts it off once handled).
            self.net.in_flight.fetch_add(1, Ordering::AcqRel);
            if let Err(Out::Release(subscribers)) =
                self.shared.out.try_send_anyway(Out::Release(subscribers))
            {
                self.net.in_flight.fetch_sub(1, Ordering::AcqRel);
                std::mem::forget(subscribers);
            }
        }
    }
}

impl Shared {
    /// The subject a key's sends go out on; a global one is made once.
    fn subject(&self, handle: Key, lane: &Lane, key: &str) -> Subject {
        if *lane != Lane::Global {
            return self.subjects.of(lane, key).into();
        }
        let mut subjects = self.global_subjects.borrow_mut();
        let at = handle.index();
        if subjects.len() <= at {
            subjects.resize(at + 1, None);
        }
        subjects[at]
            .get_or_insert_with(|| crate::subject::lasting(self.subjects.of(lane, key)))
            .clone()
    }

    fn exports(&self, key: &str) -> bool {
        self.export.iter().any(|root| in_subtree(key, root))
    }

    fn imports(&self, key: &str) -> bool {
        self.import.iter().any(|root| in_subtree(key, root))
    }

    fn event(&self, event: BridgeEvent) {
        match &event {
            BridgeEvent::Connected => tracing::info!("{event}"),
            _ => tracing::warn!("{event}"),
        }
        {
            let mut events = self.events.borrow_mut();
            if events.len() < MAX_KEPT_EVENTS {
                events.push_back(event.clone());
            }
        }
        let hook = self.on_event.borrow().clone();
        if let Some(hook) = hook {
            hook(&event);
        }
    }

    fn count(&self, f: impl FnOnce(&mut BridgeStats)) {
        let mut stats = self.stats.get();
        f(&mut stats);
        self.stats.set(stats);
    }

    /// A payload for `args`, written straight into the arena (see
    /// `arena`) and split off it.
    fn encode(&self, key: &str, args: &[Value]) -> Result<Bytes, BridgeError> {
        let mut arena = self.arena.borrow_mut();
        // What a previous payload refused here left.
        arena.clear();
        if arena.capacity() < ARENA_LOW {
            arena.reserve(ARENA);
        }
        if let Err(e) = wire::encode_to(self.node, args, &mut *arena) {
            arena.clear();
            return Err(BridgeError::Payload {
                key: key.into(),
                reason: e.to_string(),
            });
        }
        if arena.len() > self.max_payload {
            let len = arena.len();
            arena.clear();
            return Err(BridgeError::Payload {
                key: key.into(),
                reason: format!(
                    "its payload is {len} bytes, over the {}-byte limit",
                    self.max_payload
                ),
            });
        }
        Ok(arena.split().freeze())
    }

    /// Hands a message to the network: a publish straight to the client
    /// when it can ([`Shared::publish_now`]), anything else to the
    /// network thread; false (counted and reported) when the buffer is
    /// full.
    fn push(&self, key: &str, out: Out) -> bool {
        let out = match out {
            Out::Publish { subject, payload } => match self.publish_now(subject, payload) {
                None => {
                    self.end_dropping();
                    self.count(|s| s.sent += 1);
                    return true;
                }
                Some(out) => out,
            },
            out => out,
        };
        self.net.in_flight.fetch_add(1, Ordering::AcqRel);
        match self.out.try_send(out) {
            Ok(()) => {
                self.end_dropping();
                self.count(|s| s.sent += 1);
                true
            }
            Err(_) => {
                self.net.in_flight.fetch_sub(1, Ordering::AcqRel);
                // What the network said first (a disconnection) is filed
                // before the drop it explains.
                self.absorb_status();
                let n = self.dropping.get() + 1;
                self.dropping.set(n);
                self.count(|s| s.dropped_sends += 1);
                if n == 1 {
                    tracing::debug!(key, "bridge buffer full");
                    self.event(BridgeEvent::SendsDropped {
                        count: 1,
                        ended: false,
                    });
                }
                false
            }
        }
    }

    /// Puts a publish in the client's own queue, from this thread: the
    /// network thread's client task takes it from there as it takes its
    /// own. One hop fewer per message than through the network thread
    /// (whose share of a sending node's CPU per message it was), and
    /// nothing waits: the client's queue is polled once, with a waker that does
    /// nothing, and a full one (or a budget spent, inside a runtime) gives
    /// the message back. Given back too, for the network thread's queue,
    /// when the client is down (that queue holds sends until it is back,
    /// up to its bound, then counts them dropped) or when anything waits
    /// in that queue still (the client gets all in the game's order).
    ///
    /// Not batched per pump for the network thread instead (a lock and a
    /// push per send, one wake per batch): measured, it moved this
    /// call's cost to the network thread with more besides (about 400
    /// instructions more per message in all), and on a loaded 2-core
    /// machine some runs fell to half of raw's throughput, the batch's
    /// lock held by a thread the scheduler had put aside.
    fn publish_now(&self, subject: Subject, payload: Bytes) -> Option<Out> {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};
        if !self.net.connected.load(Ordering::Acquire)
            || self.net.in_flight.load(Ordering::Acquire) != 0
        {
            return Some(Out::Publish { subject, payload });
        }
        let mut client = self.client.borrow_mut();
        if client.is_none() {
            *client = self.net.client.lock().ok().and_then(|c| c.clone());
        }
        let Some(client) = client.as_ref() else {
            return Some(Out::Publish { subject, payload });
        };
        // Shared handles (two counts up): a full queue drops the future
        // and the message in it, and these go to the network thread's.
        let publish = client.publish(subject.clone(), payload.clone());
        let mut publish = std::pin::pin!(publish);
        match publish
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(Ok(())) => None,
            // Refused (the client is closing, or the payload is over the
            // server's limit): the network thread's way, which buffers,
            // reports and counts what it cannot send.
            Poll::Ready(Err(_)) | Poll::Pending => Some(Out::Publish { subject, payload }),
        }
    }

    /// Files what the network thread reported since last asked, in the
    /// order it happened.
    fn absorb_status(&self) {
        for event in self.net.take() {
            match event {
                BridgeEvent::Connected => self.end_dropping(),
                BridgeEvent::Oversized { .. } => self.count(|s| s.refused += 1),
                _ => {}
            }
            self.event(event);
        }
    }

    fn end_dropping(&self) {
        let n = self.dropping.replace(0);
        if n > 0 {
            self.event(BridgeEvent::SendsDropped {
                count: n,
                ended: true,
            });
        }
    }

    /// A local dispatch on an exported key: out it goes, unless it is a
    /// peer's message being delivered, or an object's.
    fn on_local(&self, m: &Message<'_>) {
        if self.injecting.get() == Some(m.key) {
            self.injecting.set(None);
            return;
        }
        let lane = match m.source {
            Source::Global => Lane::Global,
            Source::World(w) => {
                let worlds = self.worlds.borrow();
                match worlds.iter().find(|(id, _)| *id == w) {
                    Some((_, name)) => Lane::World(name.clone()),
                    None => return,
                }
            }
            Source::Object(o) => {
                let objects = self.objects.borrow();
                match objects.iter().find(|(id, _)| *id == o) {
                    Some((_, name)) => Lane::Object(name.clone()),
                    None => return,
                }
            }
            Source::Named(..) => return,
        };
        let key = m.key_name();
        if m.is_once() {
            // Whether it crosses is known after the delivery (see
            // `relay_once`): only if no listener here takes it.
            let mut heard = self.heard_once.borrow_mut();
            // Left by a delivery that failed before its relay ran.
            if heard.len() >= MAX_HEARD_ONCE {
                heard.remove(0);
            }
            heard.push((m.args.as_ptr(), m.key, lane, key));
            return;
        }
        // A store delivers the very values it keeps: that is how a stored
        // message is told from a send (the hub's listener sees both).
        let stored = m
            .hub
            .stored(m.key, m.source)
            .is_some_and(|kept| std::ptr::eq(kept.as_ptr(), m.args.as_ptr()));
        let payload = match self.encode(&key, m.args) {
            Ok(payload) => payload,
            Err(e) => {
                return self.event(BridgeEvent::NotSent {
                    key: key.to_string(),
                    reason: match e {
                        BridgeError::Payload { reason, .. } => reason,
                        other => other.to_string(),
                    },
                });
            }
        };
        if let Some(responder) = m.responder {
            let id = self.next_request.get() + 1;
            self.next_request.set(id);
            let subject = self.subjects.of(&lane, &key);
            let timeout = self.request_timeout;
            if self.push(
                &key,
                Out::Request {
                    id,
                    subject,
                    payload,
                    timeout,
                },
            ) {
                // Held until a peer answers or the time is up: the
                // unanswered notice waits for the cluster, not just here.
                self.pending
                    .borrow_mut()
                    .insert(id, (responder.clone(), Instant::now() + timeout));
            }
            return;
        }
        let out = if stored {
            let at = crate::subject::stored_key(&lane, &key);
            if !self.may_put(&at) {
                return;
            }
            Out::Put { key: at, payload }
        } else {
            Out::Publish {
                subject: self.subject(m.key, &lane, &key),
                payload,
            }
        };
        self.push(&key, out);
    }

    /// May this node put `at` in the cluster's store? Yes for a key it put
    /// before, and for a new one below `max_stored_keys`; past it, the
    /// first refusal is reported and every one counted.
    fn may_put(&self, at: &str) -> bool {
        let mut keys = self.stored_keys.borrow_mut();
        if keys.contains(at) {
            return true;
        }
        if keys.len() < self.max_stored_keys {
            keys.insert(at.into());
            return true;
        }
        drop(keys);
        let first = self.stats.get().stores_refused == 0;
        self.count(|s| s.stores_refused += 1);
        if first {
            self.event(BridgeEvent::NotSent {
                key: at.to_owned(),
                reason: format!(
                    "this node put {} keys in the cluster's store already, its limit \
                     (max_stored_keys); stored here only",
                    self.max_stored_keys
                ),
            });
        }
        false
    }

    /// The hub's once relay: a once on an exported key that no listener
    /// here took (the export listener heard it, nobody else) goes to the
    /// cluster's work-queue stream, as [`Bridge::store_once`] does: kept
    /// until one importing node takes it, as the hub keeps a once until a
    /// listener comes; the hub then keeps it for no local listener. One a
    /// listener here took stays here. One that cannot go (a full buffer,
    /// a payload that cannot cross) is kept by the hub, as if the bridge
    /// had not heard it.
    fn relay_once(&self, handle: Key, args: &[Value], listeners: usize) -> OnceFate {
        let heard = {
            let mut heard = self.heard_once.borrow_mut();
            let Some(at) = heard
                .iter()
                .rposition(|(p, k, _, _)| std::ptr::eq(*p, args.as_ptr()) && *k == handle)
            else {
                return OnceFate::AsUsual;
            };
            // Any heard after it were nested in its delivery and are over.
            heard
                .drain(at..)
                .next()
                .map(|(_, _, lane, key)| (lane, key))
        };
        let Some((lane, key)) = heard else {
            return OnceFate::AsUsual;
        };
        // The export listener is one of the listeners counted.
        if listeners > 1 {
            return OnceFate::AsUsual;
        }
        let payload = match self.encode(&key, args) {
            Ok(payload) => payload,
            Err(e) => {
                self.event(BridgeEvent::NotSent {
                    key: key.to_string(),
                    reason: match e {
                        BridgeError::Payload { reason, .. } => reason,
                        other => other.to_string(),
                    },
                });
                return OnceFate::KeepHere;
            }
        };
        let subject = self.subjects.queued(&lane, &key);
        let went = self.push(
            &key,
            Out::Enqueue {
                key: key.to_string(),
                subject,
                payload,
            },
        );
        if went {
            OnceFate::Elsewhere
        } else {
            OnceFate::KeepHere
        }
    }

    /// Drops requests whose answer did not come in time: their responders
    /// go, and the requester hears "unanswered" as it would locally.
    fn expire(&self) {
        if self.pending.borrow().is_empty() {
            return;
        }
        let now = Instant::now();
        let gone: Vec<Responder> = {
            let mut pending = self.pending.borrow_mut();
            let late: Vec<u64> = pending
                .iter()
                .filter(|(_, (_, deadline))| *deadline <= now)
                .map(|(id, _)| *id)
                .collect();
            late.iter()
                .filter_map(|id| pending.remove(id).map(|(r, _)| r))
                .collect()
        };
        drop(gone);
    }

    fn refuse(&self, event: BridgeEvent) -> bool {
        self.count(|s| s.refused += 1);
        self.event(event);
        false
    }

    /// One message from the network; true when delivered to the hub.
    fn take_in(self: &Rc<Self>, hub: &Hub, message: In) -> bool {
        match message {
            In::Reply { id, answer } => {
                let Some((responder, _)) = self.pending.borrow_mut().remove(&id) else {
                    return false;
                };
                if let Some(answer) = answer
                    && !responder.is_answered()
                {
                    match wire::decode(&answer) {
                        Ok((_, values)) => {
                            responder.respond_values(&values);
                        }
                        Err(e) => {
                            return self.refuse(BridgeEvent::Malformed {
                                subject: format!("answer to request {id}"),
                                reason: e.to_string(),
                            });
                        }
                    }
                }
                true
            }
            In::Queued { subject, payload } => {
                // Taken already (see `queued`): delivered here, or refused
                // and gone.
                match self.subjects.parse_queued(&subject) {
                    Some((lane, key)) if self.imports(key) => {
                        self.deliver(hub, (key, None), lane, &payload, None, Arrival::Once)
                    }
                    _ => self.refuse(BridgeEvent::Outside {
                        subject: subject.to_string(),
                    }),
                }
            }
            In::Stored { key: at, payload } => {
                let Some((lane, key)) = crate::subject::parse_stored_key(&at) else {
                    return self.refuse(BridgeEvent::Outside { subject: at });
                };
                if !self.imports(key) {
                    return self.refuse(BridgeEvent::Outside { subject: at });
                }
                self.deliver(hub, (key, None), lane, &payload, None, Arrival::Stored)
            }
        }
    }

    /// One message from a subscription; true when delivered to the hub.
    fn take_message(self: &Rc<Self>, hub: &Hub, message: async_nats::Message) -> bool {
        let async_nats::Message {
            subject,
            payload,
            reply,
            ..
        } = message;
        if payload.len() > self.max_payload {
            return self.refuse(BridgeEvent::Oversized {
                subject: subject.to_string(),
                bytes: payload.len(),
                limit: self.max_payload,
            });
        }
        let reply = reply.map(|r| r.to_string());
        let last = match &*self.last_subject.borrow() {
            Some((last, handle)) if *last == subject => Some(*handle),
            _ => None,
        };
        let known = last.or_else(|| {
            let handle = self
                .known_subjects
                .borrow()
                .get(subject.as_str())
                .copied()?;
            *self.last_subject.borrow_mut() = Some((subject.clone(), handle));
            Some(handle)
        });
        if let Some(handle) = known {
            // A global subject met before: parsed, imported, and
            // its key's handle found already.
            let key = &subject[self.subjects.cluster().len() + 1..];
            return self.deliver(
                hub,
                (key, Some(handle)),
                Lane::Global,
                &payload,
                reply,
                Arrival::Live,
            );
        }
        let Some((lane, key)) = self.subjects.parse(&subject) else {
            return self.refuse(BridgeEvent::Outside {
                subject: subject.to_string(),
            });
        };
        if !self.imports(key) {
            return self.refuse(BridgeEvent::Outside {
                subject: subject.to_string(),
            });
        }
        if lane == Lane::Global
            && let Ok(handle) = hub.key(key)
        {
            let mut known = self.known_subjects.borrow_mut();
            // Peers choose the subjects: the memo stays bounded.
            if known.len() >= MAX_KNOWN_SUBJECTS {
                known.clear();
            }
            known.insert(subject.as_str().into(), handle);
            drop(known);
            return self.deliver(
                hub,
                (key, Some(handle)),
                lane,
                &payload,
                reply,
                Arrival::Live,
            );
        }
        let arrival = if lane == Lane::Once {
            Arrival::Once
        } else {
            Arrival::Live
        };
        self.deliver(hub, (key, None), lane, &payload, reply, arrival)
    }

    fn deliver(
        self: &Rc<Self>,
        hub: &Hub,
        // The key, and its handle when known already.
        (key, handle): (&str, Option<Key>),
        lane: Lane,
        payload: &[u8],
        reply: Option<String>,
        arrival: Arrival,
    ) -> bool {
        if payload.len() > self.max_payload {
            return self.refuse(BridgeEvent::Oversized {
                subject: key.into(),
                bytes: payload.len(),
                limit: self.max_payload,
            });
        }
        if wire::node_of(payload) == Some(self.node) && arrival != Arrival::Once {
            // Our own send, heard back (a store, through the KV watch):
            // it was delivered here already. (A stored once was not: the
            // stream may hand it back to us.)
            return false;
        }
        // A send's values go back to `args` after it (a store keeps its).
        let mut args = std::mem::take(&mut *self.args.borrow_mut());
        let decoded = wire::decode_after(payload, &mut args, &self.last_args.borrow());
        if let Err(e) = decoded {
            return self.refuse(BridgeEvent::Malformed {
                subject: key.into(),
                reason: e.to_string(),
            });
        }
        let source = match &lane {
            Lane::World(name) => {
                let worlds = self.worlds.borrow();
                match worlds.iter().find(|(_, n)| n == name) {
                    Some((w, _)) => Source::World(*w),
                    // A once this node took, for a world it lacks: lost,
                    // and said so (a cluster's nodes name the same worlds).
                    None if arrival == Arrival::Once => {
                        return self.refuse(BridgeEvent::Refused {
                            key: key.into(),
                            reason: format!("a once for world `{name}`, which this node lacks"),
                        });
                    }
                    // This node has no such world: nobody here listens.
                    None => return false,
                }
            }
            Lane::Object(name) => {
                let objects = self.objects.borrow();
                match objects.iter().find(|(_, n)| n == name) {
                    Some((o, _)) if hub.is_alive(*o) => Source::Object(*o),
                    // No such object here (or it is gone): nobody listens.
                    _ => return false,
                }
            }
            _ => Source::Global,
        };
        let handle = match handle.map_or_else(|| hub.key(key), Ok) {
            Ok(handle) => handle,
            Err(e) => {
                return self.refuse(BridgeEvent::Refused {
                    key: key.into(),
                    reason: e.to_string(),
                });
            }
        };
        self.injecting.set(Some(handle));
        let result = match (&lane, reply) {
            _ if arrival == Arrival::Once => hub
                .store_values(handle, source, args, true, Caller::Unrecorded)
                .map(drop),
            _ if arrival == Arrival::Stored => hub
                .store_values(handle, source, args, false, Caller::Unrecorded)
                .map(drop),
            (_, Some(reply)) => {
                let weak: Weak<Shared> = Rc::downgrade(self);
                let key_name = key.to_owned();
                hub.request_values(
                    handle,
                    source,
                    &mut args,
                    Caller::Unrecorded,
                    Box::new(move |answer| {
                        if let (Reply::Answer(values), Some(shared)) = (answer, weak.upgrade()) {
                            match shared.encode(&key_name, values) {
                                Ok(payload) => {
                                    shared.push(
                                        &key_name,
                                        Out::Publish {
                                            subject: reply.into(),
                                            payload,
                                        },
                                    );
                                }
                                Err(e) => shared.event(BridgeEvent::NotSent {
                                    key: key_name.clone(),
                                    reason: e.to_string(),
                                }),
                            }
                        }
                    }),
                )
                .map(drop)
            }
            (_, None) => {
                let sent = hub
                    .send_values(handle, source, &mut args, Caller::Unrecorded)
                    .map(drop);
                // Kept for the next one's texts (see `last_args`); the
                // values before go, their room kept for the next one.
                let mut before = std::mem::replace(&mut *self.last_args.borrow_mut(), args);
                before.clear();
                let mut room = self.args.borrow_mut();
                if room.capacity() < before.capacity() {
                    *room = before;
                }
                sent
            }
        };
        self.injecting.set(None);
        match result {
            Ok(()) => {
                self.count(|s| s.received += 1);
                true
            }
            Err(e) => self.refuse(BridgeEvent::Refused {
                key: key.into(),
                reason: e.to_string(),
            }),
        }
    }
}
