//! A key declared by its Rust type (`#[derive(Message)]`): the key's text,
//! kind, parameters and docs written once, and a [`MessageKey`] whose
//! sends and listeners take that type, so that a sender, a listener and
//! the declaration cannot disagree and still compile.

use std::marker::PhantomData;
use std::rc::Rc;

use std::panic::Location;

use crate::hub::{Delivered, Hub, HubError, ListenSpec, Message};
use crate::key::Key;
use crate::listener::{ListenOptions, ListenerError, ListenerHandle, ListenerParams, MessageFn};
use crate::request::Reply;
use crate::signature::{KeyDecl, Kind, Role, SignatureTable, Site};
use crate::source::Source;
use crate::types::Type;
use crate::value::Value;

use super::arg::ListenerReturn;
use super::{Handler, IntoArgs};
use crate::lane::DirectFn;

/// The kinds a derived message can have, as types: what a
/// [`MessageKey`] offers depends on it (a hook is run, not sent).
pub mod kinds {
    /// A plain message: sent, delivered to whoever listens now.
    #[derive(Debug)]
    pub enum Event {}
    /// A stored message: stored, replayed to late listeners.
    #[derive(Debug)]
    pub enum Store {}
    /// A hook: its payload (the message struct itself) is run through
    /// listeners that may change it or cancel.
    #[derive(Debug)]
    pub enum Hook {}
    /// A request: sent with a reply callback; listeners answer.
    #[derive(Debug)]
    pub enum Request {}
}

/// A kind of [`kinds`]: the declaration it starts from.
pub trait MessageKind: sealed::Sealed + 'static {
    /// The table's kind.
    const KIND: Kind;
    /// An empty declaration of this kind.
    fn decl() -> KeyDecl;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::kinds::Event {}
    impl Sealed for super::kinds::Store {}
    impl Sealed for super::kinds::Hook {}
    impl Sealed for super::kinds::Request {}
}

impl MessageKind for kinds::Event {
    const KIND: Kind = Kind::Event;
    fn decl() -> KeyDecl {
        KeyDecl::event()
    }
}
impl MessageKind for kinds::Store {
    const KIND: Kind = Kind::Store;
    fn decl() -> KeyDecl {
        KeyDecl::store()
    }
}
impl MessageKind for kinds::Hook {
    const KIND: Kind = Kind::Hook;
    fn decl() -> KeyDecl {
        KeyDecl::hook()
    }
}
impl MessageKind for kinds::Request {
    const KIND: Kind = Kind::Event;
    fn decl() -> KeyDecl {
        KeyDecl::request()
    }
}

/// The kinds whose messages listeners hear as messages (all but hooks).
#[diagnostic::on_unimplemented(
    message = "a hook is not listened to as a message",
    note = "listen to a hook with `MessageKey::listen_hook`, whose listener gets the payload to change"
)]
pub trait Heard: MessageKind {}
impl Heard for kinds::Event {}
impl Heard for kinds::Store {}
impl Heard for kinds::Request {}

/// A struct that is a key: `#[derive(Message)]` implements it (see
/// [`crate::Message`](derive@crate::Message)); nothing else should.
pub trait MessageType: Sized + 'static {
    /// Its kind, as a type of [`kinds`].
    type Kind: MessageKind;
    /// Its fields as the tuple a send carries, in order.
    type Args: IntoArgs + 'static;
    /// The key's text.
    const KEY: &'static str;
    /// The key's doc: the struct's doc comment, first paragraph.
    const DOC: &'static str;
    /// Each parameter's name and doc comment (the table keeps no
    /// parameter docs; tools may read them here).
    const PARAM_DOCS: &'static [(&'static str, &'static str)];
    /// What [`Hub::declare_message`] declares.
    fn decl() -> KeyDecl;
    /// Declares the structs its parameters (and a request's response) hold.
    fn declare_structs(table: &mut SignatureTable);
    /// The struct as a send's arguments.
    fn into_args(self) -> Self::Args;
    /// The struct from a typed send's arguments.
    fn from_args(args: Self::Args) -> Self;
    /// The struct from a message's values, or the argument that does not
    /// convert.
    fn from_values(values: &[Value]) -> Result<Self, ListenerError>;
    /// A request's answer, as the tuple of its `response(..)` types (`()`
    /// for other kinds).
    type Response: IntoArgs + 'static;
    /// The answer from a reply's values, or the value that does not
    /// convert.
    fn response_from_values(values: &[Value]) -> Result<Self::Response, ListenerError>;
    /// Sends the message on `key`. The derive sends a message whose fields
    /// are all [`FixedKind`](crate::FixedKind)s as a [`TypedKey`](crate::TypedKey)
    /// would (checked once, handed as is to listeners of exactly that
    /// tuple), and any other through `Value`s, checked per send.
    #[doc(hidden)]
    fn send_on(
        self,
        hub: &Hub,
        key: Key,
        source: Source,
        site: &'static Location<'static>,
    ) -> Result<Delivered, HubError> {
        use crate::typed::SendKey;
        key.send_on(hub, source, self.into_args(), site)
    }
}

