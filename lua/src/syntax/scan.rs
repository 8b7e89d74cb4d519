//! The one Lua call-site scanner.
//!
//! Finds every call of a generic API function (`NotifyObjectMessage(...)` as
//! a global, or `GMP.NotifyObjectMessage(...)`) that Lua would resolve to the
//! API: method calls, field calls on other tables and names shadowed by a
//! local in scope are not API calls. The loader's rewriter and the language
//! server both use it, so what the editor flags is exactly what gets baked.
//!
//! The walk is iterative (a script of 10,000 nested concatenations must not
//! overflow the stack) and tracks lexical scope only for the names that
//! matter: the API function names, `GMP` and `_ENV` (a local `_ENV`
//! redirects every global, so no global-form call is an API call under it),
//! `_G` (the sandbox's `_G` is the environment itself) and `load` (which
//! runs text in the environment).
//!
//! Along the way it notes what the script may replace (see
//! [`ChunkScan::reassigned`]): the rewriter must not bake a call of a
//! function the script puts there itself. Writes it can follow name the
//! function (`NotifyMessage = f`, `_G.NotifyMessage = f`,
//! `GMP["RunHook"] = f`); anything else that may write the environment or
//! `GMP` counts as a replacement of every name in it:
//! - a computed key: `_G[name] = f`, and `_G[name]` read (it may be `_G`
//!   or `load`);
//! - the environment or `GMP` used as a value, not just indexed: an alias
//!   (`local env = _ENV`), an argument (`rawset(_G, "NotifyMessage", f)`,
//!   `setmetatable(_ENV, mt)`), a method call's `self`, a table field;
//! - any read of `load` (`load("NotifyMessage = f")()`, `local l = load`),
//!   as a global or a field of the environment.
//!
//! The sandbox's other functions cannot reach the environment unless given
//! it (`rawset`, `setmetatable` and the rest take it as an argument, which
//! the second rule sees), `require` runs a module in an environment of its
//! own, and `loadstring`, `dofile`, `loadfile` and `debug` do not exist
//! there (see `runtime/sandbox.rs`).

use std::borrow::Cow;
use std::ops::Range;

use gantry_host::{ApiFunction, Literal, Pos, ScannedArg, ScannedCall, Span};
use tree_sitter::{Node, Tree};

use super::kinds::{KINDS, Kinds};
use super::literal::literal_of;
use super::parse::parse;
use super::refusal::{Check, Refusal, descends};

/// Index of `GMP` in the shadow counters, after the API functions.
pub(crate) const GMP: usize = ApiFunction::ALL.len();
/// Index of `_ENV`.
pub(crate) const ENV: usize = GMP + 1;
/// Index of `_G`: the sandbox sets `env._G = env`.
pub(crate) const G: usize = ENV + 1;
/// Index of `load`: it runs text in the script's environment.
pub(crate) const LOAD: usize = G + 1;
const TRACKED: usize = LOAD + 1;
const _: () = assert!(TRACKED <= 32, "ChunkLocals keeps one bit per tracked name");

/// Lua 5.4 keeps hidden control variables for each loop (three for a
/// numeric `for`, four for a generic one); counted as locals of the function.
const FOR_HIDDEN_LOCALS: usize = 4;

/// A scanned call plus what the rewriter needs to cut the key out.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub call: ScannedCall,
    /// Byte offset of each `,` separating arguments: `commas[i]` follows `args[i]`.
    pub commas: Vec<usize>,
    /// `f(...)` rather than `f"str"` / `f{...}`.
    pub parenthesized: bool,
}

/// Everything one walk learns about a chunk.
#[derive(Debug)]
pub(crate) struct ChunkScan {
    pub calls: Vec<Found>,
    /// Locals (with loop control variables) declared in the main chunk's own
    /// function body: Lua allows 200 active locals per function, and the
    /// rewriter's prologue adds some.
    pub main_locals: usize,
    /// Whether the main chunk reads its own varargs `...`, which the
    /// rewriter's prologue would take over.
    pub main_reads_varargs: bool,
    /// Tracked names the chunk assigns as globals (`NotifyMessage = f`,
    /// `_G.NotifyMessage = f`, `function GMP.RunHook() end`, `GMP = {}`,
    /// `_ENV = t`): a baked call would bypass the script's own replacement,
    /// so the rewriter keeps calls of those on the generic path.
    /// `reassigned[ENV]` (or `[GMP]`) also stands for a write the scanner
    /// cannot follow, which may replace any name in the environment (or
    /// in `GMP`): see the module documentation.
    pub reassigned: [bool; TRACKED],
}

impl ChunkScan {
    /// Whether a call of `function` (as `GMP.Name` when `via_gmp`) may
    /// resolve to something the script put there itself.
    pub(crate) fn may_be_replaced(&self, function: ApiFunction, via_gmp: bool) -> bool {
        self.reassigned[ENV]
            || self.reassigned[api_index(function)]
            || (via_gmp && self.reassigned[GMP])
    }
}

