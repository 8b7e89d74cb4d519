//! Saved state: what a mod's `persist = true` keys store outlives the run.
//!
//! At exit (and every few seconds while watching) the loader writes, for
//! each mod with persisted keys, the message each of them stores on the
//! sources that outlive a run to `GAME/.gantry/saved/<mod>.json`, as a
//! whole (a temporary file, then a rename: a crash mid-write leaves the
//! previous save). Before the next run's first tick each saved message is
//! stored again, so the top levels and listeners find it as if it had
//! never gone.
//!
//! Which sources outlive a run: those a name finds again in the next one.
//! Global and the game's world always do. An object does when it has a
//! stable name: one the game gave it ([`crate::Game::name_object`]), or a
//! script's own object (`self`), which the loader names by the script's
//! file as errors name it (`mods/quest/main.lua`). A named source on such
//! an object (`GMP.Named(self, "slot")`) is saved under both names. Every
//! other object is a handle of this run only (its number means nothing in
//! the next), so what is stored on it, and on its named sources, is not
//! saved. A message saved on a name nothing holds yet (a game names its
//! objects after the mods load; a later mod's script) waits until the name
//! appears, and is written back meanwhile: a run that never names the
//! object loses nothing.
//!
//! The file is a mod's, so hostile: it is read inside the game folder
//! only, bounded in size, and one that cannot be read (not JSON, not this
//! shape, a version newer than this loader writes) is never overwritten:
//! it is kept aside under its date (`quest.json.2026-12-02T02-10-00Z.bad`)
//! and the mod starts fresh, said. Each key's parameters are saved by name
//! beside its messages, so a declaration changed since is fitted parameter
//! by parameter (`saved/migrate.rs`): what still matches is kept, and what was
//! dropped is said.

mod migrate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use gantry_host::face::Faced;
use gantry_host::files::{self, MIB};
use gantry_host::manifest::{Manifest, ManifestKind};
use gantry_host::value::StructValue;
use gantry_host::{Caller, Hub, ObjectId, Source, Value, WorldId};
use serde_json::{Map, Number, Value as Json};

/// Where saves live, below the game folder.
pub const SAVED_DIR: &str = ".gantry/saved";

/// The save format this loader writes (and the newest it reads): 2 saves
/// each key's parameter names and objects' stable names; 1 had neither.
pub const SAVE_VERSION: u64 = 2;

/// The largest save file read.
const MAX_SAVE_BYTES: u64 = 64 * MIB;

/// The deepest value saved or read (arrays and structs inside each other).
const MAX_DEPTH: usize = 64;

/// The most messages one key's save holds.
const MAX_MESSAGES_PER_KEY: usize = 100_000;

/// The save file of mod `name`, relative to the game folder.
pub fn save_path(name: &str) -> PathBuf {
    Path::new(SAVED_DIR).join(format!("{name}.json"))
}

/// The keys of `manifest` declared `persist = true`, and whether each is
/// a once key.
pub(crate) fn persisted(manifest: &Manifest) -> Vec<(String, bool)> {
    manifest
        .keys
        .iter()
        .filter(|k| k.persist)
        .map(|k| (k.key.clone(), k.kind == ManifestKind::Once))
        .collect()
}

/// A stable name of an object: what finds it again in the next run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Holder {
    /// An object the game named ([`crate::Game::name_object`]).
    Game(String),
    /// A script's own object, by the script's file (`mods/quest/main.lua`).
    Script(String),
}

/// Where a saved message was stored.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Place {
    Global,
    /// The game's world.
    World,
    /// A stably named object, or a named source on it (`Some(name)`).
    Object(Holder, Option<String>),
}

impl Place {
    /// `world`, `object player/inventory`, `script mods/q/main.lua`.
    fn shown(&self) -> String {
        match self {
            Place::Global => "global".into(),
            Place::World => "world".into(),
            Place::Object(holder, name) => {
                let (what, stable) = match holder {
                    Holder::Game(n) => ("object", n),
                    Holder::Script(f) => ("script", f),
                };
                match name {
                    Some(name) => format!("{what} {stable}/{name}"),
                    None => format!("{what} {stable}"),
                }
            }
        }
    }
}

