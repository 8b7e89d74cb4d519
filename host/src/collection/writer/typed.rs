//! The typed writer: rows are a Rust type `T` on this side and values in
//! the store, through serde.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::hub::{Delivered, Hub, HubError};
use crate::key::Key;
use crate::serde_bridge::{ValueSerdeError, from_value, to_value};
use crate::source::Source;

use super::StoredArray;

/// The typed writer: rows are `T` on the Rust side and values in the store
/// (through serde, so skipped fields take no position).
pub struct StoredArrayOf<'h, T> {
    inner: StoredArray<'h>,
    _rows: PhantomData<fn() -> T>,
}

impl<'h, T: Serialize + DeserializeOwned> StoredArrayOf<'h, T> {
    #[track_caller]
    pub fn open(hub: &'h Hub, key: Key, source: impl Into<Source>) -> Self {
        Self {
            inner: StoredArray::open(hub, key, source),
            _rows: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.inner.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// Reads (decodes) a row. Never marks it.
    pub fn get(&self, index: usize) -> Option<Result<T, ValueSerdeError>> {
        self.inner.get(index).map(from_value)
    }

    /// A guard that derefs to the decoded row and writes it back when
    /// dropped; the only way to write a row.
    pub fn get_mut(&mut self, index: usize) -> Option<Result<RowMut<'_, 'h, T>, ValueSerdeError>> {
        let row = match from_value::<T>(self.inner.get(index)?) {
            Ok(row) => row,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(RowMut {
            array: &mut self.inner,
            index,
            row: Some(row),
        }))
    }

    pub fn add(&mut self, row: &T) -> Result<(), ValueSerdeError> {
        self.inner.add(to_value(row)?);
        Ok(())
    }

    /// Inserts at `index` (`<= len`); `Ok(false)` when past the end.
    pub fn insert(&mut self, index: usize, row: &T) -> Result<bool, ValueSerdeError> {
        Ok(self.inner.insert(index, to_value(row)?))
    }

    pub fn remove_at(&mut self, index: usize) -> Option<Result<T, ValueSerdeError>> {
        self.inner.remove_at(index).map(|v| from_value(&v))
    }

    /// See [`StoredArray::set_len`]: false when no table can hold `len` rows.
    pub fn set_len(&mut self, len: usize) -> bool {
        self.inner.set_len(len)
    }

    /// See [`StoredArray::try_set_len`].
    pub fn try_set_len(&mut self, len: usize) -> Result<bool, HubError> {
        self.inner.try_set_len(len)
    }

    pub fn empty(&mut self) {
        self.inner.empty();
    }

    /// The dynamic writer underneath.
    pub fn values(&mut self) -> &mut StoredArray<'h> {
        &mut self.inner
    }

    pub fn publish(self) -> Result<Delivered, HubError> {
        self.inner.publish()
    }
}

/// A decoded row being written; encoded back into the table on drop.
pub struct RowMut<'a, 'h, T: Serialize> {
    array: &'a mut StoredArray<'h>,
    index: usize,
    row: Option<T>,
}

impl<T: Serialize> Deref for RowMut<'_, '_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.row.as_ref().expect("present until drop")
    }
}

impl<T: Serialize> DerefMut for RowMut<'_, '_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.row.as_mut().expect("present until drop")
    }
}

impl<T: Serialize> Drop for RowMut<'_, '_, T> {
    fn drop(&mut self) {
        let Some(row) = self.row.take() else { return };
        match to_value(&row) {
            Ok(value) => {
                self.array.set(self.index, value);
            }
            Err(error) => tracing::warn!(%error, row = self.index, "row not written back"),
        }
    }
}
