//! The listeners of one channel — a (key, scope) pair, or a feature's own
//! channel of a key — kept so that a mod registering or removing a hundred
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
//!
//! What the features keep beside a snapshot (their own entries with what
//! they read of them, say) is a slot of the snapshot the core fills through
//! [`Slots`] and never looks into: the core is generic over it, and the
//! hub's state names the features that fill it (`hub::seam::Features`).

use std::any::Any;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::listener::Entry;

/// What the features keep beside the core's snapshots: a slot in each
/// channel's [`List`] and one in each lane (`lane::Lane`), made with them.
/// The core builds and carries them and never looks inside; each
/// feature's own dispatch reads them. Static: a send pays no virtual call
/// for them.
pub(crate) trait Slots: Sized + 'static {
    /// Kept beside each channel's snapshot.
    type List;
    /// Kept beside each lane.
    type Lane;
    /// The slot of a snapshot of `entries` (in channel order).
    fn list(entries: &[Rc<Entry>]) -> Self::List;
    /// How many of a snapshot's entries a feature calls itself and the
    /// message deliverer never does.
    fn not_for_messages(list: &Self::List) -> usize;
    /// The slot of a lane merged from `lists` (with their depths).
    fn lane(lists: &[(Rc<List<Self>>, u32)]) -> Self::Lane;
}

/// A snapshot of the listeners on one channel, in channel order (order,
/// then registration).
pub(crate) struct List<S: Slots> {
    pub entries: Box<[Rc<Entry>]>,
    /// The largest arity a typed entry declares: a send with fewer arguments
    /// must look closer before calling anyone.
    pub max_arity: usize,
    /// How many entries the message deliverer calls (not the ones a
    /// feature calls itself): a list of none is skipped whole.
    pub messages: usize,
    /// What the features keep of this snapshot for their own dispatch,
    /// made with it (see [`Slots`]).
    pub extras: S::List,
}

impl<S: Slots> List<S> {
    /// The snapshot of `entries`, given in channel order.
    fn build<'e>(entries: impl ExactSizeIterator<Item = &'e Rc<Entry>>) -> Self {
        let entries: Box<[Rc<Entry>]> = entries.cloned().collect();
        let max_arity = entries.iter().map(|e| e.params.arity()).max().unwrap_or(0);
        let extras = S::list(&entries);
        List {
            messages: entries.len() - S::not_for_messages(&extras),
            entries,
            max_arity,
            extras,
        }
    }
}

/// Where an entry sorts in its channel: lower order first, then
/// registration. Every channel orders this way, a feature's too (one that
/// orders by a priority keeps it as an order, see
/// `listener::order_of_priority`).
fn position(entry: &Entry) -> (i32, u64) {
    (entry.order, entry.seq)
}

/// The listeners of one channel.
pub(crate) struct Channel<S: Slots> {
    entries: BTreeMap<(i32, u64), Rc<Entry>>,
    /// The entries in order as dispatches read them, until the next change.
    snapshot: Option<Rc<List<S>>>,
}

impl<S: Slots> Default for Channel<S> {
    fn default() -> Self {
        Channel {
            entries: BTreeMap::new(),
            snapshot: None,
        }
    }
}

impl<S: Slots> Channel<S> {
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
    pub(crate) fn list(&mut self) -> Option<&Rc<List<S>>> {
        if self.snapshot.is_none() {
            if self.entries.is_empty() {
                return None;
            }
            self.snapshot = Some(Rc::new(List::build(self.entries.values())));
        }
        self.snapshot.as_ref()
    }
}
