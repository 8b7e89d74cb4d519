//! The stored-array writer as a Rhai value: `GMP::StoredArray(obj, key)`.
//!
//! ```rhai
//! {
//!     let items = GMP::StoredArray(SELF, "Inv.Items");
//!     items[0].Count -= 1;                 // marks row 0
//!     let row = items.GetMutable(3);       // marks row 3
//!     row.Name = "Elixir";
//!     items.Set(1, #{ Id: 7, Count: 2 });  // replaces row 1
//!     items.Add(#{ Id: 9, Count: 1 });
//!     items.RemoveAt(2);
//! }   // published once here, spans merged
//! ```
//!
//! Reading never marks a row: `Get(i)` returns a copy of the row as a map.
//! Writing goes through `Set(i, item)` or `GetMutable(i)`, which marks the
//! row and returns a [`RowHandle`] whose fields write through
//! (`row.Count -= 1`; nested maps write back too; `row.Row()` is its index,
//! `row.to_map()` a copy). Rhai cannot assign through a call's result
//! (`items.GetMutable(0).Count = 1` does not compile), so bind the row to a
//! variable first — or index the writer: `items[0].Count -= 1` reads a
//! copy, changes it and writes it back through the indexer (marking the
//! row), while a plain read `items[0].Count` never marks.
//!
//! Rhai clones values freely, so the writer is a shared handle: it publishes
//! once when its last clone is dropped (the end of the block that holds it),
//! or at `commit()` / `Commit()`, which publishes and keeps it open for later
//! writes. A writer held in a script's top-level variable lives as long as
//! the script: commit it, or open it inside a block. A row handle keeps its
//! writer open too. A failed publish (a row that contradicts the key's
//! signature) is reported as the script's error, naming the line that
//! opened the writer; the store keeps its previous table.
//!
//! While a commit publishes, the writer is busy: a listener of that table
//! that touches the same writer gets an error saying so (it cannot write a
//! table that is being published), not a panic.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gantry_host::collection::{MAX_ROWS, StoredArray};
use gantry_host::{Type, Value};
use rhai::{Dynamic, Engine, EvalAltResult, INT, ImmutableString, NativeCallContext, Position};

use super::convert::{from_value, to_value};
use super::error;
use super::handles::fail;
use super::shared::Shared;

type Fallible<T> = Result<T, Box<EvalAltResult>>;

/// The writer a script holds: Rhai type name `StoredArray`.
#[derive(Clone)]
pub struct StoredArrayHandle(Rc<WriterCell>);

/// One row of a writer, from `GetMutable(i)`: Rhai type name `StoredRow`.
/// Reading a field reads the writer's row; writing one writes it.
#[derive(Clone)]
pub struct RowHandle {
    writer: Rc<WriterCell>,
    index: usize,
}

struct WriterCell {
    writer: RefCell<Option<StoredArray<'static>>>,
    key: Rc<str>,
    shared: Weak<Shared>,
    /// The script and line that opened the writer, for a failed publish.
    file: Rc<str>,
    line: u32,
}

impl Drop for WriterCell {
    /// The end of the writer's scope: publish once. A failure is the
    /// opening script's error; the hub has reported the mismatch already.
    fn drop(&mut self) {
        let Some(writer) = self.writer.get_mut().take() else {
            return;
        };
        if let Err(e) = writer.publish() {
            let message = format!("StoredArray `{}` not published: {e}", self.key);
            match self.shared.upgrade() {
                Some(shared) => shared.report(error::at(
                    &self.file,
                    Position::new(self.line.min(u16::MAX as u32) as u16, 0),
                    message,
                )),
                None => tracing::warn!(file = %self.file, line = self.line, "{message}"),
            }
        }
    }
}

impl StoredArrayHandle {
    pub(crate) fn new(
        writer: StoredArray<'static>,
        key: Rc<str>,
        shared: Weak<Shared>,
        file: Rc<str>,
        line: u32,
    ) -> Self {
        Self(Rc::new(WriterCell {
            writer: RefCell::new(Some(writer)),
            key,
            shared,
            file,
            line,
        }))
    }
}

