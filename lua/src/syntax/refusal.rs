//! Whether Lua 5.4 would refuse a chunk, from its tree-sitter parse.
//!
//! The rewriter must leave a chunk Lua refuses exactly as written, so Lua
//! reports its own error at the author's line. A tree without `ERROR` or
//! `MISSING` nodes is not enough: tree-sitter-lua accepts more than Lua 5.4.
//! - Its tokens are not always Lua's (see [`super::lexer`]): a `#` line
//!   after a space or a comment is a "shebang" to it, a reserved word where
//!   no keyword fits is a name (`local nil`, `end""`), a line comment's text
//!   may start with a `--[[ ]]` comment and run on past the line break.
//!   Every token of the tree is read again with Lua's lexer at its offset
//!   and must be the same token, and only Lua's spaces may lie between.
//! - Its grammar is Lua 5.5's: `global` declarations, `local <const> x`,
//!   a named vararg parameter `...t`.
//! - Lua's parser refuses more than its grammar does: a `goto` with no
//!   visible label or into the scope of a local, a label defined twice, a
//!   `break` outside a loop, `...` outside a vararg function, an attribute
//!   other than `const` and `close` or two `close` in one statement, an
//!   assignment to a `const` or `close` local, more than 200 locals in one
//!   function. The walk keeps the parser's own bookkeeping (blocks, active
//!   locals, labels, pending gotos) to decide these as it does.
//!
//! Not mirrored: the limits of Lua's code generator (254 registers and 255
//! upvalues per function) and of the C stack at load (200 levels, fewer
//! when loaded from deep in a call; only nesting past 200 levels of blocks
//! is refused here, which no caller can load). A chunk over them is
//! refused by Lua once rewritten as well, for the same reason at the same
//! line: the edits change no nesting and never take a register or an
//! upvalue away (see `registers` for the other way round).

use std::ops::Range;

use rustc_hash::FxHashMap;
use tree_sitter::{Node, Tree};

use super::kinds::{KINDS, Kinds};
use super::lexer::{self, Token};

/// Lua's limit on the locals of one function (`MAXVARS`).
const MAX_LOCALS: usize = 200;

/// Lua refuses a chunk nested deeper than this many levels (statements
/// and expressions, `LUAI_MAXCCALLS`) whatever loads it. A loop opens two
/// blocks per level, so more than twice as many open blocks is past it.
const MAX_LEVELS: usize = 200;

/// Lua 5.4 keeps hidden control variables for each loop, counted against
/// the function's locals: three for a numeric `for`, four for a generic one.
const NUMERIC_FOR_HIDDEN: usize = 3;
const GENERIC_FOR_HIDDEN: usize = 4;

/// Where Lua would refuse a chunk (a byte offset) and why: for the log,
/// and for `gantry check`'s syntax errors ([`super::scan_checked`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub at: usize,
    pub why: &'static str,
}

/// What the statements after a cut of a chunk see of its top level before
/// the cut (see `split`): its locals, in order, and its labels.
#[derive(Debug, Default)]
pub(crate) struct Above<'s> {
    /// Each name, and whether it is `<const>` or `<close>`.
    locals: Vec<(&'s str, bool)>,
    labels: Vec<&'s str>,
}

/// Why Lua would refuse `source`, parsed as `tree`; `None` if it would
/// load it. The rewriter gets the same verdict from [`Check`] riding on
/// its scan, which walks the tree anyway.
#[cfg(test)]
pub(crate) fn refusal(tree: &Tree, source: &str) -> Option<Refusal> {
    let mut check = Check::new(tree, source, 0..source.len(), &Above::default(), true);
    let mut cursor = tree.walk();
    'walk: loop {
        let node = cursor.node();
        check.enter(node);
        if descends(node) && cursor.goto_first_child() {
            continue;
        }
        loop {
            check.leave(cursor.node());
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    check.finish()
}

/// Whether a walk feeding a [`Check`] visits `node`'s children: not those
/// of a token, a string, a comment or a parameter list (the check reads
/// those whole), as the scanner's walk does.
pub(crate) fn descends(node: Node<'_>) -> bool {
    let k = &*KINDS;
    let kind = node.kind_id();
    node.child_count() > 0
        && kind != k.string
        && kind != k.comment
        && kind != k.number
        && kind != k.parameters
}

/// Lua's verdict on a chunk (or a run of its top-level statements),
/// built up as a walk of its tree enters and leaves every node it visits,
/// children after [`descends`]: the scanner's walk carries it, so the
/// rewriter walks each tree once.
pub(crate) struct Check<'s> {
    checker: Checker<'s>,
    end: usize,
    refused: Option<Refusal>,
}

