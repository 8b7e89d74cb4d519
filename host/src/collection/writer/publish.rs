//! A writer's publish: its edits stored in one step (swapped into the
//! stored rows in place when it can), charged to the quota, and published
//! to the collection listeners.

use std::rc::Rc;

use crate::collection::dispatch::on_write;
use crate::hub::seam::DownLists;
use crate::hub::{Caller, Delivered, Hub, HubError};
use crate::key::Key;
use crate::quota::{Holding, Quota, STORED_BYTES, values_bytes};
use crate::source::Source;
use crate::store::Stored;
use crate::value::Value;

use super::{EMPTY_ROWS, StoredArray, row_bytes};

impl StoredArray<'_> {
    pub(super) fn publish_inner(&mut self) -> Result<Delivered, HubError> {
        if self.published || self.spans.is_empty() {
            self.published = true;
            return Ok(Delivered::default());
        }
        self.published = true;
        // A table kept for an object destroyed while the writer was open
        // could never be removed: refused, as a store is.
        self.hub.check_alive(self.source, None)?;
        let total = self.rows.len();
        let bound = total.max(self.prev_total) as i32;
        if total != self.prev_total {
            self.spans.widen_to_tail(bound);
        }
        self.spans.clip(bound);
        if self.spans.is_empty() {
            // Every change was to rows that are gone again: the table
            // reads as it did.
            return Ok(Delivered::default());
        }
        // A charged handle counts the published table before anything is
        // swapped, checked or stored: past the quota, nothing changes.
        let charge = match self.hub.quota().cloned() {
            Some(quota) => Some((self.table_bytes(&quota)?, quota)),
            None => None,
        };
        // The edits go into the stored list in place when it is the
        // store's alone; else the writer publishes a list of its own.
        let in_place = !self.edits.is_empty()
            && swap_edits_into_store(
                &self.hub,
                (self.key, self.source),
                &mut self.rows,
                &mut self.edits,
            );
        if !in_place {
            self.own_rows();
        }
        let caller = match &self.site {
            Some(site) => Caller::Script(site),
            None => Caller::Rust(self.location),
        };
        let mut args = [Value::Array(self.rows.clone())];
        let mut lists = crate::hub::Gathered::new();
        let admitted = self.hub.gather_edited(
            self.key,
            self.source,
            &mut args,
            caller,
            &self.spans,
            &mut lists,
        );
        if let Err(refused) = admitted {
            if in_place {
                // The store keeps its previous table: swap the old rows
                // back before the refusal is reported.
                args[0] = Value::Nil;
                swap_edits_into_store(
                    &self.hub,
                    (self.key, self.source),
                    &mut self.rows,
                    &mut self.edits,
                );
            }
            return Err(self.hub.refuse(refused, caller));
        }
        // After an in-place publish the overlay holds the old rows.
        self.edits.clear();
        let tracing = self.hub.is_observed();
        if tracing {
            self.hub
                .trace_dispatch(self.key, self.source, &args, crate::trace::Delivery::Store);
        }
        // What the store held before is dropped after the borrow (Rust
        // rows may run code of their own when dropped).
        let _replaced = self.hub.with_state(|s| {
            if in_place {
                let kept = s.stores.get_mut(&(self.key, self.source))?;
                kept.once = false;
                self.opened = Some(kept.serial);
                // What the table holds now is the publisher's (an
                // uncharged writer over an uncharged table touches nothing).
                match (&mut kept.charge, charge) {
                    (None, None) => {}
                    (Some(held), Some((bytes, quota))) if held.is_of(&quota) => {
                        held.set_bytes(bytes);
                    }
                    (held, charge) => *held = charge.map(|(bytes, quota)| quota.charge(bytes)),
                }
                // The rows now differ from the Rust ones they were stored
                // from.
                kept.mirror.take().map(|mirror| (None, Some(mirror)))
            } else {
                let serial = s.stores.serial();
                self.opened = Some(serial);
                let mut old = s.stores.insert(
                    (self.key, self.source),
                    Stored {
                        args: Rc::from(args.clone()),
                        once: false,
                        mirror: None,
                        charge: charge.map(|(bytes, quota)| quota.charge(bytes)),
                        serial,
                    },
                );
                // Kept until the delivery is done; what it held is given
                // back now.
                if let Some(old) = &mut old {
                    old.charge = None;
                }
                Some((old, None))
            }
        });
        // The spans go to the collection listeners in their places among
        // the message listeners.
        let key = self.key;
        let down = DownLists {
            hub: &self.hub,
            key: self.key,
            source: self.source,
            args: &args,
            caller,
            lists: &lists,
        };
        let delivered = on_write(
            &self.hub,
            self.key,
            &self.rows,
            self.prev_total,
            self.element.clone(),
            &self.spans,
            &lists,
            down,
        );
        let delivered = delivered.inspect_err(|_| {
            if tracing {
                self.hub.trace_end(key, 0);
            }
        })?;
        if tracing {
            self.hub.trace_end(key, delivered.listeners);
        }
        Ok(delivered)
    }

    /// The bytes the table holds once published, refused past `quota`
    /// (what the store held, `quota`'s, is given back by the publish).
    /// Counted from the charge of the table the writer opened plus the
    /// difference of the rows it changed (the overlay, or the spans), so
    /// that an edit of one row of a large table costs that row; counted
    /// whole when another store replaced it since, or it was not charged
    /// to `quota`.
    fn table_bytes(&self, quota: &Quota) -> Result<usize, HubError> {
        let state = self.hub.inner.state.borrow();
        let stored = state.stores.get(&(self.key, self.source));
        let freed = stored
            .and_then(|s| s.charge.as_ref())
            .map_or(0, |c| c.frees_for(quota));
        let opened = stored.filter(|s| self.opened == Some(s.serial));
        let base = opened.and_then(|s| match (&*s.args, &s.charge) {
            ([Value::Array(old)], Some(held)) if held.is_of(quota) => Some((old, held.bytes())),
            _ => None,
        });
        let bytes = match base {
            // Rows written over the stored list, which the writer holds.
            Some((_, held)) if !self.edits.is_empty() => held as isize + self.edits_growth(),
            Some((old, held)) if !self.spans.is_full() => {
                let mut bytes = held as isize;
                for range in self.spans.ranges() {
                    let span = |rows: &[Value]| {
                        let end = (range.end().max(0) as usize).min(rows.len());
                        let start = (range.index.max(0) as usize).min(end);
                        rows[start..end].iter().map(row_bytes).sum::<isize>()
                    };
                    bytes += span(&self.rows) - span(old);
                }
                bytes
            }
            _ => {
                let whole = STORED_BYTES + values_bytes(&[Value::Array(self.rows.clone())]);
                whole as isize + self.edits_growth()
            }
        };
        let bytes = bytes.max(0) as usize;
        quota.room(state.keys.name(self.key), Holding::TableRows, bytes, freed)?;
        Ok(bytes)
    }

    /// How much the overlay's rows differ in size from those they replace.
    fn edits_growth(&self) -> isize {
        self.edits
            .iter()
            .map(|(at, row)| row_bytes(row) - self.rows.get(*at).map_or(0, row_bytes))
            .sum()
    }
}