/// The objects that have a stable name now, each both ways.
pub(crate) type Holders = Vec<(Holder, ObjectId)>;

/// A saved message whose object has no holder yet: stored once one does.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    /// The mod whose save it came from (and is written back to).
    pub owner: String,
    pub key: String,
    pub once: bool,
    pub place: Place,
    /// Already fitted to the declaration.
    pub values: Vec<Value>,
}

/// What the mod's save said when replayed.
#[derive(Debug, Default)]
pub(crate) struct Replayed {
    /// Texts to say as warnings.
    pub warnings: Vec<String>,
    /// Messages on objects no one holds yet.
    pub pending: Vec<Pending>,
}

/// One message of a save: its key, where, its parameter names (`None` in
/// a version 1 save) and values.
struct SavedMessage {
    key: String,
    place: Place,
    params: Option<Vec<String>>,
    values: Vec<Value>,
}

/// Reads mod `name`'s save in `root` and stores each message of its
/// `keys` again, fitted to the declarations as they are now, on its
/// source; one on an object no one `holders` holds yet is pending. A
/// save that cannot be read is kept aside.
pub(crate) fn replay(
    root: &Path,
    name: &str,
    keys: &[(String, bool)],
    hub: &Hub,
    world: WorldId,
    holders: &Holders,
) -> Replayed {
    let mut out = Replayed::default();
    let path = save_path(name);
    let shown = path.display().to_string();
    let text = match files::read_text_in(root, &path, MAX_SAVE_BYTES) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return out,
        Err(e) => {
            set_aside(root, &path, &format!("{e}"), &mut out);
            return out;
        }
    };
    let saved = match parse(&text) {
        Ok(saved) => saved,
        Err(reason) => {
            set_aside(root, &path, &format!("{shown}: {reason}"), &mut out);
            return out;
        }
    };
    for message in saved {
        let SavedMessage {
            key,
            place,
            params,
            values,
        } = message;
        let Some(&(_, once)) = keys.iter().find(|(k, _)| *k == key) else {
            out.warnings.push(format!(
                "{shown}: {key} is no longer persisted by {name}; its saved message is dropped"
            ));
            continue;
        };
        // Fitted under a short borrow of the table: storing writes to it.
        let fitted = {
            let table = hub.table();
            table.keys.get(&key).map(|entry| {
                let fitted = migrate::fit(params.as_deref(), &values, entry, &table.structs);
                (fitted, entry.signature_label())
            })
        };
        let values = match fitted {
            Some((fitted, label)) => {
                if fitted.changed() {
                    out.warnings.push(format!(
                        "{shown}: {key} changed since it was saved (now {label}); its saved \
                         message on {} {}",
                        place.shown(),
                        fitted.describe()
                    ));
                }
                match fitted.values {
                    Some(values) => values,
                    None => continue,
                }
            }
            None => values,
        };
        let pending = Pending {
            owner: name.to_owned(),
            key,
            once,
            place,
            values,
        };
        match store(hub, world, holders, &pending) {
            Stored::Done => {}
            Stored::NoHolder => out.pending.push(pending),
            Stored::Refused(e) => out.warnings.push(format!(
                "{shown}: the saved message of {} on {} no longer fits its declaration ({e}); \
                 dropped",
                pending.key,
                pending.place.shown()
            )),
        }
    }
    out
}

/// Stores each of `pending` whose object has a holder now; the others
/// stay. What was refused is returned, said.
pub(crate) fn claim(
    pending: &mut Vec<Pending>,
    hub: &Hub,
    world: WorldId,
    holders: &Holders,
) -> Vec<String> {
    let mut warnings = Vec::new();
    pending.retain(|message| match store(hub, world, holders, message) {
        Stored::NoHolder => true,
        Stored::Done => false,
        Stored::Refused(e) => {
            warnings.push(format!(
                "{}: the saved message of {} on {} no longer fits its declaration ({e}); dropped",
                save_path(&message.owner).display(),
                message.key,
                message.place.shown()
            ));
            false
        }
    });
    warnings
}

enum Stored {
    Done,
    NoHolder,
    Refused(String),
}

