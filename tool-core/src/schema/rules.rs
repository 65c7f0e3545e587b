//! Field constraints: how `#[schema(min_len = …, range = …, …)]` renders and is enforced.

use std::borrow::Cow;

use serde_json::Value;

use super::broken::{Broken, Quoted};
use super::num::Num;
use super::{Format, Pattern, Schema};
use crate::error::BoxError;
use crate::violation::{ParseCx, Rule, not_one_of};

/// The constraints declared on one field. Build it with struct update from [`Rules::NONE`].
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// `minLength`, in characters.
    pub min_len: Option<usize>,
    /// `maxLength`, in characters.
    pub max_len: Option<usize>,
    /// `pattern`.
    pub pattern: Option<&'static Pattern>,
    /// `format`.
    pub format: Option<Format>,
    /// `enum` of strings.
    pub one_of: &'static [&'static str],
    /// `minimum`.
    pub minimum: Option<Num>,
    /// `maximum`.
    pub maximum: Option<Num>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: Option<Num>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: Option<Num>,
    /// `multipleOf`.
    pub multiple_of: Option<Num>,
    /// `minItems`.
    pub min_items: Option<usize>,
    /// `maxItems`.
    pub max_items: Option<usize>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// The constraints of each item of a list: `items` in the schema.
    pub items: Option<&'static Rules>,
}

impl Rules {
    /// No constraint at all.
    pub const NONE: Rules = Rules {
        min_len: None,
        max_len: None,
        pattern: None,
        format: None,
        one_of: &[],
        minimum: None,
        maximum: None,
        exclusive_minimum: None,
        exclusive_maximum: None,
        multiple_of: None,
        min_items: None,
        max_items: None,
        unique_items: false,
        items: None,
    };

    /// Writes these constraints into a rendered schema node.
    pub fn apply(&self, node: &mut Value) {
        let Some(obj) = node.as_object_mut() else {
            return;
        };
        if let Some(n) = self.min_len {
            obj.insert("minLength".to_owned(), n.into());
        }
        if let Some(n) = self.max_len {
            obj.insert("maxLength".to_owned(), n.into());
        }
        if let Some(p) = self.pattern {
            obj.insert("pattern".to_owned(), p.source().into());
        }
        if let Some(f) = self.format {
            obj.insert("format".to_owned(), f.as_str().into());
        }
        if !self.one_of.is_empty() {
            obj.insert(
                "enum".to_owned(),
                self.one_of.iter().map(|s| Value::from(*s)).collect(),
            );
        }
        if let Some(n) = self.minimum {
            let kept = obj.get("minimum").and_then(num_of);
            obj.insert(
                "minimum".to_owned(),
                tighter(kept, n, std::cmp::Ordering::Greater).to_json(),
            );
        }
        if let Some(n) = self.maximum {
            let kept = obj.get("maximum").and_then(num_of);
            obj.insert(
                "maximum".to_owned(),
                tighter(kept, n, std::cmp::Ordering::Less).to_json(),
            );
        }
        // An exclusive bound within the type's range stands in for it: the schema shows one
        // bound per side, the one a value breaks first (T1).
        if let Some(n) = self.exclusive_minimum {
            if obj
                .get("minimum")
                .and_then(num_of)
                .is_some_and(|kept| kept.cmp(n) != Some(std::cmp::Ordering::Greater))
            {
                obj.remove("minimum");
            }
            obj.insert("exclusiveMinimum".to_owned(), n.to_json());
        }
        if let Some(n) = self.exclusive_maximum {
            if obj
                .get("maximum")
                .and_then(num_of)
                .is_some_and(|kept| kept.cmp(n) != Some(std::cmp::Ordering::Less))
            {
                obj.remove("maximum");
            }
            obj.insert("exclusiveMaximum".to_owned(), n.to_json());
        }
        if let Some(n) = self.multiple_of {
            obj.insert("multipleOf".to_owned(), n.to_json());
        }
        if let Some(n) = self.min_items {
            obj.insert("minItems".to_owned(), n.into());
        }
        if let Some(n) = self.max_items {
            obj.insert("maxItems".to_owned(), n.into());
        }
        if self.unique_items {
            obj.insert("uniqueItems".to_owned(), true.into());
        }
        if let Some(items) = self.items {
            apply_items(items, node);
        }
    }
}

/// Writes the constraints of each item into the `items` of an array node, or of each array
/// branch of an `anyOf` (an `Option<Vec<T>>` admits `null` beside the array, T3).
fn apply_items(items: &Rules, node: &mut Value) {
    if let Some(item) = node.get_mut("items").filter(|item| item.is_object()) {
        items.apply(item);
        return;
    }
    if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
        for branch in branches {
            apply_items(items, branch);
        }
    }
}

