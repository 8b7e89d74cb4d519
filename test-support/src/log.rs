//! A log of what listeners heard, for tests that assert the order of
//! calls: `log()`, listeners pushing lines into it, `taken(&log)`.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

pub type Log = Rc<RefCell<Vec<String>>>;

pub fn log() -> Log {
    Rc::new(RefCell::new(Vec::new()))
}

/// The lines logged so far, leaving the log empty.
pub fn taken(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.borrow_mut())
}

/// A listener of no arguments that logs `name`.
pub fn pusher(log: &Log, name: &'static str) -> impl Fn() + 'static {
    let log = log.clone();
    move || log.borrow_mut().push(name.to_owned())
}