/// Stores a saved message on its source, if it is there now.
fn store(hub: &Hub, world: WorldId, holders: &Holders, message: &Pending) -> Stored {
    let source = match &message.place {
        Place::Global => Source::Global,
        Place::World => Source::World(world),
        Place::Object(holder, name) => {
            let Some(&(_, object)) = holders.iter().find(|(h, _)| h == holder) else {
                return Stored::NoHolder;
            };
            match name {
                None => Source::Object(object),
                Some(name) => match hub.try_named(object, name) {
                    Ok(source) => source,
                    Err(e) => return Stored::Refused(e.to_string()),
                },
            }
        }
    };
    let stored = hub
        .key(&message.key)
        .map_err(|e| e.to_string())
        .and_then(|k| {
            hub.store_values(
                k,
                source,
                message.values.clone(),
                message.once,
                Caller::Unrecorded,
            )
            .map_err(|e| e.to_string())
        });
    match stored {
        Ok(_) => Stored::Done,
        Err(e) => Stored::Refused(e),
    }
}

/// The messages of a save's text, or why it cannot be used.
fn parse(text: &str) -> Result<Vec<SavedMessage>, String> {
    let json: Json = serde_json::from_str(text).map_err(|e| format!("not a save file ({e})"))?;
    let version = json
        .get("version")
        .and_then(Json::as_u64)
        .ok_or("not a save file (no version)")?;
    if version > SAVE_VERSION {
        return Err(format!(
            "saved by a newer gantry (version {version}; this one reads up to {SAVE_VERSION})"
        ));
    }
    let keys = json
        .get("keys")
        .and_then(Json::as_object)
        .ok_or("not a save file (no keys)")?;
    let mut out = Vec::new();
    for (key, saved) in keys {
        let saved = saved
            .as_object()
            .ok_or_else(|| format!("{key}: not a table of sources"))?;
        if version < 2 {
            parse_v1(key, saved, &mut out)?;
        } else {
            parse_v2(key, saved, &mut out)?;
        }
    }
    Ok(out)
}

/// Version 1: `{"world": [args], "global": [args]}`, no names.
fn parse_v1(
    key: &str,
    scopes: &Map<String, Json>,
    out: &mut Vec<SavedMessage>,
) -> Result<(), String> {
    for (scope, args) in scopes {
        let place = match scope.as_str() {
            "global" => Place::Global,
            "world" => Place::World,
            _ => return Err(format!("{key}: unknown source `{scope}`")),
        };
        out.push(SavedMessage {
            key: key.to_owned(),
            place,
            params: None,
            values: args_of(key, args)?,
        });
    }
    Ok(())
}

