//! The code of one field: its property in the schema, its parsing (with its default and its
//! checks), and how its slot becomes its value.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, LitStr, Type};

use super::{Codegen, opt_str};
use crate::ast::{self, Field};
use crate::attr::DefaultValue;
use crate::expand::{Tokens, hidden, respan};

/// The code of one field of an object.
pub(super) struct FieldCode {
    /// The `let _ = <T as Schema>::…;` that reports a field type that is not `Schema` once,
    /// at the type.
    pub(super) assert: TokenStream,
    /// The slot of what the parse found for the field.
    pub(super) slot: Ident,
    /// The parsed value.
    pub(super) parsed: Ident,
    /// The key, as a literal.
    pub(super) key: LitStr,
    /// The key as a JSON pointer segment.
    pub(super) segment: LitStr,
    /// The description: `Some("…")` or `None`.
    pub(super) description: TokenStream,
    /// `&` the field's constraints.
    pub(super) rules_ref: Tokens,
    /// The check its parsed value goes through.
    pub(super) check: Tokens,
    /// The default, as JSON: `Some(…)` or `None`.
    pub(super) default_json: Tokens,
    /// The example, as JSON: `Some(…)` or `None`.
    pub(super) example_json: Tokens,
    /// The fn giving the default: `Some(…)` or `None`.
    pub(super) default_arg: Tokens,
}

impl Codegen {
    /// The code of one field: its property, its parsing with default and checks.
    pub(super) fn field(&mut self, field: &Field) -> FieldCode {
        let number = self.next();
        let rules = self.rules(&field.attrs, number);
        let default = self.default_fn(field, number);
        let check = self.check(field, rules.as_ref());
        let private = &self.private;
        let ty = &field.ty;
        let key = LitStr::new(&field.key, Span::call_site());
        // The key as a JSON pointer segment, escaped here rather than on every call.
        let segment = LitStr::new(
            &field.key.replace('~', "~0").replace('/', "~1"),
            Span::call_site(),
        );
        let description = opt_str(field.description.as_deref());
        let rules_ref = match &rules {
            Some(ident) => Tokens::reference(ident),
            None => self.shared.no_rules.clone(),
        };
        let none = &self.shared.none;
        let (default_json, default_arg) = match &default {
            Some(name) => (
                Tokens::new(quote!(::core::option::Option::Some(
                    <#ty as #private::Schema>::to_json(&Self::#name())
                ))),
                Tokens::new(quote!(::core::option::Option::Some(Self::#name as fn() -> #ty))),
            ),
            None => (none.clone(), none.clone()),
        };
        let example_json = self.example_json(field);
        FieldCode {
            assert: quote!(let _ = <#ty as #private::Schema>::to_json;),
            slot: format_ident!("__slot_{}", number, span = Span::mixed_site()),
            parsed: format_ident!("__field_{}", number, span = Span::mixed_site()),
            key,
            segment,
            description,
            rules_ref,
            check,
            default_json,
            example_json,
            default_arg,
        }
    }

    /// The associated fn giving a field's `default`, if it has one.
    fn default_fn(&mut self, field: &Field, number: usize) -> Option<Ident> {
        let default = field.attrs.default.as_ref()?;
        let ty = &field.ty;
        let name = format_ident!("__schema_default_{}", number);
        let body = match &default.value {
            DefaultValue::Trait => {
                quote_spanned!(default.key=> ::core::default::Default::default())
            }
            DefaultValue::Expr(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(literal),
                ..
            })) => str_literal(&self.private, ty, literal),
            DefaultValue::Expr(expr) => quote!(#expr),
        };
        self.defaults.push(quote! {
            #[doc(hidden)]
            fn #name() -> #ty {
                #body
            }
        });
        Some(name)
    }

    /// A field's `example`, as JSON, if it has one.
    fn example_json(&self, field: &Field) -> Tokens {
        let Some(example) = &field.attrs.example else {
            return self.shared.none.clone();
        };
        let private = &self.private;
        let ty = ast::option_inner(&field.ty).unwrap_or(&field.ty);
        let local = hidden("example");
        let value = match &example.value.0 {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(literal),
                ..
            }) => str_literal(private, ty, literal),
            expr => quote!(#expr),
        };
        Tokens::new(quote!(::core::option::Option::Some({
            let #local: #ty = #value;
            <#ty as #private::Schema>::to_json(&#local)
        })))
    }
}

/// A string literal as a value of `ty` (a default or an example), through
/// `__private::FromStrLiteral`, located at the literal so that a field that is not a string
/// is reported there.
fn str_literal(private: &Tokens, ty: &Type, literal: &LitStr) -> TokenStream {
    respan(
        quote!(<#ty as #private::FromStrLiteral>::from_str_literal(#literal)),
        literal.span(),
    )
}
