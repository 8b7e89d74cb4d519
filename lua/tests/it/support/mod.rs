//! Shared setup of the runtime tests.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::ScriptRuntime;
use gantry_host::{Hub, KeyDecl, Kind, ObjectId, Report, Type, WorldId, struct_def_of};
use gantry_lua::runtime::{LuaOptions, LuaRuntime, ScriptId};
use serde::{Deserialize, Serialize};

pub struct Fixture {
    pub hub: Hub,
    pub rt: LuaRuntime,
    pub world: WorldId,
    pub printed: Rc<RefCell<Vec<String>>>,
}

impl Default for Fixture {
    fn default() -> Self {
        Self::new()
    }
}

impl Fixture {
    pub fn new() -> Self {
        Self::with(LuaOptions::default())
    }

    pub fn with(options: LuaOptions) -> Self {
        let hub = Hub::new();
        let world = hub.create_world();
        let rt = LuaRuntime::new(hub.clone(), options).expect("runtime");
        let printed = Rc::new(RefCell::new(Vec::new()));
        let sink = printed.clone();
        rt.on_print(move |line| sink.borrow_mut().push(line.to_owned()));
        Self {
            hub,
            rt,
            world,
            printed,
        }
    }

    pub fn spawn(&self) -> ObjectId {
        self.hub.spawn(self.world).unwrap()
    }

    /// Loads a script on a fresh object; panics on a load error.
    pub fn load(&self, file: &str, source: &str) -> (ScriptId, ObjectId) {
        let object = self.spawn();
        let id = self
            .rt
            .load_script(file, source, object)
            .unwrap_or_else(|e| panic!("{file} failed to load: {e}"));
        (id, object)
    }

    pub fn printed(&self) -> Vec<String> {
        std::mem::take(&mut self.printed.borrow_mut())
    }

    pub fn failures(&self) -> Vec<String> {
        self.hub
            .take_reports()
            .into_iter()
            .map(|r| match r {
                Report::ListenerFailed { message, .. } => message,
                other => other.to_string(),
            })
            .collect()
    }
}

/// The element of the [`inventory`] table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub name: String,
    pub count: i64,
}

/// A fixture whose table declares `Inv.Items` as a collection of [`Item`].
pub fn inventory(options: LuaOptions) -> Fixture {
    let f = Fixture::with(options);
    let (name, def) = struct_def_of::<Item>().unwrap();
    f.hub.edit_table(|t| t.declare_struct(&name, def));
    f.hub
        .declare(
            "Inv.Items",
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
    f
}
