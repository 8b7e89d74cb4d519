//! The typed Rust face: send a tuple, listen with a typed closure, or
//! declare a key once from its Rust struct.
//!
//! `hub.send(key, source, (5, 2.5))` turns the tuple into a stack array of
//! [`Value`]s (no allocation for scalars); `hub.listen(key, scope, |hp: i64|
//! ...)` declares `[int]` as the listener's parameters, which the
//! compatibility rule checks against the signature table.
//!
//! # Declare once
//!
//! A struct that derives [`Message`](derive@crate::Message) is a key: its
//! text and kind from `#[message(..)]`, its parameters from its fields,
//! its doc from its doc comment. [`Hub::declare_message`] declares it (and
//! the [`Struct`](derive@crate::Struct)s its fields hold) and returns a
//! [`MessageKey`] whose sends take that struct and whose listeners get
//! it, so that the declaration, the senders and the listeners are one
//! type and a mismatch does not compile.
//!
//! ```
//! use std::cell::Cell;
//! use std::rc::Rc;
//! use gantry_host::{Hub, ObjectId, Source, Type};
//!
//! /// A player got hurt.
//! #[derive(gantry_host::Message)]
//! #[message(key = "Player.Hurt")]
//! struct Hurt {
//!     /// Damage dealt, after armour.
//!     dmg: f64,
//!     /// Who dealt it.
//!     causer: ObjectId,
//! }
//!
//! let hub = Hub::new();
//! let hurt = hub.declare_message::<Hurt>()?;
//!
//! let taken = Rc::new(Cell::new(0.0));
//! let total = taken.clone();
//! let _listening = hurt.listen(&hub, Source::Global, move |h: Hurt| {
//!     total.set(total.get() + h.dmg)
//! })?;
//!
//! let goblin = hub.spawn(hub.create_world())?;
//! hurt.send(&hub, Source::Global, Hurt { dmg: 4.5, causer: goblin })?;
//! assert_eq!(taken.get(), 4.5);
//!
//! // The table says what the struct says, for scripts, stubs and editors.
//! let table = hub.table();
//! let entry = &table.keys["Player.Hurt"];
//! assert_eq!(entry.doc, "A player got hurt.");
//! assert_eq!(entry.params[0].name, "dmg");
//! assert_eq!(entry.params[0].ty, Type::Float);
//! # Ok::<(), gantry_host::HubError>(())
//! ```
//!
//! # Listeners
//!
//! A listener's parameters are [`Arg`]s: owned values, or `&str` and
//! `&Value` borrowed from the message. It returns `()` or
//! `Result<(), E: Display>` ([`ListenerReturn`]); an `Err` becomes a
//! [`Report::ListenerFailed`](crate::Report::ListenerFailed) naming the
//! line the listener was registered on, and the other listeners still
//! run.
//!
//! ```
//! use gantry_host::{Hub, Report, Source};
//!
//! let hub = Hub::new();
//! let _door = hub.listen("Door.Open", Source::Global, |who: &str| {
//!     if who == "ghost" {
//!         return Err(format!("{who} cannot open doors"));
//!     }
//!     Ok(())
//! })?;
//! hub.send_str("Door.Open", Source::Global, ("ghost",))?;
//! let reports = hub.take_reports();
//! assert!(matches!(&reports[0], Report::ListenerFailed { message, .. }
//!     if message == "ghost cannot open doors"));
//! # Ok::<(), gantry_host::HubError>(())
//! ```
//!
//! # Typed hooks
//!
//! A message of `kind = "hook"` is its own payload struct:
//! [`MessageKey::run_hook`] runs it with `&mut` the struct, and
//! [`MessageKey::listen_hook`] listeners change it in place (through a
//! [`TypedHookCall`], which also cancels). Script listeners see the same
//! struct.
//!
//! ```
//! use gantry_host::{HookOptions, Hub};
//!
//! /// A hit about to land.
//! #[derive(gantry_host::Message, Clone)]
//! #[message(key = "Combat.Hit", kind = "hook")]
//! struct Hit {
//!     damage: f64,
//!     blocked: bool,
//! }
//!
//! let hub = Hub::new();
//! let hit = hub.declare_message::<Hit>()?;
//! let _armour = hit.listen_hook(&hub, HookOptions::new(), |hit| hit.damage /= 2.0)?;
//! let _parry = hit.listen_hook(&hub, HookOptions::new().priority(-1), |hit| {
//!     if hit.damage < 10.0 {
//!         hit.blocked = true;
//!         hit.cancel();
//!     }
//! })?;
//!
//! let mut payload = Hit { damage: 12.0, blocked: false };
//! let result = hit.run_hook(&hub, &mut payload)?;
//! assert!(result.cancelled && payload.blocked);
//! assert_eq!(payload.damage, 6.0);
//! # Ok::<(), gantry_host::HubError>(())
//! ```

