//! Saved state: what a mod's `persist = true` keys store outlives the run.
//!
//! At exit (and every few seconds while watching) the loader writes, for
//! each mod with persisted keys, the message each of them stores on the
//! sources that outlive a run — the game's world, and global — to
//! `GAME/.gantry/saved/<mod>.json`, as a whole (a temporary file, then a
//! rename: a crash mid-write leaves the previous save). Before the mod's
//! scripts load in the next run, each saved message is stored again, so
//! the top levels and listeners find it as if it had never gone.
//!
//! The file is a mod's, so hostile: it is read inside the game folder
//! only, bounded in size, and one that cannot be read (not JSON, not this
//! shape, a version newer than this loader writes) is never overwritten:
//! it is kept aside under its date (`quest.json.2026-12-02T02-10-00Z.bad`)
//! and the mod starts fresh, said. A saved message the key's declaration
//! no longer takes (its parameters changed) is dropped and said; the rest
//! of the save is kept.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use gantry_host::face::Faced;
use gantry_host::files::{self, MIB};
use gantry_host::manifest::{Manifest, ManifestKind};
use gantry_host::value::StructValue;
use gantry_host::{Caller, Hub, Source, Value, WorldId};
use serde_json::{Map, Number, Value as Json};

/// Where saves live, below the game folder.
pub const SAVED_DIR: &str = ".gantry/saved";

/// The save format this loader writes (and the newest it reads).
pub const SAVE_VERSION: u64 = 1;

/// The largest save file read.
const MAX_SAVE_BYTES: u64 = 64 * MIB;

/// The deepest value saved or read (arrays and structs inside each other).
const MAX_DEPTH: usize = 64;

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

/// What the mod's save said when replayed: texts to say as warnings.
#[derive(Debug, Default)]
pub(crate) struct Replayed {
    pub warnings: Vec<String>,
}

/// Reads mod `name`'s save in `root` and stores each message of its
/// `keys` again, globally. A save that cannot be read is kept aside.
pub(crate) fn replay(
    root: &Path,
    name: &str,
    keys: &[(String, bool)],
    hub: &Hub,
    world: WorldId,
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
    for (key, scope, values) in saved {
        let source = scope.source(world);
        let Some(&(_, once)) = keys.iter().find(|(k, _)| *k == key) else {
            out.warnings.push(format!(
                "{shown}: {key} is no longer persisted by {name}; its saved message is dropped"
            ));
            continue;
        };
        let store = |values: Vec<Value>| {
            hub.key(&key).map_err(|e| e.to_string()).and_then(|k| {
                hub.store_values(k, source, values, once, Caller::Unrecorded)
                    .map_err(|e| e.to_string())
            })
        };
        let Err(e) = store(values.clone()) else {
            continue;
        };
        // A declaration that lost trailing parameters keeps what still
        // matches: the saved values it still carries, in their places.
        let carried = hub
            .table_snapshot()
            .get(&key)
            .map_or(values.len(), |entry| entry.params.len());
        let migrated = (carried < values.len()).then(|| values[..carried].to_vec());
        match migrated.map(store) {
            Some(Ok(_)) => out.warnings.push(format!(
                "{shown}: {key} now carries {carried} value(s): its saved message kept the first \
                 {carried} and dropped {} ({})",
                values.len() - carried,
                describe(&values[carried..])
            )),
            _ => out.warnings.push(format!(
                "{shown}: the saved message of {key} no longer fits its declaration ({e}); dropped"
            )),
        }
    }
    out
}

/// The sources a save keeps: those that outlive a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Stored with no source (a Rust host's global store).
    Global,
    /// Stored on the game's world (`StoreObjectMessage(world, …)`).
    World,
}

impl Scope {
    const ALL: [Scope; 2] = [Scope::Global, Scope::World];

    fn as_str(self) -> &'static str {
        match self {
            Scope::Global => "global",
            Scope::World => "world",
        }
    }

    fn source(self, world: WorldId) -> Source {
        match self {
            Scope::Global => Source::Global,
            Scope::World => Source::World(world),
        }
    }
}

/// The `(key, source, arguments)` of a save's text, or why it cannot be
/// used.
fn parse(text: &str) -> Result<Vec<(String, Scope, Vec<Value>)>, String> {
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
    for (key, scopes) in keys {
        let scopes = scopes
            .as_object()
            .ok_or_else(|| format!("{key}: not a table of sources"))?;
        for (scope, args) in scopes {
            let scope = Scope::ALL
                .into_iter()
                .find(|s| s.as_str() == scope)
                .ok_or_else(|| format!("{key}: unknown source `{scope}`"))?;
            let args = args
                .as_array()
                .ok_or_else(|| format!("{key}: not a list of arguments"))?;
            let values = args
                .iter()
                .map(|a| from_json(a, 0))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{key}: {e}"))?;
            out.push((key.clone(), scope, values));
        }
    }
    Ok(out)
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

/// Writes mod `name`'s persisted `keys` as stored on the world and
/// globally now (nothing when none stores anything and there was no
/// save); what could not be saved (an object, a NaN) is returned, said.
pub(crate) fn save(
    root: &Path,
    name: &str,
    keys: &[(String, bool)],
    hub: &Hub,
    world: WorldId,
) -> Result<Vec<String>, files::FileError> {
    let mut dropped = Vec::new();
    let mut saved = Map::new();
    for (key, _) in keys {
        let Ok(k) = hub.key(key) else { continue };
        let mut scopes = Map::new();
        for scope in Scope::ALL {
            let Some(args) = hub.stored(k, scope.source(world)) else {
                continue;
            };
            match args
                .iter()
                .map(|a| to_json(a, 0))
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(args) => {
                    scopes.insert(scope.as_str().into(), Json::Array(args));
                }
                Err(e) => dropped.push(format!("{key}: {e}; not saved")),
            }
        }
        if !scopes.is_empty() {
            saved.insert(key.clone(), Json::Object(scopes));
        }
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

/// The values a migration dropped, as a warning names them (`"half", 3`).
fn describe(values: &[Value]) -> String {
    let mut text = values
        .iter()
        .take(4)
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if values.len() > 4 {
        text.push_str(", …");
    }
    text.chars().take(200).collect()
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
