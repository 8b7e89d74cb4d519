//! `#[derive(Struct)]`: a Rust struct that declares itself as a struct of
//! the signature table and converts to and from its value.

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::attrs::{self, Shape, Style};

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let shape = attrs::shape(input, "Struct")?;
    if shape.style != Style::Named {
        return Err(syn::Error::new(
            input.ident.span(),
            "`Struct` needs named fields: a struct's fields are named in the table",
        ));
    }
    impls(input, &shape)
}

/// The impls that make `input` a struct of the table (also what a hook's
/// message derives: its payload is a struct).
pub fn impls(input: &DeriveInput, shape: &Shape) -> syn::Result<TokenStream> {
    let ident = &input.ident;
    let container = attrs::gantry(&input.attrs, true)?;
    let name = container.name.unwrap_or_else(|| ident.to_string());
    if !is_struct_name(&name) {
        return Err(attrs::error(&format!(
            "struct name `{name}` is not an identifier"
        )));
    }
    let doc = attrs::doc_of(&input.attrs);
    let members: Vec<_> = shape.fields.iter().map(|f| &f.member).collect();
    let names: Vec<_> = shape.fields.iter().map(|f| &f.name).collect();
    let types: Vec<_> = shape.fields.iter().map(|f| &f.ty).collect();
    let docs: Vec<_> = shape.fields.iter().map(|f| &f.doc).collect();
    let indexes = 0..shape.fields.len();
    let g = quote!(::gantry_host);
    let row = container.row.then(|| {
        let names = &names;
        let members = &members;
        quote! {
            // SAFETY: the offsets and types come from the struct's own
            // fields (`offset_of!` and an accessor), and the value is built
            // from the same fields, under the same names, in the same order.
            #[automatically_derived]
            unsafe impl #g::Row for #ident {
                const NAME: &'static str = #name;
                fn fields() -> &'static [#g::RowField] {
                    static FIELDS: ::std::sync::OnceLock<::std::vec::Vec<#g::RowField>> =
                        ::std::sync::OnceLock::new();
                    FIELDS.get_or_init(|| ::std::vec![#(
                        #g::RowField::of(
                            #names,
                            ::std::mem::offset_of!(#ident, #members),
                            |row: &#ident| &row.#members,
                        )
                    ),*])
                }
                fn to_row_value(&self) -> #g::Value {
                    #g::typed::struct_value(
                        #name,
                        ::std::vec![#((
                            #names,
                            #g::IntoValue::into_value(::std::clone::Clone::clone(&self.#members)),
                        )),*],
                    )
                }
            }
        }
    });
    Ok(quote! {
        #row

        #[automatically_derived]
        impl #g::typed::StructType for #ident {
            const NAME: &'static str = #name;
            const DOC: &'static str = #doc;
            const FIELD_DOCS: &'static [(&'static str, &'static str)] = &[#((#names, #docs)),*];
            fn struct_def() -> #g::StructDef {
                #g::typed::struct_def(
                    #doc,
                    ::std::vec![#(#g::Param::new(#names, <#types as #g::typed::FieldType>::ty())),*],
                )
            }
            fn declare_field_structs(table: &mut #g::SignatureTable) {
                #(<#types as #g::typed::FieldType>::declare_structs(table);)*
            }
        }

        #[automatically_derived]
        impl #g::typed::FieldType for #ident {
            fn ty() -> #g::Type {
                #g::typed::struct_type::<Self>()
            }
            fn declare_structs(table: &mut #g::SignatureTable) {
                #g::typed::declare_struct::<Self>(table)
            }
        }

        #[automatically_derived]
        impl #g::IntoValue for #ident {
            fn into_value(self) -> #g::Value {
                #g::typed::struct_value(
                    #name,
                    ::std::vec![#((#names, #g::IntoValue::into_value(self.#members))),*],
                )
            }
        }

        #[automatically_derived]
        impl #g::FromValue for #ident {
            fn declared_type() -> #g::Type {
                #g::typed::struct_type::<Self>()
            }
            #[allow(unused_variables)]
            fn from_value(value: &#g::Value) -> ::std::option::Option<Self> {
                let fields = #g::typed::struct_fields(value)?;
                ::std::option::Option::Some(Self {
                    #(#members: #g::typed::field(fields, #indexes, #names)?),*
                })
            }
        }
    })
}

/// The table's rule for a struct name: an identifier.
fn is_struct_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
