//! The `Schema` methods of an enum: a string enum when every variant is a unit, else an
//! `anyOf` of objects told apart by a tag property.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::object::{Object, Read};
use super::{Codegen, Locals, opt_str};
use crate::ast::{self, Container, Variant};
use crate::expand::hidden;

/// The methods of `impl Schema` for an enum of unit variants: a string with an `enum`.
pub(super) fn unit_methods(
    codegen: &Codegen,
    container: &Container,
    variants: &[Variant],
) -> TokenStream {
    let private = &codegen.private;
    let Locals { cx, value, .. } = &codegen.locals;
    let description = opt_str(unit_description(container, variants).as_deref());
    let names: Vec<&str> = variants
        .iter()
        .map(|variant| variant.name.as_str())
        .collect();
    let idents = variants.iter().map(|variant| &variant.ident);
    let idents_de = idents.clone();
    let idents_json = idents.clone();
    let indices = (0..variants.len()).map(Literal::usize_unsuffixed);
    let indices_de = indices.clone();
    let matched = hidden("index");
    quote! {
        fn schema(_: &mut #private::SchemaGen) -> #private::serde_json::Value {
            #private::string_enum(&[#(#names),*], #description)
        }

        fn parse(#value: #private::Json, #cx: &mut #private::ParseCx) -> ::core::option::Option<Self> {
            match #private::unit_variant(#value, &[#(#names),*], #cx)? {
                #(#indices => ::core::option::Option::Some(Self::#idents),)*
                _ => ::core::option::Option::None,
            }
        }

        fn parse_read(
            #value: &mut #private::Reader<'_>,
            #cx: &mut #private::ParseCx,
        ) -> ::core::result::Result<::core::option::Option<Self>, #private::ReadError> {
            ::core::result::Result::Ok(
                match #private::variant_read(#value, &[#(#names),*], #cx)? {
                    #(::core::option::Option::Some(#indices_de) => {
                        ::core::option::Option::Some(Self::#idents_de)
                    })*
                    _ => ::core::option::Option::None,
                }
            )
        }

        fn to_json(&self) -> #private::serde_json::Value {
            let #matched: &str = match self {
                #(Self::#idents_json => #names,)*
            };
            #private::serde_json::Value::String(::std::string::String::from(#matched))
        }
    }
}

/// The description of a string enum: the container's, then each documented variant's.
fn unit_description(container: &Container, variants: &[Variant]) -> Option<String> {
    let items: Vec<String> = variants
        .iter()
        .filter_map(|variant| {
            let description = variant.description.as_ref()?;
            Some(format!(
                "- `{}`: {}",
                variant.name,
                description.replace('\n', " ")
            ))
        })
        .collect();
    match (&container.description, items.is_empty()) {
        (description, true) => description.clone(),
        (None, false) => Some(items.join("\n")),
        (Some(description), false) => Some(format!("{description}\n\n{}", items.join("\n"))),
    }
}

/// The methods of `impl Schema` for an enum tagged by the property `tag`: an `anyOf` of one
/// object per variant.
pub(super) fn tagged_methods(
    codegen: &mut Codegen,
    container: &Container,
    tag: &str,
    variants: &[Variant],
) -> TokenStream {
    let objects: Vec<Object<'_>> = variants
        .iter()
        .map(|variant| codegen.object(&variant.fields))
        .collect();
    let private = &codegen.private;
    let Locals {
        generator,
        cx,
        value,
        members,
        before,
        map,
        ..
    } = &codegen.locals;
    let short = ast::unraw(&container.ident);
    let description = opt_str(container.description.as_deref());
    let names = variants.iter().map(|variant| variant.name.as_str());
    let asserts: TokenStream = objects.iter().map(Object::asserts).collect();
    let all = hidden("variants");
    let schemas = variant_schemas(codegen, tag, variants, &objects, &all);
    let arms = parse_arms(codegen, tag, variants, &objects);
    let to_json = to_json_arms(codegen, tag, variants, &objects);
    quote! {
        fn schema(#generator: &mut #private::SchemaGen) -> #private::serde_json::Value {
            #asserts
            #generator.named(::core::any::type_name::<Self>(), #short, |#generator| {
                let mut #all = ::std::vec::Vec::new();
                #schemas
                #private::any_of(#all, #description)
            })
        }

        fn parse(#value: #private::Json, #cx: &mut #private::ParseCx) -> ::core::option::Option<Self> {
            #asserts
            let #before = #cx.error_count();
            let mut #members = #private::object_members(#value, #cx)?;
            match #private::take_tag(&mut #members, #tag, &[#(#names),*], #cx)? {
                #arms
                _ => ::core::option::Option::None,
            }
        }

        fn to_json(&self) -> #private::serde_json::Value {
            #asserts
            let mut #map = #private::serde_json::Map::new();
            match self {
                #to_json
            }
            #private::serde_json::Value::Object(#map)
        }
    }
}

/// Pushes each variant's object schema, its tag first, onto `all`.
fn variant_schemas(
    codegen: &Codegen,
    tag: &str,
    variants: &[Variant],
    objects: &[Object<'_>],
    all: &syn::Ident,
) -> TokenStream {
    let private = &codegen.private;
    let Locals {
        properties,
        required,
        ..
    } = &codegen.locals;
    let schemas = variants.iter().zip(objects).map(|(variant, object)| {
        let name = &variant.name;
        let description = opt_str(variant.description.as_deref());
        let statements = codegen.object_schema(object);
        quote! {{
            let mut #properties = #private::serde_json::Map::new();
            let mut #required = ::std::vec::Vec::new();
            #private::tag_property(&mut #properties, &mut #required, #tag, #name);
            #statements
            #all.push(#private::object(#properties, #required, #description));
        }}
    });
    quote!(#(#schemas)*)
}

/// One arm per variant, by the index of its tag: parses the other members into the variant.
fn parse_arms(
    codegen: &Codegen,
    tag: &str,
    variants: &[Variant],
    objects: &[Object<'_>],
) -> TokenStream {
    let arms = variants
        .iter()
        .zip(objects)
        .enumerate()
        .map(|(position, (variant, object))| {
            let ident = &variant.ident;
            let index = Literal::usize_unsuffixed(position);
            let body = codegen.parse_object(object, &quote!(Self::#ident), Some(tag), Read::Tree);
            quote!(#index => #body,)
        });
    quote!(#(#arms)*)
}

/// One arm per variant: renders its tag and its fields into `map`.
fn to_json_arms(
    codegen: &Codegen,
    tag: &str,
    variants: &[Variant],
    objects: &[Object<'_>],
) -> TokenStream {
    let private = &codegen.private;
    let map = &codegen.locals.map;
    let arms = variants.iter().zip(objects).map(|(variant, object)| {
        let ident = &variant.ident;
        let name = &variant.name;
        let members = object.members();
        let inserts = codegen.to_json_object(object, |member| quote!(#member));
        quote! {
            Self::#ident { #(#members),* } => {
                #map.insert(
                    ::std::string::String::from(#tag),
                    #private::serde_json::Value::String(::std::string::String::from(#name)),
                );
                #inserts
            }
        }
    });
    quote!(#(#arms)*)
}
