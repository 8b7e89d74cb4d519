//! The server's state: open documents, loaded tables, the workspace index.
//! Notifications mutate it; requests read a [`Snapshot`] of it.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crossbeam_channel::Sender;
use gantry_host::{Language, ScannedCall};
use lsp_server::{Message, Notification, ReqQueue};
use lsp_types::notification::{LogMessage, PublishDiagnostics};
use lsp_types::{
    DiagnosticSeverity, LogMessageParams, MessageType, NumberOrString, PublishDiagnosticsParams,
    TextDocumentContentChangeEvent, Uri,
};

use super::Task;
use crate::analysis::SourceFile;
use crate::analysis::diagnostics::{Code, Diagnostic, KeyUse, Severity, check_calls};
use crate::incremental::Rescan;
use crate::index::{WorkspaceIndex, index_calls};
use crate::syntax::Parsed;
use crate::table::{HostKey, LoadedTable, ManifestFinding, TableCache, TableSources};
use crate::text::{LineIndex, apply_change};

/// An open script.
#[derive(Debug)]
pub struct Document {
    pub path: Option<PathBuf>,
    pub language: Language,
    pub version: i32,
    pub text: String,
    pub lines: LineIndex,
    /// The files of this script's table (table file, manifest), as found.
    pub sources: TableSources,
    /// The tree and every call of the script; the calls match `text`
    /// unless [`Document::is_stale`].
    parsed: Parsed,
}

impl Document {
    pub fn new(path: Option<PathBuf>, language: Language, version: i32, text: String) -> Self {
        let parsed = Parsed::new(language, &text);
        let sources = path
            .as_deref()
            .and_then(Path::parent)
            .map(TableSources::find)
            .unwrap_or_default();
        Self {
            lines: LineIndex::new(&text),
            path,
            language,
            version,
            text,
            sources,
            parsed,
        }
    }

    /// Applies the changes in order and reparses once. A Lua document's
    /// calls only shift past the edits; they are rescanned later, by
    /// [`Document::rescan`]: typing must not pay a scan per keystroke.
    pub fn apply_changes(&mut self, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        for change in changes {
            let old_lines = self.lines.clone();
            match apply_change(&mut self.text, &mut self.lines, change.range, &change.text) {
                Some(edit) => self.parsed.edit(edit, &old_lines, &self.lines),
                None => self.parsed.reset(),
            }
        }
        self.version = version;
        self.parsed.changed(&self.text);
    }

    /// Whether the calls are behind the text.
    pub fn is_stale(&self) -> bool {
        self.parsed.is_stale()
    }

    /// Brings the calls up to date with the text (only the statements the
    /// edits touched, when that is safe). Returns what it did.
    pub fn rescan(&mut self) -> Rescan {
        self.parsed.rescan(&self.text)
    }

    /// Every call, as of the last scan (current unless stale).
    pub fn calls(&self) -> &[ScannedCall] {
        self.parsed.calls()
    }

    /// The current tree of a Lua document.
    pub fn tree(&self) -> Option<&gantry_lua::syntax::Tree> {
        self.parsed.tree()
    }

    /// The calls a request at byte `offset` may look at: all of them when
    /// they are current, else the statement around `offset` scanned now
    /// from the current tree. `None` when `offset` is in a comment, where no
    /// request is answered (the line lexer behind an unterminated string
    /// cannot see a long comment opened lines above).
    pub fn calls_near(&self, offset: usize) -> Option<Cow<'_, [ScannedCall]>> {
        if !self.is_stale() {
            return (!self.parsed.comment_at(&self.text, offset))
                .then_some(Cow::Borrowed(self.calls()));
        }
        match self.parsed.scan_around(&self.text, offset) {
            Some(around) => (!around.in_comment).then_some(Cow::Owned(around.calls)),
            None => Some(Cow::Owned(crate::syntax::scan(self.language, &self.text))),
        }
    }

    /// The script with every call; current once [`Document::rescan`] ran
    /// (the main loop rescans before any request that needs them all).
    pub fn source(&self) -> SourceFile<'_> {
        self.source_with(self.calls())
    }

    /// The script with the given calls (from [`Document::calls_near`]).
    pub fn source_with<'a>(&'a self, calls: &'a [ScannedCall]) -> SourceFile<'a> {
        SourceFile {
            text: &self.text,
            lines: &self.lines,
            language: self.language,
            calls,
            parsed: Some(&self.parsed),
        }
    }
}

