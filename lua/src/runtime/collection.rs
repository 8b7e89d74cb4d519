//! Collections from Lua: row listeners, the whole-table listener with its
//! update, and the `GMP.StoredArray` writer (references `001_…`, `004_…`).
//!
//! Lua counts rows from 1, so every row number crossing the boundary is
//! shifted by one, and the `~` rule applies to the Lua number: Lua row `n`
//! removed arrives as `~n` (`-n - 1`), and `GMP.WithRemoval(n)` is `~n`.
//! The sentinels `GMP.AllRows` / `GMP.AllRowsWithRemoval` are the hub's
//! (`i32::MAX`, `~i32::MAX`) and are not shifted.
//!
//! The writer hands out plain tables. `Get(i)` is a copy that never marks
//! the row; `GetMutable(i)` marks it and returns a table whose edits are
//! written back when the writer publishes (at `Commit()`, at the end of a
//! `<close>` scope) or before any change of the rows' positions (`Add`,
//! `Insert`, `RemoveAt`, `SetNum`), since those move what an index means,
//! and before `Set(i, item)` replaces a row.

use std::rc::{Rc, Weak};

use gantry_host::collection::{
    ALL_ROWS, ALL_ROWS_WITH_REMOVAL, MAX_ROWS, StoredArray, TableView, Update,
};
use gantry_host::listener::ListenerError;
use gantry_host::{HubError, Type, Value};
use mlua::{Lua, Table, UserData, UserDataMethods, Value as LuaValue};

use super::convert::{from_value, to_value};
use super::error::ScriptError;
use super::handles::{method, method_mut};
use super::listen::{Target, run_listener};
use super::shared::Shared;

/// A Lua row index (1-based, `~` encoded) as the hub's (0-based).
pub(crate) fn hub_index(lua_index: i64) -> Result<i32, String> {
    let sentinel = |i: i64| i == i64::from(ALL_ROWS) || i == i64::from(ALL_ROWS_WITH_REMOVAL);
    if sentinel(lua_index) {
        return Ok(lua_index as i32);
    }
    let (row, removal) = if lua_index < 0 {
        (!lua_index, true)
    } else {
        (lua_index, false)
    };
    if row < 1 || row >= i64::from(ALL_ROWS) {
        return Err(format!(
            "row {lua_index} is not a row: rows count from 1 (or use GMP.AllRows, GMP.WithRemoval(n))"
        ));
    }
    let hub_row = (row - 1) as i32;
    Ok(if removal { !hub_row } else { hub_row })
}

/// The hub's row as Lua sees it: `r + 1`, or `~(r + 1)` when row `r` is gone.
pub(crate) fn lua_row(hub_row: i32) -> i64 {
    if hub_row >= 0 {
        i64::from(hub_row) + 1
    } else {
        !(i64::from(!hub_row) + 1)
    }
}

/// `{total=, prev_total=, ranges={{index=, count=}, ...}, full_reload=}`,
/// indexes 1-based. No ranges means every row is to be read again (a late
/// replay, a plain send, more than eight spans): `full_reload` says so.
pub(crate) fn update_table(lua: &Lua, update: &Update) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 4)?;
    t.raw_set("full_reload", update.is_full_reload())?;
    t.raw_set("total", update.total)?;
    t.raw_set("prev_total", update.prev_total)?;
    let ranges = lua.create_table_with_capacity(update.ranges().len(), 0)?;
    for (i, range) in update.ranges().iter().enumerate() {
        let r = lua.create_table_with_capacity(0, 2)?;
        r.raw_set("index", i64::from(range.index) + 1)?;
        r.raw_set("count", range.count)?;
        ranges.raw_set(i + 1, r)?;
    }
    t.raw_set("ranges", ranges)?;
    Ok(t)
}

/// The hub callback of `ListenRowMessage`: `fn(row, item, update)`.
pub(crate) fn row_callback(
    shared: &Rc<Shared>,
    target: Target,
) -> Rc<gantry_host::collection::RowFn> {
    let weak: Weak<Shared> = Rc::downgrade(shared);
    Rc::new(
        move |row: i32, item: &Value, update: &Update| -> Result<(), ListenerError> {
            run_listener(&weak, &target, |_, lua, f| {
                f.call::<()>((
                    lua_row(row),
                    from_value(lua, item)?,
                    update_table(lua, update)?,
                ))
            })
        },
    )
}

/// The hub callback of a whole-table listener that asked for the update:
/// `fn(items, update)`.
pub(crate) fn table_callback(
    shared: &Rc<Shared>,
    target: Target,
) -> Rc<gantry_host::collection::TableFn> {
    let weak: Weak<Shared> = Rc::downgrade(shared);
    Rc::new(
        move |view: &TableView<'_>, update: &Update| -> Result<(), ListenerError> {
            run_listener(&weak, &target, |_, lua, f| {
                let rows = lua.create_table_with_capacity(view.len(), 0)?;
                for (i, row) in view.rows().iter().enumerate() {
                    rows.raw_set(i + 1, from_value(lua, row)?)?;
                }
                f.call::<()>((rows, update_table(lua, update)?))
            })
        },
    )
}

