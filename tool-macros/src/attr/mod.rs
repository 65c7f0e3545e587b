//! The darling receivers: what `#[schema(...)]` and `#[tool(...)]` may say, parsed but not yet
//! checked against each other (that is `valid.rs`).

use darling::ast::NestedMeta;
use darling::{FromAttributes, FromMeta};
use proc_macro2::Span;
use syn::spanned::Spanned as _;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Path, RangeLimits, UnOp};

use crate::error;

mod examples;
mod tool;

pub(crate) use examples::ExamplesArg;
pub(crate) use tool::{ApprovalArg, Hint, TOOL_KEYS, ToolArgs};

/// A value together with the span of the key it was given under: `min_len` in `min_len = 1`.
/// Diagnostics about the attribute (and type errors of checks it generates) point there.
#[derive(Debug, Clone)]
pub(crate) struct Keyed<T> {
    pub(crate) value: T,
    pub(crate) key: Span,
}

/// The span of a `Keyed` attribute value's key, if it was given.
pub(crate) fn key_of<T>(keyed: Option<&Keyed<T>>) -> Option<Span> {
    keyed.map(|keyed| keyed.key)
}

impl<T: FromMeta> FromMeta for Keyed<T> {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        Ok(Keyed {
            value: T::from_meta(item)?,
            key: item.path().span(),
        })
    }
}

/// `#[schema(...)]` on a struct or an enum.
#[derive(Debug, Default, FromAttributes)]
#[darling(attributes(schema))]
pub(crate) struct ContainerAttrs {
    /// How field names (structs) or variant names (enums) become JSON names.
    pub(crate) rename_all: Option<Keyed<RenameRule>>,
    /// The schema's description; else the doc comment.
    pub(crate) description: Option<Keyed<String>>,
    /// The path of the facade crate, `::tool_runtime` by default.
    #[darling(rename = "crate")]
    pub(crate) krate: Option<Path>,
    /// The name of the tag property of an enum with fields.
    pub(crate) tag: Option<Keyed<LitStr>>,
}

/// The keys [`ContainerAttrs`] accepts, for diagnostics.
pub(crate) const CONTAINER_KEYS: &[&str] = &["crate", "description", "rename_all", "tag"];

/// `#[schema(...)]` on an enum variant.
#[derive(Debug, Default, FromAttributes)]
#[darling(attributes(schema))]
pub(crate) struct VariantAttrs {
    /// The variant's JSON name.
    pub(crate) rename: Option<Keyed<LitStr>>,
    /// How this variant's field names become JSON names.
    pub(crate) rename_all: Option<Keyed<RenameRule>>,
    /// The variant's description; else its doc comment.
    pub(crate) describe: Option<Keyed<String>>,
}

/// The keys [`VariantAttrs`] accepts, for diagnostics.
pub(crate) const VARIANT_KEYS: &[&str] = &["describe", "rename", "rename_all"];

