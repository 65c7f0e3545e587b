//! The `Schema` methods of a struct: an object, parsed as it is decoded. The hidden input
//! struct of a `#[tool]` with plain parameters is one too.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use super::object::{Object, Read};
use super::{Codegen, Locals, opt_str};
use crate::ast::{self, Field};
use crate::expand::Tokens;

/// The methods of `impl Schema` for the struct `ident` with `fields`.
pub(super) fn methods<'a>(
    codegen: &mut Codegen,
    ident: &Ident,
    description: Option<&str>,
    fields: impl IntoIterator<Item = &'a Field>,
) -> TokenStream {
    let object = codegen.object(fields);
    let private = &codegen.private;
    let Locals {
        generator,
        properties,
        required,
        ..
    } = &codegen.locals;
    let short = ast::unraw(ident);
    let description = opt_str(description);
    let asserts = object.asserts();
    let schema = codegen.object_schema(&object);
    let (parse_methods, read_body) = parse_methods(codegen, &object);
    let to_json = codegen.to_json_members(&object, &Tokens::new(quote!(&self.)));
    let methods = quote! {
        fn schema(#generator: &mut #private::SchemaGen) -> #private::serde_json::Value {
            #asserts
            #generator.named(::core::any::type_name::<Self>(), #short, |#generator| {
                let mut #properties = #private::serde_json::Map::new();
                let mut #required = ::std::vec::Vec::new();
                #schema
                #private::object(#properties, #required, #description)
            })
        }

        #parse_methods

        fn to_json(&self) -> #private::serde_json::Value {
            #asserts
            // In a closure, which incremental builds compile apart from the user's code.
            (|| #private::object_json([#to_json]))()
        }
    };
    codegen.read_body = Some(read_body);
    methods
}

/// The parse methods of a struct, and its `ReadBody::read_body`: a decoded value is written
/// back as text and read again, so that the only parser compiled per struct is `read_body`,
/// one call reading the members into the fields' slots (generic over a marker, so that
/// incremental builds keep it apart from the user's code).
fn parse_methods(codegen: &Codegen, object: &Object<'_>) -> (TokenStream, TokenStream) {
    let private = &codegen.private;
    let Locals {
        cx,
        value,
        before,
        access,
        ..
    } = &codegen.locals;
    let asserts = object.asserts();
    let parse = codegen.parse_object(object, &quote!(Self), None, Read::Reader);
    let methods = quote! {
        fn parse(#value: #private::Json, #cx: &mut #private::ParseCx) -> ::core::option::Option<Self> {
            #private::parse_decoded::<Self>(#value, #cx)
        }

        fn parse_read(
            #access: &mut #private::Reader<'_>,
            #cx: &mut #private::ParseCx,
        ) -> ::core::result::Result<::core::option::Option<Self>, #private::ReadError> {
            <Self as #private::ReadBody>::read_body::<()>(#access, #cx)
        }
    };
    let read_body = quote! {
        fn read_body<__SchemaMarker>(
            #access: &mut #private::Reader<'_>,
            #cx: &mut #private::ParseCx,
        ) -> ::core::result::Result<::core::option::Option<Self>, #private::ReadError> {
            #asserts
            if !#private::open_object(#access, #cx)? {
                return ::core::result::Result::Ok(::core::option::Option::None);
            }
            let #before = #cx.error_count();
            #parse
        }
    };
    (methods, read_body)
}

/// The hidden input struct `ident` of a tool with plain parameters, with its `Schema` impl.
pub(in crate::expand) fn input_struct<'a>(
    krate: &TokenStream,
    ident: &Ident,
    fields: impl IntoIterator<Item = &'a Field> + Clone,
) -> TokenStream {
    let mut codegen = Codegen::new(krate);
    let methods = methods(&mut codegen, ident, None, fields.clone());
    let members = fields.clone().into_iter().map(|field| &field.member);
    let types = fields.into_iter().map(|field| &field.ty);
    let schema = codegen.wrap_impl(ident, &syn::Generics::default(), &methods);
    quote! {
        struct #ident {
            #(#members: #types,)*
        }

        #schema
    }
}
