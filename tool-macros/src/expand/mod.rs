//! Code generation, and the two pipelines: parse, validate, expand (or fall back).
//!
//! Generated code names everything through `<crate>::__private` and `::core`/`::std`. Hidden
//! locals use `Span::mixed_site()`. Where a trait bound can fail, the code that needs it is
//! spanned at the user's token (the field type, the attribute key, the validator path, the
//! return type), so the error points there.

use proc_macro2::{Group, Literal, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::{DeriveInput, Ident, ItemFn, LitStr, Type};

use crate::ast::{self, Body, Container, Field, ToolFn, ToolInput, Variant};
use crate::attr::{DefaultValue, FieldAttrs, Num, NumLit};
use crate::fallback;
use crate::valid::{self, Errors};

/// `#[derive(Schema)]`: parse, validate, expand.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::new();
    let container = Container::from_syn(input, &mut errors);
    valid::container(&container, &mut errors);
    match errors.finish() {
        Ok(()) => schema_impl(&container),
        Err(e) => fallback::derive(input, &container.krate, &e),
    }
}

/// `#[tool]`: parse, validate, expand.
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(_) => return fallback::not_a_fn(item),
    };
    let mut errors = Errors::new();
    let tool = ToolFn::from_syn(args, func, &mut errors);
    valid::tool(&tool, &mut errors);
    match errors.finish() {
        Ok(()) => tool_impl(&tool),
        Err(e) => fallback::tool(&tool, &e),
    }
}

/// A hidden local: invisible to the user's code (mixed-site hygiene).
fn hidden(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// Every token of `tokens`, relocated to `span` (keeping call-site name resolution), so that an
/// error about the expression points at `span`.
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let mut out = Group::new(g.delimiter(), respan(g.stream(), span));
                out.set_span(span);
                TokenTree::Group(out)
            }
            mut other => {
                other.set_span(other.span().located_at(span));
                other
            }
        })
        .collect()
}

/// The locals shared by the generated methods.
#[derive(Clone)]
struct Locals {
    g: Ident,
    cx: Ident,
    value: Ident,
    members: Ident,
    before: Ident,
    props: Ident,
    required: Ident,
    map: Ident,
    access: Ident,
    fields: Ident,
    index: Ident,
}

impl Locals {
    fn new() -> Self {
        Self {
            g: hidden("generator"),
            cx: hidden("cx"),
            value: hidden("value"),
            members: hidden("members"),
            before: hidden("before"),
            props: hidden("properties"),
            required: hidden("required"),
            map: hidden("map"),
            access: hidden("access"),
            fields: hidden("fields"),
            index: hidden("index"),
        }
    }
}

/// What the `Schema` impl of one type needs besides its methods: statics for constraints,
/// and associated fns for defaults.
struct Gen {
    /// `<crate>::__private`.
    p: TokenStream,
    l: Locals,
    statics: Vec<TokenStream>,
    defaults: Vec<TokenStream>,
    counter: usize,
}

/// The code of one field of an object.
struct FieldCode {
    /// The `let _ = <T as Schema>::…;` that reports a field type that is not `Schema` once,
    /// at the type.
    assert: TokenStream,
    /// Renders the property.
    schema: TokenStream,
    /// The slot of what the parse found for the field.
    slot: Ident,
    /// The parsed value.
    parsed: Ident,
    /// Parses its value from the object's member access.
    read: TokenStream,
    /// Parses its value from a decoded member.
    read_tree: TokenStream,
    /// Turns the slot into the field's value once every member was read.
    finish: TokenStream,
}