impl WriterCell {
    /// Runs `f` on the open writer; a clear error while it is publishing.
    fn with<R>(&self, what: &str, f: impl FnOnce(&mut StoredArray<'static>) -> R) -> Fallible<R> {
        let mut slot = self.writer.try_borrow_mut().map_err(|_| {
            fail(format!(
                "StoredArray `{}`.{what}: the writer is publishing (a listener of this table \
                 cannot use the writer being committed; write after the commit returns)",
                self.key
            ))
        })?;
        match slot.as_mut() {
            Some(writer) => Ok(f(writer)),
            None => Err(fail(format!("StoredArray `{}`.{what}: closed", self.key))),
        }
    }

    fn shared(&self) -> Fallible<Rc<Shared>> {
        self.shared
            .upgrade()
            .ok_or_else(|| fail("the gantry runtime is gone"))
    }

    /// The element struct, for converting maps without `__struct`: the
    /// table's first row, else the key's recorded parameter.
    fn element(&self, writer: &StoredArray<'static>, shared: &Shared) -> Option<Type> {
        if let Some(Value::Struct(s)) = writer.get(0) {
            return Some(Type::Struct(s.name.clone()));
        }
        let table = shared.hub.table();
        let param = table.get(&self.key)?.params.first()?.ty.clone();
        param
            .struct_array_element()
            .map(|name| Type::Struct(Rc::from(name)))
    }

    /// Converts an item map to a row of this table.
    fn row_value(&self, what: &str, item: &Dynamic) -> Fallible<Value> {
        if !item.is_map() {
            return Err(fail(format!(
                "StoredArray `{}`.{what}: an item is an object map, got a {}",
                self.key,
                item.type_name()
            )));
        }
        let shared = self.shared()?;
        let element = self.with(what, |w| self.element(w, &shared))?;
        let table = shared.hub.table();
        to_value(item, element.as_ref(), &table.structs)
            .map_err(|e| fail(format!("StoredArray `{}`.{what}: {e}", self.key)))
    }

    fn index(&self, what: &str, i: INT, len: usize, allow_end: bool) -> Fallible<usize> {
        let limit = if allow_end { len + 1 } else { len };
        match usize::try_from(i) {
            Ok(i) if i < limit => Ok(i),
            _ => Err(fail(format!(
                "StoredArray `{}`.{what}: no row {i} (the table has {len} rows, numbered from 0)",
                self.key
            ))),
        }
    }

    fn len(&self, what: &str) -> Fallible<usize> {
        self.with(what, |w| w.len())
    }

    /// The writer's refusal of a row (rows counted from 0, as Rhai does).
    fn refused(&self, what: &str, error: gantry_host::HubError) -> Box<EvalAltResult> {
        fail(format!("StoredArray `{}`.{what}: {error}", self.key))
    }
}

/// Registers the writer and row types and their methods.
pub(crate) fn register(engine: &mut Engine) {
    engine.register_type_with_name::<StoredArrayHandle>("StoredArray");
    engine.register_type_with_name::<RowHandle>("StoredRow");

    engine.register_fn("Num", |a: &mut StoredArrayHandle| -> Fallible<INT> {
        Ok(a.0.len("Num")? as INT)
    });
    engine.register_fn("len", |a: &mut StoredArrayHandle| -> Fallible<INT> {
        Ok(a.0.len("len")? as INT)
    });
    engine.register_fn(
        "Get",
        |a: &mut StoredArrayHandle, i: INT| -> Fallible<Dynamic> {
            let len = a.0.len("Get")?;
            let i = a.0.index("Get", i, len, false)?;
            a.0.with("Get", |w| w.get(i).map(from_value).unwrap_or_default())
        },
    );
    engine.register_fn(
        "Set",
        |a: &mut StoredArrayHandle, i: INT, item: Dynamic| -> Fallible<()> {
            let len = a.0.len("Set")?;
            let i = a.0.index("Set", i, len, false)?;
            let row = a.0.row_value("Set", &item)?;
            a.0.with("Set", |w| w.try_set(i, row))?
                .map(drop)
                .map_err(|e| a.0.refused("Set", e))
        },
    );
    // `items[i]` reads a copy; `items[i] = item` and `items[i].count += 1`
    // (Rhai writes the changed copy back through the setter) write and
    // mark the row.
    engine.register_indexer_get(|a: &mut StoredArrayHandle, i: INT| -> Fallible<Dynamic> {
        let len = a.0.len("[]")?;
        let i = a.0.index("[]", i, len, false)?;
        a.0.with("[]", |w| w.get(i).map(from_value).unwrap_or_default())
    });
    engine.register_indexer_set(
        |a: &mut StoredArrayHandle, i: INT, item: Dynamic| -> Fallible<()> {
            let len = a.0.len("[]")?;
            let i = a.0.index("[]", i, len, false)?;
            let row = a.0.row_value("[]", &item)?;
            a.0.with("[]", |w| w.try_set(i, row))?
                .map(drop)
                .map_err(|e| a.0.refused("[]", e))
        },
    );
    engine.register_fn(
        "GetMutable",
        |a: &mut StoredArrayHandle, i: INT| -> Fallible<RowHandle> {
            let len = a.0.len("GetMutable")?;
            let i = a.0.index("GetMutable", i, len, false)?;
            a.0.with("GetMutable", |w| {
                w.get_mut(i);
            })?;
            Ok(RowHandle {
                writer: a.0.clone(),
                index: i,
            })
        },
    );
    engine.register_fn(
        "Add",
        |a: &mut StoredArrayHandle, item: Dynamic| -> Fallible<()> {
            let row = a.0.row_value("Add", &item)?;
            a.0.with("Add", |w| w.try_add(row))?
                .map_err(|e| a.0.refused("Add", e))
        },
    );
    engine.register_fn(
        "Insert",
        |a: &mut StoredArrayHandle, i: INT, item: Dynamic| -> Fallible<()> {
            let len = a.0.len("Insert")?;
            let i = a.0.index("Insert", i, len, true)?;
            let row = a.0.row_value("Insert", &item)?;
            a.0.with("Insert", |w| w.try_insert(i, row))?
                .map(drop)
                .map_err(|e| a.0.refused("Insert", e))
        },
    );
    engine.register_fn(
        "RemoveAt",
        |a: &mut StoredArrayHandle, i: INT| -> Fallible<Dynamic> {
            let len = a.0.len("RemoveAt")?;
            let i = a.0.index("RemoveAt", i, len, false)?;
            a.0.with("RemoveAt", |w| {
                w.remove_at(i).as_ref().map(from_value).unwrap_or_default()
            })
        },
    );
    engine.register_fn(
        "SetNum",
        |ctx: NativeCallContext, a: &mut StoredArrayHandle, n: INT| -> Fallible<()> {
            let n = usize::try_from(n).map_err(|_| {
                fail(format!(
                    "StoredArray `{}`.SetNum: a row count cannot be negative, got {n}",
                    a.0.key
                ))
            })?;
            // The rows live in the hub's memory: a script's table is held to
            // the script's own array limit.
            let limit = ctx.engine().max_array_size();
            if limit != 0 && n > limit {
                return Err(fail(format!(
                    "StoredArray `{}`.SetNum: {n} rows is more than a script's array may \
                     hold ({limit}, max_array_size)",
                    a.0.key
                )));
            }
            let resized =
                a.0.with("SetNum", |w| w.try_set_len(n))?
                    .map_err(|e| a.0.refused("SetNum", e))?;
            if resized {
                return Ok(());
            }
            Err(fail(format!(
                "StoredArray `{}`.SetNum: no table can hold {n} rows (at most {MAX_ROWS}, \
                 memory permitting)",
                a.0.key
            )))
        },
    );
    for name in ["Commit", "commit"] {
        engine.register_fn(name, |a: &mut StoredArrayHandle| -> Fallible<INT> {
            let delivered = a.0.with("Commit", |w| w.commit())?;
            delivered
                .map(|d| d.listeners as INT)
                .map_err(|e| fail(format!("StoredArray `{}`.Commit: {e}", a.0.key)))
        });
    }
    engine.register_fn("to_string", |a: &mut StoredArrayHandle| {
        format!("StoredArray({})", a.0.key)
    });
    engine.register_fn("to_debug", |a: &mut StoredArrayHandle| {
        format!("StoredArray({})", a.0.key)
    });

    // Row fields: `row.Count` and `row["Count"]` (Rhai falls back to the
    // indexer for properties it has no getter for).
    engine.register_indexer_get(
        |r: &mut RowHandle, field: ImmutableString| -> Fallible<Dynamic> {
            r.writer
                .with("GetMutable", |w| match w.get(r.index) {
                    Some(Value::Struct(s)) => s.get(&field).map(from_value),
                    _ => None,
                })?
                .ok_or_else(|| {
                    fail(format!(
                        "StoredArray `{}` row {}: no field `{field}`",
                        r.writer.key, r.index
                    ))
                })
        },
    );
    engine.register_indexer_set(
        |r: &mut RowHandle, field: ImmutableString, value: Dynamic| -> Fallible<()> {
            let shared = r.writer.shared()?;
            let key = r.writer.key.clone();
            let index = r.index;
            let no_field = || {
                fail(format!(
                    "StoredArray `{key}` row {index}: no field `{field}`"
                ))
            };
            // The field's type, for converting maps by the struct's definition.
            let ty = r.writer.with("GetMutable", |w| match w.get(index) {
                Some(Value::Struct(s)) => {
                    let table = shared.hub.table();
                    let declared = table
                        .structs
                        .all_fields(&s.name)
                        .into_iter()
                        .find(|p| p.name == field.as_str())
                        .map(|p| p.ty);
                    Some(declared.or_else(|| s.get(&field).map(Value::type_of)))
                }
                _ => None,
            })?;
            let Some(ty) = ty else {
                return Err(no_field());
            };
            let converted = {
                let table = shared.hub.table();
                to_value(&value, ty.as_ref(), &table.structs)
                    .map_err(|e| fail(format!("StoredArray `{key}` row {index} `{field}`: {e}")))?
            };
            let written = r.writer.with("GetMutable", |w| {
                let Some(row) = w.get_mut_struct(index) else {
                    return false;
                };
                match row.get_mut(&field) {
                    Some(slot) => {
                        *slot = converted;
                        true
                    }
                    None => false,
                }
            })?;
            if written { Ok(()) } else { Err(no_field()) }
        },
    );
    engine.register_fn("Row", |r: &mut RowHandle| r.index as INT);
    engine.register_fn("to_map", |r: &mut RowHandle| -> Fallible<Dynamic> {
        r.writer.with("to_map", |w| {
            w.get(r.index).map(from_value).unwrap_or_default()
        })
    });
    engine.register_fn("to_debug", |r: &mut RowHandle| {
        format!("StoredRow({}[{}])", r.writer.key, r.index)
    });
}
