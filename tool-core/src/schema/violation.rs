//! Schema violations and the parse context that collects them (S2, S3, S5).

use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

use super::pointer::Pending;
use crate::error::BoxError;

use crate::preview::preview_parts;
pub use crate::preview::{PREVIEW_CHARS, preview_str};

/// The most violations one parse records; the rest are counted, not kept.
pub const MAX_VIOLATIONS: usize = 32;

/// The schema rule a violation broke. It serializes as its keyword ([`Rule::keyword`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Rule {
    /// The arguments were not one JSON value, or held a key twice.
    Syntax,
    /// The arguments were longer than the agent accepts.
    Size,
    /// The value has the wrong JSON type.
    Type,
    /// A required property is missing.
    Required,
    /// A property the schema does not declare (`additionalProperties: false`).
    AdditionalProperties,
    /// A string is shorter than `minLength`.
    MinLength,
    /// A string is longer than `maxLength`.
    MaxLength,
    /// A string does not match `pattern`.
    Pattern,
    /// A string does not have the declared `format`.
    Format,
    /// A value is not one of the `enum` values (or the tag of a tagged enum is unknown).
    Enum,
    /// A number is below `minimum`, or an integer below its type's range.
    Minimum,
    /// A number is above `maximum`, or an integer above its type's range.
    Maximum,
    /// A number is not above `exclusiveMinimum`.
    ExclusiveMinimum,
    /// A number is not below `exclusiveMaximum`.
    ExclusiveMaximum,
    /// A number is not a multiple of `multipleOf`.
    MultipleOf,
    /// An array has fewer than `minItems` items.
    MinItems,
    /// An array has more than `maxItems` items.
    MaxItems,
    /// An array's items are not unique (`uniqueItems`).
    UniqueItems,
    /// A custom validator rejected the value (S5).
    Custom,
}

impl Rule {
    /// The JSON Schema keyword (or short name) of this rule.
    pub fn keyword(self) -> &'static str {
        match self {
            Rule::Syntax => "syntax",
            Rule::Size => "size",
            Rule::Type => "type",
            Rule::Required => "required",
            Rule::AdditionalProperties => "additionalProperties",
            Rule::MinLength => "minLength",
            Rule::MaxLength => "maxLength",
            Rule::Pattern => "pattern",
            Rule::Format => "format",
            Rule::Enum => "enum",
            Rule::Minimum => "minimum",
            Rule::Maximum => "maximum",
            Rule::ExclusiveMinimum => "exclusiveMinimum",
            Rule::ExclusiveMaximum => "exclusiveMaximum",
            Rule::MultipleOf => "multipleOf",
            Rule::MinItems => "minItems",
            Rule::MaxItems => "maxItems",
            Rule::UniqueItems => "uniqueItems",
            Rule::Custom => "custom",
        }
    }
}

impl Rule {
    /// Every rule, in their order.
    pub const ALL: [Rule; 19] = [
        Rule::Syntax,
        Rule::Size,
        Rule::Type,
        Rule::Required,
        Rule::AdditionalProperties,
        Rule::MinLength,
        Rule::MaxLength,
        Rule::Pattern,
        Rule::Format,
        Rule::Enum,
        Rule::Minimum,
        Rule::Maximum,
        Rule::ExclusiveMinimum,
        Rule::ExclusiveMaximum,
        Rule::MultipleOf,
        Rule::MinItems,
        Rule::MaxItems,
        Rule::UniqueItems,
        Rule::Custom,
    ];

    /// The rule whose [`Rule::keyword`] is `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|rule| rule.keyword() == keyword)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// One way the model's arguments broke the schema.
///
/// Its message quotes at most [`PREVIEW_CHARS`] characters of the model's own input and
/// otherwise only the schema's own rules (S3).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Violation {
    /// The JSON pointer of the offending value (`""` for the root).
    pub path: String,
    /// The rule it broke.
    pub rule: Rule,
    /// What is wrong, for the model.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(root)"
        } else {
            &self.path
        };
        write!(f, "{path}: {} [{}]", self.message, self.rule)
    }
}