/// Everything the main loop owns.
pub struct GlobalState {
    pub(crate) sender: Sender<Message>,
    pub(crate) task_sender: Sender<Task>,
    pub(crate) req_queue: ReqQueue<(), ()>,
    pub(crate) docs: HashMap<Uri, Document>,
    pub(crate) tables: TableCache,
    pub(crate) workspace: WorkspaceIndex,
    /// Open documents whose diagnostics must be published when the loop is idle.
    pub(crate) dirty: BTreeSet<Uri>,
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) shutdown_requested: bool,
    pub(crate) progress_supported: bool,
    /// Whether the client may register file watchers (dynamically).
    pub(crate) watch_files: bool,
    /// Whether the client's `initialized` has arrived.
    pub(crate) initialized: bool,
    /// The load error last told the client for each table file (see
    /// [`GlobalState::report_table_errors`]).
    pub(crate) reported_table_errors: HashMap<PathBuf, String>,
    /// The findings last published on each manifest (see
    /// [`GlobalState::report_table_errors`]).
    pub(crate) published_manifests: HashMap<PathBuf, Vec<ManifestFinding>>,
}

impl GlobalState {
    /// A state whose tables all hold the host's keys (`host`).
    pub fn new(sender: Sender<Message>, task_sender: Sender<Task>, host: Vec<HostKey>) -> Self {
        Self {
            sender,
            task_sender,
            req_queue: ReqQueue::default(),
            docs: HashMap::new(),
            tables: TableCache::with_host(host),
            workspace: WorkspaceIndex::default(),
            dirty: BTreeSet::new(),
            roots: Vec::new(),
            shutdown_requested: false,
            progress_supported: false,
            watch_files: false,
            initialized: false,
            reported_table_errors: HashMap::new(),
            published_manifests: HashMap::new(),
        }
    }

    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { state: self }
    }

    pub(crate) fn send(&self, message: impl Into<Message>) {
        if self.sender.send(message.into()).is_err() {
            tracing::debug!("client went away; dropping a message");
        }
    }

    pub(crate) fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_owned(), params));
    }

    /// Opens or replaces a document, loading its table.
    pub fn open(&mut self, uri: Uri, document: Document) {
        self.tables.get_or_load(&document.sources);
        self.reindex(&uri, &document);
        self.docs.insert(uri.clone(), document);
        self.dirty.insert(uri);
    }

    /// Replaces the document's calls in the workspace index. A document
    /// whose calls are behind its text is skipped: its stale spans would be
    /// indexed against the new text; [`GlobalState::rescan_stale`] indexes
    /// it once rescanned.
    pub(crate) fn reindex(&mut self, _uri: &Uri, document: &Document) {
        if document.is_stale() {
            return;
        }
        if let Some(path) = &document.path {
            let calls = index_calls(&document.text, &document.lines, document.calls());
            self.workspace
                .set_file(path.clone(), document.language, calls);
        }
    }

    /// Rescans every document whose calls are behind its text, and
    /// reindexes it: before a request that reads all calls or the index,
    /// and before diagnostics are published.
    pub fn rescan_stale(&mut self) {
        let stale: Vec<Uri> = self
            .docs
            .iter()
            .filter(|(_, d)| d.is_stale())
            .map(|(u, _)| u.clone())
            .collect();
        for uri in stale {
            if let Some(mut doc) = self.docs.remove(&uri) {
                let rescan = doc.rescan();
                tracing::debug!(uri = uri.as_str(), ?rescan, "rescanned");
                self.reindex(&uri, &doc);
                self.docs.insert(uri, doc);
            }
        }
    }

    /// Reloads changed tables, finds tables for documents that had none, and
    /// marks the documents concerned for fresh diagnostics.
    pub fn refresh_tables(&mut self) {
        self.refresh_tables_with(Vec::new());
    }

    /// [`GlobalState::refresh_tables`], counting `reloaded` (tables
    /// already reloaded, whatever their stamp) as changed.
    pub fn refresh_tables_with(&mut self, reloaded: Vec<TableSources>) {
        let mut changed = self.tables.refresh();
        changed.extend(reloaded);
        for (uri, doc) in &mut self.docs {
            // A file that was missing may have appeared (a first run wrote
            // the table, the user created mod.toml).
            let found = (doc.sources.table.is_none() || doc.sources.manifest.is_none())
                .then(|| doc.path.as_deref().and_then(Path::parent))
                .flatten()
                .map(TableSources::find)
                .filter(|found| *found != doc.sources);
            if let Some(found) = found {
                self.tables.get_or_load(&found);
                doc.sources = found;
                self.dirty.insert(uri.clone());
            } else if changed.contains(&doc.sources) {
                self.dirty.insert(uri.clone());
            }
        }
    }

    /// Tells the client, once per error, of each table that could not be
    /// loaded (corrupt, too large, unreadable) as a warning in its log: a
    /// table no open document uses has no diagnostic to show it, and the
    /// server goes on serving either way (an empty table, every document
    /// of that table carrying a `table-error` diagnostic).
    pub fn report_table_errors(&mut self) {
        let mut failed: Vec<(PathBuf, String)> = Vec::new();
        for table in self.tables.all() {
            match &table.error {
                Some(error) if self.reported_table_errors.get(&table.file) != Some(error) => {
                    failed.push((table.file.clone(), error.clone()));
                }
                Some(_) => {}
                None => {
                    self.reported_table_errors.remove(&table.file);
                }
            }
        }
        for (file, error) in failed {
            self.notify::<LogMessage>(LogMessageParams {
                typ: MessageType::WARNING,
                message: format!(
                    "cannot load the signature table {}: {error}",
                    file.display()
                ),
            });
            self.reported_table_errors.insert(file, error);
        }
        self.publish_manifests();
    }

    /// Publishes the findings of every manifest in use on its own URI
    /// (`mod.toml`), each at its line, when they changed since last
    /// published: a broken manifest is seen where it is broken, and an
    /// empty list clears what a fixed one showed.
    fn publish_manifests(&mut self) {
        let mut current: HashMap<PathBuf, Vec<ManifestFinding>> = HashMap::new();
        for table in self.tables.all() {
            if let Some(file) = &table.sources.manifest {
                current.insert(file.clone(), table.manifest_errors.clone());
            }
        }
        let mut files: Vec<PathBuf> = current
            .keys()
            .chain(self.published_manifests.keys())
            .cloned()
            .collect();
        files.sort();
        files.dedup();
        for file in files {
            let now = current.remove(&file).unwrap_or_default();
            // Only non-empty lists are kept: none is what an editor shows
            // before anything was published.
            if self
                .published_manifests
                .get(&file)
                .map_or(&[][..], Vec::as_slice)
                == now
            {
                continue;
            }
            let Some(uri) = crate::uri::path_to_uri(&file) else {
                continue;
            };
            let diagnostics = now.iter().map(manifest_diagnostic).collect();
            self.notify::<PublishDiagnostics>(PublishDiagnosticsParams::new(
                uri,
                diagnostics,
                None,
            ));
            if now.is_empty() {
                self.published_manifests.remove(&file);
            } else {
                self.published_manifests.insert(file, now);
            }
        }
    }

    /// Publishes diagnostics of every dirty open document.
    pub fn publish_dirty(&mut self) {
        self.rescan_stale();
        let dirty = std::mem::take(&mut self.dirty);
        for uri in dirty {
            let Some(doc) = self.docs.get(&uri) else {
                self.notify::<PublishDiagnostics>(PublishDiagnosticsParams::new(
                    uri,
                    Vec::new(),
                    None,
                ));
                continue;
            };
            let diagnostics = self
                .snapshot()
                .diagnostics(doc)
                .into_iter()
                .map(|d| to_lsp_diagnostic(doc, &d))
                .collect();
            self.notify::<PublishDiagnostics>(PublishDiagnosticsParams::new(
                uri.clone(),
                diagnostics,
                Some(doc.version),
            ));
        }
    }
}