/// Parses and scans `source`. Empty if tree-sitter fails outright.
pub fn scan(source: &str) -> Vec<ScannedCall> {
    match parse(source, None) {
        Some(tree) => scan_tree(&tree, source),
        None => Vec::new(),
    }
}

/// Parses and scans `source`, with Lua 5.4's verdict on it from the same
/// walk: where (a byte offset) and why Lua would refuse to load it, `None`
/// when it would load. Tree-sitter's grammar is wider than Lua's, so a
/// tree without errors is not enough (see `refusal`); `gantry check`
/// reports this as the script's syntax error without a Lua runtime.
pub fn scan_checked(source: &str) -> (Vec<ScannedCall>, Option<Refusal>) {
    let Some(tree) = parse(source, None) else {
        return (Vec::new(), None);
    };
    let check = Check::new(
        &tree,
        source,
        0..source.len(),
        &super::refusal::Above::default(),
        true,
    );
    let (scan, refusal) = scan_chunk_checked(&tree, source, ChunkLocals::default(), check);
    (scan.calls.into_iter().map(|f| f.call).collect(), refusal)
}

/// Scans an already parsed tree of `source` (the language server keeps the
/// tree for incremental reparsing). Calls come in source order, an outer
/// call before the calls nested in its arguments. Trees with syntax errors
/// are scanned as far as they go.
pub fn scan_tree(tree: &Tree, source: &str) -> Vec<ScannedCall> {
    scan_chunk(tree, source)
        .calls
        .into_iter()
        .map(|found| found.call)
        .collect()
}

pub(crate) fn scan_chunk(tree: &Tree, source: &str) -> ChunkScan {
    let mut walker = Walker::new(source);
    walker.walk(tree.root_node());
    walker.out
}

/// [`scan_chunk`] with Lua's verdict on the chunk (see [`Check`]) from
/// the same walk: the rewriter's one pass over a tree. The tree may be a
/// run of whole top-level statements parsed on their own (the second half
/// of a chunk, [`super::split`]), scanned as if the chunk-level locals
/// `above` had been declared before them; its `main_locals` counts only
/// the run's own.
pub(crate) fn scan_chunk_checked<'a>(
    tree: &Tree,
    source: &'a str,
    above: ChunkLocals,
    check: Check<'a>,
) -> (ChunkScan, Option<Refusal>) {
    let mut walker = Walker::new(source);
    walker.hide(above);
    walker.check = Some(check);
    walker.walk(tree.root_node());
    let refusal = walker.check.take().and_then(Check::finish);
    (walker.out, refusal)
}

/// The tracked names that `tree`'s chunk-level `local`s declare (what the
/// statements after it see), from its top-level statements alone.
pub(crate) fn chunk_locals(tree: &Tree, source: &str) -> ChunkLocals {
    let mut walker = Walker::new(source);
    let mut cursor = tree.root_node().walk();
    for statement in tree.root_node().children(&mut cursor) {
        walker.declare_top_level(statement);
    }
    ChunkLocals::of(&walker.declared)
}

impl ChunkScan {
    /// This scan followed by `next`'s, of the statements after it.
    pub(crate) fn then(mut self, next: ChunkScan) -> ChunkScan {
        self.calls.extend(next.calls);
        self.main_locals += next.main_locals;
        self.main_reads_varargs |= next.main_reads_varargs;
        for (mine, theirs) in self.reassigned.iter_mut().zip(next.reassigned) {
            *mine |= theirs;
        }
        self
    }
}

/// Scans only the top-level statement of the chunk that holds byte
/// `offset` (or the one just before it), with the scope the statement sees:
/// the chunk's own `local` declarations above it are honoured, so a name
/// shadowed there is not an API call here either.
///
/// The language server answers completion and signature help with this
/// right after an edit, before the whole document is rescanned: the cost is
/// one statement's walk plus a pass over the top-level statements' kinds,
/// not a walk of every node of a 10,000-line script. The calls are exactly
/// those [`scan_tree`] reports inside that statement.
pub fn scan_around(tree: &Tree, source: &str, offset: usize) -> Vec<ScannedCall> {
    let root = tree.root_node();
    let mut walker = Walker::new(source);
    // The statement's parent, as the whole walk would have it.
    walker.ancestors.push(root);
    walker.walk_statement_at(root, offset);
    walker.into_calls()
}

/// The largest run of statements [`scan_edited`] parses on its own; past
/// it the whole document's incremental reparse is the cheaper way.
const EDITED_REGION_MAX: usize = 64 * 1024;