impl Gen {
    fn new(krate: &TokenStream) -> Self {
        Self {
            p: quote!(#krate::__private),
            l: Locals::new(),
            statics: Vec::new(),
            defaults: Vec::new(),
            counter: 0,
        }
    }

    fn next(&mut self) -> usize {
        self.counter += 1;
        self.counter
    }

    /// The code of one field: its property, its parsing with default and checks.
    fn field(&mut self, f: &Field) -> FieldCode {
        let n = self.next();
        let rules = self.rules(&f.attrs, n);
        let p = &self.p.clone();
        let Locals {
            g,
            cx,
            props,
            required,
            access,
            value,
            ..
        } = &self.l.clone();
        let ty = &f.ty;
        let key = LitStr::new(&f.key, Span::call_site());
        // The key as a JSON pointer segment, escaped here rather than on every call.
        let segment = LitStr::new(
            &f.key.replace('~', "~0").replace('/', "~1"),
            Span::call_site(),
        );
        let description = opt_str(f.description.as_deref());
        let rules_ref = match &rules {
            Some(ident) => quote!(&#ident),
            None => quote!(&#p::Rules::NONE),
        };

        let default_fn = f.attrs.default.as_ref().map(|d| {
            let name = format_ident!("__schema_default_{}", n);
            let body = match &d.value {
                DefaultValue::Trait => {
                    quote_spanned!(d.key=> ::core::default::Default::default())
                }
                DefaultValue::Expr(syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                })) => str_literal(p, ty, s),
                DefaultValue::Expr(expr) => quote!(#expr),
            };
            self.defaults.push(quote! {
                #[doc(hidden)]
                fn #name() -> #ty {
                    #body
                }
            });
            name
        });
        let default_json = match &default_fn {
            Some(name) => quote!(::core::option::Option::Some(
                <#ty as #p::Schema>::to_json(&Self::#name())
            )),
            None => quote!(::core::option::Option::None),
        };
        let default_arg = match &default_fn {
            Some(name) => quote!(::core::option::Option::Some(Self::#name as fn() -> #ty)),
            None => quote!(::core::option::Option::None),
        };
        let example_json = match &f.attrs.example {
            Some(example) => {
                let ety = ast::option_inner(ty).unwrap_or(ty);
                let e = hidden("example");
                let value = match &example.value.0 {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => str_literal(p, ety, s),
                    expr => quote!(#expr),
                };
                quote!(::core::option::Option::Some({
                    let #e: #ety = #value;
                    <#ety as #p::Schema>::to_json(&#e)
                }))
            }
            None => quote!(::core::option::Option::None),
        };

        let check = self.check(f, rules.as_ref());
        let slot = format_ident!("__slot_{}", n, span = Span::mixed_site());
        let parsed = format_ident!("__field_{}", n, span = Span::mixed_site());
        FieldCode {
            assert: quote!(let _ = <#ty as #p::Schema>::to_json;),
            schema: quote! {
                #p::property::<#ty>(
                    #g, &mut #props, &mut #required, #key, #description, #rules_ref,
                    #default_json, #example_json,
                );
            },
            read: quote!(#p::field_de::<#ty, _>(&mut #access, #segment, #cx, #check)?),
            read_tree: quote!(#p::field_tree::<#ty>(#value, #segment, #cx, #check)),
            finish: quote! {
                let #parsed = #p::finish_field::<#ty>(#slot, #key, #cx, #default_arg);
            },
            slot,
            parsed,
        }
    }

    /// The `static` holding a field's constraints, if it has any.
    fn rules(&mut self, a: &FieldAttrs, n: usize) -> Option<Ident> {
        let p = &self.p;
        let mut parts = Vec::new();
        let usize_part = |name: &str, v: Option<usize>| {
            v.map(|v| {
                let name = Ident::new(name, Span::call_site());
                let v = Literal::usize_unsuffixed(v);
                quote!(#name: ::core::option::Option::Some(#v))
            })
        };
        parts.extend(usize_part("min_len", a.min_len.as_ref().map(|k| k.value)));
        parts.extend(usize_part("max_len", a.max_len.as_ref().map(|k| k.value)));
        if let Some(pattern) = &a.pattern {
            let ident = format_ident!("__SCHEMA_PATTERN_{}", n);
            let source = &pattern.value;
            self.statics
                .push(quote!(static #ident: #p::Pattern = #p::Pattern::new(#source);));
            parts.push(quote!(pattern: ::core::option::Option::Some(&#ident)));
        }
        if let Some(format) = &a.format {
            use tool_core::schema::Format;
            let name = format.value.value();
            let value = match Format::from_name(&name) {
                Some(Format::Email) => quote!(#p::Format::Email),
                Some(Format::Uri) => quote!(#p::Format::Uri),
                Some(Format::Uuid) => quote!(#p::Format::Uuid),
                Some(Format::Date) => quote!(#p::Format::Date),
                Some(Format::DateTime) => quote!(#p::Format::DateTime),
                // `valid` rejected unknown names; this is a format added to the runtime that
                // this version of the macros does not know.
                _ => {
                    let message = format!(
                        "the format {name:?} is not supported by this version of the macros"
                    );
                    quote_spanned!(format.value.span()=> ::core::compile_error!(#message))
                }
            };
            parts.push(quote!(format: ::core::option::Option::Some(#value)));
        }
        if let Some(one_of) = &a.one_of {
            let items = &one_of.value.0;
            parts.push(quote!(one_of: &[#(#items),*]));
        }
        let (mut minimum, mut maximum, mut exclusive_maximum) = (
            a.min.as_ref().map(|k| k.value),
            a.max.as_ref().map(|k| k.value),
            a.exclusive_max.as_ref().map(|k| k.value),
        );
        if let Some(range) = &a.range {
            minimum = range.value.start;
            if range.value.inclusive {
                maximum = range.value.end;
            } else {
                exclusive_maximum = range.value.end;
            }
        }
        for (name, value) in [
            ("minimum", minimum),
            ("maximum", maximum),
            (
                "exclusive_minimum",
                a.exclusive_min.as_ref().map(|k| k.value),
            ),
            ("exclusive_maximum", exclusive_maximum),
            ("multiple_of", a.multiple_of.as_ref().map(|k| k.value)),
        ] {
            if let Some(value) = value {
                let name = Ident::new(name, Span::call_site());
                let num = num_tokens(p, value);
                parts.push(quote!(#name: ::core::option::Option::Some(#num)));
            }
        }
        parts.extend(usize_part(
            "min_items",
            a.min_items.as_ref().map(|k| k.value),
        ));
        parts.extend(usize_part(
            "max_items",
            a.max_items.as_ref().map(|k| k.value),
        ));
        if a.unique_items.as_ref().is_some_and(|k| k.value) {
            parts.push(quote!(unique_items: true));
        }
        if parts.is_empty() {
            return None;
        }
        let ident = format_ident!("__SCHEMA_RULES_{}", n);
        self.statics.push(quote! {
            static #ident: #p::Rules = #p::Rules { #(#parts,)* ..#p::Rules::NONE };
        });
        Some(ident)
    }

    /// The check a field's value goes through once parsed: its constraints (each kind spanned
    /// at the first attribute of that kind, so that a constraint on a type it does not apply
    /// to is an error there) and its validator (spanned at its path).
    fn check(&self, f: &Field, rules: Option<&Ident>) -> TokenStream {
        let p = &self.p;
        let a = &f.attrs;
        let ty = &f.ty;
        let string_key = [
            ast::key_of(a.min_len.as_ref()),
            ast::key_of(a.max_len.as_ref()),
            ast::key_of(a.pattern.as_ref()),
            ast::key_of(a.format.as_ref()),
            ast::key_of(a.one_of.as_ref()),
        ]
        .into_iter()
        .flatten()
        .next();
        let number_key = [
            ast::key_of(a.range.as_ref()),
            ast::key_of(a.min.as_ref()),
            ast::key_of(a.max.as_ref()),
            ast::key_of(a.exclusive_min.as_ref()),
            ast::key_of(a.exclusive_max.as_ref()),
            ast::key_of(a.multiple_of.as_ref()),
        ]
        .into_iter()
        .flatten()
        .next();
        let array_key = [
            ast::key_of(a.min_items.as_ref()),
            ast::key_of(a.max_items.as_ref()),
            ast::key_of(a.unique_items.as_ref()),
        ]
        .into_iter()
        .flatten()
        .next();
        let v = hidden("v");
        let cx = hidden("cx");
        let mut calls = Vec::new();
        for (key, func) in [
            (string_key, "check_string"),
            (number_key, "check_number"),
            (array_key, "check_array"),
        ] {
            if let (Some(span), Some(rules)) = (key, rules) {
                let func = Ident::new(func, span);
                let v_at = Ident::new("v", Span::mixed_site().located_at(span));
                let cx_at = Ident::new("cx", Span::mixed_site().located_at(span));
                let path = respan(quote!(#p::), span);
                calls.push(quote_spanned!(span=> #path #func(#v_at, &#rules, #cx_at);));
            }
        }
        if let Some(validate) = &a.validate {
            let span = syn::spanned::Spanned::span(&validate.value);
            let run = respan(quote!(#p::run_field_validator), span);
            let v_at = Ident::new("v", Span::mixed_site().located_at(span));
            let cx_at = Ident::new("cx", Span::mixed_site().located_at(span));
            let path = &validate.value;
            calls.push(quote_spanned!(span=> #run(#v_at, #path, #cx_at);));
        }
        if calls.is_empty() {
            return quote!(#p::no_check);
        }
        quote! {
            |#v: &#ty, #cx: &mut #p::ParseCx| {
                #(#calls)*
            }
        }
    }

    /// The statements rendering an object's properties into `properties`/`required`, and the
    /// assertions that go first in every method.
    fn object(&mut self, fields: &[Field]) -> Object {
        let codes: Vec<FieldCode> = fields.iter().map(|f| self.field(f)).collect();
        Object {
            codes,
            keys: fields.iter().map(|f| f.key.clone()).collect(),
            members: fields.iter().map(|f| f.member.clone()).collect(),
            types: fields.iter().map(|f| f.ty.clone()).collect(),
        }
    }

    /// Parses the members of one object into `ctor { fields }`, in the order they were sent,
    /// then finishes every field (defaults, `required`). `Read::Stream` reads them from the
    /// map access `access` (a block of type `Result<Option<_>, _>`), `Read::Tree` from the
    /// decoded `members` (a block of type `Option<_>`); both return early when anything was
    /// recorded since `before`. `extra` is a key that is allowed but already handled (the tag
    /// of an enum).
    fn parse_object(
        &self,
        o: &Object,
        ctor: &TokenStream,
        extra: Option<&str>,
        read: Read,
    ) -> TokenStream {
        let Locals {
            cx,
            before,
            access,
            fields,
            index,
            members,
            value,
            ..
        } = &self.l;
        let p = &self.p;
        let allowed: Vec<&str> = extra
            .into_iter()
            .chain(o.keys.iter().map(String::as_str))
            .collect();
        let keys = &o.keys;
        let slots: Vec<&Ident> = o.codes.iter().map(|c| &c.slot).collect();
        let parsed: Vec<&Ident> = o.codes.iter().map(|c| &c.parsed).collect();
        let finishes = o.codes.iter().map(|c| &c.finish);
        let indices = (0..o.codes.len()).map(Literal::usize_unsuffixed);
        let types = &o.types;
        let field_members = &o.members;
        let key = hidden("key");
        let (dispatch, none, some) = match read {
            Read::Stream => {
                let reads = o.codes.iter().map(|c| &c.read);
                (
                    quote! {
                        let mut #fields = #p::Keys::new(&[#(#keys),*], &[#(#allowed),*]);
                        while let ::core::option::Option::Some(#index) =
                            #fields.next(&mut #access, #cx)?
                        {
                            match #index {
                                #(#indices => #slots = #reads,)*
                                _ => {}
                            }
                        }
                    },
                    quote!(::core::result::Result::Ok(::core::option::Option::None)),
                    quote!(::core::result::Result::Ok),
                )
            }
            Read::Tree => {
                let reads = o.codes.iter().map(|c| &c.read_tree);
                (
                    quote! {
                        for (#key, #value) in #members {
                            match #p::field_index(&[#(#keys),*], &#key) {
                                #(::core::option::Option::Some(#indices) => #slots = #reads,)*
                                _ => #p::unknown_field(&#key, &[#(#allowed),*], #cx),
                            }
                        }
                    },
                    quote!(::core::option::Option::None),
                    quote!(),
                )
            }
        };
        quote! {{
            #(let mut #slots: #p::Slot<#types> = #p::Slot::Absent;)*
            #dispatch
            #(#finishes)*
            #(
                let ::core::option::Option::Some(#parsed) = #parsed else {
                    return #none;
                };
            )*
            if #cx.error_count() != #before {
                return #none;
            }
            #some(::core::option::Option::Some(#ctor { #(#field_members: #parsed),* }))
        }}
    }

    /// Renders an object's fields into `map`, reading each through `access`.
    fn to_json_object(&self, o: &Object, access: impl Fn(&Ident) -> TokenStream) -> TokenStream {
        let p = &self.p;
        let map = &self.l.map;
        let inserts = o
            .keys
            .iter()
            .zip(&o.members)
            .zip(&o.types)
            .map(|((key, member), ty)| {
                let value = access(member);
                quote! {
                    #map.insert(
                        ::std::string::String::from(#key),
                        <#ty as #p::Schema>::to_json(#value),
                    );
                }
            });
        quote!(#(#inserts)*)
    }
}

/// The generated code of an object's fields.
/// Where the members of an object are read from.
#[derive(Clone, Copy)]
enum Read {
    /// From the decoder, as they are decoded.
    Stream,
    /// From an object decoded already.
    Tree,
}

struct Object {
    codes: Vec<FieldCode>,
    keys: Vec<String>,
    members: Vec<Ident>,
    types: Vec<Type>,
}

impl Object {
    fn asserts(&self) -> TokenStream {
        let asserts = self.codes.iter().map(|c| &c.assert);
        quote!(#(#asserts)*)
    }

    fn schema(&self) -> TokenStream {
        let stmts = self.codes.iter().map(|c| &c.schema);
        quote!(#(#stmts)*)
    }
}

/// A string literal as a value of `ty` (a default or an example), through
/// `__private::FromStrLiteral`, located at the literal so that a field that is not a string
/// is reported there.
fn str_literal(p: &TokenStream, ty: &Type, lit: &LitStr) -> TokenStream {
    respan(
        quote!(<#ty as #p::FromStrLiteral>::from_str_literal(#lit)),
        lit.span(),
    )
}

fn opt_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn num_tokens(p: &TokenStream, n: NumLit) -> TokenStream {
    match n.value {
        Num::Int(i) => {
            let lit = Literal::u128_unsuffixed(i.unsigned_abs());
            if i < 0 {
                quote!(#p::Num::Int(-#lit))
            } else {
                quote!(#p::Num::Int(#lit))
            }
        }
        Num::Float(f) => {
            let lit = Literal::f64_unsuffixed(f.abs());
            if f.is_sign_negative() {
                quote!(#p::Num::Float(-#lit))
            } else {
                quote!(#p::Num::Float(#lit))
            }
        }
    }
}

/// The `impl Schema` of a container, with its helper items, in an anonymous `const`.
fn schema_impl(c: &Container) -> TokenStream {
    let mut cg = Gen::new(&c.krate);
    let methods = match &c.body {
        Body::Struct(fields) => struct_methods(&mut cg, c, fields),
        Body::UnitEnum(variants) => unit_enum_methods(&cg, c, variants),
        Body::TaggedEnum { tag, variants, .. } => tagged_enum_methods(&mut cg, c, tag, variants),
    };
    wrap_impl(&cg, &c.ident, &c.generics, &methods)
}

/// The names of the generic parameters of the streaming parse methods: the decoder's lifetime,
/// the decoder and the map access. Type names resolve at the call site, so they must not clash
/// with a type parameter of the user's type.
fn generic_names() -> (syn::Lifetime, Ident, Ident) {
    (
        syn::Lifetime::new("'__schema_de", Span::call_site()),
        Ident::new("__SchemaDecoder", Span::call_site()),
        Ident::new("__SchemaMapAccess", Span::call_site()),
    )
}

/// The anonymous `const` holding the statics, the `impl Schema` and the defaults.
fn wrap_impl(
    cg: &Gen,
    ident: &Ident,
    generics: &syn::Generics,
    methods: &TokenStream,
) -> TokenStream {
    let p = &cg.p;
    let mut generics = generics.clone();
    let params: Vec<Ident> = generics.type_params().map(|t| t.ident.clone()).collect();
    if !params.is_empty() {
        let where_clause = generics.make_where_clause();
        for param in params {
            where_clause
                .predicates
                .push(syn::parse_quote!(#param: #p::Schema));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let statics = &cg.statics;
    let defaults = &cg.defaults;
    let defaults_impl = (!defaults.is_empty()).then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #ident #ty_generics #where_clause {
                #(#defaults)*
            }
        }
    });
    quote! {
        #[allow(non_upper_case_globals, clippy::all, clippy::pedantic)]
        const _: () = {
            #(#statics)*

            #[automatically_derived]
            impl #impl_generics #p::Schema for #ident #ty_generics #where_clause {
                #methods
            }

            #defaults_impl
        };
    }
}

fn struct_methods(cg: &mut Gen, c: &Container, fields: &[Field]) -> TokenStream {
    let object = cg.object(fields);
    let p = &cg.p;
    let Locals {
        g,
        cx,
        value,
        before,
        props,
        required,
        map,
        access,
        ..
    } = &cg.l;
    let short = ast::unraw(&c.ident);
    let description = opt_str(c.description.as_deref());
    let asserts = object.asserts();
    let schema = object.schema();
    let parse = cg.parse_object(&object, &quote!(Self), None, Read::Stream);
    let (de, decoder, map_access) = generic_names();
    let to_json = cg.to_json_object(&object, |m| quote!(&self.#m));
    quote! {
        fn schema(#g: &mut #p::SchemaGen) -> #p::serde_json::Value {
            #asserts
            #g.named(::core::any::type_name::<Self>(), #short, |#g| {
                let mut #props = #p::serde_json::Map::new();
                let mut #required = ::std::vec::Vec::new();
                #schema
                #p::object(#props, #required, #description)
            })
        }

        fn parse(#value: #p::Json, #cx: &mut #p::ParseCx) -> ::core::option::Option<Self> {
            #p::parse_decoded::<Self>(#value, #cx)
        }

        fn parse_text(
            #value: &str,
            #cx: &mut #p::ParseCx,
        ) -> ::core::result::Result<::core::option::Option<Self>, #p::DecodeError> {
            #p::object_text::<Self>(#value, #cx)
        }

        fn parse_de<#de, #decoder: #p::Deserializer<#de>>(
            #value: #decoder,
            #cx: &mut #p::ParseCx,
        ) -> ::core::result::Result<::core::option::Option<Self>, #decoder::Error> {
            #p::object_de::<Self, #decoder>(#value, #cx)
        }

        fn parse_members<#de, #map_access: #p::MapAccess<#de>>(
            mut #access: #map_access,
            #cx: &mut #p::ParseCx,
        ) -> ::core::result::Result<::core::option::Option<Self>, #map_access::Error> {
            #asserts
            let #before = #cx.error_count();
            #parse
        }

        fn to_json(&self) -> #p::serde_json::Value {
            #asserts
            let mut #map = #p::serde_json::Map::new();
            #to_json
            #p::serde_json::Value::Object(#map)
        }
    }
}

/// The description of a string enum: the container's, then each documented variant's.
fn unit_enum_description(c: &Container, variants: &[Variant]) -> Option<String> {
    let items: Vec<String> = variants
        .iter()
        .filter_map(|v| {
            v.description
                .as_ref()
                .map(|d| format!("- `{}`: {}", v.name, d.replace('\n', " ")))
        })
        .collect();
    match (&c.description, items.is_empty()) {
        (d, true) => d.clone(),
        (None, false) => Some(items.join("\n")),
        (Some(d), false) => Some(format!("{d}\n\n{}", items.join("\n"))),
    }
}

fn unit_enum_methods(cg: &Gen, c: &Container, variants: &[Variant]) -> TokenStream {
    let p = &cg.p;
    let Locals { cx, value, .. } = &cg.l;
    let description = opt_str(unit_enum_description(c, variants).as_deref());
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let idents: Vec<&Ident> = variants.iter().map(|v| &v.ident).collect();
    let indices = (0..variants.len()).map(Literal::usize_unsuffixed);
    let indices_de = (0..variants.len()).map(Literal::usize_unsuffixed);
    let i = hidden("index");
    let (de, decoder, _) = generic_names();
    quote! {
        fn schema(_: &mut #p::SchemaGen) -> #p::serde_json::Value {
            #p::string_enum(&[#(#names),*], #description)
        }

        fn parse(#value: #p::Json, #cx: &mut #p::ParseCx) -> ::core::option::Option<Self> {
            match #p::unit_variant(#value, &[#(#names),*], #cx)? {
                #(#indices => ::core::option::Option::Some(Self::#idents),)*
                _ => ::core::option::Option::None,
            }
        }

        fn parse_de<#de, #decoder: #p::Deserializer<#de>>(
            #value: #decoder,
            #cx: &mut #p::ParseCx,
        ) -> ::core::result::Result<::core::option::Option<Self>, #decoder::Error> {
            ::core::result::Result::Ok(
                match #p::variant_de(#value, &[#(#names),*], #cx)? {
                    #(::core::option::Option::Some(#indices_de) => {
                        ::core::option::Option::Some(Self::#idents)
                    })*
                    _ => ::core::option::Option::None,
                }
            )
        }

        fn to_json(&self) -> #p::serde_json::Value {
            let #i: &str = match self {
                #(Self::#idents => #names,)*
            };
            #p::serde_json::Value::String(::std::string::String::from(#i))
        }
    }
}

fn tagged_enum_methods(
    cg: &mut Gen,
    c: &Container,
    tag: &str,
    variants: &[Variant],
) -> TokenStream {
    let objects: Vec<Object> = variants.iter().map(|v| cg.object(&v.fields)).collect();
    let p = &cg.p;
    let Locals {
        g,
        cx,
        value,
        members,
        before,
        props,
        required,
        map,
        ..
    } = &cg.l;
    let short = ast::unraw(&c.ident);
    let description = opt_str(c.description.as_deref());
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let asserts = objects.iter().map(Object::asserts).collect::<TokenStream>();
    let all = hidden("variants");

    let schemas = variants.iter().zip(&objects).map(|(v, o)| {
        let name = &v.name;
        let vdesc = opt_str(v.description.as_deref());
        let stmts = o.schema();
        quote! {{
            let mut #props = #p::serde_json::Map::new();
            let mut #required = ::std::vec::Vec::new();
            #p::tag_property(&mut #props, &mut #required, #tag, #name);
            #stmts
            #all.push(#p::object(#props, #required, #vdesc));
        }}
    });

    let arms = variants
        .iter()
        .zip(&objects)
        .enumerate()
        .map(|(i, (v, o))| {
            let ident = &v.ident;
            let index = Literal::usize_unsuffixed(i);
            let body = cg.parse_object(o, &quote!(Self::#ident), Some(tag), Read::Tree);
            quote!(#index => #body,)
        });

    let to_json = variants.iter().zip(&objects).map(|(v, o)| {
        let ident = &v.ident;
        let name = &v.name;
        let fields = &o.members;
        let inserts = cg.to_json_object(o, |m| quote!(#m));
        quote! {
            Self::#ident { #(#fields),* } => {
                #map.insert(
                    ::std::string::String::from(#tag),
                    #p::serde_json::Value::String(::std::string::String::from(#name)),
                );
                #inserts
            }
        }
    });

    quote! {
        fn schema(#g: &mut #p::SchemaGen) -> #p::serde_json::Value {
            #asserts
            #g.named(::core::any::type_name::<Self>(), #short, |#g| {
                let mut #all = ::std::vec::Vec::new();
                #(#schemas)*
                #p::any_of(#all, #description)
            })
        }

        fn parse(#value: #p::Json, #cx: &mut #p::ParseCx) -> ::core::option::Option<Self> {
            #asserts
            let #before = #cx.error_count();
            let mut #members = #p::object_members(#value, #cx)?;
            match #p::take_tag(&mut #members, #tag, &[#(#names),*], #cx)? {
                #(#arms)*
                _ => ::core::option::Option::None,
            }
        }

        fn to_json(&self) -> #p::serde_json::Value {
            #asserts
            let mut #map = #p::serde_json::Map::new();
            match self {
                #(#to_json)*
            }
            #p::serde_json::Value::Object(#map)
        }
    }
}

/// The generated code of `#[tool]`: the fn as written, the handle struct, its `NAME`, its
/// `IntoTool` impl and its registration.
fn tool_impl(t: &ToolFn) -> TokenStream {
    let krate = &t.krate;
    let p = quote!(#krate::__private);
    let func = &t.func;
    let fn_ident = &func.sig.ident;
    let handle = handle_ident(t);
    let vis = &func.vis;
    let name = &t.name;
    let description = t.description.clone().unwrap_or_default();
    let name_doc = format!("The tool's name: `{name}`.");

    let ctx = hidden("ctx");
    let input = hidden("input");
    let out = hidden("out");
    let tag = hidden("tag");

    // The input type, how the handler's arguments come out of it, and the arguments.
    let (input_items, input_ty, destructure, args) = match &t.input {
        ToolInput::Single { ty } => (
            TokenStream::new(),
            quote!(#ty),
            TokenStream::new(),
            vec![input.clone()],
        ),
        ToolInput::Params(params) => {
            let struct_ident = hidden("__ToolInput");
            let fields: Vec<&Field> = params.iter().map(|param| &param.field).collect();
            let items = input_struct(t, &struct_ident, &fields);
            let locals: Vec<Ident> = (0..params.len())
                .map(|i| format_ident!("__arg_{}", i, span = Span::mixed_site()))
                .collect();
            let members = fields.iter().map(|f| &f.member);
            let destructure = quote!(let #struct_ident { #(#members: #locals),* } = #input;);
            (items, quote!(#struct_ident), destructure, locals)
        }
    };
    let ctx_arg = t.ctx.map(|c| {
        if c.by_ref {
            quote!(&#ctx)
        } else {
            quote!(#ctx)
        }
    });
    let call_args: Vec<TokenStream> = ctx_arg
        .into_iter()
        .chain(args.iter().map(|a| quote!(#a)))
        .collect();
    let await_ = func.sig.asyncness.map(|_| quote!(.await));
    let ctx_pat = if t.ctx.is_some() {
        quote!(#ctx)
    } else {
        quote!(_)
    };
    // The `Serialize` check points at the success type: `T` of `Result<T, E>` (or of an alias
    // such as `anyhow::Result<T>`), else the whole return type.
    let output_span = match &func.sig.output {
        syn::ReturnType::Default => fn_ident.span(),
        syn::ReturnType::Type(_, ty) => syn::spanned::Spanned::span(success_type(ty)),
    };
    let render = respan(
        quote!(#p::render_output(#tag.into_result(#out))),
        output_span,
    );
    let handler = quote! {
        |#ctx_pat: #p::Context, #input: #input_ty| async move {
            #[allow(unused_imports)]
            use #p::{ViaPlain as _, ViaResult as _};
            #destructure
            let #out = #fn_ident(#(#call_args),*) #await_;
            let #tag = (&#p::Probe(&#out)).result_tag();
            #render
        }
    };

    let (policy_items, available) = match &t.args.available {
        Some(path) => {
            let policy = hidden("__ToolPolicy");
            let span = syn::spanned::Spanned::span(path);
            let ctx_at = Ident::new("ctx", Span::mixed_site().located_at(span));
            let call = respan(quote!(#p::call_policy(#path, #ctx_at)), span);
            let finish = respan(
                quote!(#p::policy_result(#tag.into_future(#out).await)),
                span,
            );
            (
                quote! {
                    struct #policy;

                    #[automatically_derived]
                    impl #p::Policy for #policy {
                        fn check<'a>(
                            &'a self,
                            #ctx_at: &'a #p::Context,
                        ) -> #p::BoxFuture<'a, ::core::result::Result<bool, #p::BoxError>> {
                            ::std::boxed::Box::pin(async move {
                                #[allow(unused_imports)]
                                use #p::{ViaFuture as _, ViaReady as _};
                                let #out = #call;
                                let #tag = (&#p::Probe(&#out)).tag();
                                #finish
                            })
                        }
                    }
                },
                quote!(.available(#policy)),
            )
        }
        None => (TokenStream::new(), TokenStream::new()),
    };

    let tool_static = hidden("TOOL");
    let site = hidden("SITE");
    let make = hidden("__make_tool");
    quote! {
        #func

        #[doc = #description]
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::core::marker::Copy,
            ::core::default::Default,
        )]
        #vis struct #handle;

        impl #handle {
            #[doc = #name_doc]
            pub const NAME: &'static str = #name;
        }

        #[allow(non_upper_case_globals, non_camel_case_types, clippy::all, clippy::pedantic)]
        const _: () = {
            #input_items
            #policy_items

            const #site: #p::Site = #p::Site {
                file: ::core::file!(),
                line: ::core::line!(),
                column: ::core::column!(),
            };

            #[automatically_derived]
            impl #p::IntoTool for #handle {
                fn into_tool(self) -> #p::Tool {
                    static #tool_static: ::std::sync::OnceLock<#p::Tool> =
                        ::std::sync::OnceLock::new();
                    ::core::clone::Clone::clone(#tool_static.get_or_init(|| {
                        #p::Tool::builder(#handle::NAME, #description)
                            .site(#site)
                            .rendered_handler::<#input_ty, _, _>(#handler)
                            #available
                            .build()
                    }))
                }
            }

            fn #make() -> #p::Tool {
                #p::IntoTool::into_tool(#handle)
            }

            #p::inventory::submit! {
                #p::Registration::new(#handle::NAME, #site, #make)
            }
        };
    }
}

/// The success type of a return type: `T` of `Result<T, E>` or of a `…Result<T>` alias, else
/// the type itself.
fn success_type(ty: &Type) -> &Type {
    if let Some(seg) = ast::last_segment(ty)
        && seg.ident.to_string().ends_with("Result")
        && let syn::PathArguments::AngleBracketed(args) = &seg.arguments
        && let Some(syn::GenericArgument::Type(t)) = args.args.first()
    {
        return t;
    }
    ty
}

/// The hidden input struct of a tool with plain parameters, with its `Schema` impl.
fn input_struct(t: &ToolFn, ident: &Ident, fields: &[&Field]) -> TokenStream {
    let mut cg = Gen::new(&t.krate);
    let owned: Vec<Field> = fields
        .iter()
        .map(|f| Field {
            member: f.member.clone(),
            ty: f.ty.clone(),
            key: f.key.clone(),
            attrs: f.attrs.clone(),
            description: f.description.clone(),
            span: f.span,
        })
        .collect();
    let container = Container {
        ident: ident.clone(),
        generics: syn::Generics::default(),
        krate: t.krate.clone(),
        attrs: crate::attr::ContainerAttrs::default(),
        description: None,
        body: Body::Struct(Vec::new()),
    };
    let methods = struct_methods(&mut cg, &container, &owned);
    let members = owned.iter().map(|f| &f.member);
    let types = owned.iter().map(|f| &f.ty);
    let schema = wrap_impl(&cg, ident, &container.generics, &methods);
    quote! {
        struct #ident {
            #(#members: #types,)*
        }

        #schema
    }
}

/// The ident of the handle struct of a tool: `lookup-window` → `LookupWindow`, prefixed with
/// `Tool` when that would not be an identifier (`3d-render` → `Tool3dRender`).
pub(crate) fn handle_ident(t: &ToolFn) -> Ident {
    let mut name = tool_core::name::type_name_for(&t.name);
    if name.is_empty() || name == "Self" || name.starts_with(|c: char| c.is_ascii_digit()) {
        name = format!("Tool{name}");
    }
    Ident::new(&name, t.name_span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn derive_str(input: DeriveInput) -> String {
        derive(&input).to_string()
    }

    fn tool_str(args: TokenStream, item: TokenStream) -> String {
        tool(args, item).to_string()
    }

    #[test]
    fn derive_reports_every_problem_and_still_implements_schema() {
        let out = derive_str(parse_quote! {
            struct Query {
                #[schema(min_len = 5, max_len = 1)]
                a: String,
                #[schema(format = "phone")]
                b: String,
                #[schema(default)]
                c: Option<u32>,
            }
        });
        assert_eq!(out.matches("compile_error").count(), 3, "{out}");
        assert!(out.contains("min_len = 5"), "{out}");
        assert!(out.contains("unknown `format`"), "{out}");
        assert!(out.contains("already optional"), "{out}");
        // The placeholder impl keeps uses of `Query` from failing too.
        assert!(out.contains("Schema for Query"), "{out}");
        assert!(out.contains("unreachable"), "{out}");
    }

    #[test]
    fn derive_names_support_through_the_facade_or_the_override() {
        let out = derive_str(parse_quote! {
            struct Query { id: String }
        });
        assert!(
            out.contains(":: tool_runtime :: __private :: Schema for Query"),
            "{out}"
        );
        assert!(!out.contains("compile_error"), "{out}");
        let out = derive_str(parse_quote! {
            #[schema(crate = crate::facade)]
            struct Query { id: String }
        });
        assert!(
            out.contains("crate :: facade :: __private :: Schema for Query"),
            "{out}"
        );
        assert!(!out.contains(":: tool_runtime"), "{out}");
    }

    #[test]
    fn derive_rejects_tuple_shapes() {
        let out = derive_str(parse_quote!(
            struct Pair(u32, u32);
        ));
        assert!(out.contains("needs named fields"), "{out}");
        let out = derive_str(parse_quote!(
            enum E {
                A(u32),
                B { x: u32 },
            }
        ));
        assert!(out.contains("tuple variant"), "{out}");
    }

    #[test]
    fn tool_generates_a_handle_named_after_the_tool() {
        let out = tool_str(
            quote!(name = "lookup-window"),
            quote! {
                /// Finds a window.
                pub async fn find_window(input: Query) -> u32 { 1 }
            },
        );
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("pub struct LookupWindow"), "{out}");
        assert!(
            out.contains("pub const NAME : & 'static str = \"lookup-window\""),
            "{out}"
        );
        assert!(out.contains("inventory :: submit"), "{out}");
        assert!(
            out.contains("pub async fn find_window (input : Query)"),
            "{out}"
        );
    }

    #[test]
    fn tool_checks_names_and_proposes_one() {
        let out = tool_str(
            quote!(name = "Lookup_Window"),
            quote! {
                /// Finds a window.
                fn find() -> u32 { 1 }
            },
        );
        assert!(out.contains("try `lookup-window`"), "{out}");
        // The fn is still emitted.
        assert!(out.contains("fn find ()"), "{out}");
        let out = tool_str(
            TokenStream::new(),
            quote! {
                /// Finds.
                fn find__it() -> u32 { 1 }
            },
        );
        assert!(out.contains("derived from this fn's name"), "{out}");
        assert!(out.contains("name = \\\"find-it\\\""), "{out}");
    }

    #[test]
    fn tool_strips_schema_attributes_from_parameters() {
        let out = tool_str(
            TokenStream::new(),
            quote! {
                /// Adds.
                fn add(#[schema(describe = "a")] a: i64, #[schema(describe = "b")] b: i64) -> i64 { a + b }
            },
        );
        assert!(out.contains("fn add (a : i64 , b : i64)"), "{out}");
        assert!(out.contains("struct __ToolInput"), "{out}");
    }

    #[test]
    fn handle_idents_are_identifiers() {
        let mut errors = Errors::new();
        let t = ToolFn::from_syn(
            quote!(name = "3d-render"),
            parse_quote!(
                fn render() {}
            ),
            &mut errors,
        );
        assert_eq!(handle_ident(&t).to_string(), "Tool3dRender");
    }

    #[test]
    fn respan_moves_every_token() {
        let span = Span::call_site();
        let out = respan(quote!(a::b(c, [d])), span);
        assert_eq!(out.to_string(), "a :: b (c , [d])");
    }
}
