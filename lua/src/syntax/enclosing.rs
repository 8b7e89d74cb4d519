//! The innermost node of a kind around a byte range, in time linear in the
//! tree's depth.
//!
//! Climbing from `descendant_for_byte_range` with `Node::parent` costs the
//! depth squared: tree-sitter keeps no parent links, so each `parent()`
//! descends again from the root. A file of 20,000 nested `{` made one
//! completion take 24 s that way. This descends once, with a cursor, and
//! keeps the deepest match on the way down.

use tree_sitter::{Node, Tree};

/// The deepest node for which `wanted` holds among the nodes holding
/// `start..end` — the node `descendant_for_byte_range(start, end)` returns
/// and its ancestors — or `None`.
pub fn innermost_enclosing<'t>(
    tree: &'t Tree,
    start: usize,
    end: usize,
    wanted: impl Fn(Node<'t>) -> bool,
) -> Option<Node<'t>> {
    if start > end {
        return None;
    }
    let mut cursor = tree.root_node().walk();
    let mut found = Some(cursor.node()).filter(|&n| wanted(n));
    'down: while cursor.goto_first_child() {
        loop {
            let child = cursor.node();
            let (child_start, child_end) = (child.start_byte(), child.end_byte());
            // The rule of `descendant_for_byte_range`: the child reaches
            // the range's end, and passes its start (an empty child may
            // touch it).
            let reaches = child_end >= end
                && if child_start == child_end {
                    child_end >= start
                } else {
                    child_end > start
                };
            if reaches {
                if start < child_start {
                    break 'down;
                }
                if wanted(child) {
                    found = Some(child);
                }
                continue 'down;
            }
            if !cursor.goto_next_sibling() {
                break 'down;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    /// The climb this replaces, for comparison.
    fn by_parents<'t>(
        tree: &'t Tree,
        start: usize,
        end: usize,
        wanted: impl Fn(Node<'t>) -> bool,
    ) -> Option<Node<'t>> {
        let mut node = tree.root_node().descendant_for_byte_range(start, end);
        while let Some(n) = node {
            if wanted(n) {
                return Some(n);
            }
            node = n.parent();
        }
        None
    }

    #[test]
    fn finds_what_climbing_the_parents_finds_at_every_offset() {
        let text = "local t = { a = \"x\", { [[long]] }, f(--[[c]] 1) } -- tail\nx = 'y'\n";
        let tree = parse(text, None).unwrap();
        for kinds in [
            &["string", "comment"][..],
            &["table_constructor"],
            &["chunk"],
        ] {
            let wanted = |n: Node<'_>| kinds.contains(&n.kind());
            for at in 0..=text.len() {
                let start = at.saturating_sub(1);
                assert_eq!(
                    innermost_enclosing(&tree, start, at, wanted),
                    by_parents(&tree, start, at, wanted),
                    "{kinds:?} at {at}"
                );
            }
        }
    }

    #[test]
    fn deep_nesting_is_answered_without_climbing() {
        let depth = 50_000;
        let text = format!("t = {}\"s\"{}", "{".repeat(depth), "}".repeat(depth));
        let tree = parse(&text, None).unwrap();
        let at = depth + 6;
        let string = innermost_enclosing(&tree, at - 1, at, |n| n.kind() == "string");
        assert_eq!(string.map(|n| n.start_byte()), Some(depth + 4));
    }
}