use std::any::Any;
use std::marker::PhantomData;
use std::panic::Location;
use std::rc::Rc;

use crate::hub::{Caller, Delivered, Hub, HubError, Message};
use crate::key::Key;
use crate::lane::DirectFn;
use crate::listener::{ListenerError, MessageFn};
use crate::source::Source;
use crate::types::Type;
use crate::value::{FromValue, IntoValue, ObjectId, Value};

mod arg;
mod hook;
mod message;
mod schema;

use arg::convert;
pub use arg::{Arg, ListenerReturn};
pub use hook::{HookPayload, TypedHookCall};
pub use message::{Heard, MessageKey, MessageKind, MessageType, WholeMessage, kinds, probe};
pub use schema::{FieldType, StructType, declare_struct};
#[doc(hidden)]
pub use schema::{
    arg, declare_field, field, struct_def, struct_fields, struct_type, struct_value, type_of_field,
};

/// A tuple of Rust values sent as message arguments.
pub trait IntoArgs {
    type Array: AsMut<[Value]> + AsRef<[Value]>;
    fn into_args(self) -> Self::Array;
}

/// A closure usable as a typed listener. `Args` is a marker naming the
/// closure's shape, `fn(A, B) -> R` (the hub infers it; nobody writes it):
/// each parameter an [`Arg`], the return a [`ListenerReturn`].
#[diagnostic::on_unimplemented(
    message = "this closure cannot be a Gantry listener",
    label = "not a listener",
    note = "a listener takes at most 8 parameters, each `i64`, `i32`, `u32`, `f64`, `f32`, `bool`, `String`, `Rc<str>`, `ObjectId`, `Value`, `Vec<T>`, a `#[derive(Struct)]` type, or a borrowed `&str` / `&Value`, with its type written (`|hp: i64|`)",
    note = "and returns `()` or `Result<(), E>` with `E: Display` (an `Err` is reported with the line the listener was registered on)"
)]
pub trait Handler<Args>: 'static {
    /// The types the listener declares, in order.
    fn param_types() -> Rc<[Type]>;
    /// Converts the arguments and calls the closure.
    fn call(&self, message: &Message<'_>) -> Result<(), ListenerError>;
    /// The closure as the hub keeps it: a message callback for every send,
    /// and (when it cannot fail) the same closure taking its tuple as is,
    /// for typed sends of exactly that tuple (see [`TypedKey`]).
    fn into_callbacks(self) -> (Rc<MessageFn>, Rc<dyn Any>);
}

/// A closure called with a message's arguments converted to its
/// parameters' items (`&str` borrowed from the message): the half of
/// [`Handler`] that reads a message. Apart from `Handler` so that each
/// impl has one `Fn` bound to call through.
#[doc(hidden)]
pub trait ArgsFn<Args> {
    type Output;
    fn call_args(&self, args: &[Value]) -> Result<Self::Output, ListenerError>;
}

macro_rules! tuples {
    ($n:literal; $($name:ident $idx:tt),*) => {
        impl<$($name: IntoValue),*> IntoArgs for ($($name,)*) {
            type Array = [Value; $n];
            #[inline]
            #[allow(clippy::unused_unit)]
            fn into_args(self) -> Self::Array {
                [$(self.$idx.into_value()),*]
            }
        }

        impl<Func, R, $($name: Arg),*> ArgsFn<fn($($name),*) -> R> for Func
        where
            Func: for<'a> Fn($($name::Item<'a>),*) -> R,
        {
            type Output = R;
            #[inline]
            #[allow(unused_variables)]
            fn call_args(&self, args: &[Value]) -> Result<R, ListenerError> {
                Ok((self)($(convert::<$name>(args, $idx)?),*))
            }
        }

        impl<Func, R, $($name),*> Handler<fn($($name),*) -> R> for Func
        where
            Func: Fn($($name),*) -> R + ArgsFn<fn($($name),*) -> R, Output = R> + 'static,
            R: ListenerReturn,
            $($name: Arg,)*
        {
            fn param_types() -> Rc<[Type]> {
                Rc::from(vec![$(<$name as Arg>::declared_type()),*])
            }
            #[inline]
            fn call(&self, message: &Message<'_>) -> Result<(), ListenerError> {
                self.call_args(message.args)?.into_result()
            }
            #[allow(unused_variables)]
            fn into_callbacks(self) -> (Rc<MessageFn>, Rc<dyn Any>) {
                let handler = Rc::new(self);
                let typed = handler.clone();
                let message: Rc<MessageFn> = Rc::new(move |m: &Message<'_>| Handler::call(&*handler, m));
                if R::FALLIBLE {
                    // The typed fast path's closures return nothing: a
                    // listener that can fail takes the path that reports.
                    return (message, Rc::new(()));
                }
                let direct = DirectFn::<($($name,)*)>(Rc::new(move |args: ($($name,)*)| {
                    let _ = (typed)($(args.$idx),*);
                }));
                (message, Rc::new(direct))
            }
        }

        impl<$($name: FixedKind),*> TypedArgs for ($($name,)*) {
            #[allow(unused_variables)]
            fn fits(params: &[Type]) -> bool {
                true $(&& params.get($idx) == Some(&$name::declared_type()))*
            }
        }
    };
}