/// The element struct of a key that carries one array of structs.
pub(crate) fn element_type(params: &[Type]) -> Option<Type> {
    match params {
        [param] => param
            .struct_array_element()
            .map(|name| Type::Struct(name.into())),
        _ => None,
    }
}

/// A writer's refusal of a row, the row counted as Lua counts (from 1).
fn refused(key: &str, what: &str, error: HubError) -> mlua::Error {
    let error = match error {
        HubError::RowMismatch {
            key,
            row,
            expected,
            got,
        } => HubError::RowMismatch {
            key,
            row: row + 1,
            expected,
            got,
        },
        other => other,
    };
    mlua::Error::runtime(format!("StoredArray `{key}` {what}: {error}"))
}

/// `GMP.StoredArray(obj, key)`: the in-place writer as a Lua value.
pub(crate) struct LuaStoredArray {
    writer: Option<StoredArray<'static>>,
    key: Rc<str>,
    /// The script line that opened it (file, line), for the never-closed
    /// report.
    opened_at: (String, Option<u32>),
    shared: Weak<Shared>,
    /// Tables handed out by `GetMutable`, written back on flush.
    lent: Vec<(usize, Table)>,
}

impl LuaStoredArray {
    pub(crate) fn new(
        writer: StoredArray<'static>,
        key: Rc<str>,
        opened_at: (String, Option<u32>),
        shared: &Rc<Shared>,
    ) -> Self {
        Self {
            writer: Some(writer),
            key,
            opened_at,
            shared: Rc::downgrade(shared),
            lent: Vec::new(),
        }
    }

    fn writer(&mut self) -> mlua::Result<&mut StoredArray<'static>> {
        match self.writer.as_mut() {
            Some(w) => Ok(w),
            None => Err(mlua::Error::runtime(format!(
                "StoredArray `{}`: the writer is closed",
                self.key
            ))),
        }
    }

    fn element(&self) -> Option<Type> {
        let shared = self.shared.upgrade()?;
        element_type(&shared.param_types(&self.key))
    }

    fn convert(&self, item: &LuaValue, what: &str) -> mlua::Result<Value> {
        let Some(shared) = self.shared.upgrade() else {
            return Err(mlua::Error::runtime("the Lua runtime is gone"));
        };
        let expected = self.element();
        let table = shared.hub.table();
        to_value(item, expected.as_ref(), &table.structs)
            .map_err(|e| mlua::Error::runtime(format!("StoredArray `{}` {what}: {e}", self.key)))
    }

    /// Writes the tables lent by `GetMutable` back into their rows.
    fn flush(&mut self) -> mlua::Result<()> {
        let lent = std::mem::take(&mut self.lent);
        for (index, table) in lent {
            let what = format!("row {}", index + 1);
            let value = self.convert(&LuaValue::Table(table), &what)?;
            let key = self.key.clone();
            self.writer()?
                .try_set(index, value)
                .map_err(|e| refused(&key, &what, e))?;
        }
        Ok(())
    }

    /// A Lua row number (1-based) as an index below `len` (or `<= len`).
    fn index(&self, i: i64, len: usize, inclusive_end: bool, method: &str) -> mlua::Result<usize> {
        let last = if inclusive_end { len + 1 } else { len };
        if i >= 1 && (i as u64) <= last as u64 {
            return Ok((i - 1) as usize);
        }
        Err(mlua::Error::runtime(format!(
            "StoredArray `{}`:{method}({i}): no such row (the table has {len}; rows count from 1)",
            self.key
        )))
    }

    fn commit(&mut self) -> mlua::Result<usize> {
        self.flush()?;
        let key = self.key.clone();
        let delivered = self
            .writer()?
            .commit()
            .map_err(|e| mlua::Error::runtime(format!("StoredArray `{key}`: {e}")))?;
        Ok(delivered.listeners)
    }
}

