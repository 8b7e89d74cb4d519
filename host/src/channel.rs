//! The listeners of one channel — a (key, scope) pair, or a key's hook
//! listeners — kept so that a mod registering or removing a hundred
//! thousand of them stays linear.
//!
//! Registration order lives in a B-tree keyed by (order, registration),
//! so a listener comes and goes in O(log n) whatever its order. A dispatch
//! reads a [`List`]: an immutable snapshot of the channel in delivery
//! order, made the first time it is asked for after a change and shared by
//! every dispatch until the next one. A change only lets go of the
//! snapshot (a dispatch still holding it keeps reading it, and skips the
//! entries removed since by their `alive` flag), so registering N
//! listeners before the next send costs O(N log N) in all, and a send
//! after a change pays one O(N) copy — what delivering to N listeners
//! costs anyway.

use std::any::Any;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::hub::seam::{ListExtras, list_extras, not_for_messages};
use crate::listener::Entry;

/// A snapshot of the listeners on one channel, in channel order (order,
/// then registration).
pub(crate) struct List {
    pub entries: Box<[Rc<Entry>]>,
    /// The largest arity a typed entry declares: a send with fewer arguments
    /// must look closer before calling anyone.
    pub max_arity: usize,
    /// How many entries the message deliverer calls (not the ones a
    /// feature calls itself): a list of none is skipped whole.
    pub messages: usize,
    /// What the features keep of this snapshot for their own dispatch,
    /// made with it through the seam (see [`ListExtras`]).
    pub extras: ListExtras,
}

impl List {
    /// The snapshot of `entries`, given in channel order.
    fn build<'e>(entries: impl ExactSizeIterator<Item = &'e Rc<Entry>>) -> List {
        let entries: Box<[Rc<Entry>]> = entries.cloned().collect();
        let max_arity = entries.iter().map(|e| e.params.arity()).max().unwrap_or(0);
        let extras = list_extras(&entries);
        List {
            messages: entries.len() - not_for_messages(&extras),
            entries,
            max_arity,
            extras,
        }
    }
}

/// Where an entry sorts in its channel: lower order first, then
/// registration. Both tiers and hooks order a channel this way (hooks
/// store their priority as an order, see `listener::order_of_priority`).
fn position(entry: &Entry) -> (i32, u64) {
    (entry.order, entry.seq)
}

/// The listeners of one channel.
#[derive(Default)]
pub(crate) struct Channel {
    entries: BTreeMap<(i32, u64), Rc<Entry>>,
    /// The entries in order as dispatches read them, until the next change.
    snapshot: Option<Rc<List>>,
}

impl Channel {
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry, in channel order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &Rc<Entry>> {
        self.entries.values()
    }

    /// Adds `entry`. What the channel let go of (its old snapshot) goes to
    /// `graveyard`, to be dropped once the hub's state is released.
    pub(crate) fn insert(&mut self, entry: Rc<Entry>, graveyard: &mut Vec<Box<dyn Any>>) {
        self.entries.insert(position(&entry), entry);
        self.changed(graveyard);
    }

    /// Takes `entry` out; `None` when it is not here. The entry and the
    /// old snapshot go to `graveyard` (an entry's drop may run user code).
    pub(crate) fn remove(&mut self, entry: &Entry, graveyard: &mut Vec<Box<dyn Any>>) -> bool {
        let Some(removed) = self.entries.remove(&position(entry)) else {
            return false;
        };
        graveyard.push(Box::new(removed));
        self.changed(graveyard);
        true
    }

    fn changed(&mut self, graveyard: &mut Vec<Box<dyn Any>>) {
        if let Some(old) = self.snapshot.take() {
            graveyard.push(Box::new(old));
        }
    }

    /// The channel's snapshot, made now if a change let go of it; `None`
    /// when nobody listens. Every dispatch asks, so the kept snapshot is
    /// looked at first: a channel unchanged since its last dispatch costs
    /// one branch.
    #[inline]
    pub(crate) fn list(&mut self) -> Option<&Rc<List>> {
        if self.snapshot.is_none() {
            if self.entries.is_empty() {
                return None;
            }
            self.snapshot = Some(Rc::new(List::build(self.entries.values())));
        }
        self.snapshot.as_ref()
    }
}
