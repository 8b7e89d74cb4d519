//! The protocol side: one main loop over an [`Event`] enum.
//!
//! Requests are answered in order on the loop's thread (the signature table
//! is single-threaded by design, and every answer is a few milliseconds).
//! An edit only reparses (incrementally); the whole document is rescanned
//! and its diagnostics published once the client has been quiet for
//! [`QUIET`], so a burst of edits followed by a completion request answers
//! the completion first, from the statement at the cursor.
//! Workspace indexing runs on a background thread and reports through
//! [`Task`]s, shown to the user as `$/progress`.

mod dispatch;
mod handlers;
mod requests;
mod state;
pub mod transport;

use std::path::PathBuf;
use std::time::Duration;

use crossbeam_channel::{Receiver, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    Progress,
};
use lsp_types::request::{
    CodeActionRequest, CodeLensRequest, Completion, DocumentDiagnosticRequest,
    DocumentHighlightRequest, DocumentSymbolRequest, FoldingRangeRequest, GotoDefinition,
    HoverRequest, InlayHintRequest, PrepareRenameRequest, References, RegisterCapability, Rename,
    ResolveCompletionItem, SemanticTokensFullRequest, SignatureHelpRequest, WorkDoneProgressCreate,
    WorkspaceDiagnosticRequest, WorkspaceSymbolRequest,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CodeLensOptions,
    CompletionOptions, DiagnosticOptions, DiagnosticServerCapabilities,
    DidChangeWatchedFilesRegistrationOptions, FileSystemWatcher, FoldingRangeProviderCapability,
    GlobPattern, HoverProviderCapability, InitializeParams, InitializeResult, NumberOrString,
    OneOf, ProgressParams, ProgressParamsValue, Registration, RegistrationParams, RenameOptions,
    SemanticTokensFullOptions, SemanticTokensOptions, SemanticTokensServerCapabilities,
    ServerCapabilities, ServerInfo, SignatureHelpOptions, TextDocumentSyncCapability,
    TextDocumentSyncKind, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressCreateParams,
    WorkDoneProgressEnd, WorkDoneProgressReport,
};

pub use state::{Document, GlobalState, Snapshot};

use crate::index::WorkspaceIndex;
use crate::table::{HostKey, TableSources};
use crate::uri::uri_to_path;
use crate::workspace::{index_files, script_files};

/// Work finished off the main thread.
#[derive(Debug)]
pub enum Task {
    IndexProgress { done: usize, total: usize },
    Indexed(WorkspaceIndex, Vec<TableSources>),
}

/// Everything the main loop reacts to.
#[derive(Debug)]
pub enum Event {
    Lsp(Message),
    Task(Task),
    /// A periodic check of the tables' files.
    Tick,
    /// The client has been quiet for [`QUIET`] with diagnostics owed.
    Quiet,
}

/// How long the client must be quiet before changed documents are rescanned
/// and their diagnostics published: long enough for the completion request
/// an editor sends right behind an edit, short against typing speed.
pub const QUIET: Duration = Duration::from_millis(8);

/// Requests answered from the statement at the cursor; every other request
/// reads all calls or the workspace index and rescans changed documents first.
const ANSWERED_LOCALLY: [&str; 4] = [
    "textDocument/completion",
    "textDocument/signatureHelp",
    "textDocument/hover",
    "textDocument/definition",
];

const PROGRESS_TOKEN: &str = "gantry/indexing";

/// What the server can do.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some([".", ":", "\"", "'", "(", ","].map(String::from).to_vec()),
            // Items come complete; resolving returns them as they are.
            resolve_provider: Some(true),
            ..Default::default()
        }),
        signature_help_provider: Some(SignatureHelpOptions {
            trigger_characters: Some(["(", ","].map(String::from).to_vec()),
            ..Default::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_highlight_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: crate::analysis::semantic::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                work_done_progress_options: Default::default(),
            },
        )),
        diagnostic_provider: Some(DiagnosticServerCapabilities::Options(DiagnosticOptions {
            identifier: Some("gantry".to_owned()),
            inter_file_dependencies: true,
            workspace_diagnostics: true,
            work_done_progress_options: Default::default(),
        })),
        ..Default::default()
    }
}

/// How a session ended, which decides the process's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `exit` after `shutdown`: exit code 0.
    Exit,
    /// `exit` without a `shutdown` before it: exit code 1 (LSP: "The
    /// server should exit with success code 0 if the shutdown request has
    /// been received before; otherwise with error code 1").
    ExitWithoutShutdown,
    /// The client closed the connection without `exit`.
    Hangup,
}