impl UserData for LuaStoredArray {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        method(methods, "items", "Num", |_, this: &Self, ()| {
            Ok(this.writer.as_ref().map_or(0, StoredArray::len))
        });
        methods.add_meta_method("__len", |_, this, ()| {
            Ok(this.writer.as_ref().map_or(0, StoredArray::len))
        });
        method_mut(methods, "items", "Get", |lua, this: &mut Self, i: i64| {
            // Reads see edits of lent rows too.
            this.flush()?;
            let w = this.writer()?;
            let len = w.len();
            let at = this.index(i, len, false, "Get")?;
            let row = this.writer()?.get(at).cloned().unwrap_or(Value::Nil);
            from_value(lua, &row)
        });
        method_mut(
            methods,
            "items",
            "GetMutable",
            |lua, this: &mut Self, i: i64| {
                let len = this.writer()?.len();
                let at = this.index(i, len, false, "GetMutable")?;
                if let Some((_, table)) = this.lent.iter().find(|(index, _)| *index == at) {
                    return Ok(LuaValue::Table(table.clone()));
                }
                let row = this.writer()?.get_mut(at).cloned().unwrap_or(Value::Nil);
                let value = from_value(lua, &row)?;
                if let LuaValue::Table(t) = &value {
                    this.lent.push((at, t.clone()));
                }
                Ok(value)
            },
        );
        method_mut(
            methods,
            "items",
            "Add",
            |_, this: &mut Self, item: LuaValue| {
                this.flush()?;
                let value = this.convert(&item, "Add")?;
                let key = this.key.clone();
                let w = this.writer()?;
                w.try_add(value).map_err(|e| refused(&key, "Add", e))?;
                Ok(w.len())
            },
        );
        method_mut(
            methods,
            "items",
            "Set",
            |_, this: &mut Self, (i, item): (i64, LuaValue)| {
                // A row lent by `GetMutable` is written first: written
                // after, its old copy would undo the new row.
                this.flush()?;
                let len = this.writer()?.len();
                let at = this.index(i, len, false, "Set")?;
                let what = format!("Set({i})");
                let value = this.convert(&item, &what)?;
                let key = this.key.clone();
                this.writer()?
                    .try_set(at, value)
                    .map_err(|e| refused(&key, &what, e))?;
                Ok(())
            },
        );
        method_mut(
            methods,
            "items",
            "Insert",
            |_, this: &mut Self, (i, item): (i64, LuaValue)| {
                this.flush()?;
                let len = this.writer()?.len();
                let at = this.index(i, len, true, "Insert")?;
                let value = this.convert(&item, "Insert")?;
                let key = this.key.clone();
                this.writer()?
                    .try_insert(at, value)
                    .map_err(|e| refused(&key, "Insert", e))?;
                Ok(())
            },
        );
        method_mut(
            methods,
            "items",
            "RemoveAt",
            |lua, this: &mut Self, i: i64| {
                this.flush()?;
                let len = this.writer()?.len();
                let at = this.index(i, len, false, "RemoveAt")?;
                match this.writer()?.remove_at(at) {
                    Some(row) => from_value(lua, &row),
                    None => Ok(LuaValue::Nil),
                }
            },
        );
        method_mut(methods, "items", "SetNum", |_, this: &mut Self, n: i64| {
            this.flush()?;
            let n = usize::try_from(n).map_err(|_| {
                mlua::Error::runtime(format!(
                    "StoredArray `{}`:SetNum({n}): a length cannot be negative",
                    this.key
                ))
            })?;
            let limit = this.shared.upgrade().and_then(|s| s.max_table_rows);
            if let Some(limit) = limit.filter(|&limit| n > limit) {
                return Err(mlua::Error::runtime(format!(
                    "StoredArray `{}`:SetNum({n}): more rows than a script's table may have \
                     ({limit}, the runtime's max_table_rows)",
                    this.key
                )));
            }
            let key = this.key.clone();
            let resized = this
                .writer()?
                .try_set_len(n)
                .map_err(|e| refused(&key, &format!("SetNum({n})"), e))?;
            if resized {
                return Ok(());
            }
            Err(mlua::Error::runtime(format!(
                "StoredArray `{}`:SetNum({n}): no table can hold that many rows \
                 (at most {MAX_ROWS}, memory permitting)",
                this.key
            )))
        });
        method_mut(methods, "items", "Commit", |_, this: &mut Self, ()| {
            this.commit()
        });
        methods.add_meta_method_mut("__close", |_, this, _err: LuaValue| {
            let result = this.commit();
            this.writer = None;
            result.map(|_| ())
        });
    }
}

impl Drop for LuaStoredArray {
    /// A writer collected while still open was never closed: publishing from
    /// the garbage collector would run listeners at an arbitrary moment, so
    /// its edits are dropped (as the docs say) and reported at the line
    /// that opened it, with how to close it. One with no edits lost nothing
    /// and goes quietly.
    fn drop(&mut self) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        let written = !writer.spans().is_empty() || !self.lent.is_empty();
        writer.discard();
        if written && let Some(shared) = self.shared.upgrade() {
            let (file, line) = &self.opened_at;
            shared.report(ScriptError::new(
                file,
                *line,
                None,
                format!(
                    "StoredArray `{}` opened here was never closed, so its edits were dropped \
                     when it was collected: declare it `local items <close> = GMP.StoredArray(...)` \
                     or call `items:Commit()`",
                    self.key
                ),
            ));
        }
    }
}