/// [`scan_around`] for a document whose last parse (`stale`, with every
/// edit since applied through `Tree::edit`) is behind its text: the
/// top-level statements holding the edits (`edits`, current byte offsets)
/// and `offset` are parsed on their own ([`crate::syntax::parse_range`])
/// and scanned, with the chunk-level locals of the statements above them.
///
/// A whole-document reparse costs time linear in the chunk's top-level
/// statements (3.5 ms for 10,000 lines here); this costs the edited
/// statements' parse, so a completion typed into a call is answered without
/// waiting for it. It answers only when that is sound: every edit lies
/// strictly inside the statements (their first and last bytes unchanged, so
/// the text before them, and how it ends, is what the last parse saw), the
/// last parse found no error in them or in the statement before them, and
/// they are few enough.
/// Otherwise `None`: reparse the document and use [`scan_around`].
pub fn scan_edited(
    stale: &Tree,
    source: &str,
    edits: Range<usize>,
    offset: usize,
) -> Option<Around> {
    let root = stale.root_node();
    let span = edits.start.min(offset)..edits.end.max(offset);
    let mut statements = top_level_statements(root, span.clone());
    let first = statements.next()?;
    let mut last = first;
    let mut clean = !first.has_error();
    for statement in statements {
        clean &= !statement.has_error();
        last = statement;
    }
    let region = first.start_byte()..last.end_byte();
    let inside = region.start < span.start && span.end < region.end;
    if !inside || region.len() > EDITED_REGION_MAX || region.end > source.len() {
        return None;
    }
    // Where the last parse recovered from an error, its statement
    // boundaries are guesses that the edit may change.
    if !clean || first.prev_sibling().is_some_and(|n| n.has_error()) {
        return None;
    }
    let tree = crate::syntax::parse_range(
        source,
        region.clone(),
        first.start_position(),
        last.end_position(),
    )?;
    let mut walker = Walker::new(source);
    walker.ancestors.push(tree.root_node());
    let mut cursor = root.walk();
    if cursor.goto_first_child() {
        while cursor.node().end_byte() <= region.start {
            walker.declare_top_level(cursor.node());
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    walker.walk_statement_at(tree.root_node(), offset);
    Some(Around {
        calls: walker.into_calls(),
        in_comment: comment_at(&tree, source, offset),
    })
}

/// What a request at a byte offset reads of a script: [`around`] of a
/// parsed one, [`scan_edited`] of one behind its edits.
#[derive(Debug, Clone, PartialEq)]
pub struct Around {
    /// The calls of the top-level statement at the offset ([`scan_around`]).
    pub calls: Vec<ScannedCall>,
    /// Whether the offset is inside a comment ([`comment_at`]).
    pub in_comment: bool,
}

/// [`scan_around`] and [`comment_at`] of `tree` at byte `offset`.
pub fn around(tree: &Tree, source: &str, offset: usize) -> Around {
    Around {
        calls: scan_around(tree, source, offset),
        in_comment: comment_at(tree, source, offset),
    }
}

/// Whether typing at byte `offset` would write into a comment: the byte
/// before it belongs to a comment that `offset` does not close off (a line
/// comment runs to its line's end; a long comment `--[[ ... ]]` ends before
/// its closing bracket). An unterminated long comment is no comment here:
/// tree-sitter reads its opener as an error and the rest as code.
///
/// The language server asks this before it answers from a lexer of the
/// current line (its fallback while a string is unterminated), which cannot
/// see a long comment opened lines above.
pub fn comment_at(tree: &Tree, source: &str, offset: usize) -> bool {
    let Some(before) = offset.checked_sub(1) else {
        return false;
    };
    let k = &*KINDS;
    let Some(n) = super::innermost_enclosing(tree, before, offset, |n| n.kind_id() == k.comment)
    else {
        return false;
    };
    let text = source.get(n.byte_range()).unwrap_or("");
    let closed = text.strip_prefix("--[").is_some_and(|rest| {
        let level = rest.len() - rest.trim_start_matches('=').len();
        let close = format!("]{}]", "=".repeat(level));
        rest[level..].starts_with('[') && rest[level + 1..].ends_with(&close)
    });
    n.start_byte() < offset && (offset < n.end_byte() || !closed)
}

/// The tracked names (API functions, `GMP`, `_ENV`, `_G`, `load`) that chunk-level
/// `local`s declare: once declared at the chunk's top level, such a name
/// hides the API for every later statement, so an incremental rescan must
/// know which statements above a changed region declare one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ChunkLocals(u32);

impl ChunkLocals {
    /// No tracked name declared.
    pub const NONE: ChunkLocals = ChunkLocals(0);

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn union(self, other: ChunkLocals) -> ChunkLocals {
        ChunkLocals(self.0 | other.0)
    }

    /// The names a walker's `declared` list (tracked indices) holds.
    fn of(declared: &[u8]) -> ChunkLocals {
        declared
            .iter()
            .fold(ChunkLocals::NONE, |acc, &i| acc.with(usize::from(i)))
    }

    fn with(self, index: usize) -> ChunkLocals {
        ChunkLocals(self.0 | (1 << index))
    }

    fn indices(self) -> impl Iterator<Item = usize> {
        (0..TRACKED).filter(move |i| self.0 & (1 << i) != 0)
    }
}

/// What [`scan_statements`] found in a run of top-level statements.
#[derive(Debug, Default)]
pub struct StatementsScan {
    /// The calls, exactly as [`scan_tree`] reports them for those statements.
    pub calls: Vec<ScannedCall>,
    /// The byte range from the first scanned statement's start to the last
    /// one's end; `None` when no statement overlapped the range.
    pub covered: Option<Range<usize>>,
    /// Each scanned top-level statement that declares tracked chunk-level
    /// locals (its byte range), with the names it declares.
    pub declarations: Vec<(Range<usize>, ChunkLocals)>,
}

/// The chunk's top-level statements (the children of `root`, comments and
/// error nodes included) that overlap `range`, ends inclusive: a statement
/// ending where `range` starts is one of them.
pub fn top_level_statements<'t>(
    root: Node<'t>,
    range: Range<usize>,
) -> impl Iterator<Item = Node<'t>> {
    let mut cursor = root.walk();
    // The first child ending at or after `range.start`.
    let found = if range.start == 0 {
        cursor.goto_first_child()
    } else {
        cursor.goto_first_child_for_byte(range.start - 1).is_some()
    };
    let mut done = !found;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let node = cursor.node();
        if node.start_byte() > range.end {
            done = true;
            return None;
        }
        done = !cursor.goto_next_sibling();
        Some(node)
    })
}