fn num_of(v: &Value) -> Option<Num> {
    v.as_i64()
        .map(|i| Num::Int(i.into()))
        .or_else(|| v.as_u64().map(|u| Num::Int(u.into())))
        .or_else(|| v.as_f64().map(Num::Float))
}

/// The tighter of a bound already rendered (a type's range) and a declared one.
fn tighter(kept: Option<Num>, declared: Num, keep_if: std::cmp::Ordering) -> Num {
    match kept {
        Some(k) if k.cmp(declared) == Some(keep_if) => k,
        _ => declared,
    }
}

/// What a custom validator (`#[schema(validate = path)]`) returns when it rejects a value
/// (S5).
#[derive(Debug)]
#[non_exhaustive]
pub enum Invalid {
    /// The value breaks a rule: the text goes to the model as a violation. Keep it free of
    /// secrets; it should speak only of the model's input.
    Violation(Cow<'static, str>),
    /// The validator itself failed (a lookup it needed, say): redacted from the model as any
    /// handler failure (E2), kept for the application (E3).
    Error(BoxError),
}

impl Invalid {
    /// A violation shown to the model.
    pub fn violation(message: impl Into<Cow<'static, str>>) -> Self {
        Invalid::Violation(message.into())
    }

    /// An operational failure, hidden from the model.
    pub fn error(error: impl Into<BoxError>) -> Self {
        Invalid::Error(error.into())
    }
}

/// Runs a custom validator on a parsed value and records what it says (S5).
pub fn run_validator<T: ?Sized>(
    value: &T,
    validator: fn(&T) -> Result<(), Invalid>,
    cx: &mut ParseCx,
) {
    match validator(value) {
        Ok(()) => {}
        Err(Invalid::Violation(message)) => cx.violate(Rule::Custom, message),
        Err(Invalid::Error(error)) => cx.fail(error),
    }
}

/// A field type that string constraints (`min_len`, `max_len`, `pattern`, `format`,
/// `one_of`) apply to.
#[diagnostic::on_unimplemented(
    message = "this constraint applies to string fields, and `{Self}` is not a string",
    label = "not allowed on a field of type `{Self}`",
    note = "use `min_len`, `max_len`, `pattern`, `format` and `one_of` on `String` fields \
            (or `Option<String>`); for numbers use `range`/`min`/`max`, for lists `min_items`/`max_items`"
)]
pub trait StringRules {
    /// The string to check, or `None` when there is none (an absent `Option`).
    fn rule_str(&self) -> Option<&str>;
}

/// A field type that number constraints (`range`, `min`, `max`, `exclusive_min`,
/// `exclusive_max`, `multiple_of`) apply to.
#[diagnostic::on_unimplemented(
    message = "this constraint applies to number fields, and `{Self}` is not a number",
    label = "not allowed on a field of type `{Self}`",
    note = "use `range`, `min`, `max`, `exclusive_min`, `exclusive_max` and `multiple_of` on \
            integer and float fields; for strings use `min_len`/`max_len`, for lists `min_items`/`max_items`"
)]
pub trait NumberRules {
    /// The number to check, or `None` when there is none.
    fn rule_num(&self) -> Option<Num>;
}

/// A field type that list constraints (`min_items`, `max_items`, `unique_items`) apply to.
#[diagnostic::on_unimplemented(
    message = "this constraint applies to list fields, and `{Self}` is not a list",
    label = "not allowed on a field of type `{Self}`",
    note = "use `min_items`, `max_items` and `unique_items` on `Vec<T>` fields; for strings \
            use `min_len`/`max_len`, for numbers `range`/`min`/`max`"
)]
pub trait ArrayRules {
    /// The number of items, or `None` when there is no list.
    fn rule_len(&self) -> Option<usize>;
    /// Whether two items are equal (for `unique_items`).
    fn has_duplicates(&self) -> bool;
}

/// A field type that `items(...)` applies to: a list, whose items are checked one by one.
#[diagnostic::on_unimplemented(
    message = "`items(...)` constrains each item of a list, and `{Self}` is not a list",
    label = "not allowed on a field of type `{Self}`",
    note = "use `items(...)` on `Vec<T>` fields (or `Option<Vec<T>>`); to constrain the field's \
            own value, give the constraint outside `items(...)`, as in `#[schema(max_len = 32)]`"
)]
pub trait ItemRules {
    /// The type of an item.
    type Item;
    /// The items to check: none when there is no list (an absent `Option`).
    fn rule_items(&self) -> &[Self::Item];
}

