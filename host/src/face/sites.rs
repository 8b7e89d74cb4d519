//! How an API call names its key and records where it stands.
//!
//! A generic call (`NotifyMessage("Key", ...)`) resolves its key and records
//! its line each time it runs, once per line; a baked call (the loader
//! rewrote a literal key) had both done at load. Recording beside the
//! dispatch lets both hand the hub the same caller.

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashSet;

use crate::{Key, Role};

/// How a call names its key: resolved, and as the script wrote it.
#[derive(Clone, Debug)]
pub struct KeyRef {
    pub key: Key,
    pub text: Rc<str>,
}

/// Whether a call site still has to be recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sites {
    /// Generic call: record this line once.
    PerCall,
    /// Baked call: recorded at load.
    AtLoad,
}

/// The (key, line, role) sites one script already recorded from generic
/// calls, so that a line run every frame is recorded once.
#[derive(Default, Debug)]
pub struct SiteBook(RefCell<FxHashSet<(Key, u32, Role)>>);

impl SiteBook {
    /// Is this site new to the book? (It is in the book afterwards.)
    pub fn first(&self, key: Key, line: u32, role: Role) -> bool {
        self.0.borrow_mut().insert((key, line, role))
    }
}
