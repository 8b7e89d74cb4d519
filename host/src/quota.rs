//! Hub memory held for scripts, counted against a limit.
//!
//! What a script stores or listens with lives in the hub, outside its own
//! engine's memory limit: a stored message, a table's rows, a listener, a
//! key the hub interns and records. A runtime hands the hub a handle
//! charged to its [`Quota`] ([`Hub::charged_to`]), and every place that
//! keeps something for that handle charges it there first: going over is
//! [`HubError::OverQuota`] at the call that asked, never an allocation
//! failure later. Sends that keep nothing charge nothing, so the hot path
//! does not read the quota at all.
//!
//! The counts are estimates of what the hub holds (sizes of the values and
//! of the hub's own records), not the allocator's figures: close enough
//! to stop a mod that stores gigabytes, and the same on every machine.
//! What is charged is released when the hub lets go of it (a stored
//! message replaced or removed, a listener gone), except keys, which the
//! hub keeps for the whole run.
//!
//! [`Hub::charged_to`]: crate::Hub::charged_to
//! [`HubError::OverQuota`]: crate::HubError::OverQuota

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

use thiserror::Error;

use crate::value::Value;

/// A limit on the hub memory one runtime's scripts hold, and what they hold
/// now. Clones share the count.
#[derive(Clone)]
pub struct Quota(Rc<Counts>);

struct Counts {
    limit: Cell<usize>,
    used: Cell<usize>,
}

impl Quota {
    /// What a script runtime's scripts may hold in the hub unless told
    /// otherwise: 256 MiB.
    pub const DEFAULT_SCRIPT_LIMIT: usize = 256 << 20;

    /// A quota of `limit` bytes, nothing held yet.
    pub fn new(limit: usize) -> Quota {
        Quota(Rc::new(Counts {
            limit: Cell::new(limit),
            used: Cell::new(0),
        }))
    }

    /// A quota that counts but never refuses.
    pub fn unlimited() -> Quota {
        Quota::new(usize::MAX)
    }

    pub fn limit(&self) -> usize {
        self.0.limit.get()
    }

    /// Changes the limit. What is held already stays; only later charges
    /// see the new limit.
    pub fn set_limit(&self, limit: usize) {
        self.0.limit.set(limit);
    }

    /// Bytes held now.
    pub fn used(&self) -> usize {
        self.0.used.get()
    }

    /// Whether `needed` more bytes fit, once `freed` (what the charge
    /// replaces) is given back; else the error naming `key` and `what`.
    pub(crate) fn room(
        &self,
        key: &str,
        what: Holding,
        needed: usize,
        freed: usize,
    ) -> Result<(), OverQuota> {
        let used = self.used().saturating_sub(freed);
        if used.saturating_add(needed) <= self.limit() {
            return Ok(());
        }
        Err(OverQuota {
            key: key.to_owned(),
            what,
            needed,
            used,
            limit: self.limit(),
        })
    }

    /// Counts `bytes` as held until the charge is dropped. Check
    /// [`Quota::room`] first: a charge itself never refuses.
    pub(crate) fn charge(&self, bytes: usize) -> Charge {
        self.hold(bytes);
        Charge {
            quota: self.clone(),
            bytes,
        }
    }

    /// Counts `bytes` as held for good (keys: the hub never forgets one).
    pub(crate) fn hold(&self, bytes: usize) {
        self.0.used.set(self.used().saturating_add(bytes));
    }

    fn release(&self, bytes: usize) {
        self.0.used.set(self.used().saturating_sub(bytes));
    }

    fn same(&self, other: &Quota) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Quota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Quota({} of {})",
            Bytes(self.used()),
            Bytes(self.limit())
        )
    }
}

/// Bytes a quota holds for one thing the hub keeps; given back when dropped.
pub(crate) struct Charge {
    quota: Quota,
    bytes: usize,
}

impl Charge {
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// What this charge frees for a new one to `quota`: all of it when it
    /// is the same quota's, nothing otherwise.
    pub(crate) fn frees_for(&self, quota: &Quota) -> usize {
        if self.quota.same(quota) {
            self.bytes
        } else {
            0
        }
    }

    /// Whether this charge is `quota`'s.
    pub(crate) fn is_of(&self, quota: &Quota) -> bool {
        self.quota.same(quota)
    }

    /// Makes the charge `bytes` (the thing it pays for grew or shrank;
    /// checked with [`Quota::room`] first).
    pub(crate) fn set_bytes(&mut self, bytes: usize) {
        self.quota.release(self.bytes);
        self.quota.hold(bytes);
        self.bytes = bytes;
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.quota.release(self.bytes);
    }
}

/// What a refused charge was for, as the error says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holding {
    /// A stored (or once) message.
    StoredMessage,
    /// A table's rows, written through a writer.
    TableRows,
    /// A listener.
    Listener,
    /// A key (and the ancestors interned with it).
    NewKey,
    /// A composite source's name.
    SourceName,
}