/// Version 2: `{"params": ["n: int"], "stored": [{"on": "world", "args":
/// [4]}, {"on": "object", "object": "player", "source": "bag", "args":
/// […]}]}`.
fn parse_v2(
    key: &str,
    saved: &Map<String, Json>,
    out: &mut Vec<SavedMessage>,
) -> Result<(), String> {
    let params = saved
        .get("params")
        .and_then(Json::as_array)
        .and_then(|params| {
            params
                .iter()
                .map(|p| {
                    p.as_str()
                        .map(|p| p.split(':').next().unwrap_or("").trim().to_owned())
                })
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| format!("{key}: no list of parameters"))?;
    let stored = saved
        .get("stored")
        .and_then(Json::as_array)
        .ok_or_else(|| format!("{key}: no list of stored messages"))?;
    if stored.len() > MAX_MESSAGES_PER_KEY {
        return Err(format!(
            "{key}: {} stored messages; a key's save holds at most {MAX_MESSAGES_PER_KEY}",
            stored.len()
        ));
    }
    for message in stored {
        let text = |field: &str| message.get(field).and_then(Json::as_str).map(str::to_owned);
        let name = text("source");
        let place = match text("on").as_deref() {
            Some("global") => Place::Global,
            Some("world") => Place::World,
            Some("object") => Place::Object(
                Holder::Game(
                    text("object").ok_or_else(|| format!("{key}: an object with no name"))?,
                ),
                name,
            ),
            Some("script") => Place::Object(
                Holder::Script(
                    text("script").ok_or_else(|| format!("{key}: a script with no file"))?,
                ),
                name,
            ),
            other => {
                return Err(format!(
                    "{key}: unknown source `{}`",
                    other.unwrap_or("(none)")
                ));
            }
        };
        let args = message
            .get("args")
            .ok_or_else(|| format!("{key}: a stored message with no args"))?;
        out.push(SavedMessage {
            key: key.to_owned(),
            place,
            params: Some(params.clone()),
            values: args_of(key, args)?,
        });
    }
    Ok(())
}

fn args_of(key: &str, args: &Json) -> Result<Vec<Value>, String> {
    args.as_array()
        .ok_or_else(|| format!("{key}: not a list of arguments"))?
        .iter()
        .map(|a| from_json(a, 0))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{key}: {e}"))
}

/// Renames an unusable save aside under the date, and says so.
fn set_aside(root: &Path, path: &Path, reason: &str, out: &mut Replayed) {
    let full = root.join(path);
    let date = date_stamp(SystemTime::now());
    let mut aside = full.with_file_name(format!(
        "{}.{date}.bad",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    let mut n = 1;
    while std::fs::symlink_metadata(&aside).is_ok() && n < 1000 {
        aside = full.with_file_name(format!(
            "{}.{date}-{n}.bad",
            path.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ));
        n += 1;
    }
    let kept = match std::fs::rename(&full, &aside) {
        Ok(()) => format!("kept as {}", files::shown(root, &aside)),
        Err(e) => {
            format!("could not be set aside ({e}); it is left where it is and not overwritten")
        }
    };
    out.warnings
        .push(format!("{reason}; {kept}; the mod starts fresh"));
}

/// Writes mod `name`'s persisted `keys` as stored now on the sources
/// that outlive a run (global, the world, what `holders` name) and the
/// messages of `pending` it still owns (nothing when none stores anything
/// and there was no save); what could not be saved (an object in a
/// message, a NaN) is returned, said.
pub(crate) fn save(
    root: &Path,
    name: &str,
    keys: &[(String, bool)],
    hub: &Hub,
    world: WorldId,
    holders: &Holders,
    pending: &[Pending],
) -> Result<Vec<String>, files::FileError> {
    let mut dropped = Vec::new();
    let mut saved = Map::new();
    let by_object: BTreeMap<ObjectId, &Holder> = holders.iter().map(|(h, o)| (*o, h)).collect();
    for (key, _) in keys {
        let Ok(k) = hub.key(key) else { continue };
        let mut messages: Vec<(Place, Rc<[Value]>)> = Vec::new();
        for (source, source_name, args) in hub.stored_everywhere(k) {
            let place = match source {
                Source::Global => Place::Global,
                Source::World(w) if w == world => Place::World,
                Source::Object(o) => match by_object.get(&o) {
                    Some(holder) => Place::Object((*holder).clone(), None),
                    None => continue,
                },
                Source::Named(o, _) => match (by_object.get(&o), source_name) {
                    (Some(holder), Some(n)) => {
                        Place::Object((*holder).clone(), Some(n.to_string()))
                    }
                    _ => continue,
                },
                Source::World(_) => continue,
            };
            messages.push((place, args));
        }
        for message in pending.iter().filter(|p| p.owner == name && p.key == *key) {
            if !messages.iter().any(|(place, _)| *place == message.place) {
                messages.push((message.place.clone(), message.values.clone().into()));
            }
        }
        messages.sort_by(|a, b| a.0.cmp(&b.0));
        let mut stored = Vec::new();
        for (place, args) in messages {
            let args = match args
                .iter()
                .map(|a| to_json(a, 0))
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(args) => args,
                Err(e) => {
                    dropped.push(format!("{key} on {}: {e}; not saved", place.shown()));
                    continue;
                }
            };
            let mut entry = Map::new();
            let (on, holder, source) = match &place {
                Place::Global => ("global", None, None),
                Place::World => ("world", None, None),
                Place::Object(Holder::Game(n), source) => {
                    ("object", Some(("object", n)), source.as_ref())
                }
                Place::Object(Holder::Script(f), source) => {
                    ("script", Some(("script", f)), source.as_ref())
                }
            };
            entry.insert("on".into(), Json::from(on));
            if let Some((field, stable)) = holder {
                entry.insert(field.into(), Json::from(stable.as_str()));
            }
            if let Some(source) = source {
                entry.insert("source".into(), Json::from(source.as_str()));
            }
            entry.insert("args".into(), Json::Array(args));
            stored.push(Json::Object(entry));
        }
        if stored.is_empty() {
            continue;
        }
        let params: Vec<Json> = hub
            .table()
            .keys
            .get(key)
            .map(|entry| {
                entry
                    .params
                    .iter()
                    .map(|p| Json::from(format!("{}: {}", p.name, p.ty)))
                    .collect()
            })
            .unwrap_or_default();
        let mut entry = Map::new();
        entry.insert("params".into(), Json::Array(params));
        entry.insert("stored".into(), Json::Array(stored));
        saved.insert(key.clone(), Json::Object(entry));
    }
    let path = save_path(name);
    if saved.is_empty() && std::fs::symlink_metadata(root.join(&path)).is_err() {
        return Ok(dropped);
    }
    let mut file = Map::new();
    file.insert("version".into(), Json::from(SAVE_VERSION));
    file.insert("mod".into(), Json::from(name));
    file.insert("keys".into(), Json::Object(saved));
    let text = serde_json::to_string_pretty(&Json::Object(file)).unwrap_or_default();
    files::write_in(root, &root.join(&path), text.as_bytes())?;
    Ok(dropped)
}

fn to_json(value: &Value, depth: usize) -> Result<Json, String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".into());
    }
    Ok(match value {
        Value::Nil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(n) => Json::from(*n),
        Value::Float(f) => Json::Number(
            Number::from_f64(*f).ok_or_else(|| format!("the float {f} cannot be saved"))?,
        ),
        Value::Str(s) => Json::String(s.to_string()),
        Value::Object(_) => return Err("an object does not outlive the run".into()),
        Value::Array(items) => Json::Array(
            items
                .iter()
                .map(|v| to_json(v, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Struct(s) => {
            let mut fields = Map::new();
            for (name, value) in &s.fields {
                fields.insert(name.to_string(), to_json(value, depth + 1)?);
            }
            let mut out = Map::new();
            out.insert("struct".into(), Json::String(s.name.to_string()));
            out.insert("fields".into(), Json::Object(fields));
            Json::Object(out)
        }
    })
}

fn from_json(json: &Json, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("nested too deeply".into());
    }
    Ok(match json {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) if !n.is_f64() => Value::Int(i),
            _ => Value::Float(n.as_f64().ok_or("a number out of range")?),
        },
        Json::String(s) => Value::Str(Rc::from(s.as_str())),
        Json::Array(items) => Value::array(
            items
                .iter()
                .map(|v| from_json(v, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Json::Object(map) => {
            let name = map
                .get("struct")
                .and_then(Json::as_str)
                .ok_or("an object that is not a saved struct")?;
            let fields = map
                .get("fields")
                .and_then(Json::as_object)
                .ok_or("a saved struct without fields")?;
            let mut value = StructValue::new(name);
            for (field, v) in fields {
                value
                    .fields
                    .push((Rc::from(field.as_str()), from_json(v, depth + 1)?));
            }
            Value::structure(value)
        }
    })
}

/// `2026-12-02T02-10-00Z`: a date a file name can hold.
fn date_stamp(now: SystemTime) -> String {
    let secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}-{:02}-{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_stamp_is_the_civil_date_in_utc() {
        let t = UNIX_EPOCH + std::time::Duration::from_secs(1_796_177_400);
        assert_eq!(date_stamp(t), "2026-12-02T02-10-00Z");
    }

    #[test]
    fn values_survive_a_round_trip_through_the_save_format() {
        let value = Value::array(vec![
            Value::Int(3),
            Value::Float(1.0),
            Value::str("x"),
            Value::structure(StructValue::new("Quest").with("id", "q1")),
        ]);
        let json = to_json(&value, 0).unwrap();
        assert_eq!(from_json(&json, 0).unwrap(), value);
    }
}