/// Scans the chunk's top-level statements (the root's children: comments
/// and error nodes included) that overlap `range`, ends inclusive, as if
/// the chunk-level locals `above` had been declared before them.
///
/// This is the unit of an incremental rescan: a statement's calls depend
/// only on its own subtree, its text and the chunk-level locals declared
/// above it, so the language server rescans just the statements an edit
/// touched (seeding `above` from the declarations it kept) and keeps every
/// other call. Over the whole chunk (`0..source.len()`, [`ChunkLocals::NONE`])
/// the calls equal [`scan_tree`]'s.
pub fn scan_statements(
    tree: &Tree,
    source: &str,
    range: Range<usize>,
    above: ChunkLocals,
) -> StatementsScan {
    let root = tree.root_node();
    let mut walker = Walker::new(source);
    walker.ancestors.push(root);
    walker.hide(above);
    let mut out = StatementsScan::default();
    for statement in top_level_statements(root, range) {
        let mark = walker.declared.len();
        walker.walk(statement);
        // Every scope the statement opened is closed again, so whatever
        // it left in `declared` is a chunk-level local.
        let declared = ChunkLocals::of(&walker.declared[mark..]);
        if !declared.is_empty() {
            out.declarations.push((statement.byte_range(), declared));
        }
        let start = out
            .covered
            .as_ref()
            .map_or(statement.start_byte(), |c| c.start);
        out.covered = Some(start..statement.end_byte());
    }
    out.calls = walker.into_calls();
    out
}

struct Walker<'a, 't> {
    source: &'a str,
    k: &'static Kinds,
    /// How many locals in scope currently carry each tracked name.
    shadow: [u32; TRACKED],
    /// Tracked names declared in the open scopes, innermost last.
    declared: Vec<u8>,
    /// Open scopes: the node that opened it and its mark in `declared`.
    frames: Vec<(usize, usize)>,
    /// The nodes entered and not yet left (the cursor's path).
    ancestors: Vec<Node<'t>>,
    /// Nesting depth of function bodies; 0 is the main chunk.
    fn_depth: usize,
    out: ChunkScan,
    /// Lua's verdict on the chunk, when the rewriter asks for it.
    check: Option<Check<'a>>,
}

impl<'a, 't> Walker<'a, 't> {
    fn new(source: &'a str) -> Self {
        Walker {
            source,
            k: &KINDS,
            shadow: [0; TRACKED],
            declared: Vec::new(),
            frames: Vec::new(),
            ancestors: Vec::new(),
            fn_depth: 0,
            out: ChunkScan {
                calls: Vec::new(),
                main_locals: 0,
                main_reads_varargs: false,
                reassigned: [false; TRACKED],
            },
            check: None,
        }
    }

    /// As if chunk-level locals named `above` had been declared before
    /// the statements walked next.
    fn hide(&mut self, above: ChunkLocals) {
        for index in above.indices() {
            self.shadow[index] += 1;
        }
    }

