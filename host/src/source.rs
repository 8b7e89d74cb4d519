//! Sources: where a message is sent from and what a listener watches.
//!
//! A send on an object reaches that object's listeners, its world's and the
//! global ones; a world send reaches world and global; a global send reaches
//! global only. Never the other way round: a world broadcast does not reach a
//! listener bound to one object.

use std::fmt;
use std::num::NonZeroU32;

use crate::value::ObjectId;

/// A world: a set of objects, and a tier of listeners between object and
/// global. Worlds isolate parallel game instances for free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorldId(pub(crate) NonZeroU32);

impl WorldId {
    pub fn get(self) -> u32 {
        self.0.get()
    }
}

impl fmt::Display for WorldId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "world#{}", self.0)
    }
}

/// An interned name of a composite (object, name) source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId(pub(crate) u32);

/// Where a message comes from, or what a listener watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    Global,
    World(WorldId),
    Object(ObjectId),
    /// One object carrying several independent sources, told apart by name.
    /// It belongs to the object's world; plain listeners of the object do not
    /// hear it (it is a source of its own).
    Named(ObjectId, NameId),
}

impl Source {
    /// The object this source belongs to, if any.
    pub fn object(self) -> Option<ObjectId> {
        match self {
            Source::Object(o) | Source::Named(o, _) => Some(o),
            _ => None,
        }
    }
}

impl From<ObjectId> for Source {
    fn from(o: ObjectId) -> Self {
        Source::Object(o)
    }
}

impl From<WorldId> for Source {
    fn from(w: WorldId) -> Self {
        Source::World(w)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Global => f.write_str("global"),
            Source::World(w) => write!(f, "{w}"),
            Source::Object(o) => write!(f, "{o}"),
            Source::Named(o, n) => write!(f, "{o}/name#{}", n.0),
        }
    }
}