impl Ending {
    /// The process exit code for this ending.
    pub fn exit_code(self) -> u8 {
        match self {
            Ending::ExitWithoutShutdown => 1,
            Ending::Exit | Ending::Hangup => 0,
        }
    }
}

/// Why [`run`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("the client sent `exit` without `shutdown` before it")]
    ExitWithoutShutdown,
    #[error(transparent)]
    Transport(#[from] transport::TransportError),
}

/// Serves the editor on stdin/stdout until it exits, over Gantry's own
/// transport ([`transport`]: a malformed message is answered, not fatal).
pub fn run_stdio() -> anyhow::Result<Ending> {
    run_stdio_with(Vec::new())
}

/// [`run_stdio`] for a host that declares `host` keys to every mod it
/// runs (`gantry lsp` for `gantry run`'s `Game.Tick`): the server knows
/// them without a table.
pub fn run_stdio_with(host: Vec<HostKey>) -> anyhow::Result<Ending> {
    let (connection, io_threads) = transport::stdio().map_err(ServerError::from)?;
    let ending = serve_with(connection, host)?;
    // The connection is gone: the writer writes what is left and ends.
    io_threads.join().map_err(ServerError::from)?;
    Ok(ending)
}

/// Serves one client over `connection` (see [`serve`]); an `exit` without
/// `shutdown` before it is [`ServerError::ExitWithoutShutdown`].
pub fn run(connection: Connection) -> anyhow::Result<()> {
    match serve(connection)? {
        Ending::ExitWithoutShutdown => Err(ServerError::ExitWithoutShutdown.into()),
        Ending::Exit | Ending::Hangup => Ok(()),
    }
}

/// Serves one client over `connection`: the handshake, then the main loop
/// until `exit` (or the client hanging up). Says how it ended.
pub fn serve(connection: Connection) -> anyhow::Result<Ending> {
    serve_with(connection, Vec::new())
}

/// [`serve`], every table holding the keys the host declares (`host`).
pub fn serve_with(connection: Connection, host: Vec<HostKey>) -> anyhow::Result<Ending> {
    let (id, params) = match initialize_start(&connection) {
        Ok(started) => started,
        Err(ending) => return Ok(ending),
    };
    let init: InitializeParams = match serde_json::from_value(params) {
        Ok(init) => init,
        Err(e) => {
            tracing::warn!(error = %e, "malformed initialize params; using defaults");
            InitializeParams::default()
        }
    };
    let result = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo {
            name: "gantry".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
    };
    let (task_sender, task_receiver) = crossbeam_channel::unbounded();
    let mut state = GlobalState::new(connection.sender.clone(), task_sender, host);
    state.send(Response::new_ok(id, result));
    state.progress_supported = init
        .capabilities
        .window
        .as_ref()
        .and_then(|w| w.work_done_progress)
        .unwrap_or(false);
    state.roots = workspace_roots(&init);
    state.watch_files = init
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files)
        .and_then(|w| w.dynamic_registration)
        .unwrap_or(false);
    Ok(main_loop(&connection, &task_receiver, state))
}

/// Waits for `initialize`: other requests answer ServerNotInitialized,
/// notifications are dropped; `exit` (or the client hanging up) ends the
/// session before it began.
fn initialize_start(connection: &Connection) -> Result<(RequestId, serde_json::Value), Ending> {
    loop {
        match connection.receiver.recv() {
            Err(_) => return Err(Ending::Hangup),
            Ok(Message::Request(request)) if request.method == "initialize" => {
                return Ok((request.id, request.params));
            }
            Ok(Message::Request(request)) => {
                let answer = Response::new_err(
                    request.id,
                    ErrorCode::ServerNotInitialized as i32,
                    format!("expected initialize, got {}", request.method),
                );
                if connection.sender.send(answer.into()).is_err() {
                    return Err(Ending::Hangup);
                }
            }
            Ok(Message::Notification(n)) if n.method == "exit" => {
                return Err(Ending::ExitWithoutShutdown);
            }
            Ok(other) => tracing::debug!(?other, "ignored before initialize"),
        }
    }
}

/// After the client's `initialized`: register the file watchers and index
/// the workspace.
fn initialized(state: &mut GlobalState) {
    if std::mem::replace(&mut state.initialized, true) {
        return;
    }
    if state.watch_files {
        register_watchers(state);
    }
    start_indexing(state);
}

