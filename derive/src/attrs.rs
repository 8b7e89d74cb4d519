//! Reading the derives' input: attributes, doc comments, fields.
//!
//! Every mistake is a `syn::Error` on the span the user wrote, so the
//! compiler points at the attribute or field to fix.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Expr, ExprLit, Fields, Ident, Lit, LitStr, Member};

/// The most parameters a message may carry: the arity the hub's typed
/// tuples go up to.
pub const MAX_PARAMS: usize = 8;

/// One field of the input struct.
pub struct Field {
    /// How the struct names it (`self.#member`).
    pub member: Member,
    /// The name the table gives it: the field's own, `#[gantry(name = "..")]`,
    /// or `argN` for a tuple field.
    pub name: String,
    pub ty: syn::Type,
    pub doc: String,
}

/// The fields of a struct, and whether they are named.
pub struct Shape {
    pub fields: Vec<Field>,
    pub style: Style,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Named,
    Tuple,
    Unit,
}

/// The one line of documentation the table keeps: the first paragraph of
/// the doc comment, its lines joined.
pub fn doc_of(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &nv.value
        {
            let line = text.value();
            let line = line.trim();
            if line.is_empty() {
                if lines.is_empty() {
                    continue;
                }
                break;
            }
            lines.push(line.to_owned());
        }
    }
    lines.join(" ")
}

/// What `#[gantry(..)]` says on a field or a struct.
#[derive(Default)]
pub struct Gantry {
    /// `name = ".."`: the name in the table.
    pub name: Option<String>,
    /// `row` (a struct only): also a table row ([`Row`]) whose `Vec` a
    /// stored table keeps as its mirror.
    pub row: bool,
}

/// `#[gantry(name = "..", row)]`; `row` only where `row_allowed`.
pub fn gantry(attrs: &[Attribute], row_allowed: bool) -> syn::Result<Gantry> {
    let mut out = Gantry::default();
    for attr in attrs {
        if !attr.path().is_ident("gantry") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                let text: LitStr = meta.value()?.parse()?;
                out.name = Some(text.value());
                Ok(())
            } else if row_allowed && meta.path.is_ident("row") {
                out.row = true;
                Ok(())
            } else if row_allowed {
                Err(meta.error("unknown `gantry` attribute: expected `name = \"...\"` or `row`"))
            } else {
                Err(meta.error("unknown `gantry` attribute: expected `name = \"...\"`"))
            }
        })?;
    }
    Ok(out)
}

/// `#[gantry(name = "..")]` on a field, if given.
pub fn renamed(attrs: &[Attribute]) -> syn::Result<Option<String>> {
    Ok(gantry(attrs, false)?.name)
}

/// The struct's fields, or an error naming what cannot derive.
pub fn shape(input: &DeriveInput, derive: &str) -> syn::Result<Shape> {
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            format!("`{derive}` cannot be derived for a generic type: a key's types are fixed"),
        ));
    }
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            format!("`{derive}` can only be derived for a struct"),
        ));
    };
    let style = match &data.fields {
        Fields::Named(_) => Style::Named,
        Fields::Unnamed(_) => Style::Tuple,
        Fields::Unit => Style::Unit,
    };
    let mut fields = Vec::new();
    for (index, field) in data.fields.iter().enumerate() {
        let (member, own) = match &field.ident {
            Some(ident) => (Member::Named(ident.clone()), unraw(ident)),
            None => (Member::Unnamed(index.into()), format!("arg{}", index + 1)),
        };
        fields.push(Field {
            member,
            name: renamed(&field.attrs)?.unwrap_or(own),
            ty: field.ty.clone(),
            doc: doc_of(&field.attrs),
        });
    }
    Ok(Shape { fields, style })
}

/// A field's name as written, without `r#`.
fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// The hub's key rule, checked at compile time so that a misspelt key is
/// an error on the attribute rather than at the declaration's run: dotted
/// segments of ASCII letters, digits and `_`, none empty.
pub fn check_key(key: &LitStr) -> syn::Result<String> {
    let text = key.value();
    let bad = |why: String| Err(syn::Error::new(key.span(), why));
    if text.is_empty() {
        return bad("a key cannot be empty".into());
    }
    if text.len() > 256 {
        return bad("a key is at most 256 bytes long".into());
    }
    for segment in text.split('.') {
        if segment.is_empty() {
            return bad(format!("key `{text}` has an empty segment"));
        }
        if let Some(ch) = segment
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
        {
            return bad(format!(
                "key `{text}` holds `{ch}`: a key is dotted segments of letters, digits and `_`"
            ));
        }
    }
    Ok(text)
}

/// An error at the call site of the derive, for input with nothing better
/// to point at.
pub fn error(message: &str) -> syn::Error {
    syn::Error::new(Span::call_site(), message)
}
