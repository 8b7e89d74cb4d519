//! What a typed Rust listener may take and return.
//!
//! A parameter is any [`FromValue`] type, owned, or a borrow of the
//! message's own value: `&str` (a string argument, no copy) or `&Value`
//! (any argument, as is). A listener returns `()` or `Result<(), E>` with
//! `E: Display`; an `Err` is reported as a script error is, with the line
//! the listener was registered on.

use std::fmt::Display;

use crate::listener::ListenerError;
use crate::types::Type;
use crate::value::{FromValue, Value};

/// A parameter type of a typed listener. `Self` is the type named in the
/// listener's marker (`&'static str` for a `&str` parameter); `Item<'a>`
/// is what the closure is handed, borrowed from the message for `'a`.
#[diagnostic::on_unimplemented(
    message = "a Gantry listener cannot take a `{Self}` parameter",
    label = "not a listener parameter type",
    note = "a listener parameter is `i64`, `i32`, `u32`, `f64`, `f32`, `bool`, `String`, `Rc<str>`, `ObjectId`, `Value`, `Vec<T>`, a `#[derive(Struct)]` type, or a borrowed `&str` / `&Value`"
)]
pub trait Arg: 'static {
    /// What the closure takes for a message borrowed for `'a`.
    type Item<'a>;
    /// The type the listener declares for this parameter.
    fn declared_type() -> Type;
    /// The argument as the closure takes it; `None` when it does not
    /// convert.
    fn from_arg(value: &Value) -> Option<Self::Item<'_>>;
}

impl<T: FromValue + 'static> Arg for T {
    type Item<'a> = T;
    #[inline]
    fn declared_type() -> Type {
        T::declared_type()
    }
    #[inline]
    fn from_arg(value: &Value) -> Option<T> {
        T::from_value(value)
    }
}

/// A string argument, borrowed: no copy of the text.
impl Arg for &'static str {
    type Item<'a> = &'a str;
    fn declared_type() -> Type {
        Type::String
    }
    #[inline]
    fn from_arg(value: &Value) -> Option<&str> {
        value.as_str()
    }
}

/// Any argument, borrowed as the message holds it: declares `any`.
impl Arg for &'static Value {
    type Item<'a> = &'a Value;
    fn declared_type() -> Type {
        Type::Any
    }
    #[inline]
    fn from_arg(value: &Value) -> Option<&Value> {
        Some(value)
    }
}

/// What a typed listener may return: nothing, or a `Result` whose `Err`
/// the hub reports ([`crate::Report::ListenerFailed`], with the site the
/// listener was registered from) and then goes on with the other
/// listeners, as it does for a script's error.
#[diagnostic::on_unimplemented(
    message = "a Gantry listener returns `()` or `Result<(), E>` with `E: Display`, not `{Self}`",
    label = "the listener's return type",
    note = "an `Err` is reported with the line the listener was registered on, as a script's error is"
)]
pub trait ListenerReturn: 'static {
    /// Whether it can fail: a listener that can is kept off the typed
    /// fast path, whose closures return nothing.
    const FALLIBLE: bool;
    /// The outcome, as the hub reports it.
    fn into_result(self) -> Result<(), ListenerError>;
}

impl ListenerReturn for () {
    const FALLIBLE: bool = false;
    #[inline]
    fn into_result(self) -> Result<(), ListenerError> {
        Ok(())
    }
}

impl<E: Display + 'static> ListenerReturn for Result<(), E> {
    const FALLIBLE: bool = true;
    #[inline]
    fn into_result(self) -> Result<(), ListenerError> {
        self.map_err(|e| ListenerError::new(e.to_string()))
    }
}

/// Argument `position` of `args` as parameter type `T` (what a typed
/// listener and a derived message read their arguments with).
#[inline]
pub(crate) fn convert<T: Arg>(
    args: &[Value],
    position: usize,
) -> Result<T::Item<'_>, ListenerError> {
    let value = args.get(position).ok_or_else(|| missing::<T>(position))?;
    T::from_arg(value).ok_or_else(|| wrong::<T>(position, value))
}

#[cold]
fn missing<T: Arg>(position: usize) -> ListenerError {
    ListenerError::new(format!(
        "argument {}: expected {}, got nothing",
        position + 1,
        T::declared_type()
    ))
}

#[cold]
fn wrong<T: Arg>(position: usize, value: &Value) -> ListenerError {
    ListenerError::new(format!(
        "argument {}: expected {}, got {}",
        position + 1,
        T::declared_type(),
        value.kind_name()
    ))
}
