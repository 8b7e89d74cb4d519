//! `#[derive(Message)]`: a key's text, kind, parameters and docs from one
//! Rust struct, and the conversions between the struct and a message.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{DeriveInput, LitStr};

use crate::attrs::{self, MAX_PARAMS, Style};
use crate::structure;

/// What `#[message(..)]` says.
struct Attr {
    key: Option<String>,
    kind: Kind,
    /// A request's response: (name, Rust type).
    response: Vec<(String, syn::Type)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Event,
    Store,
    Hook,
    Request,
}

impl Kind {
    fn marker(self) -> proc_macro2::Ident {
        format_ident!(
            "{}",
            match self {
                Kind::Event => "Event",
                Kind::Store => "Store",
                Kind::Hook => "Hook",
                Kind::Request => "Request",
            }
        )
    }
}

fn attr(input: &DeriveInput) -> syn::Result<Attr> {
    let mut out = Attr {
        key: None,
        kind: Kind::Event,
        response: Vec::new(),
    };
    let mut kind_given = false;
    for attr in &input.attrs {
        if !attr.path().is_ident("message") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("key") {
                let text: LitStr = meta.value()?.parse()?;
                out.key = Some(attrs::check_key(&text)?);
            } else if meta.path.is_ident("kind") {
                let text: LitStr = meta.value()?.parse()?;
                kind_given = true;
                out.kind = match text.value().as_str() {
                    "event" => Kind::Event,
                    "store" => Kind::Store,
                    "hook" => Kind::Hook,
                    "request" => Kind::Request,
                    other => {
                        return Err(syn::Error::new(
                            text.span(),
                            format!(
                                "unknown kind `{other}`: expected \"event\", \"store\", \"hook\" or \"request\""
                            ),
                        ));
                    }
                };
            } else if meta.path.is_ident("response") {
                meta.parse_nested_meta(|inner| {
                    let Some(name) = inner.path.get_ident() else {
                        return Err(inner.error("expected `name = Type`"));
                    };
                    let ty: syn::Type = inner.value()?.parse()?;
                    out.response.push((name.to_string(), ty));
                    Ok(())
                })?;
            } else {
                return Err(meta.error(
                    "unknown `message` attribute: expected `key`, `kind` or `response`",
                ));
            }
            Ok(())
        })?;
    }
    if !out.response.is_empty() {
        if kind_given && out.kind != Kind::Request {
            return Err(attrs::error(
                "only a `kind = \"request\"` message has a `response`",
            ));
        }
        out.kind = Kind::Request;
    }
    Ok(out)
}

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let attr = attr(input)?;
    let Some(key) = attr.key else {
        return Err(syn::Error::new(
            input.ident.span(),
            "`Message` needs its key: `#[message(key = \"Player.Hurt\")]`",
        ));
    };
    let shape = attrs::shape(input, "Message")?;
    let ident = &input.ident;
    let doc = attrs::doc_of(&input.attrs);
    let g = quote!(::gantry_host);
    let kind = attr.kind.marker();
    if attr.kind == Kind::Hook {
        // A hook's payload is one struct: this one.
        if shape.style != Style::Named {
            return Err(syn::Error::new(
                ident.span(),
                "a hook's payload is a struct with named fields",
            ));
        }
        let as_struct = structure::impls(input, &shape)?;
        return Ok(quote! {
            #as_struct

            #[automatically_derived]
        #[allow(clippy::unused_unit)]
        impl #g::typed::MessageType for #ident {
                type Kind = #g::typed::kinds::Hook;
                type Args = (Self,);
                const KEY: &'static str = #key;
                const DOC: &'static str = #doc;
                const PARAM_DOCS: &'static [(&'static str, &'static str)] = &[("payload", #doc)];
                fn decl() -> #g::KeyDecl {
                    #g::KeyDecl::hook().doc(#doc).param("payload", <Self as #g::typed::FieldType>::ty())
                }
                fn declare_structs(table: &mut #g::SignatureTable) {
                    <Self as #g::typed::FieldType>::declare_structs(table);
                }
                fn into_args(self) -> Self::Args {
                    (self,)
                }
                fn from_args(args: Self::Args) -> Self {
                    args.0
                }
                fn from_values(values: &[#g::Value]) -> ::std::result::Result<Self, #g::ListenerError> {
                    #g::typed::arg::<Self>(values, 0)
                }
                type Response = ();
                fn response_from_values(_: &[#g::Value]) -> ::std::result::Result<(), #g::ListenerError> {
                    ::std::result::Result::Ok(())
                }
            }
        });
    }
    if shape.fields.len() > MAX_PARAMS {
        return Err(syn::Error::new(
            ident.span(),
            format!(
                "a message carries at most {MAX_PARAMS} parameters; group some in a `#[derive(Struct)]` struct"
            ),
        ));
    }
    if attr.response.len() > MAX_PARAMS {
        return Err(attrs::error(&format!(
            "a response carries at most {MAX_PARAMS} values"
        )));
    }
    let members: Vec<_> = shape.fields.iter().map(|f| &f.member).collect();
    let names: Vec<_> = shape.fields.iter().map(|f| &f.name).collect();
    let types: Vec<_> = shape.fields.iter().map(|f| &f.ty).collect();
    let docs: Vec<_> = shape.fields.iter().map(|f| &f.doc).collect();
    let indexes: Vec<_> = (0..shape.fields.len()).map(syn::Index::from).collect();
    let positions = 0..shape.fields.len();
    let reply_names: Vec<_> = attr.response.iter().map(|(n, _)| n).collect();
    let reply_types: Vec<_> = attr.response.iter().map(|(_, t)| t).collect();
    let reply_positions = 0..attr.response.len();
    let (build, read) = match shape.style {
        Style::Named => (
            quote!(Self { #(#members: args.#indexes),* }),
            quote!(Self { #(#members: #g::typed::arg::<#types>(values, #positions)?),* }),
        ),
        Style::Tuple => (
            quote!(Self(#(args.#indexes),*)),
            quote!(Self(#(#g::typed::arg::<#types>(values, #positions)?),*)),
        ),
        Style::Unit => (quote!(Self), quote!(Self)),
    };
    Ok(quote! {
        #[automatically_derived]
        #[allow(clippy::unused_unit)]
        impl #g::typed::MessageType for #ident {
            type Kind = #g::typed::kinds::#kind;
            type Args = (#(#types,)*);
            const KEY: &'static str = #key;
            const DOC: &'static str = #doc;
            const PARAM_DOCS: &'static [(&'static str, &'static str)] = &[#((#names, #docs)),*];
            fn decl() -> #g::KeyDecl {
                <Self::Kind as #g::typed::MessageKind>::decl()
                    .doc(#doc)
                    #(.param(#names, <#types as #g::typed::FieldType>::ty()))*
                    #(.response(#reply_names, <#reply_types as #g::typed::FieldType>::ty()))*
            }
            #[allow(unused_variables)]
            fn declare_structs(table: &mut #g::SignatureTable) {
                #(<#types as #g::typed::FieldType>::declare_structs(table);)*
                #(<#reply_types as #g::typed::FieldType>::declare_structs(table);)*
            }
            fn into_args(self) -> Self::Args {
                (#(self.#members,)*)
            }
            #[allow(unused_variables)]
            fn from_args(args: Self::Args) -> Self {
                #build
            }
            #[allow(unused_variables)]
            fn from_values(values: &[#g::Value]) -> ::std::result::Result<Self, #g::ListenerError> {
                ::std::result::Result::Ok(#read)
            }
            fn send_on(
                self,
                hub: &#g::Hub,
                key: #g::Key,
                source: #g::Source,
                site: &'static ::std::panic::Location<'static>,
            ) -> ::std::result::Result<#g::Delivered, #g::HubError> {
                #[allow(unused_imports)]
                use #g::typed::probe::{ViaTyped as _, ViaValues as _};
                (&&#g::typed::probe::Probe::<Self::Args>::new())
                    .send_args(hub, key, source, #g::typed::MessageType::into_args(self), site)
            }
            type Response = (#(#reply_types,)*);
            #[allow(unused_variables)]
            fn response_from_values(values: &[#g::Value]) -> ::std::result::Result<Self::Response, #g::ListenerError> {
                ::std::result::Result::Ok((#(#g::typed::arg::<#reply_types>(values, #reply_positions)?,)*))
            }
        }
    })
}