    /// Visits `top` and everything under it, iteratively (a script of
    /// 10,000 nested concatenations must not overflow the stack).
    fn walk(&mut self, top: Node<'t>) {
        let mut cursor = top.walk();
        'walk: loop {
            let node = cursor.node();
            let descend = self.enter(node);
            if let Some(check) = &mut self.check {
                check.enter(node);
                debug_assert_eq!(descend && node.child_count() > 0, descends(node));
            }
            if descend && cursor.goto_first_child() {
                continue;
            }
            loop {
                self.leave(cursor.node());
                if let Some(check) = &mut self.check {
                    check.leave(cursor.node());
                }
                // A cursor made from `top` cannot leave it: `top` has no
                // sibling and no parent as far as this cursor knows.
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }

    /// Walks the top-level statement of `root` that holds byte `offset`
    /// (or ends right at it), after declaring the chunk-level locals of
    /// the statements before it.
    fn walk_statement_at(&mut self, root: Node<'t>, offset: usize) {
        let mut cursor = root.walk();
        if !cursor.goto_first_child() {
            return;
        }
        loop {
            let statement = cursor.node();
            if statement.start_byte() > offset {
                return;
            }
            if statement.end_byte() >= offset {
                self.walk(statement);
                return;
            }
            self.declare_top_level(statement);
            if !cursor.goto_next_sibling() {
                return;
            }
        }
    }

    fn into_calls(self) -> Vec<ScannedCall> {
        self.out.calls.into_iter().map(|found| found.call).collect()
    }

    /// What a top-level statement above the scanned one adds to the
    /// chunk's scope: its `local` names (the rest of it is not walked).
    fn declare_top_level(&mut self, statement: Node<'t>) {
        let k = self.k;
        let kind = statement.kind_id();
        if !self.first_child_is_local(statement) {
            return;
        }
        if kind == k.variable_declaration {
            self.declare_local_statement(statement);
        } else if kind == k.function_declaration
            && let Some(name) = statement.child_by_field_id(k.field_name)
        {
            self.declare(name);
        }
    }

    /// Called before a node's children; returns whether to visit them.
    fn enter(&mut self, node: Node<'t>) -> bool {
        let k = self.k;
        let kind = node.kind_id();
        let parent_kind = self.ancestors.last().map(|p| p.kind_id());
        self.ancestors.push(node);
        if kind == k.identifier {
            self.note_reference();
        } else if kind == k.function_call {
            self.call(node);
        } else if kind == k.string || kind == k.comment {
            return false;
        } else if kind == k.block {
            if parent_kind == Some(k.for_statement) {
                self.push_frame(node);
                self.declare_for_names();
            } else if parent_kind != Some(k.repeat_statement) {
                // A `repeat` body's locals stay visible in its `until`
                // condition, so the repeat statement holds that scope.
                self.push_frame(node);
            }
        } else if kind == k.repeat_statement {
            self.push_frame(node);
        } else if kind == k.function_definition || kind == k.function_declaration {
            if kind == k.function_declaration
                && let Some(name) = node.child_by_field_id(k.field_name)
            {
                if self.first_child_is_local(node) {
                    // `local function f` is in scope in its own body.
                    self.declare(name);
                } else {
                    self.note_global_write(name);
                }
            }
            self.fn_depth += 1;
            self.push_frame(node);
        } else if kind == k.parameters {
            let mut cursor = node.walk();
            for param in node.named_children(&mut cursor) {
                if param.kind_id() == k.identifier {
                    self.declare(param);
                }
            }
            return false;
        } else if kind == k.assignment_statement && parent_kind != Some(k.variable_declaration) {
            self.note_assignment(node);
        } else if kind == k.vararg_expression && self.fn_depth == 0 {
            self.out.main_reads_varargs = true;
        }
        true
    }

    /// Called after a node's children.
    fn leave(&mut self, node: Node<'t>) {
        let k = self.k;
        let kind = node.kind_id();
        self.ancestors.pop();
        if kind == k.variable_declaration && self.first_child_is_local(node) {
            // `local x = x`: the new local is in scope only after the statement.
            self.declare_local_statement(node);
        } else if kind == k.function_definition || kind == k.function_declaration {
            self.fn_depth = self.fn_depth.saturating_sub(1);
        }
        if self.frames.last().is_some_and(|&(id, _)| id == node.id()) {
            self.pop_frame();
        }
    }

    fn first_child_is_local(&self, node: Node<'_>) -> bool {
        node.child(0)
            .is_some_and(|c| c.kind_id() == self.k.local_kw)
    }

    fn push_frame(&mut self, node: Node<'_>) {
        self.frames.push((node.id(), self.declared.len()));
    }

    fn pop_frame(&mut self) {
        if let Some((_, mark)) = self.frames.pop() {
            for index in self.declared.drain(mark..) {
                let count = &mut self.shadow[usize::from(index)];
                *count = count.saturating_sub(1);
            }
        }
    }

    /// Brings the local named by identifier `name` into the current scope.
    fn declare(&mut self, name: Node<'_>) {
        if self.fn_depth == 0 {
            self.out.main_locals += 1;
        }
        let Some(text) = self.source.get(name.byte_range()) else {
            return;
        };
        if let Some(index) = tracked_index(text) {
            self.shadow[index] += 1;
            // TRACKED < 256, so the index fits.
            self.declared.push(index as u8);
        }
    }

    /// `local a <const>, b = ...`: declares the names, not the attributes.
    fn declare_local_statement(&mut self, node: Node<'_>) {
        let k = self.k;
        let mut list = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind_id() == k.variable_list {
                list = Some(child);
            } else if child.kind_id() == k.assignment_statement {
                let mut inner = child.walk();
                list = child
                    .named_children(&mut inner)
                    .find(|c| c.kind_id() == k.variable_list);
            }
        }
        let Some(list) = list else { return };
        let mut cursor = list.walk();
        if !cursor.goto_first_child() {
            return;
        }
        loop {
            let child = cursor.node();
            if cursor.field_id().map(|f| f.get()) == Some(k.field_name)
                && child.kind_id() == k.identifier
            {
                self.declare(child);
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }

    /// The control variables of the `for` whose body is being entered.
    fn declare_for_names(&mut self) {
        let k = self.k;
        let Some(for_node) = self
            .ancestors
            .len()
            .checked_sub(2)
            .map(|i| self.ancestors[i])
        else {
            return;
        };
        if self.fn_depth == 0 {
            self.out.main_locals += FOR_HIDDEN_LOCALS;
        }
        let Some(clause) = for_node.child_by_field_id(k.field_clause) else {
            return;
        };
        let mut names = Vec::new();
        if clause.kind_id() == k.for_numeric_clause {
            names.extend(clause.child_by_field_id(k.field_name));
        } else if clause.kind_id() == k.for_generic_clause {
            let mut cursor = clause.walk();
            if let Some(list) = clause
                .named_children(&mut cursor)
                .find(|c| c.kind_id() == k.variable_list)
            {
                let mut inner = list.walk();
                names.extend(
                    list.named_children(&mut inner)
                        .filter(|n| n.kind_id() == k.identifier),
                );
            }
        }
        for name in names {
            self.declare(name);
        }
    }

    /// `a, GMP.RunHook = ...`: notes every assigned target.
    fn note_assignment(&mut self, node: Node<'_>) {
        let k = self.k;
        let mut cursor = node.walk();
        let Some(list) = node
            .named_children(&mut cursor)
            .find(|c| c.kind_id() == k.variable_list)
        else {
            return;
        };
        let mut inner = list.walk();
        let targets: Vec<Node<'_>> = list.named_children(&mut inner).collect();
        for target in targets {
            self.note_global_write(target);
        }
    }

    /// Marks a tracked name written as a global, or as a field of the
    /// environment or `GMP` (as [`Walker::holder_of`] sees them); a
    /// computed key (`GMP[name] = f`) may write any of their fields.
    fn note_global_write(&mut self, target: Node<'_>) {
        let k = self.k;
        if target.kind_id() == k.identifier {
            let text = self.text(target);
            if let Some(i) =
                tracked_index(text).filter(|&i| self.shadow[i] == 0 && self.shadow[ENV] == 0)
            {
                self.out.reassigned[i] = true;
            }
            return;
        }
        let Some((table, key)) = self.index_parts(target) else {
            return;
        };
        let Some(holder) = self.holder_of(table) else {
            return;
        };
        match key {
            Key::Name(name) => {
                if let Some(i) = tracked_index(&name) {
                    self.out.reassigned[i] = true;
                }
            }
            Key::NotAName => {}
            Key::Unknown => self.out.reassigned[holder] = true,
        }
    }

    /// The table and key of an index expression (`t.k`, `t[k]`, `t:k`).
    fn index_parts<'n>(&self, node: Node<'n>) -> Option<(Node<'n>, Key<'a>)> {
        let k = self.k;
        let kind = node.kind_id();
        let table = node.child_by_field_id(k.field_table)?;
        let name = |field| {
            node.child_by_field_id(field)
                .filter(|n| n.kind_id() == k.identifier)
                .map_or(Key::Unknown, |n| Key::Name(Cow::Borrowed(self.text(n))))
        };
        let key = if kind == k.dot_index_expression {
            name(k.field_field)
        } else if kind == k.method_index_expression {
            name(k.field_method)
        } else if kind == k.bracket_index_expression {
            match node
                .child_by_field_id(k.field_field)
                .and_then(|n| literal_of(n, self.source))
            {
                Some(Literal::Str(s)) => Key::Name(Cow::Owned(s)),
                Some(_) => Key::NotAName,
                None => Key::Unknown,
            }
        } else {
            return None;
        };
        Some((table, key))
    }

    /// [`ENV`] if `node` is, as written, the script's environment (`_ENV`,
    /// `_G`, `_G._G`, `_ENV["_G"]`), [`GMP`] if it is the environment's
    /// `GMP` (`GMP`, `_G.GMP`); `None` for anything else, a local of
    /// those names included.
    fn holder_of(&self, node: Node<'_>) -> Option<usize> {
        let k = self.k;
        let is_index = |n: Node<'_>| {
            n.kind_id() == k.dot_index_expression || n.kind_id() == k.bracket_index_expression
        };
        let mut root = node;
        while is_index(root) {
            root = root.child_by_field_id(k.field_table)?;
        }
        if root.kind_id() != k.identifier {
            return None;
        }
        let mut holder = self.holder_named(self.text(root))?;
        // Iteratively, innermost key first: `_G._G._G...` may be long.
        let mut chain = Vec::new();
        let mut at = node;
        while at != root {
            let (table, key) = self.index_parts(at)?;
            chain.push(key);
            at = table;
        }
        for key in chain.iter().rev() {
            holder = holder_field(holder, key)?;
        }
        Some(holder)
    }