impl<T> ItemRules for Vec<T> {
    type Item = T;

    fn rule_items(&self) -> &[T] {
        self
    }
}

impl<T: ItemRules> ItemRules for Option<T> {
    type Item = T::Item;

    fn rule_items(&self) -> &[T::Item] {
        self.as_ref().map_or(&[], T::rule_items)
    }
}

impl<T: ItemRules> ItemRules for Box<T> {
    type Item = T::Item;

    fn rule_items(&self) -> &[T::Item] {
        (**self).rule_items()
    }
}

impl StringRules for String {
    fn rule_str(&self) -> Option<&str> {
        Some(self)
    }
}

impl<T: StringRules> StringRules for Option<T> {
    fn rule_str(&self) -> Option<&str> {
        self.as_ref().and_then(T::rule_str)
    }
}

impl<T: StringRules> StringRules for Box<T> {
    fn rule_str(&self) -> Option<&str> {
        (**self).rule_str()
    }
}

impl<T: NumberRules> NumberRules for Option<T> {
    fn rule_num(&self) -> Option<Num> {
        self.as_ref().and_then(T::rule_num)
    }
}

impl<T: NumberRules> NumberRules for Box<T> {
    fn rule_num(&self) -> Option<Num> {
        (**self).rule_num()
    }
}

macro_rules! int_rules {
    ($($t:ty),*) => {$(
        impl NumberRules for $t {
            fn rule_num(&self) -> Option<Num> {
                Some(Num::Int(i128::try_from(*self).unwrap_or(i128::MAX)))
            }
        }
    )*};
}
int_rules!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

impl NumberRules for Num {
    fn rule_num(&self) -> Option<Num> {
        Some(*self)
    }
}

impl NumberRules for f64 {
    fn rule_num(&self) -> Option<Num> {
        Some(Num::Float(*self))
    }
}

impl NumberRules for f32 {
    fn rule_num(&self) -> Option<Num> {
        Some(Num::Float(f64::from(*self)))
    }
}

impl<T: Schema> ArrayRules for Vec<T> {
    fn rule_len(&self) -> Option<usize> {
        Some(self.len())
    }

    fn has_duplicates(&self) -> bool {
        super::exact::has_duplicate_items(self.iter().map(T::to_json))
    }
}

impl<T: ArrayRules> ArrayRules for Option<T> {
    fn rule_len(&self) -> Option<usize> {
        self.as_ref().and_then(T::rule_len)
    }

    fn has_duplicates(&self) -> bool {
        self.as_ref().is_some_and(T::has_duplicates)
    }
}

impl<T: ArrayRules> ArrayRules for Box<T> {
    fn rule_len(&self) -> Option<usize> {
        (**self).rule_len()
    }

    fn has_duplicates(&self) -> bool {
        (**self).has_duplicates()
    }
}

/// Enforces the string constraints of `rules` on a parsed value.
pub fn check_string<T: StringRules + ?Sized>(value: &T, rules: &Rules, cx: &mut ParseCx) {
    let Some(s) = value.rule_str() else { return };
    let bounded = rules.min_len.is_some() || rules.max_len.is_some();
    if bounded && !surely_within(s.len(), rules.min_len, rules.max_len) {
        check_chars(s, rules, cx);
    }
    if rules.pattern.is_some() || rules.format.is_some() || !rules.one_of.is_empty() {
        check_text(s, rules, cx);
    }
}

/// Whether a string of `bytes` bytes has at least `min` and at most `max` characters whatever
/// they are (each takes one to four bytes), so that they need not be counted.
fn surely_within(bytes: usize, min: Option<usize>, max: Option<usize>) -> bool {
    min.is_none_or(|min| bytes.div_ceil(4) >= min) && max.is_none_or(|max| bytes <= max)
}

/// Enforces `minLength` and `maxLength`, counting the characters of `s`.
fn check_chars(s: &str, rules: &Rules, cx: &mut ParseCx) {
    let len = s.chars().count();
    if let Some(min) = rules.min_len.filter(|&m| len < m) {
        cx.broke(Broken::MinLength { min, len });
    }
    if let Some(max) = rules.max_len.filter(|&m| len > m) {
        cx.broke(Broken::MaxLength { max, len });
    }
}

