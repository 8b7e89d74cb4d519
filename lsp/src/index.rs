//! What the workspace's scripts do with keys: every call with a literal key,
//! per file. References and the "fewer arguments than a listener needs"
//! check read it; open documents replace their file's entry as they change.
//!
//! Plain data (no `Rc`), so a background thread can build it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use gantry_host::{ApiFunction, Language, Role, ScannedCall};
use lsp_types::Range;

use crate::text::LineIndex;

/// One call with a literal key, as found in a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedCall {
    pub key: String,
    pub function: ApiFunction,
    /// `None` for a call that neither sends nor listens (`UnbindMessage`).
    pub role: Option<Role>,
    /// The key string's range (UTF-16 positions).
    pub range: Range,
    /// For listens with a function literal: how many parameters it declares
    /// (`None` when it takes a vararg or is not a literal).
    pub listener_params: Option<usize>,
}

/// The calls of every indexed script, by path, with a key index: the
/// diagnostics ask "who listens to this key?" once per call, and a walk of
/// every call in the workspace per question made a 3,000-call script's
/// diagnostics quadratic.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceIndex {
    files: BTreeMap<PathBuf, IndexedFile>,
    /// For each key, the files with a call of it.
    by_key: HashMap<String, BTreeSet<PathBuf>>,
}

#[derive(Debug, Clone)]
struct IndexedFile {
    language: Language,
    calls: Vec<IndexedCall>,
    /// Positions in `calls` of each key's calls, in source order.
    by_key: HashMap<String, Vec<usize>>,
}

impl WorkspaceIndex {
    pub fn set_file(&mut self, path: PathBuf, language: Language, calls: Vec<IndexedCall>) {
        self.remove_file(&path);
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, call) in calls.iter().enumerate() {
            // A key is sent from many places: clone it once, not per call.
            match by_key.get_mut(&call.key) {
                Some(positions) => positions.push(i),
                None => {
                    by_key.insert(call.key.clone(), vec![i]);
                }
            }
        }
        for key in by_key.keys() {
            self.by_key
                .entry(key.clone())
                .or_default()
                .insert(path.clone());
        }
        self.files.insert(
            path,
            IndexedFile {
                language,
                calls,
                by_key,
            },
        );
    }

    pub fn remove_file(&mut self, path: &Path) {
        let Some(file) = self.files.remove(path) else {
            return;
        };
        for key in file.by_key.keys() {
            if let Some(paths) = self.by_key.get_mut(key) {
                paths.remove(path);
                if paths.is_empty() {
                    self.by_key.remove(key);
                }
            }
        }
    }

    pub fn extend(&mut self, other: WorkspaceIndex) {
        for (path, file) in other.files {
            self.set_file(path, file.language, file.calls);
        }
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Every indexed script, in path order.
    pub fn paths(&self) -> impl Iterator<Item = &Path> + '_ {
        self.files.keys().map(PathBuf::as_path)
    }

    /// Every key a call names, with the role of that call (duplicates
    /// kept; calls that neither send nor listen left out).
    pub fn keys(&self) -> impl Iterator<Item = (&str, Role)> + '_ {
        self.files.values().flat_map(|file| {
            file.calls
                .iter()
                .filter_map(|c| Some((c.key.as_str(), c.role?)))
        })
    }

    /// Every indexed call of `key`, with its file: files in path order,
    /// calls in source order.
    pub fn calls_of<'a>(
        &'a self,
        key: &'a str,
    ) -> impl Iterator<Item = (&'a Path, Language, &'a IndexedCall)> + 'a {
        self.by_key
            .get(key)
            .into_iter()
            .flatten()
            .flat_map(move |path| {
                let file = self.files.get(path);
                file.and_then(|f| f.by_key.get(key))
                    .into_iter()
                    .flatten()
                    .filter_map(move |&i| {
                        let file = file?;
                        Some((path.as_path(), file.language, file.calls.get(i)?))
                    })
            })
    }
}

/// Indexes one script's scanned calls.
pub fn index_calls(text: &str, lines: &LineIndex, calls: &[ScannedCall]) -> Vec<IndexedCall> {
    calls
        .iter()
        .filter_map(|call| {
            let key = call.literal_key()?;
            let span = call.key_arg()?.span;
            let listener_params = call
                .listener_arg()
                .and_then(|a| a.function_params.as_ref())
                .filter(|params| !params.iter().any(|p| p == "..."))
                .map(Vec::len);
            Some(IndexedCall {
                key: key.to_owned(),
                function: call.function,
                role: call.function.role(),
                range: lines.range(text, span.start..span.end),
                listener_params,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(key: &str, line: u32, listener_params: Option<usize>) -> IndexedCall {
        let at = lsp_types::Position::new(line, 0);
        IndexedCall {
            key: key.to_owned(),
            function: ApiFunction::NotifyMessage,
            role: Some(Role::Send),
            range: Range::new(at, at),
            listener_params,
        }
    }

    fn lines_of(index: &WorkspaceIndex, key: &str) -> Vec<(String, u32)> {
        index
            .calls_of(key)
            .map(|(path, _, c)| (path.display().to_string(), c.range.start.line))
            .collect()
    }

    #[test]
    fn calls_of_a_key_come_by_file_then_line_and_follow_every_change() {
        let mut index = WorkspaceIndex::default();
        index.set_file(
            "b.lua".into(),
            Language::Lua,
            vec![
                call("A.K", 1, None),
                call("B.K", 2, None),
                call("A.K", 7, Some(2)),
            ],
        );
        index.set_file("a.rhai".into(), Language::Rhai, vec![call("A.K", 4, None)]);
        assert_eq!(
            lines_of(&index, "A.K"),
            [
                ("a.rhai".into(), 4),
                ("b.lua".into(), 1),
                ("b.lua".into(), 7)
            ]
        );
        assert_eq!(lines_of(&index, "B.K"), [("b.lua".into(), 2)]);
        // Replacing a file's calls forgets the old ones.
        index.set_file("b.lua".into(), Language::Lua, vec![call("C.K", 0, None)]);
        assert_eq!(lines_of(&index, "A.K"), [("a.rhai".into(), 4)]);
        assert!(lines_of(&index, "B.K").is_empty());
        index.remove_file(Path::new("a.rhai"));
        assert!(lines_of(&index, "A.K").is_empty());
        assert_eq!(index.file_count(), 1);
        assert_eq!(lines_of(&index, "C.K"), [("b.lua".into(), 0)]);
    }
}
