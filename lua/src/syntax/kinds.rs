//! Node kind and field ids of the tree-sitter Lua grammar, looked up once.
//!
//! The scanner visits every node of every script; comparing `u16` ids
//! instead of kind strings keeps it well inside the rewrite budget.

use std::sync::LazyLock;

use super::parse::language;

/// Kind ids of the nodes the scanner and the rewriter look at.
pub(crate) struct Kinds {
    pub function_call: u16,
    pub identifier: u16,
    pub dot_index_expression: u16,
    pub bracket_index_expression: u16,
    pub method_index_expression: u16,
    pub string: u16,
    pub comment: u16,
    pub number: u16,
    pub true_: u16,
    pub false_: u16,
    pub nil: u16,
    pub table_constructor: u16,
    pub unary_expression: u16,
    pub function_definition: u16,
    pub function_declaration: u16,
    pub parameters: u16,
    pub vararg_expression: u16,
    pub variable_declaration: u16,
    pub variable_list: u16,
    pub assignment_statement: u16,
    pub block: u16,
    pub repeat_statement: u16,
    pub for_statement: u16,
    pub for_numeric_clause: u16,
    pub for_generic_clause: u16,
    pub return_statement: u16,
    pub goto_statement: u16,
    pub label_statement: u16,
    pub break_statement: u16,
    pub empty_statement: u16,
    pub while_statement: u16,
    pub hash_bang_line: u16,
    /// Lua 5.5's `global *`, which Lua 5.4 refuses.
    pub implicit_variable_declaration: u16,
    pub attribute: u16,
    /// A table constructor's `name = value`, `[key] = value` or `value`.
    pub table_field: u16,
    /// The `local` keyword token.
    pub local_kw: u16,
    /// The `global` token: a name to Lua 5.4, a keyword to the grammar's
    /// Lua 5.5 declarations.
    pub global_kw: u16,
    /// The `(` token.
    pub lparen: u16,
    /// The `[` token.
    pub lbracket: u16,
    /// The `,` token.
    pub comma: u16,
    /// The `-` token.
    pub minus: u16,
    pub field_name: u16,
    pub field_arguments: u16,
    pub field_table: u16,
    pub field_field: u16,
    pub field_method: u16,
    pub field_value: u16,
    pub field_parameters: u16,
    pub field_operand: u16,
    pub field_operator: u16,
    pub field_clause: u16,
}

pub(crate) static KINDS: LazyLock<Kinds> = LazyLock::new(|| {
    let lang = language();
    let named = |kind: &str| lang.id_for_node_kind(kind, true);
    let token = |kind: &str| lang.id_for_node_kind(kind, false);
    // A field the grammar lacks maps to 0, which no child carries, so a
    // grammar change degrades to "not found" instead of a panic.
    let field = |name: &str| lang.field_id_for_name(name).map_or(0, |id| id.get());
    Kinds {
        function_call: named("function_call"),
        identifier: named("identifier"),
        dot_index_expression: named("dot_index_expression"),
        bracket_index_expression: named("bracket_index_expression"),
        method_index_expression: named("method_index_expression"),
        string: named("string"),
        comment: named("comment"),
        number: named("number"),
        true_: named("true"),
        false_: named("false"),
        nil: named("nil"),
        table_constructor: named("table_constructor"),
        unary_expression: named("unary_expression"),
        function_definition: named("function_definition"),
        function_declaration: named("function_declaration"),
        parameters: named("parameters"),
        vararg_expression: named("vararg_expression"),
        variable_declaration: named("variable_declaration"),
        variable_list: named("variable_list"),
        assignment_statement: named("assignment_statement"),
        block: named("block"),
        repeat_statement: named("repeat_statement"),
        for_statement: named("for_statement"),
        for_numeric_clause: named("for_numeric_clause"),
        for_generic_clause: named("for_generic_clause"),
        return_statement: named("return_statement"),
        goto_statement: named("goto_statement"),
        label_statement: named("label_statement"),
        break_statement: named("break_statement"),
        empty_statement: named("empty_statement"),
        while_statement: named("while_statement"),
        hash_bang_line: named("hash_bang_line"),
        implicit_variable_declaration: named("implicit_variable_declaration"),
        attribute: named("attribute"),
        table_field: named("field"),
        local_kw: token("local"),
        global_kw: token("global"),
        lparen: token("("),
        lbracket: token("["),
        comma: token(","),
        minus: token("-"),
        field_name: field("name"),
        field_arguments: field("arguments"),
        field_table: field("table"),
        field_field: field("field"),
        field_method: field("method"),
        field_value: field("value"),
        field_parameters: field("parameters"),
        field_operand: field("operand"),
        field_operator: field("operator"),
        field_clause: field("clause"),
    }
});