/// Renders violations as the text the model receives: one line per violation, as its
/// `Display` shows it.
pub fn render_violations(violations: &[Violation], dropped: usize) -> String {
    const HEAD: &str = "invalid arguments:";
    let len: usize = violations
        .iter()
        .map(|v| v.path.len().max(6) + v.message.len() + v.rule.keyword().len() + 8)
        .sum();
    // Pieces pushed one by one: `format!` per line costs several times more.
    let mut out = String::with_capacity(HEAD.len() + len + 24);
    out.push_str(HEAD);
    for v in violations {
        out.push_str("\n- ");
        out.push_str(if v.path.is_empty() { "(root)" } else { &v.path });
        out.push_str(": ");
        out.push_str(&v.message);
        out.push_str(" [");
        out.push_str(v.rule.keyword());
        out.push(']');
    }
    if dropped > 0 {
        out.push_str(&format!("\n- … and {dropped} more"));
    }
    out
}

/// Appends the preview of `s` (see [`preview_str`]) as a quoted literal, escaped as `{:?}`
/// escapes it.
pub(crate) fn push_quoted_preview(out: &mut String, s: &str) {
    let (head, cut) = preview_parts(s, PREVIEW_CHARS);
    let plain = head
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\');
    if plain {
        out.push('"');
        out.push_str(head);
        if cut {
            out.push('…');
        }
        out.push('"');
    } else {
        use std::fmt::Write as _;
        let _ = write!(out, "{:?}", preview_str(s));
    }
}

/// The message of a string that is none of `allowed`: `must be one of "a", "b", found "x"`.
pub(crate) fn not_one_of(allowed: &[&str], found: &str) -> String {
    let len: usize = allowed.iter().map(|a| a.len() + 4).sum();
    let mut out = String::with_capacity(len + 48);
    out.push_str("must be one of ");
    super::push_quoted_list(&mut out, allowed);
    out.push_str(", found ");
    push_quoted_preview(&mut out, found);
    out
}

/// The order of violations (T1): by JSON pointer, segment by segment, then by rule.
///
/// Array indices compare as numbers and order before other keys; other keys compare by their
/// bytes; a path orders before the paths below it. Both transports report in this order, so the model
/// reads the same list whichever checked its arguments.
pub fn violation_order(a_path: &str, a_rule: Rule, b_path: &str, b_rule: Rule) -> Ordering {
    pointer_order(a_path, b_path).then(a_rule.cmp(&b_rule))
}

/// The order of two JSON pointers: segment by segment, indices by number.
fn pointer_order(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let mut a_segments = a.split('/').skip(1);
    let mut b_segments = b.split('/').skip(1);
    loop {
        match (a_segments.next(), b_segments.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = match (is_index(x), is_index(y)) {
                    (true, true) => x.len().cmp(&y.len()).then_with(|| x.cmp(y)),
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                    (false, false) => x.cmp(y),
                };
                if order.is_ne() {
                    return order;
                }
            }
        }
    }
}

/// Whether a pointer segment is an array index: digits, no leading zero.
fn is_index(segment: &str) -> bool {
    !segment.is_empty()
        && segment.bytes().all(|b| b.is_ascii_digit())
        && (segment == "0" || !segment.starts_with('0'))
}

/// How many levels of the path [`ParseCx`] tracks without scanning it.
pub(super) const INLINE_DEPTH: usize = 16;

/// Collects violations while a value is parsed (S2): the JSON pointer of the value being
/// parsed, every violation so far, and an operational failure if a validator had one (S5).
#[derive(Debug, Default)]
pub struct ParseCx {
    /// The JSON pointer of the value being parsed, without its `pending` levels.
    pub(super) path: String,
    /// Where each segment of `path` starts, for the first [`INLINE_DEPTH`] levels and the
    /// first 64 KiB of path; any other segment starts at the last `/` (the only unescaped one
    /// in a segment).
    pub(super) starts: [u16; INLINE_DEPTH],
    /// How many segments the pointer has: those written in `path`, then those `pending`.
    pub(super) depth: usize,
    /// The innermost levels entered and not yet written in `path`: written out only when a
    /// violation is recorded, a key entered or the path read, so that a parse that records
    /// none never writes its pointer.
    pub(super) pending: Pending,
    /// The whole pointer, made by [`ParseCx::path`] while levels are pending; cleared when a
    /// level is entered or left.
    pub(super) rendered: OnceLock<String>,
    violations: Vec<Violation>,
    dropped: usize,
    failure: Option<BoxError>,
    /// The constraints of the field being parsed, if it declared any: a number past its type's
    /// range reports the field's own bound where it has one (T1).
    field_rules: Option<&'static crate::schema::Rules>,
}