/// Enforces the constraints of `rules` on the text of `s`: pattern, format, enum.
fn check_text(s: &str, rules: &Rules, cx: &mut ParseCx) {
    if let Some(pattern) = rules.pattern {
        match pattern.regex() {
            Ok(re) if re.is_match(s) => {}
            Ok(_) => cx.broke(Broken::Pattern {
                pattern: pattern.source(),
                found: &Quoted(s),
            }),
            Err(e) => cx.fail(Box::new(e.clone())),
        }
    }
    if let Some(format) = rules.format.filter(|f| !f.matches(s)) {
        cx.broke(Broken::Format {
            described: format.describe(),
            found: &Quoted(s),
        });
    }
    if !rules.one_of.is_empty() && !rules.one_of.contains(&s) {
        cx.violate(Rule::Enum, not_one_of(rules.one_of, s));
    }
}

/// Enforces the number constraints of `rules` on a parsed value.
pub fn check_number<T: NumberRules + ?Sized>(value: &T, rules: &Rules, cx: &mut ParseCx) {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let Some(n) = value.rule_num() else { return };
    if let Some(min) = rules.minimum.filter(|&m| n.cmp(m) == Some(Less)) {
        cx.broke(Broken::Minimum {
            limit: &min,
            found: &n,
        });
    }
    if let Some(max) = rules.maximum.filter(|&m| n.cmp(m) == Some(Greater)) {
        cx.broke(Broken::Maximum {
            limit: &max,
            found: &n,
        });
    }
    if let Some(min) = rules
        .exclusive_minimum
        .filter(|&m| matches!(n.cmp(m), Some(Less | Equal)))
    {
        cx.broke(Broken::ExclusiveMinimum {
            limit: &min,
            found: &n,
        });
    }
    if let Some(max) = rules
        .exclusive_maximum
        .filter(|&m| matches!(n.cmp(m), Some(Greater | Equal)))
    {
        cx.broke(Broken::ExclusiveMaximum {
            limit: &max,
            found: &n,
        });
    }
    if let Some(step) = rules
        .multiple_of
        .filter(|&step| !super::exact::is_multiple(n, step))
    {
        cx.broke(Broken::MultipleOf {
            step: &step,
            found: &n,
        });
    }
}

/// Enforces the list constraints of `rules` on a parsed value.
pub fn check_array<T: ArrayRules + ?Sized>(value: &T, rules: &Rules, cx: &mut ParseCx) {
    let Some(len) = value.rule_len() else { return };
    if let Some(min) = rules.min_items.filter(|&m| len < m) {
        cx.broke(Broken::MinItems { min, len });
    }
    if let Some(max) = rules.max_items.filter(|&m| len > m) {
        cx.broke(Broken::MaxItems { max, len });
    }
    if rules.unique_items && value.has_duplicates() {
        cx.broke(Broken::UniqueItems);
    }
}

/// Enforces the constraints of `rules.items` on each item of a parsed list with `check`, at
/// the item's own pointer (`/tags/0`), so that a violation names the item that broke it.
pub fn check_items<T: ItemRules + ?Sized>(
    value: &T,
    rules: &Rules,
    cx: &mut ParseCx,
    check: impl Fn(&T::Item, &Rules, &mut ParseCx),
) {
    let Some(items) = rules.items else { return };
    for (index, item) in value.rule_items().iter().enumerate() {
        cx.enter_index(index);
        check(item, items, cx);
        cx.leave();
    }
}

pub(crate) fn quoted_list(items: &[&str]) -> String {
    let mut out = String::new();
    push_quoted_list(&mut out, items);
    out
}

/// Appends `items` as a list of quoted strings: `"a", "b"`.
pub(crate) fn push_quoted_list(out: &mut String, items: &[&str]) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('"');
        out.push_str(item);
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Lengths told from the bytes alone report what counting the characters reports.
        #[test]
        fn t1_string_lengths_are_checked_as_counted(
            s in "[aé€😀]{0,12}",
            min in proptest::option::of(0usize..14),
            max in proptest::option::of(0usize..14),
        ) {
            let rules = Rules {
                min_len: min,
                max_len: max,
                ..Rules::NONE
            };
            let mut cx = ParseCx::new();
            check_string(&s, &rules, &mut cx);
            let len = s.chars().count();
            let mut expected = Vec::new();
            if min.is_some_and(|min| len < min) {
                expected.push(Rule::MinLength);
            }
            if max.is_some_and(|max| len > max) {
                expected.push(Rule::MaxLength);
            }
            let found: Vec<Rule> = cx.violations().iter().map(|v| v.rule).collect();
            proptest::prop_assert_eq!(found, expected);
        }
    }
}