#[allow(deprecated)] // `root_uri` is still what many clients send.
fn workspace_roots(init: &InitializeParams) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = init
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|f| uri_to_path(&f.uri))
        .collect();
    if roots.is_empty()
        && let Some(root) = init.root_uri.as_ref().and_then(uri_to_path)
    {
        roots.push(root);
    }
    roots
}

fn register_watchers(state: &mut GlobalState) {
    let watchers = [
        "**/.gantry/signatures.json",
        "**/mod.toml",
        "**/*.lua",
        "**/*.rhai",
    ]
    .map(|glob| FileSystemWatcher {
        glob_pattern: GlobPattern::String(glob.to_owned()),
        kind: None,
    })
    .to_vec();
    let params = RegistrationParams {
        registrations: vec![Registration {
            id: "gantry/watch".to_owned(),
            method: "workspace/didChangeWatchedFiles".to_owned(),
            register_options: serde_json::to_value(DidChangeWatchedFilesRegistrationOptions {
                watchers,
            })
            .ok(),
        }],
    };
    send_request::<RegisterCapability>(state, params);
}

fn send_request<R: lsp_types::request::Request>(state: &mut GlobalState, params: R::Params) {
    let request = state
        .req_queue
        .outgoing
        .register(R::METHOD.to_owned(), params, ());
    state.send(request);
}

fn progress(state: &GlobalState, value: WorkDoneProgress) {
    if state.progress_supported {
        state.notify::<Progress>(ProgressParams {
            token: NumberOrString::String(PROGRESS_TOKEN.to_owned()),
            value: ProgressParamsValue::WorkDone(value),
        });
    }
}

/// Indexes the workspace's scripts on a background thread.
fn start_indexing(state: &mut GlobalState) {
    if state.roots.is_empty() {
        return;
    }
    if state.progress_supported {
        send_request::<WorkDoneProgressCreate>(
            state,
            WorkDoneProgressCreateParams {
                token: NumberOrString::String(PROGRESS_TOKEN.to_owned()),
            },
        );
        progress(
            state,
            WorkDoneProgress::Begin(WorkDoneProgressBegin {
                title: "Indexing scripts".to_owned(),
                percentage: Some(0),
                ..Default::default()
            }),
        );
    }
    let roots = state.roots.clone();
    let sender = state.task_sender.clone();
    let spawned = std::thread::Builder::new()
        .name("gantry-index".to_owned())
        .spawn(move || {
            let files: Vec<PathBuf> = roots.iter().flat_map(|r| script_files(r)).collect();
            let mut last_percent = 0;
            let index = index_files(&roots, &files, |done, total| {
                let percent = done * 100 / total.max(1);
                if percent != last_percent {
                    last_percent = percent;
                    let _ = sender.send(Task::IndexProgress { done, total });
                }
            });
            // Scripts of one folder share their table: found once a folder.
            let mut folders: Vec<&std::path::Path> =
                files.iter().filter_map(|f| f.parent()).collect();
            folders.sort();
            folders.dedup();
            let mut tables: Vec<TableSources> =
                folders.into_iter().map(TableSources::find).collect();
            tables.extend(roots.iter().map(|r| TableSources::find(r)));
            tables.sort();
            tables.dedup();
            let _ = sender.send(Task::Indexed(index, tables));
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the indexing thread");
    }
}

fn main_loop(connection: &Connection, tasks: &Receiver<Task>, mut state: GlobalState) -> Ending {
    let tick = crossbeam_channel::tick(Duration::from_millis(500));
    loop {
        let quiet = if state.dirty.is_empty() {
            crossbeam_channel::never()
        } else {
            crossbeam_channel::after(QUIET)
        };
        let event = select! {
            recv(connection.receiver) -> message => match message {
                Ok(message) => Event::Lsp(message),
                Err(_) => {
                    tracing::info!("the client closed the connection without `exit`");
                    return Ending::Hangup;
                }
            },
            recv(tasks) -> task => match task {
                Ok(task) => Event::Task(task),
                Err(_) => continue,
            },
            recv(tick) -> _ => Event::Tick,
            recv(quiet) -> _ => Event::Quiet,
        };
        // A message that came in as the pause ended goes first: a
        // completion right behind an edit must not wait for the rescan and
        // the diagnostics (`select!` picks among ready arms at random).
        if matches!(event, Event::Quiet) && !connection.receiver.is_empty() {
            continue;
        }
        if handle_event(&mut state, event) == Flow::Exit {
            return if state.shutdown_requested {
                Ending::Exit
            } else {
                tracing::warn!("`exit` without `shutdown`: exiting with code 1");
                Ending::ExitWithoutShutdown
            };
        }
    }
}

#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Exit,
}

