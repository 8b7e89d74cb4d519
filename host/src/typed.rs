//! The typed Rust face: send a tuple, listen with a typed closure.
//!
//! `hub.send(key, source, (5, 2.5))` turns the tuple into a stack array of
//! [`Value`]s (no allocation for scalars); `hub.listen(key, scope, |hp: i64|
//! ...)` declares `[int]` as the listener's parameters, which the
//! compatibility rule checks against the signature table.

use std::rc::Rc;

use crate::hub::Message;
use crate::listener::ListenerError;
use crate::types::Type;
use crate::value::{FromValue, IntoValue, Value};

/// A tuple of Rust values sent as message arguments.
pub trait IntoArgs {
    type Array: AsMut<[Value]> + AsRef<[Value]>;
    fn into_args(self) -> Self::Array;
}

/// A closure usable as a typed listener; `Args` is its parameter tuple.
pub trait Handler<Args>: 'static {
    /// The types the listener declares, in order.
    fn param_types() -> Rc<[Type]>;
    /// Converts the arguments and calls the closure.
    fn call(&self, message: &Message<'_>) -> Result<(), ListenerError>;
}

fn convert<T: FromValue>(args: &[Value], position: usize) -> Result<T, ListenerError> {
    let value = args.get(position).ok_or_else(|| {
        ListenerError::new(format!(
            "parameter {position}: expected {}, got nothing",
            T::declared_type()
        ))
    })?;
    T::from_value(value).ok_or_else(|| {
        ListenerError::new(format!(
            "parameter {position}: expected {}, got {}",
            T::declared_type(),
            value.kind_name()
        ))
    })
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

        impl<Func, $($name: FromValue),*> Handler<($($name,)*)> for Func
        where
            Func: Fn($($name),*) + 'static,
        {
            fn param_types() -> Rc<[Type]> {
                Rc::from(vec![$($name::declared_type()),*])
            }
            #[inline]
            #[allow(unused_variables)]
            fn call(&self, message: &Message<'_>) -> Result<(), ListenerError> {
                let args = message.args;
                (self)($(convert::<$name>(args, $idx)?),*);
                Ok(())
            }
        }
    };
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
