//! What every mod of a game shares: the hub, the world its scripts live
//! in, the runtimes' options, and where events go (and how many errors
//! there were).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gantry_host::{Hub, WorldId};
use gantry_lua::runtime::LuaOptions;
use gantry_rhai::RhaiOptions;

use crate::engines::Interrupters;
use crate::event::{Event, Sink};

pub(crate) struct Context {
    pub hub: Hub,
    pub world: WorldId,
    pub lua: LuaOptions,
    pub rhai: RhaiOptions,
    pub interrupters: Interrupters,
    sink: RefCell<Sink>,
    errors: Cell<usize>,
}

impl Context {
    pub fn new(hub: Hub, world: WorldId, lua: LuaOptions, rhai: RhaiOptions) -> Rc<Self> {
        Rc::new(Self {
            hub,
            world,
            lua,
            rhai,
            interrupters: Interrupters::default(),
            sink: RefCell::new(Box::new(crate::event::log)),
            errors: Cell::new(0),
        })
    }

    pub fn set_sink(&self, sink: Sink) {
        *self.sink.borrow_mut() = sink;
    }

    /// Says `event`, counting it if it is an error.
    pub fn say(&self, event: Event<'_>) {
        if event.is_error() {
            self.errors.set(self.errors.get() + 1);
        }
        // A sink that reaches back into the loader (prints through the
        // game) must not find the sink borrowed: events said meanwhile go
        // to the log.
        match self.sink.try_borrow() {
            Ok(sink) => sink(event),
            Err(_) => crate::event::log(event),
        }
    }

    pub fn error(&self, text: &str) {
        self.say(Event::Error(text));
    }

    /// Errors said so far.
    pub fn errors(&self) -> usize {
        self.errors.get()
    }
}