    /// The holder (see [`Walker::holder_of`]) a name refers to where it
    /// stands, if any.
    fn holder_named(&self, name: &str) -> Option<usize> {
        let env_visible = self.shadow[ENV] == 0;
        match name {
            "_ENV" => env_visible.then_some(ENV),
            "_G" => (env_visible && self.shadow[G] == 0).then_some(ENV),
            "GMP" => (env_visible && self.shadow[GMP] == 0).then_some(GMP),
            _ => None,
        }
    }

    /// Called on entering an identifier (the last of `ancestors`): if it
    /// reads `load`, or the environment or `GMP` in a way the scanner
    /// cannot follow, marks everything in it as possibly replaced (see the
    /// module documentation). Writes through them are
    /// [`Walker::note_global_write`]'s.
    fn note_reference(&mut self) {
        let k = self.k;
        let Some(last) = self.ancestors.len().checked_sub(1) else {
            return;
        };
        let ident = self.ancestors[last];
        let name = self.text(ident);
        if !matches!(name, "_G" | "_ENV" | "GMP" | "load") {
            return;
        }
        let Some(parent) = last.checked_sub(1).map(|i| self.ancestors[i]) else {
            return;
        };
        if !self.is_read(ident, parent) {
            return;
        }
        if name == "load" {
            if self.shadow[LOAD] == 0 && self.shadow[ENV] == 0 {
                self.out.reassigned[ENV] = true;
            }
            return;
        }
        let Some(mut holder) = self.holder_named(name) else {
            return;
        };
        // Climb to the largest expression that is still a holder
        // (`_G._G.GMP`), then see what is done with it.
        let mut at = last;
        let escapes = loop {
            let node = self.ancestors[at];
            let Some(up) = at.checked_sub(1) else {
                break true;
            };
            let parent = self.ancestors[up];
            let pk = parent.kind_id();
            if parent.child_by_field_id(k.field_table) != Some(node) {
                // An alias, an argument, an operand, a table field's value...
                break true;
            }
            if pk == k.method_index_expression {
                // `function GMP:F() end` writes a field; `GMP:F()` passes
                // the holder itself as `self`.
                break !self.is_write_target(up);
            }
            if pk != k.dot_index_expression && pk != k.bracket_index_expression {
                break true;
            }
            if self.is_write_target(up) {
                break false;
            }
            let Some((_, key)) = self.index_parts(parent) else {
                break true;
            };
            if let Some(next) = holder_field(holder, &key) {
                holder = next;
                at = up;
                continue;
            }
            // A field read: harmless unless it may be `load` (or, computed,
            // `_G`). A computed read of `GMP` yields one of its fields.
            break holder == ENV
                && match key {
                    Key::Name(name) => name == "load",
                    Key::NotAName => false,
                    Key::Unknown => true,
                };
        };
        if escapes {
            self.out.reassigned[holder] = true;
        }
    }