/// The send a derived message picks at compile time, by its tuple: a
/// tuple of fixed kinds takes the typed path, any other the values path.
/// The derive calls `(&&Probe::<Args>::new()).send_args(..)`: method
/// lookup tries `&&Probe` first, which only `ViaTyped` has, and only
/// for a [`TypedArgs`](crate::TypedArgs) tuple.
#[doc(hidden)]
pub mod probe {
    use std::marker::PhantomData;
    use std::panic::Location;

    use crate::hub::{Delivered, Hub, HubError};
    use crate::key::Key;
    use crate::source::Source;
    use crate::typed::{IntoArgs, SendKey, TypedArgs};

    pub struct Probe<A>(PhantomData<fn(A)>);

    impl<A> Probe<A> {
        #[allow(clippy::new_without_default)]
        pub fn new() -> Self {
            Probe(PhantomData)
        }
    }

    pub trait ViaTyped<A> {
        fn send_args(
            &self,
            hub: &Hub,
            key: Key,
            source: Source,
            args: A,
            site: &'static Location<'static>,
        ) -> Result<Delivered, HubError>;
    }

    impl<A: TypedArgs> ViaTyped<A> for &Probe<A> {
        #[inline]
        fn send_args(
            &self,
            hub: &Hub,
            key: Key,
            source: Source,
            args: A,
            site: &'static Location<'static>,
        ) -> Result<Delivered, HubError> {
            hub.send_direct(key, source, args, site)
        }
    }

    pub trait ViaValues<A> {
        fn send_args(
            &self,
            hub: &Hub,
            key: Key,
            source: Source,
            args: A,
            site: &'static Location<'static>,
        ) -> Result<Delivered, HubError>;
    }

    impl<A: IntoArgs> ViaValues<A> for Probe<A> {
        #[inline]
        fn send_args(
            &self,
            hub: &Hub,
            key: Key,
            source: Source,
            args: A,
            site: &'static Location<'static>,
        ) -> Result<Delivered, HubError> {
            key.send_on(hub, source, args, site)
        }
    }
}

/// A key baked with the message type it carries: sends take an `M`,
/// listeners get an `M`. From [`Hub::declare_message`] (declares) or
/// [`Hub::message_key`] (does not).
pub struct MessageKey<M> {
    key: Key,
    _message: PhantomData<fn(M) -> M>,
}

impl<M> Clone for MessageKey<M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M> Copy for MessageKey<M> {}

impl<M> std::fmt::Debug for MessageKey<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MessageKey({:?}, {})",
            self.key,
            std::any::type_name::<M>()
        )
    }
}

impl Hub {
    /// Declares the key of message type `M` (its kind, parameters, doc and
    /// the structs they hold) with the caller's line as the declaring
    /// site, and returns its typed key. As [`Hub::declare`], the host's
    /// declaration is the key's truth: a script that sends otherwise is
    /// refused.
    #[track_caller]
    pub fn declare_message<M: MessageType>(&self) -> Result<MessageKey<M>, HubError> {
        self.edit_table(M::declare_structs);
        let key = self.declare(M::KEY, M::decl())?;
        Ok(MessageKey {
            key,
            _message: PhantomData,
        })
    }

    /// The typed key of message type `M` without declaring it (a mod's
    /// manifest or another part of the game did).
    pub fn message_key<M: MessageType>(&self) -> Result<MessageKey<M>, HubError> {
        Ok(MessageKey {
            key: self.key(M::KEY)?,
            _message: PhantomData,
        })
    }
}

impl<M: MessageType> MessageKey<M> {
    /// The plain key, for everything that is not typed.
    pub fn key(self) -> Key {
        self.key
    }

    /// Listens with a closure that gets the message struct, default
    /// options; the handle unlistens when dropped. The closure may return
    /// `Result<(), E: Display>`: an `Err` is reported with this call's
    /// line.
    #[track_caller]
    pub fn listen<R: ListenerReturn>(
        self,
        hub: &Hub,
        scope: impl Into<Source>,
        f: impl Fn(M) -> R + 'static,
    ) -> Result<ListenerHandle, HubError>
    where
        M::Kind: Heard,
    {
        self.listen_with(hub, scope, ListenOptions::default(), f)
    }

    /// [`MessageKey::listen`] with options.
    #[track_caller]
    pub fn listen_with<R: ListenerReturn>(
        self,
        hub: &Hub,
        scope: impl Into<Source>,
        options: ListenOptions,
        f: impl Fn(M) -> R + 'static,
    ) -> Result<ListenerHandle, HubError>
    where
        M::Kind: Heard,
    {
        let key = hub.key_name(self.key);
        hub.listen_with(&key, scope, options, Whole::<M, _, R>(f, PhantomData))
    }
}