/// `#[schema(...)]` on a field, or on a parameter of a `#[tool]` fn.
#[derive(Debug, Clone, Default, FromAttributes)]
#[darling(attributes(schema))]
pub(crate) struct FieldAttrs {
    /// The field's description; else its doc comment.
    pub(crate) describe: Option<Keyed<String>>,
    /// The field's JSON name.
    pub(crate) rename: Option<Keyed<LitStr>>,
    /// The value of an absent field: `default` or `default = expr`.
    pub(crate) default: Option<Keyed<DefaultValue>>,
    /// `minLength`, in characters.
    pub(crate) min_len: Option<Keyed<usize>>,
    /// `maxLength`, in characters.
    pub(crate) max_len: Option<Keyed<usize>>,
    /// `pattern`, a regex.
    pub(crate) pattern: Option<Keyed<LitStr>>,
    /// `format`.
    pub(crate) format: Option<Keyed<LitStr>>,
    /// `enum` of strings.
    pub(crate) one_of: Option<Keyed<StrList>>,
    /// `a..=b`, `a..b`, `a..`, `..=b`, `..b`.
    pub(crate) range: Option<Keyed<NumRange>>,
    /// `minimum`.
    pub(crate) min: Option<Keyed<NumLit>>,
    /// `maximum`.
    pub(crate) max: Option<Keyed<NumLit>>,
    /// `exclusiveMinimum`.
    pub(crate) exclusive_min: Option<Keyed<NumLit>>,
    /// `exclusiveMaximum`.
    pub(crate) exclusive_max: Option<Keyed<NumLit>>,
    /// `multipleOf`.
    pub(crate) multiple_of: Option<Keyed<NumLit>>,
    /// `minItems`.
    pub(crate) min_items: Option<Keyed<usize>>,
    /// `maxItems`.
    pub(crate) max_items: Option<Keyed<usize>>,
    /// `uniqueItems`.
    pub(crate) unique_items: Option<Keyed<bool>>,
    /// A custom validator, `fn(&T) -> Result<(), Invalid>` (S5).
    pub(crate) validate: Option<Keyed<Path>>,
    /// An example value, rendered into `examples`.
    pub(crate) example: Option<Keyed<ValueExpr>>,
    /// The constraints of each item of a list: `items(pattern = "…", range = 1..=9)`.
    pub(crate) items: Option<Keyed<ItemAttrs>>,
}

/// The keys [`FieldAttrs`] accepts, for diagnostics.
pub(crate) const FIELD_KEYS: &[&str] = &[
    "default",
    "describe",
    "example",
    "exclusive_max",
    "exclusive_min",
    "format",
    "items",
    "max",
    "max_items",
    "max_len",
    "min",
    "min_items",
    "min_len",
    "multiple_of",
    "one_of",
    "pattern",
    "range",
    "rename",
    "unique_items",
    "validate",
];

/// `items(...)` in a field's `#[schema(...)]`: the constraints each item of a list meets.
#[derive(Debug, Clone)]
pub(crate) struct ItemAttrs {
    /// The constraints, as a field of the item's type would declare them (only the keys of
    /// [`ITEM_KEYS`] are ever set).
    pub(crate) rules: Box<FieldAttrs>,
    /// The span of `items(...)`'s list, for a list that sets nothing.
    pub(crate) span: Span,
}

/// The keys `items(...)` accepts: the constraints of a single string or number.
pub(crate) const ITEM_KEYS: &[&str] = &[
    "exclusive_max",
    "exclusive_min",
    "format",
    "max",
    "max_len",
    "min",
    "min_len",
    "multiple_of",
    "one_of",
    "pattern",
    "range",
];

/// What `items(...)` may hold, parsed by darling; moved into a [`FieldAttrs`] so that the
/// checks and the code of a field's own constraints serve each item's too.
#[derive(Debug, Default, FromMeta)]
struct ItemKeys {
    min_len: Option<Keyed<usize>>,
    max_len: Option<Keyed<usize>>,
    pattern: Option<Keyed<LitStr>>,
    format: Option<Keyed<LitStr>>,
    one_of: Option<Keyed<StrList>>,
    range: Option<Keyed<NumRange>>,
    min: Option<Keyed<NumLit>>,
    max: Option<Keyed<NumLit>>,
    exclusive_min: Option<Keyed<NumLit>>,
    exclusive_max: Option<Keyed<NumLit>>,
    multiple_of: Option<Keyed<NumLit>>,
}