/// A read-only view of the state for one request.
#[derive(Clone, Copy)]
pub struct Snapshot<'a> {
    state: &'a GlobalState,
}

impl<'a> Snapshot<'a> {
    pub fn document(&self, uri: &Uri) -> Option<&'a Document> {
        self.state.docs.get(uri)
    }

    pub fn table_of(&self, doc: &Document) -> Option<&'a LoadedTable> {
        self.state.tables.get(&doc.sources)
    }

    pub fn workspace(&self) -> &'a WorkspaceIndex {
        &self.state.workspace
    }

    /// Every open document.
    pub fn documents(&self) -> impl Iterator<Item = (&'a Uri, &'a Document)> + 'a {
        self.state.docs.iter()
    }

    /// The workspace folders: scripts are read only inside them.
    pub fn roots(&self) -> &'a [PathBuf] {
        &self.state.roots
    }

    /// Every loaded table, by file.
    pub fn tables(&self) -> Vec<&'a LoadedTable> {
        self.state.tables.all()
    }

    /// The diagnostics of an open document, in bytes.
    pub fn diagnostics(&self, doc: &Document) -> Vec<Diagnostic> {
        let table = self.table_of(doc);
        let mut out = Vec::new();
        if let Some(error) = table.and_then(|t| t.error.as_ref()) {
            out.push(Diagnostic {
                range: 0..0,
                severity: Severity::Error,
                code: Code::TableError,
                message: error.clone(),
                fix: None,
            });
        }
        let usable = table.and_then(LoadedTable::usable);
        let uses = KeyUse::of(usable, self.workspace());
        out.extend(check_calls(doc.calls(), usable, self.workspace(), &uses));
        let grants = table.and_then(|t| t.grants.as_ref());
        out.extend(crate::analysis::grants::check_grants(doc.calls(), grants));
        crate::analysis::typing::as_typed(&doc.text, &mut out);
        out
    }
}

/// A manifest finding as the editor shows it: an error at its line and
/// column (1-based there; the protocol's are 0-based), to the line's end.
fn manifest_diagnostic(finding: &ManifestFinding) -> lsp_types::Diagnostic {
    let line = finding.line.saturating_sub(1);
    let start = lsp_types::Position::new(line, finding.column.saturating_sub(1));
    lsp_types::Diagnostic {
        range: lsp_types::Range::new(start, lsp_types::Position::new(line, u32::MAX)),
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String(
            Code::ManifestError.as_str().to_owned(),
        )),
        source: Some("gantry".to_owned()),
        message: finding.message.clone(),
        ..Default::default()
    }
}

pub fn to_lsp_diagnostic(doc: &Document, d: &Diagnostic) -> lsp_types::Diagnostic {
    lsp_types::Diagnostic {
        range: doc.lines.range(&doc.text, d.range.clone()),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Hint => DiagnosticSeverity::HINT,
        }),
        code: Some(NumberOrString::String(d.code.as_str().to_owned())),
        source: Some("gantry".to_owned()),
        message: d.message.clone(),
        ..Default::default()
    }
}