impl<'s> Check<'s> {
    /// A check of `range` of `source`, parsed on its own as `tree`
    /// (positions the document's), with `above` declared before it.
    /// `ends_chunk` is false for a run the chunk continues after: a label
    /// at its end is not at the chunk's end, and a `goto` to a label beyond
    /// the run is refused (a whole-chunk check decides).
    pub(crate) fn new(
        tree: &Tree,
        source: &'s str,
        range: Range<usize>,
        above: &Above<'s>,
        ends_chunk: bool,
    ) -> Self {
        let root = tree.root_node();
        let mut checker = Checker::new(source, range.start, ends_chunk);
        checker.open_function(true);
        for &name in &above.labels {
            checker.add_label(name);
        }
        let mut refused = above
            .locals
            .iter()
            .try_for_each(|&(name, readonly)| checker.declare(name, readonly, range.start))
            .err();
        if root.has_error() {
            refused = Some(Refusal {
                at: first_error(root).unwrap_or(range.start),
                why: "syntax error",
            });
        }
        Check {
            checker,
            end: range.end,
            refused,
        }
    }

    /// Before `node`'s children.
    pub(crate) fn enter(&mut self, node: Node<'_>) {
        if self.refused.is_none() {
            self.refused = self.checker.enter(node).err();
        }
    }

    /// After `node`'s children.
    pub(crate) fn leave(&mut self, node: Node<'_>) {
        if self.refused.is_none() {
            self.refused = self.checker.leave(node).err();
        }
    }

    /// The verdict, once the walk has left the root.
    pub(crate) fn finish(self) -> Option<Refusal> {
        self.refused.or_else(|| self.checker.gap(self.end).err())
    }
}

/// The top-level locals and labels of `tree`'s chunk, which the statements
/// after it see.
pub(crate) fn above<'s>(tree: &Tree, source: &'s str) -> Above<'s> {
    let k = &*KINDS;
    let text = |n: Node<'_>| source.get(n.byte_range()).unwrap_or("");
    let mut out = Above::default();
    let root = tree.root_node();
    let mut cursor = root.walk();
    for statement in root.named_children(&mut cursor) {
        let kind = statement.kind_id();
        let local = statement
            .child(0)
            .is_some_and(|c| c.kind_id() == k.local_kw);
        if kind == k.label_statement {
            out.labels.extend(statement.named_child(0).map(text));
        } else if kind == k.function_declaration && local {
            let name = statement.child_by_field_id(k.field_name);
            out.locals.extend(name.map(|n| (text(n), false)));
        } else if kind == k.variable_declaration && local {
            for (name, attribute) in declared_names(statement) {
                out.locals.push((text(name), attribute.is_some()));
            }
        }
    }
    out
}