impl FromMeta for ItemAttrs {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        let Meta::List(list) = item else {
            return Err(darling::Error::custom(
                "`items` takes the constraints of each item in parentheses, as in \
                 `items(pattern = \"^[a-z]+$\", max_len = 32)`",
            )
            .with_span(item));
        };
        // A key of the field itself (`min_items`, `describe`, …) given among the items' is
        // moved out, not misread as a misspelt item key.
        let mut errors = darling::Error::accumulator();
        let mut nested = NestedMeta::parse_meta_list(list.tokens.clone())?;
        nested.retain(|meta| {
            let NestedMeta::Meta(meta) = meta else {
                return true;
            };
            let Some(key) = meta.path().get_ident().map(ToString::to_string) else {
                return true;
            };
            if ITEM_KEYS.contains(&key.as_str()) || !FIELD_KEYS.contains(&key.as_str()) {
                return true;
            }
            let message = if key == "items" {
                "`items(...)` does not nest: check the items of inner lists in a \
                 `validate = path` function"
                    .to_owned()
            } else {
                format!(
                    "`{key}` is about the field itself, not each of its items: give it \
                     outside `items(...)`, as in `#[schema({key} = …, items(…))]`"
                )
            };
            errors.push(error::at(meta.path().span(), message));
            false
        });
        let keys = errors
            .handle(ItemKeys::from_list(&nested).map_err(|problem| {
                darling::Error::multiple(reword(problem, "schema(items(...))", ITEM_KEYS))
            }))
            .unwrap_or_default();
        errors.finish()?;
        Ok(ItemAttrs {
            rules: Box::new(FieldAttrs {
                min_len: keys.min_len,
                max_len: keys.max_len,
                pattern: keys.pattern,
                format: keys.format,
                one_of: keys.one_of,
                range: keys.range,
                min: keys.min,
                max: keys.max,
                exclusive_min: keys.exclusive_min,
                exclusive_max: keys.exclusive_max,
                multiple_of: keys.multiple_of,
                ..FieldAttrs::default()
            }),
            span: list.delimiter.span().join(),
        })
    }
}

/// `default` (the type's `Default`) or `default = expr`.
#[derive(Debug, Clone)]
pub(crate) enum DefaultValue {
    /// `default`.
    Trait,
    /// `default = expr`.
    Expr(Expr),
}

impl FromMeta for DefaultValue {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        match item {
            Meta::Path(_) => Ok(DefaultValue::Trait),
            Meta::NameValue(nv) => Ok(DefaultValue::Expr(ungroup(&nv.value).clone())),
            Meta::List(_) => Err(darling::Error::custom(
                "write `default` (the type's `Default`) or `default = value`",
            )
            .with_span(item)),
        }
    }
}

/// An expression given as a value (`example = …`), kept as written: unlike darling's `Expr`,
/// a string literal stays a string literal.
#[derive(Debug, Clone)]
pub(crate) struct ValueExpr(pub(crate) Expr);

impl FromMeta for ValueExpr {
    fn from_meta(item: &Meta) -> darling::Result<Self> {
        match item {
            Meta::NameValue(nv) => Ok(ValueExpr(ungroup(&nv.value).clone())),
            _ => Err(darling::Error::custom("write `example = value`").with_span(item)),
        }
    }
}

pub(crate) fn ungroup(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungroup(&group.expr),
        Expr::Paren(paren) => ungroup(&paren.expr),
        other => other,
    }
}

/// A number literal of a constraint: an integer or a float, maybe negated.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NumLit {
    pub(crate) value: Num,
    pub(crate) span: Span,
}

/// A number, as the runtime's `Num`: integers stay exact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn negate(self) -> Option<Num> {
        match self {
            Num::Int(int) => int.checked_neg().map(Num::Int),
            Num::Float(float) => Some(Num::Float(-float)),
        }
    }

    /// Compares two numbers, exactly for integers.
    pub(crate) fn partial_cmp(self, other: Num) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Num::Int(left), Num::Int(right)) => Some(left.cmp(&right)),
            (left, right) => left.as_f64().partial_cmp(&right.as_f64()),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Num::Int(int) => int as f64,
            Num::Float(float) => float,
        }
    }

    /// Whether this number is above zero.
    pub(crate) fn is_positive(self) -> bool {
        match self {
            Num::Int(int) => int > 0,
            Num::Float(float) => float > 0.0,
        }
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Num::Int(int) => write!(f, "{int}"),
            Num::Float(float) => write!(f, "{float:?}"),
        }
    }
}

const TOO_LARGE: &str = "this integer is too large for a bound: write one within the range of \
                         `i128`, or leave the bound out (the field's type bounds it already)";