    /// Whether identifier `ident`, a child of `parent`, is read as a
    /// variable (not a field or method name, a declared or assigned name,
    /// a table constructor's key name, an attribute or a label).
    fn is_read(&self, ident: Node<'_>, parent: Node<'_>) -> bool {
        let k = self.k;
        let pk = parent.kind_id();
        if pk == k.dot_index_expression || pk == k.method_index_expression {
            parent.child_by_field_id(k.field_table) == Some(ident)
        } else if pk == k.for_numeric_clause {
            parent.child_by_field_id(k.field_name) != Some(ident)
        } else if pk == k.table_field {
            // `{ name = v }` names a key; `{ [name] = v }` and `{ name }` read it.
            parent.child_by_field_id(k.field_value) == Some(ident)
                || parent.child(0).is_some_and(|c| c.kind_id() == k.lbracket)
        } else {
            pk != k.variable_list
                && pk != k.attribute
                && pk != k.function_declaration
                && pk != k.parameters
                && pk != k.goto_statement
                && pk != k.label_statement
        }
    }

    /// Whether `ancestors[at]` (an index expression) is assigned to: a
    /// target of an assignment or the name of a `function` statement.
    fn is_write_target(&self, at: usize) -> bool {
        let k = self.k;
        let node = self.ancestors[at];
        let Some(parent) = at.checked_sub(1).map(|i| self.ancestors[i]) else {
            return false;
        };
        parent.kind_id() == k.variable_list
            || (parent.kind_id() == k.function_declaration
                && parent.child_by_field_id(k.field_name) == Some(node))
    }

