//! How many registers the main chunk's statements may need beyond its
//! locals: an upper bound, from the tree.
//!
//! Lua gives a function at most 254 registers: its active locals at the
//! bottom, then the temporaries of the statement running (a call's function
//! and arguments, a concatenation's operands, a table's pending items). The
//! rewriter's prologue puts up to [`super::BAKES_PROLOGUE_MAX_LOCALS`] locals
//! of its own under the main chunk's, so a chunk Lua loads (`x = a..b..` of
//! 110 operands) could need too many registers once rewritten; the
//! rewriter gives the prologue only the registers this bound leaves free.
//!
//! The bound for an expression is the sum of its parts' (Lua evaluates
//! them one after the other into consecutive registers at worst), one for
//! a name, a constant or a closure, and for a table constructor at most 50
//! pending list items (Lua stores them 50 at a time) plus the largest
//! item. A statement's is its expressions' sum; a block's statements run
//! one after another, so the chunk's is the largest statement's.

use tree_sitter::{Node, Tree};

use super::kinds::KINDS;

/// Lua stores a table constructor's list items this many at a time
/// (`LFIELDS_PER_FLUSH`), so no more are pending in registers.
const TABLE_ITEMS_PENDING: usize = 50;

/// The most registers any statement of `tree`'s main chunk (outside its
/// functions' bodies, which have registers of their own) may need for
/// temporaries, beyond the locals active there.
pub(crate) fn main_temporaries(tree: &Tree) -> usize {
    let k = &*KINDS;
    let root = tree.root_node();
    let mut most = 0;
    // For each node entered and not yet left: the sum and the largest of
    // its children's bounds.
    let mut open: Vec<(Node<'_>, usize, usize)> = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        let leaf = leaf_bound(node);
        if leaf.is_none() && cursor.goto_first_child() {
            open.push((node, 0, 0));
            continue;
        }
        let mut bound = leaf.unwrap_or(0);
        loop {
            // `node` is done with `bound`: a statement of a block of the
            // main chunk counts, and its parent adds it up.
            if let Some((parent, sum, max)) = open.last_mut() {
                let kind = parent.kind_id();
                if kind == k.block || parent.id() == root.id() {
                    most = most.max(bound);
                    // A block's statements run one after another.
                    bound = 0;
                }
                *sum += bound;
                *max = (*max).max(bound);
            }
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                return most;
            }
            let Some((parent, sum, max)) = open.pop() else {
                return most;
            };
            bound = if parent.kind_id() == k.table_constructor {
                (1 + sum).min(1 + TABLE_ITEMS_PENDING + max)
            } else {
                sum
            };
        }
    }
}

/// The bound of a node the walk does not enter: a token, a literal, a
/// closure (its body runs in registers of its own) or a comment.
fn leaf_bound(node: Node<'_>) -> Option<usize> {
    let k = &*KINDS;
    let kind = node.kind_id();
    if kind == k.comment || kind == k.hash_bang_line {
        Some(0)
    } else if kind == k.function_definition {
        Some(1)
    } else if kind == k.function_declaration {
        // The closure, and the table path it is stored into.
        let name = node.child_by_field_id(k.field_name);
        Some(1 + name.map_or(0, |n| n.descendant_count()))
    } else if kind == k.string || node.child_count() == 0 {
        Some(usize::from(node.is_named()))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn temporaries(source: &str) -> usize {
        main_temporaries(&parse(source, None).unwrap())
    }

    #[test]
    fn wide_expressions_at_the_top_level_need_a_register_per_part() {
        let concat = format!("x = {}", vec!["y"; 110].join(".."));
        assert!(temporaries(&concat) >= 110);
        let call = format!(
            "print({})",
            (0..110)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        assert!(temporaries(&call) >= 111);
    }

    #[test]
    fn long_tables_blocks_and_function_bodies_need_few() {
        let table = format!("t = {{{}}}", vec!["{1, 2}"; 5000].join(","));
        assert!(temporaries(&table) < 60, "{}", temporaries(&table));
        let statements = "x = a + b\n".repeat(1000);
        assert!(temporaries(&statements) < 5);
        let body = format!("function f() x = {} end", vec!["y"; 110].join(".."));
        assert!(temporaries(&body) < 5);
        let nested = format!("if a then do x = {} end end", vec!["y"; 20].join(".."));
        assert!((20..25).contains(&temporaries(&nested)));
    }
}