impl ParseCx {
    /// An empty context, at the root.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the constraints of the field about to be parsed, returning the outer field's.
    #[doc(hidden)]
    #[inline]
    pub fn swap_field_rules(
        &mut self,
        rules: Option<&'static crate::schema::Rules>,
    ) -> Option<&'static crate::schema::Rules> {
        std::mem::replace(&mut self.field_rules, rules)
    }

    /// The constraints of the field being parsed, if it declared any.
    #[doc(hidden)]
    #[inline]
    pub fn field_rules(&self) -> Option<&'static crate::schema::Rules> {
        self.field_rules
    }

    /// Records a violation at the current path.
    ///
    /// Violations are kept in one order whatever the order of the input's keys or of the
    /// checks (T1): by path, segment by segment (array indices by number, keys by their
    /// bytes, a value before what it holds), then by [`Rule`] in its declared order. Past
    /// [`MAX_VIOLATIONS`] the first ones in that order are kept and the rest counted.
    pub fn violate(&mut self, rule: Rule, message: impl Into<String>) {
        self.violate_with(rule, || message.into());
    }

    /// Records a violation at the current path whose message is made only if it will be kept:
    /// past [`MAX_VIOLATIONS`] a violation that would not be kept is counted as dropped and
    /// `message` never runs, so thousands of violations cost no more than counting them.
    pub fn violate_with(&mut self, rule: Rule, message: impl FnOnce() -> String) {
        self.write_pending();
        // Where it goes: after every violation that orders before it or equal to it.
        let at = self
            .violations
            .partition_point(|v| violation_order(&v.path, v.rule, &self.path, rule).is_le());
        if self.violations.len() >= MAX_VIOLATIONS {
            self.dropped += 1;
            if at >= MAX_VIOLATIONS {
                return;
            }
            self.violations.pop();
        }
        self.violations.insert(
            at,
            Violation {
                path: self.path.clone(),
                rule,
                message: message(),
            },
        );
    }

    /// Records a violation at the member `key` of the current object.
    pub fn violate_at(&mut self, key: &str, rule: Rule, message: impl Into<String>) {
        self.enter_key(key);
        self.violate(rule, message);
        self.leave();
    }

    /// Records an operational failure of a validator (S5): the parse fails, and the model is
    /// told only `the tool failed` (E2).
    pub fn fail(&mut self, error: BoxError) {
        if self.failure.is_none() {
            self.failure = Some(error);
        }
    }

    /// How many problems were recorded so far (violations, dropped ones, a failure).
    #[inline]
    pub fn error_count(&self) -> usize {
        self.violations.len() + self.dropped + usize::from(self.failure.is_some())
    }

    /// Whether nothing has gone wrong so far.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty() && self.dropped == 0 && self.failure.is_none()
    }

    /// The violations recorded so far.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Splits into the violations, how many more were dropped, and the operational failure.
    pub fn finish(self) -> (Vec<Violation>, usize, Option<BoxError>) {
        (self.violations, self.dropped, self.failure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A paused run keeps violations (H7): each rule serializes as its keyword, and back.
    #[test]
    fn rules_serialize_as_their_keywords() {
        for rule in Rule::ALL {
            let json = serde_json::to_value(rule).expect("a rule serializes");
            assert_eq!(json, serde_json::Value::from(rule.keyword()));
            assert_eq!(serde_json::from_value::<Rule>(json).ok(), Some(rule));
        }
    }

    #[test]
    fn pointer_escapes_and_unwinds() {
        let mut cx = ParseCx::new();
        cx.enter_key("a/b");
        cx.enter_index(3);
        cx.enter_key("c~d");
        assert_eq!(cx.path(), "/a~1b/3/c~0d");
        cx.leave();
        cx.leave();
        assert_eq!(cx.path(), "/a~1b");
        cx.leave();
        assert_eq!(cx.path(), "");
        cx.leave();
        assert_eq!(cx.path(), "");
        // Deeper than the tracked levels, and back.
        for i in 0..40 {
            cx.enter_key(if i % 2 == 0 { "a/b" } else { "k" });
            cx.enter_index(i);
        }
        assert!(cx.path().starts_with("/a~1b/0/k/1/a~1b/2"));
        for _ in 0..79 {
            cx.leave();
        }
        assert_eq!(cx.path(), "/a~1b");
        cx.leave();
        cx.enter_segment("x~1y");
        assert_eq!(cx.path(), "/x~1y");
        cx.leave();
        // A segment that starts past 64 KiB of path.
        let long = "k".repeat(70_000);
        cx.enter_key(&long);
        cx.enter_key("tail");
        cx.leave();
        assert_eq!(cx.path().len(), 70_001);
        cx.leave();
        assert_eq!(cx.path(), "");
    }

    #[test]
    fn s3_quoted_previews_escape_like_debug() {
        for s in [
            "plain",
            "with \"quotes\"",
            "back\\slash",
            "new\nline",
            "ünï",
            &"y".repeat(30),
        ] {
            let mut out = String::new();
            push_quoted_preview(&mut out, s);
            assert_eq!(out, format!("{:?}", preview_str(s)));
        }
        assert_eq!(
            not_one_of(&["a", "b"], "c"),
            "must be one of \"a\", \"b\", found \"c\""
        );
    }

    #[test]
    fn violations_render_one_line_each_as_displayed() {
        let v = |path: &str| Violation {
            path: path.into(),
            rule: Rule::Type,
            message: "expected a string, found null".into(),
        };
        let list = [v(""), v("/a/0")];
        let text = render_violations(&list, 0);
        let expected: Vec<String> = list.iter().map(|v| format!("- {v}")).collect();
        assert_eq!(text, format!("invalid arguments:\n{}", expected.join("\n")));
    }

    #[test]
    fn s3_previews_are_short() {
        let long = "x".repeat(1000);
        assert_eq!(preview_str(&long).chars().count(), PREVIEW_CHARS + 1);
        assert_eq!(preview_str("short"), "short");
    }

    #[test]
    fn violations_are_capped() {
        let mut cx = ParseCx::new();
        for _ in 0..MAX_VIOLATIONS + 5 {
            cx.violate(Rule::Type, "x");
        }
        let (v, dropped, _) = cx.finish();
        assert_eq!((v.len(), dropped), (MAX_VIOLATIONS, 5));
        assert!(render_violations(&v, dropped).ends_with("and 5 more"));
    }

    #[test]
    fn t1_violations_keep_one_order_whatever_the_order_they_were_found_in() {
        let found = [
            ("/tags/10", Rule::Type),
            ("/b", Rule::Pattern),
            ("/tags/2", Rule::MaxLength),
            ("", Rule::AdditionalProperties),
            ("/b", Rule::MinLength),
            ("/a/x", Rule::Required),
            ("/a", Rule::Type),
            ("/tags", Rule::MaxItems),
            ("/tags/02", Rule::Type),
        ];
        let expected = [
            "", "/a", "/a/x", "/b", "/b", "/tags", "/tags/2", "/tags/10", "/tags/02",
        ];
        let mut forward = ParseCx::new();
        let mut backward = ParseCx::new();
        for (cx, order) in [
            (&mut forward, found.to_vec()),
            (&mut backward, found.iter().rev().copied().collect()),
        ] {
            for (path, rule) in order {
                cx.path = path.to_owned();
                cx.violate(rule, "x");
            }
        }
        let paths = |cx: &ParseCx| -> Vec<(String, Rule)> {
            cx.violations()
                .iter()
                .map(|v| (v.path.clone(), v.rule))
                .collect()
        };
        assert_eq!(paths(&forward), paths(&backward));
        let only: Vec<&str> = forward
            .violations()
            .iter()
            .map(|v| v.path.as_str())
            .collect();
        assert_eq!(only, expected);
        assert_eq!(
            forward.violations()[3].rule,
            Rule::MinLength,
            "then by rule"
        );
    }

    #[test]
    fn t1_past_the_cap_the_first_violations_in_order_are_kept() {
        let mut cx = ParseCx::new();
        let mut built = 0;
        for i in (0..100).rev() {
            cx.path = format!("/{i}");
            cx.violate_with(Rule::Type, || {
                built += 1;
                String::new()
            });
        }
        let (kept, dropped, _) = cx.finish();
        assert_eq!(kept.len(), MAX_VIOLATIONS);
        assert_eq!(dropped, 100 - MAX_VIOLATIONS);
        assert_eq!(kept[0].path, "/0");
        assert_eq!(
            kept[MAX_VIOLATIONS - 1].path,
            format!("/{}", MAX_VIOLATIONS - 1)
        );
        // In this worst order each one is kept for a while; in the usual order (increasing)
        // no message past the cap is ever built.
        assert_eq!(built, 100);
        let mut cx = ParseCx::new();
        let mut built = 0;
        for i in 0..100 {
            cx.path = format!("/{i}");
            cx.violate_with(Rule::Type, || {
                built += 1;
                String::new()
            });
        }
        assert_eq!(built, MAX_VIOLATIONS);
    }
}
