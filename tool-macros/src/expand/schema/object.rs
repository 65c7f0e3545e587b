//! The fields of one object (a struct, or a variant of a tagged enum) together: its
//! properties, the parsing of its members into a value, and its rendering back into JSON.

use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::{Ident, Type};

use super::field::FieldCode;
use super::{Codegen, Locals};
use crate::ast::Field;
use crate::expand::{Tokens, hidden};

/// The code of an object's fields, with the fields.
pub(super) struct Object<'a> {
    fields: Vec<&'a Field>,
    codes: Vec<FieldCode>,
}

/// Where the members of an object are read from.
#[derive(Clone, Copy)]
pub(super) enum Read {
    /// From the reader, as they are read.
    Reader,
    /// From an object decoded already.
    Tree,
}

impl<'a> Object<'a> {
    /// The assertions that go first in every method: each field type is `Schema`.
    pub(super) fn asserts(&self) -> TokenStream {
        let asserts = self.codes.iter().map(|code| &code.assert);
        quote!(#(#asserts)*)
    }

    /// The fields' types.
    fn types(&self) -> impl Iterator<Item = &'a Type> + '_ {
        self.fields.iter().map(|field| &field.ty)
    }

    /// The fields' Rust names.
    pub(super) fn members(&self) -> impl Iterator<Item = &'a Ident> + '_ {
        self.fields.iter().map(|field| &field.member)
    }

    fn keys(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.fields.iter().map(|field| field.key.as_str())
    }
}

impl Codegen {
    /// The code of an object's fields, in order.
    pub(super) fn object<'a>(&mut self, fields: impl IntoIterator<Item = &'a Field>) -> Object<'a> {
        let fields: Vec<&Field> = fields.into_iter().collect();
        let codes = fields.iter().map(|field| self.field(field)).collect();
        Object { fields, codes }
    }

    /// The statements rendering an object's properties into `properties`/`required`.
    pub(super) fn object_schema(&self, object: &Object<'_>) -> TokenStream {
        let private = &self.private;
        let Locals {
            generator,
            properties,
            required,
            ..
        } = &self.locals;
        let types = object.types();
        let codes = &object.codes;
        let keys = codes.iter().map(|code| &code.key);
        let descriptions = codes.iter().map(|code| &code.description);
        let rules = codes.iter().map(|code| &code.rules_ref);
        let defaults = codes.iter().map(|code| &code.default_json);
        let examples = codes.iter().map(|code| &code.example_json);
        quote! {
            #(#private::property::<#types>(
                #generator, &mut #properties, &mut #required, #keys, #descriptions, #rules,
                #defaults, #examples,
            );)*
        }
    }

    /// Parses the members of one object into `ctor { fields }`, in the order they were sent,
    /// then finishes every field (defaults, `required`) and builds the value when nothing was
    /// recorded since `before`. `Read::Reader` reads them from the
    /// reader `access` (a block of type `Result<Option<_>, _>`), `Read::Tree` from the
    /// decoded `members` (a block of type `Option<_>`); both return early when anything was
    /// recorded since `before`. `extra` is a key that is allowed but already handled (the tag
    /// of an enum).
    pub(super) fn parse_object(
        &self,
        object: &Object<'_>,
        ctor: &TokenStream,
        extra: Option<&str>,
        read: Read,
    ) -> TokenStream {
        let private = &self.private;
        let cx = &self.locals.cx;
        let before = &self.locals.before;
        // The keys a violation lists, in the order of their bytes: the order a schema's
        // `properties` has once decoded, so that a schema validator lists them alike (T1).
        let mut allowed: Vec<&str> = extra.into_iter().chain(object.keys()).collect();
        allowed.sort_unstable();
        let (dispatch, none, some) = match read {
            Read::Reader => (
                self.read_reader(object, &allowed),
                quote!(::core::result::Result::Ok(::core::option::Option::None)),
                quote!(::core::result::Result::Ok),
            ),
            Read::Tree => (
                self.read_tree(object, &allowed),
                quote!(::core::option::Option::None),
                quote!(),
            ),
        };
        let slots: Vec<&Ident> = object.codes.iter().map(|code| &code.slot).collect();
        let types: Vec<&Type> = object.types().collect();
        let keys = object.codes.iter().map(|code| &code.key);
        let defaults = object.codes.iter().map(|code| &code.default_arg);
        let parsed: Vec<&Ident> = object.codes.iter().map(|code| &code.parsed).collect();
        let members = object.members();
        quote! {{
            #(let mut #slots: #private::Slot<#types> = #private::Slot::Absent;)*
            #dispatch
            #(
                let #parsed = #private::finish_field::<#types>(#slots, #keys, #cx, #defaults);
            )*
            // One match of every field at once: what is dropped on failure is one tuple.
            match (#(#parsed,)*) {
                (#(::core::option::Option::Some(#parsed),)*) if #cx.error_count() == #before => {
                    #some(::core::option::Option::Some(#ctor { #(#members: #parsed),* }))
                }
                _ => #none,
            }
        }}
    }

    /// Reads each member from the reader `access` as it is read, into its field's slot: one
    /// call of `read_members` with an entry per field (compiled once per field type).
    fn read_reader(&self, object: &Object<'_>, allowed: &[&str]) -> TokenStream {
        let private = &self.private;
        let Locals { cx, access, .. } = &self.locals;
        let keys = object.keys();
        let types = object.types();
        let codes = &object.codes;
        let slots = codes.iter().map(|code| &code.slot);
        let segments = codes.iter().map(|code| &code.segment);
        let rules = codes.iter().map(|code| &code.rules_ref);
        let checks = codes.iter().map(|code| &code.check);
        quote! {
            #private::read_members(
                #access, #cx, &[#(#keys),*], &[#(#allowed),*], &mut [#(
                    &mut #private::field::<#types>(&mut #slots, #segments, #rules, #checks)
                        as &mut dyn #private::ReadField
                ),*],
            )?;
        }
    }

    /// Reads each member of an object decoded already into its field's slot.
    fn read_tree(&self, object: &Object<'_>, allowed: &[&str]) -> TokenStream {
        let private = &self.private;
        let Locals {
            cx, members, value, ..
        } = &self.locals;
        let key = hidden("key");
        let keys = object.keys();
        let indices = (0..object.codes.len()).map(Literal::usize_unsuffixed);
        let types = object.types();
        let codes = &object.codes;
        let slots = codes.iter().map(|code| &code.slot);
        let segments = codes.iter().map(|code| &code.segment);
        let rules = codes.iter().map(|code| &code.rules_ref);
        let checks = codes.iter().map(|code| &code.check);
        quote! {
            for (#key, #value) in #members {
                match #private::field_index(&[#(#keys),*], &#key) {
                    #(::core::option::Option::Some(#indices) => #slots =
                        #private::field_tree::<#types>(#value, #segments, #cx, #rules, #checks),)*
                    _ => #private::unknown_field(&#key, &[#(#allowed),*], #cx),
                }
            }
        }
    }

    /// An object's fields as the members `object_json` takes, `(key, value),`, reading each
    /// through `access`, in order.
    pub(super) fn to_json_members(&self, object: &Object<'_>, access: &Tokens) -> TokenStream {
        let private = &self.private;
        let keys = object.keys();
        let types = object.types();
        let members = object.members();
        quote!(#((#keys, <#types as #private::Schema>::to_json(#access #members)),)*)
    }

    /// Renders an object's fields into `map`, reading each through `access`.
    pub(super) fn to_json_object(
        &self,
        object: &Object<'_>,
        access: impl Fn(&Ident) -> TokenStream,
    ) -> TokenStream {
        let private = &self.private;
        let map = &self.locals.map;
        let inserts = object.fields.iter().map(|field| {
            let key = &field.key;
            let ty = &field.ty;
            let value = access(&field.member);
            quote! {
                #map.insert(
                    ::std::string::String::from(#key),
                    <#ty as #private::Schema>::to_json(#value),
                );
            }
        });
        quote!(#(#inserts)*)
    }
}