/// Swaps each overlay row with its row in the stored list of `at`, in
/// place, when the store holds the list the writer has (`rows`) and no one
/// else holds it or its argument list. Returns false, changing nothing,
/// otherwise. Called twice, it swaps back.
fn swap_edits_into_store(
    hub: &Hub,
    at: (Key, Source),
    rows: &mut Rc<Vec<Value>>,
    edits: &mut [(usize, Value)],
) -> bool {
    // Declared before the borrow, so dropped after it: Rust rows may run
    // code of their own when dropped.
    let _dropped;
    let mut state = hub.inner.state.borrow_mut();
    let Some(stored) = state.stores.get_mut(&at) else {
        return false;
    };
    // The stored values are about to differ from the Rust rows they may
    // have been stored from, before the edit is checked (a refused edit
    // costs the table only its compiled path).
    _dropped = stored.mirror.take();
    let Some([Value::Array(list)]) = Rc::get_mut(&mut stored.args) else {
        return false;
    };
    if !Rc::ptr_eq(list, rows) || Rc::strong_count(list) != 2 {
        return false;
    }
    // The writer's handle is the only other one: give it up, change the
    // list through the store's, and take a handle again.
    *rows = EMPTY_ROWS.with(Rc::clone);
    let Some(stored_rows) = Rc::get_mut(list) else {
        *rows = list.clone();
        return false;
    };
    for (index, row) in edits.iter_mut() {
        if let Some(slot) = stored_rows.get_mut(*index) {
            std::mem::swap(slot, row);
        }
    }
    *rows = list.clone();
    true
}