impl<M: MessageType<Kind = kinds::Event>> MessageKey<M> {
    /// Sends the message from `source`; the caller's line is the send's
    /// site.
    #[track_caller]
    pub fn send(
        self,
        hub: &Hub,
        source: impl Into<Source>,
        message: M,
    ) -> Result<Delivered, HubError> {
        message.send_on(hub, self.key, source.into(), Location::caller())
    }
}

impl<M: MessageType<Kind = kinds::Store>> MessageKey<M> {
    /// Stores the message for `source` and delivers it live; late
    /// listeners get it replayed.
    #[track_caller]
    pub fn store(
        self,
        hub: &Hub,
        source: impl Into<Source>,
        message: M,
    ) -> Result<Delivered, HubError> {
        hub.store(self.key, source, message.into_args())
    }

    /// Stores the message for its first delivery only, live or replayed.
    #[track_caller]
    pub fn once(
        self,
        hub: &Hub,
        source: impl Into<Source>,
        message: M,
    ) -> Result<Delivered, HubError> {
        hub.once(self.key, source, message.into_args())
    }

    /// What is stored for `source`, as the message struct (`None` when
    /// nothing is, or it does not convert).
    pub fn stored(self, hub: &Hub, source: impl Into<Source>) -> Option<M> {
        let values = hub.stored(self.key, source)?;
        M::from_values(&values).ok()
    }
}

impl<M: MessageType<Kind = kinds::Request>> MessageKey<M> {
    /// Sends the request; `reply` gets the first answer as the response
    /// tuple, or `None` when nobody answered (or the answer does not
    /// convert: a script's, in unchecked mode). Returns the request's
    /// sequence number.
    #[track_caller]
    pub fn request(
        self,
        hub: &Hub,
        source: impl Into<Source>,
        message: M,
        reply: impl FnOnce(Option<M::Response>) + 'static,
    ) -> Result<u64, HubError> {
        hub.request(self.key, source, message.into_args(), move |answer| {
            reply(match answer {
                Reply::Answer(values) => M::response_from_values(values).ok(),
                Reply::Unanswered => None,
            })
        })
    }

    /// Answers the request with a closure from the message struct to the
    /// response tuple (the types `response(..)` declares); the handle
    /// unlistens when dropped. The first answer of a request wins.
    #[track_caller]
    pub fn answer(
        self,
        hub: &Hub,
        scope: impl Into<Source>,
        f: impl Fn(M) -> M::Response + 'static,
    ) -> Result<ListenerHandle, HubError> {
        let site = Site::rust(Location::caller(), Role::Listen);
        let callback: Rc<MessageFn> = Rc::new(move |m: &Message<'_>| {
            let answer = f(M::from_values(m.args)?);
            if let Some(responder) = m.responder {
                responder.respond(answer);
            }
            Ok(())
        });
        let params = ListenerParams::Typed(param_types::<M>());
        let spec = ListenSpec::message(scope.into(), ListenOptions::default(), params, callback)
            .site(site)
            .with_responder();
        let key = hub.key_name(self.key);
        let id = hub.listen_raw(&key, spec)?;
        Ok(ListenerHandle {
            hub: hub.downgrade(),
            id,
        })
    }
}

/// The types a listener of the whole struct `M` declares: its parameters'.
fn param_types<M: MessageType>() -> Rc<[Type]> {
    M::decl().params.into_iter().map(|p| p.ty).collect()
}

/// A closure over the whole message struct, as a typed listener of the
/// struct's parameters: it declares their types, and is handed typed
/// sends of exactly the struct's tuple as they are.
struct Whole<M, F, R>(F, PhantomData<fn(M) -> R>);

/// The marker of [`Whole`]'s [`Handler`] impl.
#[doc(hidden)]
pub struct WholeMessage<M>(PhantomData<M>);

impl<M, F, R> Handler<WholeMessage<M>> for Whole<M, F, R>
where
    M: MessageType,
    F: Fn(M) -> R + 'static,
    R: ListenerReturn,
{
    fn param_types() -> Rc<[Type]> {
        param_types::<M>()
    }

    fn call(&self, message: &Message<'_>) -> Result<(), ListenerError> {
        (self.0)(M::from_values(message.args)?).into_result()
    }

    fn into_callbacks(self) -> (Rc<MessageFn>, Rc<dyn std::any::Any>) {
        let handler = Rc::new(self);
        let typed = handler.clone();
        let message: Rc<MessageFn> = Rc::new(move |m: &Message<'_>| Handler::call(&*handler, m));
        if R::FALLIBLE {
            return (message, Rc::new(()));
        }
        let direct = DirectFn::<M::Args>(Rc::new(move |args: M::Args| {
            let _ = (typed.0)(M::from_args(args));
        }));
        (message, Rc::new(direct))
    }
}