const NUM_HELP: &str = "write a number literal, such as `1`, `-5` or `0.5`";

impl NumLit {
    fn from_expr_inner(expr: &Expr) -> darling::Result<Self> {
        let span = expr.span();
        match ungroup(expr) {
            Expr::Lit(ExprLit {
                lit: Lit::Int(int), ..
            }) => int
                .base10_parse::<i128>()
                .map(|value| NumLit {
                    value: Num::Int(value),
                    span,
                })
                .map_err(|_| darling::Error::custom(TOO_LARGE).with_span(int)),
            Expr::Lit(ExprLit {
                lit: Lit::Float(float),
                ..
            }) => match float.base10_parse::<f64>() {
                Ok(value) if value.is_finite() => Ok(NumLit {
                    value: Num::Float(value),
                    span,
                }),
                _ => {
                    Err(darling::Error::custom("this number is not a finite f64").with_span(float))
                }
            },
            Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
                let inner = Self::from_expr_inner(&unary.expr)?;
                let value = inner
                    .value
                    .negate()
                    .ok_or_else(|| darling::Error::custom(TOO_LARGE).with_span(expr))?;
                Ok(NumLit { value, span })
            }
            _ => Err(
                darling::Error::custom(format!("expected a number: {NUM_HELP}")).with_span(expr),
            ),
        }
    }
}

impl FromMeta for NumLit {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        Self::from_expr_inner(expr)
    }
}

/// `range = a..=b` and its open and exclusive forms.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NumRange {
    pub(crate) start: Option<NumLit>,
    pub(crate) end: Option<NumLit>,
    /// `..=` rather than `..`.
    pub(crate) inclusive: bool,
    pub(crate) span: Span,
}

impl FromMeta for NumRange {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let Expr::Range(range) = ungroup(expr) else {
            return Err(darling::Error::custom(
                "expected a range of number literals: `1..=30` (inclusive), `0..100` (exclusive \
                 maximum), `1..` or `..=10`",
            )
            .with_span(expr));
        };
        let mut errors = darling::Error::accumulator();
        let start = range
            .start
            .as_deref()
            .and_then(|bound| errors.handle(NumLit::from_expr_inner(bound)));
        let end = range
            .end
            .as_deref()
            .and_then(|bound| errors.handle(NumLit::from_expr_inner(bound)));
        errors.finish()?;
        if range.start.is_none() && range.end.is_none() {
            return Err(darling::Error::custom(
                "this range has no bounds: give a minimum, a maximum or both, as in `1..=30`",
            )
            .with_span(expr));
        }
        Ok(NumRange {
            start,
            end,
            inclusive: matches!(range.limits, RangeLimits::Closed(_)),
            span: expr.span(),
        })
    }
}

/// `one_of = ["a", "b"]`.
#[derive(Debug, Clone)]
pub(crate) struct StrList(pub(crate) Vec<LitStr>);

impl FromMeta for StrList {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let Expr::Array(array) = ungroup(expr) else {
            return Err(darling::Error::custom(
                "expected a list of strings, as in `[\"a\", \"b\"]`",
            )
            .with_span(expr));
        };
        let mut errors = darling::Error::accumulator();
        let mut items = Vec::new();
        for elem in &array.elems {
            match ungroup(elem) {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(string),
                    ..
                }) => items.push(string.clone()),
                other => errors.push(
                    darling::Error::custom("expected a string literal: `one_of` lists strings")
                        .with_span(other),
                ),
            }
        }
        errors.finish_with(StrList(items))
    }
}

/// serde's `rename_all` rules, with serde's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

/// The names of the [`RenameRule`]s, as serde spells them.
pub(crate) const RENAME_RULES: &[(&str, RenameRule)] = &[
    ("lowercase", RenameRule::Lower),
    ("UPPERCASE", RenameRule::Upper),
    ("PascalCase", RenameRule::Pascal),
    ("camelCase", RenameRule::Camel),
    ("snake_case", RenameRule::Snake),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
    ("kebab-case", RenameRule::Kebab),
    ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
];

