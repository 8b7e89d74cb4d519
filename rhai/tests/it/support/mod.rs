//! Shared setup of the runtime tests.
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;

use gantry_host::face::Faced;
use gantry_host::face::ScriptRuntime;
use gantry_host::{
    Caller, Hub, Key, KeyDecl, Kind, ObjectId, Param, Report, Source, StructDef, StructValue, Type,
    Value, WorldId,
};
use gantry_rhai::runtime::{RhaiOptions, RhaiRuntime, ScriptError, ScriptId};

pub struct Fixture {
    pub hub: Hub,
    pub rt: RhaiRuntime,
    pub world: WorldId,
    pub printed: Rc<RefCell<Vec<String>>>,
    pub errors: Rc<RefCell<Vec<ScriptError>>>,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with(RhaiOptions::default())
    }

    pub fn with(options: RhaiOptions) -> Self {
        Self::on(Hub::new(), options)
    }

    pub fn on(hub: Hub, options: RhaiOptions) -> Self {
        let world = hub.create_world();
        let rt = RhaiRuntime::new(hub.clone(), options).expect("runtime");
        let printed = Rc::new(RefCell::new(Vec::new()));
        let sink = printed.clone();
        rt.on_print(move |line| sink.borrow_mut().push(line.to_owned()));
        let errors = Rc::new(RefCell::new(Vec::new()));
        let sink = errors.clone();
        rt.on_error(move |e| sink.borrow_mut().push(e.clone()));
        Self {
            hub,
            rt,
            world,
            printed,
            errors,
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

    /// Loads a script expected to fail; its error.
    pub fn load_err(&self, file: &str, source: &str) -> String {
        match self.rt.load_script(file, source, self.spawn()) {
            Ok(_) => panic!("{file} loaded but should have failed"),
            Err(e) => e.to_string(),
        }
    }

    pub fn printed(&self) -> Vec<String> {
        std::mem::take(&mut self.printed.borrow_mut())
    }

    pub fn errors(&self) -> Vec<String> {
        std::mem::take(&mut *self.errors.borrow_mut())
            .into_iter()
            .map(|e| e.to_string())
            .collect()
    }

    pub fn failures(&self) -> Vec<String> {
        self.hub
            .take_reports()
            .into_iter()
            .filter_map(|r| match r {
                Report::ListenerFailed { message, .. } => Some(message),
                _ => None,
            })
            .collect()
    }
}

/// The collection key of [`inventory`].
pub const INVENTORY: &str = "Inv.Items";

/// A fixture whose hub knows `Item { id: int, name: string, count: int }`
/// and declares [`INVENTORY`] as a table of them.
pub fn inventory(options: RhaiOptions) -> (Fixture, Key) {
    let f = Fixture::with(options);
    f.hub.edit_table(|t| {
        t.declare_struct(
            "Item",
            StructDef {
                parent: None,
                doc: String::new(),
                fields: vec![
                    Param::new("id", Type::Int),
                    Param::new("name", Type::String),
                    Param::new("count", Type::Int),
                ],
            },
        )
    });
    let key = f
        .hub
        .declare(
            INVENTORY,
            KeyDecl::event()
                .kind(Kind::Collection)
                .param("items", Type::Array(Box::new(Type::Struct("Item".into())))),
        )
        .unwrap();
    (f, key)
}

/// Row `id` of [`inventory`]'s table: `Item { id, name: "n{id}", count: id * 10 }`.
pub fn item(id: i64) -> Value {
    Value::structure(
        StructValue::new("Item")
            .with("id", id)
            .with("name", format!("n{id}").as_str())
            .with("count", id * 10),
    )
}

/// Rust stores `n` rows (ids 0..n) of [`inventory`]'s table on `obj`.
pub fn rust_store(f: &Fixture, key: Key, obj: ObjectId, n: i64) {
    f.hub
        .store_values(
            key,
            Source::Object(obj),
            vec![Value::array((0..n).map(item).collect())],
            false,
            Caller::Unrecorded,
        )
        .unwrap();
}

/// Runs `test` on a fresh fixture with the rewriter on (baked calls) and
/// off (generic calls): a case must hold both ways.
pub fn both_ways(test: impl Fn(&Fixture, bool)) {
    for rewrite in [true, false] {
        let f = Fixture::with(RhaiOptions {
            rewrite,
            ..RhaiOptions::default()
        });
        test(&f, rewrite);
    }
}
