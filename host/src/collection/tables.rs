//! What the collection dispatch keeps beside the core's snapshots: a
//! channel's collection entries with their selectors ([`ListTables`], in
//! each `List`) and a lane's in delivery order ([`LaneTables`], in each
//! `Lane`). The core builds them through the seam (`hub::seam`) and never
//! looks inside; the collection dispatch reads them.

use std::rc::Rc;

use smallvec::SmallVec;

use crate::hub::seam::Features;
use crate::listener::Entry;

use super::listen::CollectionListen;
use super::update::Selector;

/// A gathered channel snapshot with its depth (what `hub::Gathered` holds).
type Lists = (Rc<crate::channel::List<Features>>, u32);

/// A collection listener in a channel's snapshot, with its selector beside
/// it.
#[derive(Clone)]
pub(crate) struct CollectionEntry {
    pub entry: Rc<Entry>,
    /// What the entry listens with, found once when the snapshot is made.
    pub listen: Rc<CollectionListen>,
    pub selector: Selector,
    /// The entry's order and registration, copied out: a dispatch that
    /// interleaves these listeners with message listeners places each
    /// one without following a pointer.
    pub order: i32,
    pub seq: u64,
}

impl CollectionEntry {
    /// Where it sorts among every listener of a dispatch, at `depth`
    /// (`hub::sort_key`).
    #[inline]
    pub(crate) fn place(&self, depth: u32) -> (i32, u32, u64) {
        (self.order, depth, self.seq)
    }
}

/// The collection entries of one channel's snapshot, in channel order,
/// with what wakes them read out of the entry: a publish decides for each
/// slot listener without following a pointer, which is most of its work
/// when 64 slots listen and one wakes.
pub(crate) struct ListTables {
    pub collections: Box<[CollectionEntry]>,
}

impl ListTables {
    /// The collection entries of `entries` (a snapshot, in channel order).
    pub(crate) fn of(entries: &[Rc<Entry>]) -> ListTables {
        let collections = entries
            .iter()
            .filter_map(|e| {
                let listen = e.feature_rc::<CollectionListen>()?;
                Some(CollectionEntry {
                    entry: e.clone(),
                    selector: listen.selector,
                    listen,
                    order: e.order,
                    seq: e.seq,
                })
            })
            .collect();
        ListTables { collections }
    }

    /// How many of the snapshot's entries the message deliverer never
    /// calls: the collection listeners that take tables only.
    pub(crate) fn table_only(&self) -> usize {
        self.collections
            .iter()
            .filter(|c| !c.entry.takes_messages())
            .count()
    }
}

/// The collection listeners a table sent on a lane's key reaches, in
/// delivery order: a table send down a current lane publishes from here
/// instead of gathering the lists again.
pub(crate) struct LaneTables {
    pub tables: Box<[(CollectionEntry, u32)]>,
}

impl LaneTables {
    /// The collection entries of the lists a lane was merged from, in
    /// delivery order (see [`table_order`]).
    pub(crate) fn of(lists: &[Lists]) -> LaneTables {
        let tables = table_order(lists)
            .into_iter()
            .map(|(c, depth)| (c.clone(), depth))
            .collect();
        LaneTables { tables }
    }
}

/// The collection entries of `lists` in delivery order (the same rule as
/// the message deliverer, `hub::sort_key`: order, then the key's own
/// listeners by registration, then partial ones above, nearest first),
/// those on a channel above the key only if they listen partially. What a
/// lane keeps for table sends.
pub(crate) fn table_order(lists: &[Lists]) -> SmallVec<[(&CollectionEntry, u32); 16]> {
    let mut order: SmallVec<[(&CollectionEntry, u32); 16]> = lists
        .iter()
        .flat_map(|(list, depth)| list.extras.collections.iter().map(move |c| (c, *depth)))
        .filter(|(c, depth)| *depth == 0 || c.entry.partial)
        .collect();
    if lists.len() > 1 {
        order.sort_by_key(|(c, depth)| c.place(*depth));
    }
    order
}