impl fmt::Display for Holding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Holding::StoredMessage => "storing this message",
            Holding::TableRows => "writing these table rows",
            Holding::Listener => "this listener",
            Holding::NewKey => "this new key",
            Holding::SourceName => "this new source name",
        })
    }
}

/// A charge that would take a runtime's scripts over their hub memory limit.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "`{key}`: {what} needs {} of hub memory, over this runtime's hub memory limit of {} ({} held already)",
    Bytes(*.needed),
    Bytes(*.limit),
    Bytes(*.used)
)]
pub struct OverQuota {
    pub key: String,
    pub what: Holding,
    pub needed: usize,
    pub used: usize,
    pub limit: usize,
}

/// A byte count as people read it: `512 bytes`, `1.5 KiB`, `256 MiB`.
struct Bytes(usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
        if self.0 < 1024 {
            return write!(f, "{} bytes", self.0);
        }
        let mut value = self.0 as f64 / 1024.0;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        if value.fract() == 0.0 {
            write!(f, "{value} {}", UNITS[unit])
        } else {
            write!(f, "{value:.1} {}", UNITS[unit])
        }
    }
}

/// The bytes the hub holds for a listener beside what the listener's own
/// closure holds (the entry, its place in the channel, the id maps, its
/// share of the snapshots and lanes that copy it).
pub(crate) const LISTENER_BYTES: usize = 384;

/// The bytes the hub holds for a key beside its text (twice: interned and
/// in the table): the interner's record, the key's slot, its table entry
/// with the site that used it, and the map nodes that find them (about
/// 1.4 KiB measured for a key sent once from one script line).
pub(crate) const KEY_BYTES: usize = 1408;

/// The bytes the hub holds for a composite source's name beside its text
/// (twice: the list and the map).
pub(crate) const NAME_BYTES: usize = 64;

/// The bytes the hub holds for a stored message beside its values (the
/// store's map entry, the argument list).
pub(crate) const STORED_BYTES: usize = 96;

/// The bytes `values` hold: each value's own size and what it points to
/// (strings, rows, fields), followed iteratively (no depth limit, no
/// recursion). Shared parts are counted at each place: an estimate from
/// above.
pub(crate) fn values_bytes(values: &[Value]) -> usize {
    let slot = std::mem::size_of::<Value>();
    let rc = 2 * std::mem::size_of::<usize>();
    let mut bytes = std::mem::size_of_val(values);
    let mut pending: Vec<&Value> = values.iter().collect();
    while let Some(value) = pending.pop() {
        bytes += match value {
            Value::Str(text) => rc + text.len(),
            Value::Array(items) => {
                pending.extend(items.iter());
                rc + std::mem::size_of::<Vec<Value>>() + items.capacity() * slot
            }
            Value::Struct(row) => {
                pending.extend(row.fields.iter().map(|(_, v)| v));
                let field = std::mem::size_of::<(Rc<str>, Value)>();
                let names: usize = row.fields.iter().map(|(name, _)| name.len()).sum();
                rc + std::mem::size_of::<crate::value::StructValue>()
                    + row.fields.capacity() * field
                    + names
            }
            _ => 0,
        };
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(Bytes(512).to_string(), "512 bytes");
        assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Bytes(256 << 20).to_string(), "256 MiB");
        assert_eq!(Bytes(6 << 30).to_string(), "6 GiB");
    }

    #[test]
    fn a_charge_is_given_back_when_dropped_and_room_counts_what_it_replaces() {
        let quota = Quota::new(1000);
        let first = quota.charge(600);
        assert_eq!(quota.used(), 600);
        assert!(quota.room("K", Holding::StoredMessage, 600, 0).is_err());
        assert!(
            quota
                .room("K", Holding::StoredMessage, 600, first.frees_for(&quota))
                .is_ok()
        );
        let other = Quota::new(1000);
        assert_eq!(first.frees_for(&other), 0);
        drop(first);
        assert_eq!(quota.used(), 0);
        let err = quota
            .room("Big", Holding::StoredMessage, 2048, 0)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`Big`: storing this message needs 2 KiB of hub memory, over this runtime's \
             hub memory limit of 1000 bytes (0 bytes held already)"
        );
    }

    #[test]
    fn values_count_what_they_point_to() {
        let text = Value::str(&"x".repeat(1 << 20));
        assert!(values_bytes(&[text]) > 1 << 20);
        let rows = Value::array((0..1000).map(Value::Int).collect());
        let bytes = values_bytes(&[rows]);
        assert!(
            (1000 * std::mem::size_of::<Value>()..2000 * 24).contains(&bytes),
            "{bytes}"
        );
    }
}