fn handle_event(state: &mut GlobalState, event: Event) -> Flow {
    match event {
        Event::Lsp(Message::Request(request)) => {
            state.refresh_tables();
            if !ANSWERED_LOCALLY.contains(&request.method.as_str()) {
                state.rescan_stale();
            }
            handle_request(state, request);
        }
        Event::Lsp(Message::Notification(notification)) => {
            if notification.method == "exit" {
                return Flow::Exit;
            }
            if notification.method == "initialized" {
                initialized(state);
                return Flow::Continue;
            }
            handle_notification(state, notification);
        }
        Event::Lsp(Message::Response(response)) => {
            state.req_queue.outgoing.complete(response.id);
        }
        Event::Task(Task::IndexProgress { done, total }) => progress(
            state,
            WorkDoneProgress::Report(WorkDoneProgressReport {
                message: Some(format!("{done}/{total} scripts")),
                percentage: Some((done * 100 / total.max(1)) as u32),
                ..Default::default()
            }),
        ),
        Event::Task(Task::Indexed(index, tables)) => {
            let files = index.file_count();
            state.workspace.extend(index);
            let open: Vec<_> = state.docs.keys().cloned().collect();
            for uri in open {
                if let Some(doc) = state.docs.remove(&uri) {
                    state.reindex(&uri, &doc);
                    state.docs.insert(uri.clone(), doc);
                    state.dirty.insert(uri);
                }
            }
            for table in tables {
                state.tables.get_or_load(&table);
            }
            progress(
                state,
                WorkDoneProgress::End(WorkDoneProgressEnd {
                    message: Some(format!("{files} scripts indexed")),
                }),
            );
        }
        Event::Tick => state.refresh_tables(),
        Event::Quiet => state.publish_dirty(),
    }
    // Any event may have loaded a table (a document opened, a file changed).
    state.report_table_errors();
    Flow::Continue
}

fn handle_request(state: &mut GlobalState, request: Request) {
    if request.method == "shutdown" {
        state.shutdown_requested = true;
        state.send(Response::new_ok(request.id, ()));
        return;
    }
    if state.shutdown_requested {
        state.send(Response::new_err(
            request.id,
            ErrorCode::InvalidRequest as i32,
            "the server is shutting down".to_owned(),
        ));
        return;
    }
    dispatch::RequestDispatcher {
        request: Some(request),
        state,
    }
    .on::<Completion>(handlers::completion)
    .on::<ResolveCompletionItem>(|_, item| Ok(item))
    .on::<SignatureHelpRequest>(handlers::signature_help)
    .on::<HoverRequest>(handlers::hover)
    .on::<GotoDefinition>(handlers::definition)
    .on::<References>(handlers::references)
    .on::<WorkspaceSymbolRequest>(handlers::workspace_symbol)
    .on::<CodeActionRequest>(handlers::code_action)
    .on::<PrepareRenameRequest>(requests::prepare_rename)
    .on::<Rename>(requests::rename)
    .on::<DocumentSymbolRequest>(requests::document_symbol)
    .on::<DocumentHighlightRequest>(requests::document_highlight)
    .on::<FoldingRangeRequest>(requests::folding_range)
    .on::<InlayHintRequest>(requests::inlay_hint)
    .on::<CodeLensRequest>(requests::code_lens)
    .on::<SemanticTokensFullRequest>(requests::semantic_tokens_full)
    .on::<DocumentDiagnosticRequest>(requests::document_diagnostic)
    .on::<WorkspaceDiagnosticRequest>(requests::workspace_diagnostic)
    .finish();
}

fn handle_notification(state: &mut GlobalState, notification: Notification) {
    dispatch::NotificationDispatcher {
        notification: Some(notification),
        state,
    }
    .on::<DidOpenTextDocument>(handlers::did_open)
    .on::<DidChangeTextDocument>(handlers::did_change)
    .on::<DidCloseTextDocument>(handlers::did_close)
    .on::<DidChangeWatchedFiles>(handlers::did_change_watched_files)
    .finish();
}