/// The names a `local` statement declares, each with its attribute node.
fn declared_names(declaration: Node<'_>) -> Vec<(Node<'_>, Option<Node<'_>>)> {
    let k = &*KINDS;
    let mut cursor = declaration.walk();
    let list = declaration.named_children(&mut cursor).find_map(|c| {
        if c.kind_id() == k.variable_list {
            Some(c)
        } else if c.kind_id() == k.assignment_statement {
            c.named_child(0).filter(|l| l.kind_id() == k.variable_list)
        } else {
            None
        }
    });
    let mut names: Vec<(Node<'_>, Option<Node<'_>>)> = Vec::new();
    let Some(list) = list else {
        return names;
    };
    let mut cursor = list.walk();
    for child in list.named_children(&mut cursor) {
        if child.kind_id() == k.attribute {
            if let Some(last) = names.last_mut().filter(|(_, a)| a.is_none()) {
                last.1 = Some(child);
            } else {
                // `local <const> x` (Lua 5.5): an attribute with no name
                // before it; the checker refuses it, others skip it.
                names.push((child, Some(child)));
            }
        } else if child.kind_id() == k.identifier {
            names.push((child, None));
        }
    }
    names
}

/// The offset of the first `ERROR` or `MISSING` node, for the log.
fn first_error(root: Node<'_>) -> Option<usize> {
    let mut node = root;
    'descend: loop {
        if node.is_error() || node.is_missing() {
            return Some(node.start_byte());
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.has_error() {
                node = child;
                continue 'descend;
            }
        }
        return None;
    }
}

/// A `goto` (or `break`, a goto to its loop's end) whose label is not
/// known yet, as Lua's `Labeldesc`: the active locals where it jumps from,
/// lowered to a block's entry as it leaves the block; `landed` once a
/// label takes it.
struct Goto<'s> {
    name: &'s str,
    nactvar: usize,
    at: usize,
    landed: bool,
}

/// An open block, as Lua's `BlockCnt`: what to drop when it closes.
struct Block {
    nactvar: usize,
    first_label: usize,
    first_goto: usize,
    is_loop: bool,
    /// A function's own block: a goto still pending there has no label.
    outermost: bool,
    /// A label a pending goto jumps to past a local: Lua allows that only
    /// when nothing but labels and `;` follow it to the block's end, so
    /// the next statement refuses the chunk.
    label_past_local: Option<usize>,
}

struct Function {
    first_local: usize,
    vararg: bool,
}