impl FromMeta for RenameRule {
    fn from_value(value: &Lit) -> darling::Result<Self> {
        let Lit::Str(literal) = value else {
            return Err(darling::Error::unexpected_lit_type(value));
        };
        let name = literal.value();
        RENAME_RULES
            .iter()
            .find(|(rule_name, _)| *rule_name == name)
            .map(|(_, rule)| *rule)
            .ok_or_else(|| {
                let names: Vec<String> = RENAME_RULES
                    .iter()
                    .map(|(rule_name, _)| format!("\"{rule_name}\""))
                    .collect();
                darling::Error::custom(format!(
                    "unknown `rename_all` rule {name:?}: use one of {}",
                    names.join(", ")
                ))
                .with_span(literal)
            })
    }
}

impl RenameRule {
    /// A `snake_case` field name under this rule (serde's `apply_to_field`).
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for character in field.chars() {
                    if character == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(character.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(character);
                    }
                }
                out
            }
            RenameRule::Camel => lower_first(&RenameRule::Pascal.apply_to_field(field)),
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }

    /// A `PascalCase` variant name under this rule (serde's `apply_to_variant`).
    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => lower_first(variant),
            RenameRule::Snake => {
                let mut out = String::new();
                for (position, character) in variant.char_indices() {
                    if position > 0 && character.is_uppercase() {
                        out.push('_');
                    }
                    out.push(character.to_ascii_lowercase());
                }
                out
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// darling's errors about an attribute, reworded where they are about keys so that they say
/// what to do: an unknown key lists the keys `#[attr(...)]` accepts, a repeated key says to keep
/// one. Each keeps its span.
pub(crate) fn reword(error: darling::Error, attr: &str, keys: &[&str]) -> Vec<darling::Error> {
    let mut reworded: Vec<darling::Error> = error
        .into_iter()
        .map(|error| error::at(error.span(), reword_one(&error.to_string(), attr, keys)))
        .collect();
    if reworded.is_empty() {
        reworded.push(error::at(Span::call_site(), format!("invalid `#[{attr}]`")));
    }
    reworded
}

fn reword_one(text: &str, attr: &str, keys: &[&str]) -> String {
    // darling appends where the error is (` at rename_all`); the span says it already.
    let text = match text.rsplit_once(" at ") {
        Some((head, at)) if keys.contains(&at) => head,
        _ => text,
    };
    if let Some(rest) = text.strip_prefix("Unknown field: `") {
        let (name, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let hint = tail
            .split_once("Did you mean `")
            .and_then(|(_, rest)| rest.split_once('`'))
            .map(|(alternative, _)| format!(" (did you mean `{alternative}`?)"))
            .unwrap_or_default();
        let listed: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
        format!(
            "`#[{attr}]` has no key `{name}`{hint}; its keys are {}",
            listed.join(", ")
        )
    } else if let Some(rest) = text.strip_prefix("Duplicate field `") {
        let name = rest.split_once('`').map_or(rest, |(name, _)| name);
        format!("`{name}` is given twice in `#[{attr}]`; keep one")
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Same results as serde's `RenameRule` for the same inputs.
    #[test]
    fn rename_rules_match_serde() {
        let field = "service_id";
        let expect_fields = [
            "service_id",
            "SERVICE_ID",
            "ServiceId",
            "serviceId",
            "service_id",
            "SERVICE_ID",
            "service-id",
            "SERVICE-ID",
        ];
        for ((_, rule), want) in RENAME_RULES.iter().zip(expect_fields) {
            assert_eq!(rule.apply_to_field(field), want, "{rule:?}");
        }
        let variant = "VeryTasty";
        let expect_variants = [
            "verytasty",
            "VERYTASTY",
            "VeryTasty",
            "veryTasty",
            "very_tasty",
            "VERY_TASTY",
            "very-tasty",
            "VERY-TASTY",
        ];
        for ((_, rule), want) in RENAME_RULES.iter().zip(expect_variants) {
            assert_eq!(rule.apply_to_variant(variant), want, "{rule:?}");
        }
    }
}