    fn text(&self, node: Node<'_>) -> &'a str {
        self.source.get(node.byte_range()).unwrap_or("")
    }

    /// Records `node` if it is a call of an API function that Lua would
    /// resolve to the API (not shadowed, not a method or foreign field).
    fn call(&mut self, node: Node<'_>) {
        let k = self.k;
        let (Some(callee), Some(arg_list)) = (
            node.child_by_field_id(k.field_name),
            node.child_by_field_id(k.field_arguments),
        ) else {
            return;
        };
        let (function, via_gmp) = if callee.kind_id() == k.identifier {
            match ApiFunction::from_name(self.text(callee)) {
                Some(f)
                    if !f.gmp_only() && self.shadow[api_index(f)] == 0 && self.shadow[ENV] == 0 =>
                {
                    (f, false)
                }
                _ => return,
            }
        } else if callee.kind_id() == k.dot_index_expression {
            let (Some(table), Some(field)) = (
                callee.child_by_field_id(k.field_table),
                callee.child_by_field_id(k.field_field),
            ) else {
                return;
            };
            if table.kind_id() != k.identifier
                || self.text(table) != "GMP"
                || self.shadow[GMP] != 0
                || self.shadow[ENV] != 0
                || field.kind_id() != k.identifier
            {
                return;
            }
            match ApiFunction::from_name(self.text(field)) {
                Some(f) => (f, true),
                None => return,
            }
        } else {
            return;
        };

        let mut args = Vec::new();
        let mut commas = Vec::new();
        let mut parenthesized = false;
        let mut cursor = arg_list.walk();
        for child in arg_list.children(&mut cursor) {
            let kind = child.kind_id();
            if kind == k.lparen {
                parenthesized = true;
            } else if kind == k.comma {
                commas.push(child.start_byte());
            } else if child.is_named() && !child.is_extra() {
                args.push(self.arg(child));
            }
        }
        self.out.calls.push(Found {
            call: ScannedCall {
                function,
                via_gmp,
                call: span_of(node),
                callee: span_of(callee),
                arg_list: span_of(arg_list),
                args,
            },
            commas,
            parenthesized,
        });
    }

    fn arg(&self, node: Node<'_>) -> ScannedArg {
        let k = self.k;
        let function_params = (node.kind_id() == k.function_definition).then(|| {
            let Some(params) = node.child_by_field_id(k.field_parameters) else {
                return Vec::new();
            };
            let mut cursor = params.walk();
            params
                .named_children(&mut cursor)
                .filter_map(|p| {
                    if p.kind_id() == k.identifier {
                        Some(self.text(p).to_owned())
                    } else if p.kind_id() == k.vararg_expression {
                        Some("...".to_owned())
                    } else {
                        None
                    }
                })
                .collect()
        });
        ScannedArg {
            span: span_of(node),
            literal: literal_of(node, self.source),
            function_params,
        }
    }
}

/// The key of an index expression, as far as the source tells.
enum Key<'s> {
    /// A name or a string literal: `t.k`, `t["k"]`.
    Name(Cow<'s, str>),
    /// A literal that is not a string (`t[1]`): no name.
    NotAName,
    /// Computed: may be any name.
    Unknown,
}

/// What field `key` of a holder (see [`Walker::holder_of`]) is, if a
/// holder again: the environment's `_G` is the environment, its `GMP` is `GMP`.
fn holder_field(holder: usize, key: &Key<'_>) -> Option<usize> {
    match key {
        Key::Name(name) if holder == ENV => match name.as_ref() {
            "_G" => Some(ENV),
            "GMP" => Some(GMP),
            _ => None,
        },
        _ => None,
    }
}

/// The shadow-counter index of a name the scanner cares about.
fn tracked_index(name: &str) -> Option<usize> {
    match name {
        "GMP" => return Some(GMP),
        "_ENV" => return Some(ENV),
        "_G" => return Some(G),
        "load" => return Some(LOAD),
        _ => {}
    }
    ApiFunction::ALL.iter().position(|f| f.name() == name)
}

pub(crate) fn api_index(function: ApiFunction) -> usize {
    ApiFunction::ALL
        .iter()
        .position(|&f| f == function)
        .unwrap_or(GMP)
}

/// The span of a node: byte offsets and 0-based line / byte column.
pub(crate) fn span_of(node: Node<'_>) -> Span {
    Span {
        start: node.start_byte(),
        end: node.end_byte(),
        start_pos: pos_of(node.start_position()),
        end_pos: pos_of(node.end_position()),
    }
}

/// A tree-sitter point as a [`Pos`] (0-based line / byte column).
pub fn pos_of(point: tree_sitter::Point) -> Pos {
    Pos {
        line: u32::try_from(point.row).unwrap_or(u32::MAX),
        column: u32::try_from(point.column).unwrap_or(u32::MAX),
    }
}

#[cfg(test)]
mod tests;