/// Lua's parser bookkeeping, kept in time linear in the chunk: a hostile
/// chunk may hold a million labels, gotos or locals.
struct Checker<'s> {
    source: &'s str,
    k: &'static Kinds,
    /// Lua's lexer reads the tree's tokens up to here.
    lexed: usize,
    ends_chunk: bool,
    scratch: Vec<u8>,
    /// The nodes entered and not yet left that have children: id and kind.
    ancestors: Vec<(usize, u16)>,
    /// Active locals of every open function, innermost last.
    locals: Vec<&'s str>,
    /// For each name, whether each active local of that name is read-only
    /// (`<const>` or `<close>`), innermost last.
    readonly: FxHashMap<&'s str, Vec<bool>>,
    /// Labels of the open blocks, with the index of their function.
    labels: Vec<(usize, &'s str)>,
    /// How many of `labels` each (function, name) has.
    label_count: FxHashMap<(usize, &'s str), u32>,
    gotos: Vec<Goto<'s>>,
    /// Indices into `gotos` of the pending gotos of each name.
    pending: FxHashMap<&'s str, Vec<usize>>,
    blocks: Vec<Block>,
    functions: Vec<Function>,
}

type Checked = Result<(), Refusal>;

fn refuse(at: usize, why: &'static str) -> Checked {
    Err(Refusal { at, why })
}

impl<'s> Checker<'s> {
    fn new(source: &'s str, start: usize, ends_chunk: bool) -> Self {
        Checker {
            source,
            k: &KINDS,
            lexed: start,
            ends_chunk,
            scratch: Vec::new(),
            ancestors: Vec::new(),
            locals: Vec::new(),
            readonly: FxHashMap::default(),
            labels: Vec::new(),
            label_count: FxHashMap::default(),
            gotos: Vec::new(),
            pending: FxHashMap::default(),
            blocks: Vec::new(),
            functions: Vec::new(),
        }
    }

    fn text(&self, node: Node<'_>) -> &'s str {
        self.source.get(node.byte_range()).unwrap_or("")
    }

    /// Checks `node` on the way down.
    fn enter(&mut self, node: Node<'_>) -> Checked {
        let k = self.k;
        let kind = node.kind_id();
        let at = node.start_byte();
        let parent = self.ancestors.last().map(|&(_, kind)| kind);
        let whole = kind == k.string || kind == k.comment || kind == k.number;
        let children = node.child_count();
        // The chunk itself is never a token, even with nothing in it.
        if parent.is_some() && (children == 0 || whole) {
            self.token(node)?;
        }
        if let Some(label) = self.block().label_past_local
            && self.is_statement(kind, parent)
            && kind != k.label_statement
            && kind != k.empty_statement
        {
            refuse(label, "goto jumps into the scope of a local")?;
        }
        if kind == k.break_statement {
            self.pend("break", at);
        } else if kind == k.vararg_expression {
            if parent != Some(k.parameters) && !self.function().vararg {
                refuse(at, "'...' outside a vararg function")?;
            }
        } else if kind == k.function_definition {
            self.open_function(false);
        } else if kind == k.function_declaration {
            self.function_declaration(node)?;
        } else if kind == k.parameters {
            self.parameters(node)?;
        } else if kind == k.block {
            if !self.is_own_block(parent) {
                self.open_block(false);
            }
        } else if kind == k.while_statement || kind == k.for_statement {
            self.open_block(true);
        } else if kind == k.repeat_statement {
            // The body's block stays open through `until`: its condition
            // sees the body's locals.
            self.open_block(true);
            self.open_block(false);
        } else if kind == k.assignment_statement {
            if parent != Some(k.variable_declaration) {
                self.assignment(node)?;
            }
        } else if kind == k.label_statement {
            self.label(node, parent)?;
        } else if kind == k.goto_statement {
            let name = node.named_child(0).map_or("", |n| self.text(n));
            if !self.label_visible(name) {
                self.pend(name, at);
            }
        } else if kind == k.implicit_variable_declaration
            || (kind == k.variable_declaration
                && node.child(0).is_some_and(|c| c.kind_id() == k.global_kw))
        {
            refuse(at, "a Lua 5.5 global declaration")?;
        }
        if self.blocks.len() > 2 * MAX_LEVELS + 1 {
            refuse(at, "nested deeper than Lua's 200 levels")?;
        }
        // As `descends`, without asking tree-sitter twice.
        if children > 0 && !whole && kind != k.parameters {
            self.ancestors.push((node.id(), kind));
        }
        Ok(())
    }

    /// Finishes `node` on the way up, after its children.
    fn leave(&mut self, node: Node<'_>) -> Checked {
        let k = self.k;
        let kind = match self.ancestors.last() {
            Some(&(id, kind)) if id == node.id() => {
                self.ancestors.pop();
                kind
            }
            _ => node.kind_id(),
        };
        let parent = self.ancestors.last().map(|&(_, kind)| kind);
        if self.ancestors.is_empty() {
            // The chunk: the main function's block ends here, or (for the
            // first part of a cut chunk) the chunk goes on.
            if !self.ends_chunk
                && let Some(label) = self.block().label_past_local
            {
                return refuse(label, "goto jumps into the scope of a local");
            }
            return self.close_block();
        }
        if kind == k.function_definition || kind == k.function_declaration {
            self.close_block()?;
            self.functions.pop();
        } else if kind == k.block {
            if !self.is_own_block(parent) {
                self.close_block()?;
            }
        } else if kind == k.while_statement || kind == k.for_statement {
            self.close_block()?;
        } else if kind == k.repeat_statement {
            if let Some(label) = self.block().label_past_local {
                // `until` is no block end for a label: its condition sees
                // the locals declared before it.
                return refuse(label, "goto jumps into the scope of a local");
            }
            self.close_block()?;
            self.close_block()?;
        } else if kind == k.for_numeric_clause || kind == k.for_generic_clause {
            self.for_names(node)?;
        } else if kind == k.variable_declaration {
            self.local_statement(node)?;
        }
        Ok(())
    }

    /// Whether a `block` under `parent` is a block its parent opened
    /// itself: a function's body is the function's own block, and a
    /// `repeat` body stays open through `until`.
    fn is_own_block(&self, parent: Option<u16>) -> bool {
        let k = self.k;
        let own = [
            k.function_definition,
            k.function_declaration,
            k.repeat_statement,
        ];
        parent.is_some_and(|p| own.contains(&p))
    }

    /// Whether a node of `kind` under `parent` is a statement of a block
    /// (or of the chunk).
    fn is_statement(&self, kind: u16, parent: Option<u16>) -> bool {
        let k = self.k;
        let in_block = parent == Some(k.block) || self.ancestors.len() == 1;
        in_block && kind != k.comment && kind != k.hash_bang_line
    }

    /// Lua's lexer must read `node` (a leaf, a string, a comment or a
    /// number) as the same token, after nothing but spaces.
    fn token(&mut self, node: Node<'_>) -> Checked {
        let k = self.k;
        let (start, end) = (node.start_byte(), node.end_byte());
        if start == end {
            return Ok(());
        }
        self.gap(start)?;
        let b = self.source.as_bytes();
        let kind = node.kind_id();
        if kind == k.hash_bang_line {
            // Lua skips a file's first line when it starts with `#` (the
            // rewriter's prologue replaces it); anywhere else `#` is the
            // length operator.
            let line_end = b.iter().position(|&c| c == b'\n').unwrap_or(b.len());
            if start != 0 || end != line_end {
                return refuse(start, "a '#' line that is not the first");
            }
        } else {
            let Some((token, token_end)) = lexer::token_at(b, start, &mut self.scratch) else {
                return refuse(start, "a token Lua's lexer refuses");
            };
            let same = if kind == k.identifier || kind == k.global_kw {
                token == Token::Name
            } else if kind == k.number {
                token == Token::Number
            } else if kind == k.string {
                token == Token::Str
            } else if kind == k.comment {
                token == Token::Comment
            } else {
                token == Token::Keyword || token == Token::Symbol
            };
            if !same || token_end != end {
                return refuse(start, "Lua reads another token here");
            }
        }
        self.lexed = end;
        Ok(())
    }

    /// Only Lua's spaces between the last token and `upto`.
    fn gap(&self, upto: usize) -> Checked {
        let b = self.source.as_bytes();
        let Some(between) = b.get(self.lexed..upto) else {
            return refuse(upto, "tokens overlap");
        };
        match between.iter().position(|&c| !lexer::is_space(c)) {
            Some(i) => refuse(self.lexed + i, "a byte Lua does not read as a space"),
            None => Ok(()),
        }
    }

    fn function(&self) -> &Function {
        self.functions.last().expect("the chunk is a function")
    }

    fn block(&self) -> &Block {
        self.blocks.last().expect("a function has a block")
    }

    fn open_function(&mut self, vararg: bool) {
        self.functions.push(Function {
            first_local: self.locals.len(),
            vararg,
        });
        self.open_block(false);
        if let Some(block) = self.blocks.last_mut() {
            block.outermost = true;
        }
    }

    fn open_block(&mut self, is_loop: bool) {
        self.blocks.push(Block {
            nactvar: self.locals.len(),
            first_label: self.labels.len(),
            first_goto: self.gotos.len(),
            is_loop,
            outermost: false,
            label_past_local: None,
        });
    }

    /// Lua's `leaveblock`: drops the block's locals and labels, lands its
    /// `break`s if it is a loop, and hands its pending gotos to the
    /// enclosing block (a function's own block has none to hand on).
    fn close_block(&mut self) -> Checked {
        let block = self.blocks.pop().expect("blocks close as they open");
        while self.locals.len() > block.nactvar {
            if let Some(name) = self.locals.pop()
                && let Some(stack) = self.readonly.get_mut(name)
            {
                stack.pop();
            }
        }
        if block.is_loop {
            self.land("break", block.first_goto, |_| Ok(()))?;
        }
        for (function, name) in self.labels.drain(block.first_label..) {
            if let Some(count) = self.label_count.get_mut(&(function, name)) {
                *count -= 1;
            }
        }
        let pending = block.first_goto..self.gotos.len();
        if block.outermost {
            if let Some(goto) = self.gotos[pending].iter().find(|g| !g.landed) {
                let why = if goto.name == "break" {
                    "break outside a loop"
                } else {
                    "goto with no visible label"
                };
                return refuse(goto.at, why);
            }
            self.gotos.truncate(block.first_goto);
        } else {
            for goto in &mut self.gotos[pending] {
                goto.nactvar = goto.nactvar.min(block.nactvar);
            }
        }
        Ok(())
    }

    /// Lands the pending gotos to `name` from `first_goto` on, each
    /// checked by `check` first.
    fn land(
        &mut self,
        name: &str,
        first_goto: usize,
        mut check: impl FnMut(&Goto<'s>) -> Checked,
    ) -> Checked {
        let Some(indices) = self.pending.get_mut(name) else {
            return Ok(());
        };
        while let Some(&i) = indices.last()
            && i >= first_goto
        {
            indices.pop();
            check(&self.gotos[i])?;
            self.gotos[i].landed = true;
        }
        Ok(())
    }

    /// A goto (or `break`) whose label must come later in an open block.
    fn pend(&mut self, name: &'s str, at: usize) {
        self.pending.entry(name).or_default().push(self.gotos.len());
        self.gotos.push(Goto {
            name,
            nactvar: self.locals.len(),
            at,
            landed: false,
        });
    }

    /// Declares a local of the innermost function.
    fn declare(&mut self, name: &'s str, readonly: bool, at: usize) -> Checked {
        if self.locals.len() - self.function().first_local >= MAX_LOCALS {
            return refuse(at, "more than 200 locals in one function");
        }
        self.locals.push(name);
        self.readonly.entry(name).or_default().push(readonly);
        Ok(())
    }

    /// `name = ...` (or `function name() end`) where `name` is a `const` or
    /// `close` local.
    fn check_writable(&self, target: Node<'_>) -> Checked {
        let k = self.k;
        let kind = target.kind_id();
        if kind != k.identifier && kind != k.global_kw {
            return Ok(());
        }
        let readonly = self
            .readonly
            .get(self.text(target))
            .and_then(|stack| stack.last());
        if readonly == Some(&true) {
            return refuse(target.start_byte(), "assignment to a const variable");
        }
        Ok(())
    }

    fn assignment(&self, node: Node<'_>) -> Checked {
        let Some(targets) = node
            .child(0)
            .filter(|c| c.kind_id() == self.k.variable_list)
        else {
            return Ok(());
        };
        let mut cursor = targets.walk();
        for target in targets.children(&mut cursor) {
            self.check_writable(target)?;
        }
        Ok(())
    }

    /// `function f() end`, `function t.a:m() end`, `local function f() end`.
    fn function_declaration(&mut self, node: Node<'_>) -> Checked {
        let k = self.k;
        let first = node.child(0).map(|c| c.kind_id());
        let name = node.child_by_field_id(k.field_name);
        if first == Some(k.global_kw) {
            return refuse(node.start_byte(), "a Lua 5.5 global declaration");
        }
        if first == Some(k.local_kw) {
            // In scope in its own body, for recursion.
            let name = name.map_or("", |n| self.text(n));
            self.declare(name, false, node.start_byte())?;
            self.open_function(false);
            return Ok(());
        }
        let method = name.is_some_and(|n| n.kind_id() == k.method_index_expression);
        if let Some(name) = name {
            self.check_writable(name)?;
        }
        self.open_function(false);
        if method {
            self.declare("self", false, node.start_byte())?;
        }
        Ok(())
    }

    /// A function's parameters; `...` makes it vararg, but `...name` is
    /// Lua 5.5's.
    fn parameters(&mut self, node: Node<'_>) -> Checked {
        let k = self.k;
        let mut cursor = node.walk();
        // The walk does not visit them: parentheses, names, commas, `...`
        // and comments, each a token.
        for child in node.children(&mut cursor) {
            self.token(child)?;
        }
        let mut vararg = false;
        for param in node.named_children(&mut cursor) {
            if param.kind_id() == k.vararg_expression {
                vararg = true;
            } else if vararg {
                return refuse(param.start_byte(), "a named vararg parameter (Lua 5.5)");
            } else if param.kind_id() == k.identifier {
                self.declare(self.text(param), false, param.start_byte())?;
            }
        }
        if let Some(f) = self.functions.last_mut() {
            f.vararg = vararg;
        }
        Ok(())
    }

    /// A loop's hidden control variables and its names, seen by its body.
    fn for_names(&mut self, clause: Node<'_>) -> Checked {
        let k = self.k;
        let at = clause.start_byte();
        if clause.kind_id() == k.for_numeric_clause {
            for _ in 0..NUMERIC_FOR_HIDDEN {
                self.declare("(for state)", false, at)?;
            }
            let name = clause.child_by_field_id(k.field_name);
            return self.declare(name.map_or("", |n| self.text(n)), false, at);
        }
        for _ in 0..GENERIC_FOR_HIDDEN {
            self.declare("(for state)", false, at)?;
        }
        let Some(list) = clause.named_child(0) else {
            return Ok(());
        };
        let mut cursor = list.walk();
        for name in list.named_children(&mut cursor) {
            self.declare(self.text(name), false, name.start_byte())?;
        }
        Ok(())
    }

    /// `local a <const>, b <close> = ...`: after its values, its names.
    fn local_statement(&mut self, node: Node<'_>) -> Checked {
        let mut closes = 0;
        for (name, attribute) in declared_names(node) {
            if name.kind_id() == self.k.attribute {
                return refuse(name.start_byte(), "an attribute before its name (Lua 5.5)");
            }
            if let Some(attribute) = attribute {
                let word = attribute.named_child(0).map_or("", |n| self.text(n));
                match word {
                    "const" => {}
                    "close" => closes += 1,
                    _ => return refuse(attribute.start_byte(), "an unknown attribute"),
                }
                if closes > 1 {
                    let why = "two to-be-closed variables in one local list";
                    return refuse(attribute.start_byte(), why);
                }
            }
            self.declare(self.text(name), attribute.is_some(), name.start_byte())?;
        }
        Ok(())
    }

    fn label_visible(&self, name: &'s str) -> bool {
        let function = self.functions.len() - 1;
        self.label_count
            .get(&(function, name))
            .is_some_and(|&n| n > 0)
    }

    fn add_label(&mut self, name: &'s str) {
        let function = self.functions.len() - 1;
        self.labels.push((function, name));
        *self.label_count.entry((function, name)).or_default() += 1;
    }

    /// Lua's `labelstat`: a label defined once in its function's open
    /// blocks, landing the pending gotos of its block.
    fn label(&mut self, node: Node<'_>, parent: Option<u16>) -> Checked {
        let at = node.start_byte();
        let name = node.named_child(0).map_or("", |n| self.text(n));
        if self.label_visible(name) {
            return refuse(at, "a label defined twice");
        }
        let nactvar = self.locals.len();
        let first_goto = self.block().first_goto;
        let mut past_local = false;
        self.land(name, first_goto, |goto| {
            past_local |= goto.nactvar < nactvar;
            Ok(())
        })?;
        if past_local {
            let grandparent = self
                .ancestors
                .len()
                .checked_sub(2)
                .map(|i| self.ancestors[i].1);
            if parent == Some(self.k.block) && grandparent == Some(self.k.repeat_statement) {
                return refuse(at, "goto jumps into the scope of a local");
            }
            if let Some(block) = self.blocks.last_mut() {
                block.label_past_local.get_or_insert(at);
            }
        }
        self.add_label(name);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
