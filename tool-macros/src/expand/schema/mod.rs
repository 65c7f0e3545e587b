//! `#[derive(Schema)]`: the `impl Schema` of a struct (`struct_`) or an enum (`enum_`), built
//! from the code of its objects (`object`), each made of the code of its fields (`field`), whose
//! constraints become a `static` and a check (`rules`).

mod enum_;
mod field;
mod object;
mod rules;
mod struct_;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Generics, Ident};

use super::{Tokens, hidden};
use crate::ast::{Body, Container};

pub(super) use struct_::input_struct;

/// The `impl Schema` of a container, with its helper items, in an anonymous `const`.
pub(super) fn expand(container: &Container) -> TokenStream {
    let mut codegen = Codegen::new(&container.krate);
    let methods = match &container.body {
        Body::Struct(fields) => struct_::methods(
            &mut codegen,
            &container.ident,
            container.description.as_deref(),
            fields,
        ),
        Body::UnitEnum(variants) => enum_::unit_methods(&codegen, container, variants),
        Body::TaggedEnum { tag, variants, .. } => {
            enum_::tagged_methods(&mut codegen, container, tag, variants)
        }
    };
    codegen.wrap_impl(&container.ident, &container.generics, &methods)
}

/// The hidden locals shared by the generated methods.
struct Locals {
    generator: Ident,
    cx: Ident,
    value: Ident,
    members: Ident,
    before: Ident,
    properties: Ident,
    required: Ident,
    map: Ident,
    access: Ident,
}

impl Locals {
    fn new() -> Self {
        Self {
            generator: hidden("generator"),
            cx: hidden("cx"),
            value: hidden("value"),
            members: hidden("members"),
            before: hidden("before"),
            properties: hidden("properties"),
            required: hidden("required"),
            map: hidden("map"),
            access: hidden("access"),
        }
    }
}

/// Tokens that the code of every field may repeat, made once per derive.
struct Shared {
    /// `::core::option::Option::None`.
    none: Tokens,
    /// `&<crate>::__private::Rules::NONE`, the constraints of a field without any.
    no_rules: Tokens,
    /// `<crate>::__private::no_check`, the check of a field without any.
    no_check: Tokens,
}

impl Shared {
    fn new(private: &Tokens) -> Self {
        Self {
            none: Tokens::new(quote!(::core::option::Option::None)),
            no_rules: Tokens::new(quote!(&#private::Rules::NONE)),
            no_check: Tokens::new(quote!(#private::no_check)),
        }
    }
}

/// The generation of one `impl Schema`: what its methods share, and the items they need
/// besides themselves, statics for constraints and associated fns for defaults.
struct Codegen {
    /// `<crate>::__private`.
    private: Tokens,
    locals: Locals,
    shared: Shared,
    statics: Vec<TokenStream>,
    defaults: Vec<TokenStream>,
    /// A struct's `ReadBody::read_body`, the reader of its members.
    read_body: Option<TokenStream>,
    /// The number of fields generated so far, which names their items.
    counter: usize,
}

impl Codegen {
    fn new(krate: &TokenStream) -> Self {
        let private = Tokens::private(krate);
        Self {
            shared: Shared::new(&private),
            private,
            locals: Locals::new(),
            statics: Vec::new(),
            defaults: Vec::new(),
            read_body: None,
            counter: 0,
        }
    }

    /// The number of the next field.
    fn next(&mut self) -> usize {
        self.counter += 1;
        self.counter
    }

    /// The anonymous `const` holding the statics, the `impl Schema` and the defaults.
    fn wrap_impl(&self, ident: &Ident, generics: &Generics, methods: &TokenStream) -> TokenStream {
        let private = &self.private;
        let mut generics = generics.clone();
        let params: Vec<Ident> = generics
            .type_params()
            .map(|param| param.ident.clone())
            .collect();
        if !params.is_empty() {
            let where_clause = generics.make_where_clause();
            for param in params {
                where_clause
                    .predicates
                    .push(syn::parse_quote!(#param: #private::Schema));
            }
        }
        let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
        let statics = &self.statics;
        let defaults = &self.defaults;
        let defaults_impl = (!defaults.is_empty()).then(|| {
            quote! {
                #[automatically_derived]
                impl #impl_generics #ident #ty_generics #where_clause {
                    #(#defaults)*
                }
            }
        });
        let read_body_impl = self.read_body.as_ref().map(|read_body| {
            quote! {
                #[automatically_derived]
                impl #impl_generics #private::ReadBody for #ident #ty_generics #where_clause {
                    #read_body
                }
            }
        });
        quote! {
            #[allow(non_upper_case_globals, clippy::all, clippy::pedantic)]
            const _: () = {
                #(#statics)*

                #[automatically_derived]
                impl #impl_generics #private::Schema for #ident #ty_generics #where_clause {
                    const STRUCTURED: bool = true;
                    #methods
                }

                #read_body_impl

                #defaults_impl
            };
        }
    }
}

/// `Some("…")` or `None`.
fn opt_str(text: Option<&str>) -> TokenStream {
    match text {
        Some(text) => quote!(::core::option::Option::Some(#text)),
        None => quote!(::core::option::Option::None),
    }
}
