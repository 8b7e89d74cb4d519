//! Delivery lanes: the hot path of a key that is sent again and again.
//!
//! Gathering a dispatch walks the key's ancestors, collects the lists of
//! every tier the source reaches and merges them into delivery order. None
//! of that changes between two sends unless a listener comes or goes, a
//! signature changes or an object is destroyed, so the first send from a
//! source keeps the merged result as the key's *lane*, stamped with the
//! state's epoch (bumped by each of those changes). A later send from the
//! same source with the epoch unchanged delivers straight down the lane.
//!
//! A lane is a snapshot like the lists it was merged from: a listener added
//! during a dispatch is not in it; one removed is skipped by its `alive`
//! flag. Lanes of keys whose listeners change are dropped at once, so a
//! lane never keeps an unlistened closure alive.
//!
//! A Rust send through a [`TypedKey`](crate::TypedKey) goes one step
//! further: when every listener on the lane is a typed Rust closure taking
//! exactly the sent tuple, the lane keeps those closures by their Rust type
//! (a [`DirectLane`]) and the tuple reaches them without becoming `Value`s.

use std::any::{Any, TypeId};
use std::cell::OnceCell;
use std::rc::Rc;

use crate::channel::{List, Slots};
use crate::listener::Entry;
use crate::source::Source;

/// A key's merged delivery list for one source.
pub(crate) struct Lane<S: Slots> {
    /// The state's epoch when the lane was merged; stale once it moves.
    pub epoch: u64,
    pub source: Source,
    /// Every entry the send may call, in delivery order, with the depth of
    /// the ancestor it listens on (0: the key itself).
    pub entries: Box<[(Rc<Entry>, u32)]>,
    /// The largest arity a typed entry declares (see `List::max_arity`).
    pub max_arity: usize,
    /// How many entries the message deliverer calls (see
    /// `List::messages`): a lane of none is left to the features.
    pub messages: usize,
    /// What the features keep of the merged lists for their own dispatch
    /// down this lane, made with it (see [`Slots`]).
    pub extras: S::Lane,
    /// The typed view of the lane for one Rust tuple type: set by the first
    /// typed send that finds the lane fit for it, `None` when it is not
    /// (a script listener, a prefix listener, a struct filter...).
    pub direct: OnceCell<Option<Rc<dyn Any>>>,
}

impl<S: Slots> Lane<S> {
    /// The lane of `ordered`, the entries of gathered `lists` in delivery
    /// order (routing's `delivery_order`) with their depths.
    pub(crate) fn merge<'e>(
        ordered: impl IntoIterator<Item = (&'e Rc<Entry>, u32)>,
        lists: &[(Rc<List<S>>, u32)],
        epoch: u64,
        source: Source,
    ) -> Self {
        let entries: Box<[(Rc<Entry>, u32)]> = ordered
            .into_iter()
            .map(|(entry, depth)| (entry.clone(), depth))
            .collect();
        let max_arity = entries
            .iter()
            .map(|(entry, _)| entry.params.arity())
            .max()
            .unwrap_or(0);
        let messages = entries
            .iter()
            .filter(|(entry, _)| entry.takes_messages())
            .count();
        let extras = S::lane(lists);
        Lane {
            epoch,
            source,
            entries,
            max_arity,
            messages,
            extras,
            direct: OnceCell::new(),
        }
    }

    /// The typed view for tuple type `A`, if this lane has one.
    #[inline]
    pub(crate) fn direct<A: 'static>(&self) -> Option<Rc<DirectLane<A>>> {
        let view = self.direct.get()?.as_ref()?;
        Rc::clone(view).downcast::<DirectLane<A>>().ok()
    }

    /// Makes the typed view for `A` when every entry takes exactly `A`;
    /// remembers a refusal too, so a lane is judged once.
    pub(crate) fn make_direct<A: 'static>(&self) {
        self.direct.get_or_init(|| {
            let entries: Option<Vec<_>> = self
                .entries
                .iter()
                .map(|(entry, _)| {
                    // Only typed message listeners (no struct filter, no
                    // responder) have a direct closure: see `listen_with`.
                    let f = entry.direct.as_ref()?.downcast_ref::<DirectFn<A>>()?;
                    Some((entry.clone(), f.0.clone()))
                })
                .collect();
            entries.map(|entries| {
                Rc::new(DirectLane {
                    entries: entries.into_boxed_slice(),
                }) as Rc<dyn Any>
            })
        });
    }
}

/// A typed Rust listener's closure, callable with the tuple it declares.
pub(crate) struct DirectFn<A>(pub Rc<dyn Fn(A)>);

/// One listener of a typed view: the entry (for its flags) and its closure.
pub(crate) type DirectEntry<A> = (Rc<Entry>, Rc<dyn Fn(A)>);

/// A lane's entries with their closures at one Rust tuple type.
pub(crate) struct DirectLane<A> {
    pub entries: Box<[DirectEntry<A>]>,
}

/// The typed view a key's typed sends used last, kept on the key's slot
/// so that the next one finds it without searching the lanes: the typed
/// send's whole lookup is this one compare.
pub(crate) struct HotView {
    pub epoch: u64,
    pub source: Source,
    /// `TypeId::of::<DirectLane<A>>()` for the `A` of `view`.
    pub type_id: TypeId,
    /// An `Rc<DirectLane<A>>`.
    pub view: Rc<dyn Any>,
}

impl HotView {
    pub(crate) fn new<A: 'static>(epoch: u64, source: Source, view: Rc<DirectLane<A>>) -> Self {
        HotView {
            epoch,
            source,
            type_id: TypeId::of::<DirectLane<A>>(),
            view,
        }
    }

    /// The view, if it is current and of tuple type `A`.
    #[inline]
    pub(crate) fn get<A: 'static>(&self, epoch: u64, source: Source) -> Option<Rc<DirectLane<A>>> {
        if self.epoch != epoch
            || self.source != source
            || self.type_id != TypeId::of::<DirectLane<A>>()
        {
            return None;
        }
        let raw = Rc::into_raw(self.view.clone()).cast::<DirectLane<A>>();
        // SAFETY: `view` was made from an `Rc<DirectLane<A>>` (see `new`),
        // and `type_id` proves this `A` is that `A`: the pointer is the
        // same allocation at its own type — what `Rc::downcast` does after
        // asking the vtable for the type id, which this compare replaces.
        Some(unsafe { Rc::from_raw(raw) })
    }
}