/// A Rust type whose value always has the same kind, so that a send of it
/// checked once against a key's signature stays checked: the scalars,
/// strings and object handles (not `Value`, `Option`, arrays or structs).
pub trait FixedKind: IntoValue + FromValue + Clone + 'static + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! fixed {
    ($($rust:ty),*) => {$(
        impl sealed::Sealed for $rust {}
        impl FixedKind for $rust {}
    )*};
}

fixed!(bool, i64, i32, u32, f64, f32, ObjectId, String, Rc<str>);

/// A tuple of [`FixedKind`]s: what a [`TypedKey`] carries.
pub trait TypedArgs: IntoArgs + Clone + 'static {
    /// Whether the tuple's types are exactly the first parameters of
    /// `params` (no widening, no `any`): then no send of it can mismatch.
    fn fits(params: &[Type]) -> bool;
}

/// A key baked together with the Rust tuple it carries
/// (`hub.typed_key::<(i64, f64)>("Player.Hurt")`). Sending through it is
/// the fastest send there is: once the key's listeners are all typed Rust
/// closures of exactly that tuple, the tuple is handed to them as is — no
/// signature check per send (the type already passed it), no `Value`s.
/// Anything else (script listeners, prefix listeners, tracing on, a
/// signature the tuple does not fit) takes the ordinary path, unchanged.
pub struct TypedKey<A> {
    key: Key,
    _args: PhantomData<fn(A)>,
}

impl<A> TypedKey<A> {
    /// The plain key, for everything that is not a typed send.
    pub fn key(self) -> Key {
        self.key
    }
}

impl<A> Clone for TypedKey<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for TypedKey<A> {}

impl<A> std::fmt::Debug for TypedKey<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TypedKey({:?}, {})",
            self.key,
            std::any::type_name::<A>()
        )
    }
}

impl Hub {
    /// Bakes `text` as a key that carries the tuple `A`.
    pub fn typed_key<A: TypedArgs>(&self, text: &str) -> Result<TypedKey<A>, crate::HubError> {
        Ok(TypedKey {
            key: self.key(text)?,
            _args: PhantomData,
        })
    }
}

/// What [`Hub::send`] accepts as a key: a [`Key`] (arguments become
/// `Value`s and are checked per send), a [`TypedKey`] (see there), or key
/// text with a tuple of [`FixedKind`]s (looked up, then as a `TypedKey`).
pub trait SendKey<A> {
    #[doc(hidden)]
    fn send_on(
        self,
        hub: &Hub,
        source: Source,
        args: A,
        site: &'static Location<'static>,
    ) -> Result<Delivered, HubError>;
}

impl<A: IntoArgs> SendKey<A> for Key {
    #[inline]
    fn send_on(
        self,
        hub: &Hub,
        source: Source,
        args: A,
        site: &'static Location<'static>,
    ) -> Result<Delivered, HubError> {
        let mut args = args.into_args();
        hub.dispatch(self, source, args.as_mut(), Caller::Rust(site), None)
    }
}

impl<A: TypedArgs> SendKey<A> for TypedKey<A> {
    #[inline]
    fn send_on(
        self,
        hub: &Hub,
        source: Source,
        args: A,
        site: &'static Location<'static>,
    ) -> Result<Delivered, HubError> {
        hub.send_direct(self.key, source, args, site)
    }
}

/// Key text, for a tuple of fixed kinds: looked up (interned on first use)
/// and then sent as through a [`TypedKey`]. Other arguments send by text
/// with [`Hub::send_str`].
impl<A: TypedArgs> SendKey<A> for &str {
    #[inline]
    fn send_on(
        self,
        hub: &Hub,
        source: Source,
        args: A,
        site: &'static Location<'static>,
    ) -> Result<Delivered, HubError> {
        hub.send_direct(hub.key(self)?, source, args, site)
    }
}

tuples!(0;);
tuples!(1; A 0);
tuples!(2; A 0, B 1);
tuples!(3; A 0, B 1, C 2);
tuples!(4; A 0, B 1, C 2, D 3);
tuples!(5; A 0, B 1, C 2, D 3, E 4);
tuples!(6; A 0, B 1, C 2, D 3, E 4, F 5);
tuples!(7; A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuples!(8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

impl IntoArgs for Vec<Value> {
    type Array = Vec<Value>;
    fn into_args(self) -> Self::Array {
        self
    }
}
