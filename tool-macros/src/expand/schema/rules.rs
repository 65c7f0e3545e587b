//! A field's constraints: the `static Rules` the runtime renders and enforces, and the check
//! its parsed value goes through, spanned so that a constraint on a type it does not apply to
//! is reported at the attribute.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Ident;
use tool_rules::Format;

use super::Codegen;
use crate::ast::Field;
use crate::attr::{FieldAttrs, ItemAttrs, Keyed, Num, NumLit, key_of};
use crate::expand::{Tokens, hidden, respan};

impl Codegen {
    /// The `static` holding a field's constraints, if it has any.
    pub(super) fn rules(&mut self, attrs: &FieldAttrs, number: usize) -> Option<Ident> {
        let mut parts = Vec::new();
        parts.extend(usize_part("min_len", attrs.min_len.as_ref()));
        parts.extend(usize_part("max_len", attrs.max_len.as_ref()));
        parts.extend(self.string_parts(attrs, number));
        parts.extend(self.number_parts(attrs));
        parts.extend(usize_part("min_items", attrs.min_items.as_ref()));
        parts.extend(usize_part("max_items", attrs.max_items.as_ref()));
        if attrs
            .unique_items
            .as_ref()
            .is_some_and(|unique| unique.value)
        {
            parts.push(quote!(unique_items: true));
        }
        if let Some(items) = &attrs.items {
            let number = self.next();
            if let Some(ident) = self.rules(&items.value.rules, number) {
                parts.push(quote!(items: ::core::option::Option::Some(&#ident)));
            }
        }
        if parts.is_empty() {
            return None;
        }
        let private = &self.private;
        let ident = format_ident!("__SCHEMA_RULES_{}", number);
        self.statics.push(quote! {
            static #ident: #private::Rules = #private::Rules { #(#parts,)* ..#private::Rules::NONE };
        });
        Some(ident)
    }

    /// `pattern` (its own `static`, compiled once), `format` and `one_of`.
    fn string_parts(&mut self, attrs: &FieldAttrs, number: usize) -> Vec<TokenStream> {
        let private = &self.private;
        let mut parts = Vec::new();
        if let Some(pattern) = &attrs.pattern {
            let ident = format_ident!("__SCHEMA_PATTERN_{}", number);
            let source = &pattern.value;
            self.statics
                .push(quote!(static #ident: #private::Pattern = #private::Pattern::new(#source);));
            parts.push(quote!(pattern: ::core::option::Option::Some(&#ident)));
        }
        if let Some(format) = &attrs.format {
            let name = format.value.value();
            let value = match Format::from_name(&name) {
                Some(Format::Email) => quote!(#private::Format::Email),
                Some(Format::Uri) => quote!(#private::Format::Uri),
                Some(Format::Uuid) => quote!(#private::Format::Uuid),
                Some(Format::Date) => quote!(#private::Format::Date),
                Some(Format::DateTime) => quote!(#private::Format::DateTime),
                // `valid` rejected unknown names; this is a format added to the rules that
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
        if let Some(one_of) = &attrs.one_of {
            let items = &one_of.value.0;
            parts.push(quote!(one_of: &[#(#items),*]));
        }
        parts
    }

    /// The bounds of a number: `range`, or the separate bounds, and `multiple_of`.
    fn number_parts(&self, attrs: &FieldAttrs) -> Vec<TokenStream> {
        let value = |keyed: Option<&Keyed<NumLit>>| keyed.map(|keyed| keyed.value);
        let (mut minimum, mut maximum, mut exclusive_maximum) = (
            value(attrs.min.as_ref()),
            value(attrs.max.as_ref()),
            value(attrs.exclusive_max.as_ref()),
        );
        if let Some(range) = &attrs.range {
            minimum = range.value.start;
            if range.value.inclusive {
                maximum = range.value.end;
            } else {
                exclusive_maximum = range.value.end;
            }
        }
        [
            ("minimum", minimum),
            ("maximum", maximum),
            ("exclusive_minimum", value(attrs.exclusive_min.as_ref())),
            ("exclusive_maximum", exclusive_maximum),
            ("multiple_of", value(attrs.multiple_of.as_ref())),
        ]
        .into_iter()
        .filter_map(|(name, bound)| {
            let name = Ident::new(name, Span::call_site());
            let number = num_tokens(&self.private, bound?);
            Some(quote!(#name: ::core::option::Option::Some(#number)))
        })
        .collect()
    }

    /// The check a field's value goes through once parsed: its constraints (each kind spanned
    /// at the first attribute of that kind, so that a constraint on a type it does not apply
    /// to is an error there) and its validator (spanned at its path).
    pub(super) fn check(&self, field: &Field, rules: Option<&Ident>) -> Tokens {
        let private = &self.private;
        let attrs = &field.attrs;
        let string_key = string_key(attrs);
        let number_key = number_key(attrs);
        let array_key = first_key([
            key_of(attrs.min_items.as_ref()),
            key_of(attrs.max_items.as_ref()),
            key_of(attrs.unique_items.as_ref()),
        ]);
        let mut calls = Vec::new();
        for (key, check) in [
            (string_key, "check_string"),
            (number_key, "check_number"),
            (array_key, "check_array"),
        ] {
            if let (Some(span), Some(rules)) = (key, rules) {
                let check = Ident::new(check, span);
                let (value, cx) = located_locals(span);
                let path = respan(quote!(#private::), span);
                calls.push(quote_spanned!(span=> #path #check(#value, &#rules, #cx);));
            }
        }
        if let (Some(items), Some(rules)) = (&attrs.items, rules) {
            calls.push(self.check_items(items, rules));
        }
        if let Some(validate) = &attrs.validate {
            let span = syn::spanned::Spanned::span(&validate.value);
            let run = respan(quote!(#private::run_field_validator), span);
            let (value, cx) = located_locals(span);
            let path = &validate.value;
            calls.push(quote_spanned!(span=> #run(#value, #path, #cx);));
        }
        if calls.is_empty() {
            return self.shared.no_check.clone();
        }
        let value = hidden("v");
        let cx = hidden("cx");
        let ty = &field.ty;
        Tokens::new(quote! {
            |#value: &#ty, #cx: &mut #private::ParseCx| {
                #(#calls)*
            }
        })
    }
}

impl Codegen {
    /// The check of each item of a list (`items(...)`): `check_items` spanned at `items`, so
    /// that a field that is not a list is reported there, and in it each kind of constraint
    /// spanned at its first key, so that one the item type does not take is reported there.
    fn check_items(&self, items: &Keyed<ItemAttrs>, rules: &Ident) -> TokenStream {
        let private = &self.private;
        let attrs = &items.value.rules;
        let string_key = string_key(attrs);
        let number_key = number_key(attrs);
        let item = Ident::new("item", Span::mixed_site());
        let item_rules = Ident::new("item_rules", Span::mixed_site());
        let item_cx = Ident::new("item_cx", Span::mixed_site());
        let mut calls = Vec::new();
        for (key, check) in [(string_key, "check_string"), (number_key, "check_number")] {
            if let Some(span) = key {
                let check = Ident::new(check, span);
                let path = respan(quote!(#private::), span);
                let item = Ident::new("item", Span::mixed_site().located_at(span));
                calls.push(quote_spanned!(span=> #path #check(#item, #item_rules, #item_cx);));
            }
        }
        let span = items.key;
        let (value, cx) = located_locals(span);
        let run = respan(quote!(#private::check_items), span);
        quote_spanned! {span=>
            #run(#value, &#rules, #cx, |#item, #item_rules, #item_cx| { #(#calls)* });
        }
    }
}

/// `name: Some(n)`, for a `usize` constraint that was given.
fn usize_part(name: &str, keyed: Option<&Keyed<usize>>) -> Option<TokenStream> {
    keyed.map(|keyed| {
        let name = Ident::new(name, Span::call_site());
        let value = Literal::usize_unsuffixed(keyed.value);
        quote!(#name: ::core::option::Option::Some(#value))
    })
}

/// The first of the keys that were given.
/// The first string constraint of `attrs` (where a type that takes none is reported).
fn string_key(attrs: &FieldAttrs) -> Option<Span> {
    first_key([
        key_of(attrs.min_len.as_ref()),
        key_of(attrs.max_len.as_ref()),
        key_of(attrs.pattern.as_ref()),
        key_of(attrs.format.as_ref()),
        key_of(attrs.one_of.as_ref()),
    ])
}

/// The first number constraint of `attrs`.
fn number_key(attrs: &FieldAttrs) -> Option<Span> {
    first_key([
        key_of(attrs.range.as_ref()),
        key_of(attrs.min.as_ref()),
        key_of(attrs.max.as_ref()),
        key_of(attrs.exclusive_min.as_ref()),
        key_of(attrs.exclusive_max.as_ref()),
        key_of(attrs.multiple_of.as_ref()),
    ])
}

fn first_key<const N: usize>(keys: [Option<Span>; N]) -> Option<Span> {
    keys.into_iter().flatten().next()
}

/// The check closure's parameters, `v` and `cx`, located at `span` (with mixed-site hygiene),
/// so that a call that does not type-check is reported there.
fn located_locals(span: Span) -> (Ident, Ident) {
    (
        Ident::new("v", Span::mixed_site().located_at(span)),
        Ident::new("cx", Span::mixed_site().located_at(span)),
    )
}

/// A number of a constraint, as the runtime's `Num`.
fn num_tokens(private: &Tokens, number: NumLit) -> TokenStream {
    match number.value {
        Num::Int(int) => {
            let literal = Literal::u128_unsuffixed(int.unsigned_abs());
            if int < 0 {
                quote!(#private::Num::Int(-#literal))
            } else {
                quote!(#private::Num::Int(#literal))
            }
        }
        Num::Float(float) => {
            let literal = Literal::f64_unsuffixed(float.abs());
            if float.is_sign_negative() {
                quote!(#private::Num::Float(-#literal))
            } else {
                quote!(#private::Num::Float(#literal))
            }
        }
    }
}
