//! What the workspace's scripts do with keys: every call with a literal key,
//! per file. References and the "fewer arguments than a listener needs"
//! check read it; open documents replace their file's entry as they change.
//!
//! Plain data (no `Rc`), so a background thread can build it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gantry_host::{ApiFunction, Language, Role, ScannedCall};
use lsp_types::Range;

use crate::text::LineIndex;

/// One call with a literal key, as found in a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedCall {
    pub key: String,
    pub function: ApiFunction,
    pub role: Role,
    /// The key string's range (UTF-16 positions).
    pub range: Range,
    /// For listens with a function literal: how many parameters it declares
    /// (`None` when it takes a vararg or is not a literal).
    pub listener_params: Option<usize>,
}

/// The calls of every indexed script, by path.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceIndex {
    files: BTreeMap<PathBuf, (Language, Vec<IndexedCall>)>,
}

impl WorkspaceIndex {
    pub fn set_file(&mut self, path: PathBuf, language: Language, calls: Vec<IndexedCall>) {
        self.files.insert(path, (language, calls));
    }

    pub fn remove_file(&mut self, path: &Path) {
        self.files.remove(path);
    }

    pub fn extend(&mut self, other: WorkspaceIndex) {
        self.files.extend(other.files);
    }

    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Every key a call names, with the role of that call (duplicates kept).
    pub fn keys(&self) -> impl Iterator<Item = (&str, Role)> + '_ {
        self.files
            .values()
            .flat_map(|(_, calls)| calls.iter().map(|c| (c.key.as_str(), c.role)))
    }

    /// Every indexed call of `key`, with its file.
    pub fn calls_of<'a>(
        &'a self,
        key: &'a str,
    ) -> impl Iterator<Item = (&'a Path, Language, &'a IndexedCall)> + 'a {
        self.files
            .iter()
            .flat_map(move |(path, (language, calls))| {
                calls
                    .iter()
                    .filter(move |c| c.key == key)
                    .map(move |c| (path.as_path(), *language, c))
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
