//! [`Broken`]: the one wording of the violations of the schema's own rules. The derived
//! parser, the check of a schemars input (C3) and the validator of a remote tool's schema
//! (T1) all say a broken rule through it, so that one call reads to the model the same
//! whichever of them checked it.

use std::fmt::{self, Display};

use serde_json::Value;

use super::Num;
use super::json::Json;
use super::violation::{ParseCx, Rule, preview_str};

/// The bytes a violation's message is given before it is written: most fit.
const MESSAGE_CAPACITY: usize = 96;

/// A rule a value broke, with what its message names: the limit the schema declares and
/// what the model sent, each already written as the message shows it (a number as [`Num`]
/// writes it, a string quoted and shortened, S3).
///
/// [`Num`]: super::Num
///
/// ```
/// use tool_core::schema::Broken;
/// use tool_core::violation::Rule;
///
/// let broken = Broken::MinLength { min: 1, len: 0 };
/// assert_eq!(broken.rule(), Rule::MinLength);
/// assert_eq!(broken.to_string(), "must be at least 1 character long, found 0");
/// ```
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum Broken<'a> {
    /// The value has another JSON type than `expected` ("an integer"); `found` names the
    /// type it has ("string"), or the number it is.
    Type {
        /// What the schema wants, with its article.
        expected: &'a str,
        /// The type found, or the number.
        found: &'a dyn Display,
    },
    /// A required member is missing (or `null` where `null` stands for absent, S2).
    Required,
    /// Nothing is allowed here (a `false` schema).
    NotAllowed,
    /// A string of `len` characters, fewer than `minLength`.
    MinLength {
        /// `minLength`.
        min: usize,
        /// The characters the string has.
        len: usize,
    },
    /// A string of `len` characters, more than `maxLength`.
    MaxLength {
        /// `maxLength`.
        max: usize,
        /// The characters the string has.
        len: usize,
    },
    /// A string that does not match `pattern`.
    Pattern {
        /// The pattern, as the schema writes it.
        pattern: &'a str,
        /// The string, quoted.
        found: &'a dyn Display,
    },
    /// A string without its `format`, described ("a valid email address").
    Format {
        /// What the format is, in words.
        described: &'a str,
        /// The string, quoted.
        found: &'a dyn Display,
    },
    /// A number below `minimum`.
    Minimum {
        /// `minimum`.
        limit: &'a dyn Display,
        /// The number.
        found: &'a dyn Display,
    },
    /// A number above `maximum`.
    Maximum {
        /// `maximum`.
        limit: &'a dyn Display,
        /// The number.
        found: &'a dyn Display,
    },
    /// A number not above `exclusiveMinimum`.
    ExclusiveMinimum {
        /// `exclusiveMinimum`.
        limit: &'a dyn Display,
        /// The number.
        found: &'a dyn Display,
    },
    /// A number not below `exclusiveMaximum`.
    ExclusiveMaximum {
        /// `exclusiveMaximum`.
        limit: &'a dyn Display,
        /// The number.
        found: &'a dyn Display,
    },
    /// A number that is not a multiple of `multipleOf`.
    MultipleOf {
        /// `multipleOf`.
        step: &'a dyn Display,
        /// The number.
        found: &'a dyn Display,
    },
    /// An array of `len` items, fewer than `minItems`.
    MinItems {
        /// `minItems`.
        min: usize,
        /// The items the array has.
        len: usize,
    },
    /// An array of `len` items, more than `maxItems`.
    MaxItems {
        /// `maxItems`.
        max: usize,
        /// The items the array has.
        len: usize,
    },
    /// An array that holds an item twice (`uniqueItems`).
    UniqueItems,
    /// A value that is none of a fixed list (`enum`) of values that are not all strings (a
    /// string among strings is worded as an unknown variant, with the nearest name).
    OneOf {
        /// The values allowed, as [`Listed`] writes them.
        listed: &'a dyn Display,
        /// What was sent, as [`Sent`] writes it.
        found: &'a dyn Display,
    },
    /// A value other than the schema's `const` (not a string).
    Constant {
        /// The one value allowed, as [`Listed`] writes it.
        expected: &'a dyn Display,
        /// What was sent, as [`Sent`] writes it.
        found: &'a dyn Display,
    },
    /// An object of `len` members, fewer than `minProperties`.
    MinProperties {
        /// `minProperties`.
        min: usize,
        /// The members the object has.
        len: usize,
    },
    /// An object of `len` members, more than `maxProperties`.
    MaxProperties {
        /// `maxProperties`.
        max: usize,
        /// The members the object has.
        len: usize,
    },
    /// A value that fits more than one branch of a `oneOf`.
    SeveralAlternatives,
    /// A rule the parser has no words of its own for, named by its keyword.
    Unsatisfied {
        /// The schema's keyword (`dependentRequired`, …).
        keyword: &'a str,
    },
}

impl Broken<'_> {
    /// The message, written into a string made large enough for most at once: `to_string`
    /// would grow it two or three times (an invalid call of three violations: 13,863 -> 12,723
    /// instructions, `benches/RESULTS.md`).
    fn message(&self) -> String {
        use std::fmt::Write as _;
        let mut message = String::with_capacity(MESSAGE_CAPACITY);
        let _ = write!(message, "{self}");
        message
    }

    /// The rule broken.
    pub fn rule(&self) -> Rule {
        match self {
            Broken::Type { .. } => Rule::Type,
            Broken::Required => Rule::Required,
            Broken::NotAllowed => Rule::Custom,
            Broken::MinLength { .. } => Rule::MinLength,
            Broken::MaxLength { .. } => Rule::MaxLength,
            Broken::Pattern { .. } => Rule::Pattern,
            Broken::Format { .. } => Rule::Format,
            Broken::Minimum { .. } => Rule::Minimum,
            Broken::Maximum { .. } => Rule::Maximum,
            Broken::ExclusiveMinimum { .. } => Rule::ExclusiveMinimum,
            Broken::ExclusiveMaximum { .. } => Rule::ExclusiveMaximum,
            Broken::MultipleOf { .. } => Rule::MultipleOf,
            Broken::MinItems { .. } => Rule::MinItems,
            Broken::MaxItems { .. } => Rule::MaxItems,
            Broken::UniqueItems => Rule::UniqueItems,
            Broken::OneOf { .. } | Broken::Constant { .. } => Rule::Enum,
            Broken::SeveralAlternatives => Rule::Type,
            Broken::MinProperties { .. }
            | Broken::MaxProperties { .. }
            | Broken::Unsatisfied { .. } => Rule::Custom,
        }
    }
}

/// The message a violation of this rule carries.
impl Display for Broken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Broken::Type { expected, found } => write!(f, "expected {expected}, found {found}"),
            Broken::Required => f.write_str("is required"),
            Broken::NotAllowed => f.write_str("is not allowed here"),
            Broken::MinLength { min, len } => write!(
                f,
                "must be at least {min} {} long, found {len}",
                plural(min, "character", "characters")
            ),
            Broken::MaxLength { max, len } => write!(
                f,
                "must be at most {max} {} long, found {len}",
                plural(max, "character", "characters")
            ),
            Broken::Pattern { pattern, found } => {
                write!(f, "must match the pattern {pattern}, found {found}")
            }
            Broken::Format { described, found } => write!(f, "must be {described}, found {found}"),
            Broken::Minimum { limit, found } => {
                write!(f, "must be at least {limit}, found {found}")
            }
            Broken::Maximum { limit, found } => write!(f, "must be at most {limit}, found {found}"),
            Broken::ExclusiveMinimum { limit, found } => {
                write!(f, "must be greater than {limit}, found {found}")
            }
            Broken::ExclusiveMaximum { limit, found } => {
                write!(f, "must be less than {limit}, found {found}")
            }
            Broken::MultipleOf { step, found } => {
                write!(f, "must be a multiple of {step}, found {found}")
            }
            Broken::MinItems { min, len } => write!(
                f,
                "must have at least {min} {}, found {len}",
                plural(min, "item", "items")
            ),
            Broken::MaxItems { max, len } => write!(
                f,
                "must have at most {max} {}, found {len}",
                plural(max, "item", "items")
            ),
            Broken::UniqueItems => f.write_str("must not hold the same item twice"),
            Broken::OneOf { listed, found } => write!(f, "must be one of {listed}, found {found}"),
            Broken::Constant { expected, found } => write!(f, "must be {expected}, found {found}"),
            Broken::MinProperties { min, len } => write!(
                f,
                "must have at least {min} {}, found {len}",
                plural(min, "member", "members")
            ),
            Broken::MaxProperties { max, len } => write!(
                f,
                "must have at most {max} {}, found {len}",
                plural(max, "member", "members")
            ),
            Broken::SeveralAlternatives => {
                f.write_str("fits more than one of the schema's alternatives (`oneOf`)")
            }
            Broken::Unsatisfied { keyword } => {
                write!(f, "does not satisfy the schema's `{keyword}` rule")
            }
        }
    }
}

impl fmt::Debug for Broken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Broken({:?}: {self})", self.rule())
    }
}

/// A string the model sent, as a violation quotes it: shortened (S3) and in double quotes.
///
/// ```
/// use tool_core::schema::Quoted;
///
/// assert_eq!(Quoted("a\"b").to_string(), r#""a\"b""#);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a>(pub &'a str);

impl Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", preview_str(self.0))
    }
}

/// A value the model sent, as a violation names it: a string quoted and shortened (S3), a
/// number as [`Num`] writes it, `true` or `false`, and any other value by its JSON type
/// (`null`, `array`, `object`), never its content.
///
/// ```
/// use tool_core::schema::Sent;
///
/// assert_eq!(Sent::of_value(&serde_json::json!("x")).to_string(), r#""x""#);
/// assert_eq!(Sent::of_value(&serde_json::json!(2.50)).to_string(), "2.5");
/// assert_eq!(Sent::of_value(&serde_json::json!({"k": 1})).to_string(), "object");
/// ```
#[derive(Debug, Clone, Copy)]
pub enum Sent<'a> {
    /// A string.
    String(&'a str),
    /// A number.
    Number(Num),
    /// A boolean.
    Bool(bool),
    /// Any other value, named by its JSON type.
    Kind(&'static str),
}

impl<'a> Sent<'a> {
    /// What a decoded argument is, as a violation names it.
    pub fn of_json(value: &'a Json) -> Self {
        match value {
            Json::String(s) => Sent::String(s),
            Json::Number(n) => Sent::Number(Num::of_json(n)),
            Json::Bool(b) => Sent::Bool(*b),
            other => Sent::Kind(other.type_name()),
        }
    }

    /// What a `serde_json` value is, as a violation names it.
    pub fn of_value(value: &'a Value) -> Self {
        match value {
            Value::String(s) => Sent::String(s),
            Value::Number(n) => Sent::Number(Num::of_json(n)),
            Value::Bool(b) => Sent::Bool(*b),
            other => Sent::Kind(type_of(other)),
        }
    }
}

impl Display for Sent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sent::String(s) => Quoted(s).fmt(f),
            Sent::Number(n) => f.write_str(&preview_str(&n.to_string())),
            Sent::Bool(b) => b.fmt(f),
            Sent::Kind(kind) => f.write_str(kind),
        }
    }
}

/// The JSON types a value should have had, as a `type` violation says what it expected: each
/// with its article, `null` left out unless it is the only one (an absent value is sent as
/// `null`), `integer` left out beside `number`, joined by `or`.
///
/// ```
/// use tool_core::schema::Expected;
///
/// assert_eq!(Expected(&["string", "null"]).to_string(), "a string");
/// assert_eq!(Expected(&["integer", "number"]).to_string(), "a number");
/// assert_eq!(Expected(&["array", "boolean"]).to_string(), "an array or a boolean");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a>(pub &'a [&'a str]);

impl Display for Expected<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let only_null = self.0 == ["null"];
        let number = self.0.contains(&"number");
        let named = self
            .0
            .iter()
            .filter(|t| (only_null || **t != "null") && (**t != "integer" || !number));
        for (at, name) in named.enumerate() {
            if at > 0 {
                f.write_str(" or ")?;
            }
            match *name {
                "null" => f.write_str("null")?,
                "integer" | "object" | "array" => write!(f, "an {name}")?,
                other => write!(f, "a {other}")?,
            }
        }
        Ok(())
    }
}

/// The JSON type of a `serde_json` value as a violation names what it found: `integer` for a
/// number written as one, `number` for another (as [`Json::type_name`] for a decoded one).
pub fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Values of the schema's own (an `enum`'s, a `const`), as a violation lists them: their
/// JSON joined by `, `, shortened like any quote (S3).
///
/// ```
/// use tool_core::schema::Listed;
///
/// let values = [serde_json::json!(1), serde_json::json!("a")];
/// assert_eq!(Listed(&values).to_string(), r#"1, "a""#);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Listed<'a>(pub &'a [Value]);

impl Display for Listed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let joined: Vec<String> = self.0.iter().map(Value::to_string).collect();
        f.write_str(&preview_str(&joined.join(", ")))
    }
}

/// The noun that follows a count: `one` for 1, `many` for any other count ("at least 1
/// character", "at least 0 characters", "at least 2 characters").
pub(crate) fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 { one } else { many }
}

impl ParseCx {
    /// Records that the value at the current path broke a rule, in the rule's one wording.
    #[cold]
    #[inline(never)]
    pub fn broke(&mut self, broken: Broken<'_>) {
        self.violate(broken.rule(), broken.message());
    }

    /// Records that the member `key` of the object at the current path broke a rule (a
    /// missing member: [`Broken::Required`]).
    #[cold]
    #[inline(never)]
    pub fn broke_at(&mut self, key: &str, broken: Broken<'_>) {
        self.violate_at(key, broken.rule(), broken.message());
    }

    /// Records a type violation: `expected` was wanted, `found` was sent.
    pub fn wrong_type(&mut self, expected: &str, found: &crate::json::Json) {
        self.type_mismatch(expected, found.type_name());
    }

    /// Records a `type` violation at the current path: `expected` ("a string") and the JSON
    /// type `found` ("object").
    pub fn type_mismatch(&mut self, expected: &str, found: &str) {
        self.broke(Broken::Type {
            expected,
            found: &found,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Num;

    /// T1: each rule's one wording, which the derived parser, the schemars check and the
    /// remote validator all record; a count of one takes the singular.
    #[test]
    fn t1_each_string_and_type_rule_has_one_wording() {
        let cases: [(Broken<'_>, Rule, &str); 7] = [
            (
                Broken::Type {
                    expected: "an integer",
                    found: &"string",
                },
                Rule::Type,
                "expected an integer, found string",
            ),
            (Broken::Required, Rule::Required, "is required"),
            (Broken::NotAllowed, Rule::Custom, "is not allowed here"),
            (
                Broken::MinLength { min: 1, len: 0 },
                Rule::MinLength,
                "must be at least 1 character long, found 0",
            ),
            (
                Broken::MaxLength { max: 2, len: 3 },
                Rule::MaxLength,
                "must be at most 2 characters long, found 3",
            ),
            (
                Broken::Pattern {
                    pattern: "^a$",
                    found: &Quoted("b"),
                },
                Rule::Pattern,
                "must match the pattern ^a$, found \"b\"",
            ),
            (
                Broken::Format {
                    described: "a valid email address",
                    found: &Quoted("x"),
                },
                Rule::Format,
                "must be a valid email address, found \"x\"",
            ),
        ];
        assert_wordings(cases);
    }

    /// T1: the number and array rules' one wording each.
    #[test]
    fn t1_each_number_and_array_rule_has_one_wording() {
        let (five, seven) = (Num::Int(5), Num::Float(7.5));
        let cases: [(Broken<'_>, Rule, &str); 8] = [
            (
                Broken::Minimum {
                    limit: &five,
                    found: &seven,
                },
                Rule::Minimum,
                "must be at least 5, found 7.5",
            ),
            (
                Broken::Maximum {
                    limit: &five,
                    found: &seven,
                },
                Rule::Maximum,
                "must be at most 5, found 7.5",
            ),
            (
                Broken::ExclusiveMinimum {
                    limit: &five,
                    found: &five,
                },
                Rule::ExclusiveMinimum,
                "must be greater than 5, found 5",
            ),
            (
                Broken::ExclusiveMaximum {
                    limit: &five,
                    found: &seven,
                },
                Rule::ExclusiveMaximum,
                "must be less than 5, found 7.5",
            ),
            (
                Broken::MultipleOf {
                    step: &five,
                    found: &seven,
                },
                Rule::MultipleOf,
                "must be a multiple of 5, found 7.5",
            ),
            (
                Broken::MinItems { min: 1, len: 0 },
                Rule::MinItems,
                "must have at least 1 item, found 0",
            ),
            (
                Broken::MaxItems { max: 2, len: 3 },
                Rule::MaxItems,
                "must have at most 2 items, found 3",
            ),
            (
                Broken::UniqueItems,
                Rule::UniqueItems,
                "must not hold the same item twice",
            ),
        ];
        assert_wordings(cases);
    }

    /// Each case's rule and message are those given.
    fn assert_wordings<const N: usize>(cases: [(Broken<'_>, Rule, &str); N]) {
        for (broken, rule, message) in cases {
            assert_eq!(
                (broken.rule(), broken.to_string().as_str()),
                (rule, message)
            );
        }
    }

    /// T1: the rules a derived type cannot declare (the schemars check and the remote
    /// validator say them) have one wording too.
    #[test]
    fn t1_rules_without_a_derived_form_have_one_wording() {
        let cases: [(Broken<'_>, Rule, &str); 6] = [
            (
                Broken::OneOf {
                    listed: &Listed(&[Value::from(1), Value::from(2)]),
                    found: &Sent::Bool(true),
                },
                Rule::Enum,
                "must be one of 1, 2, found true",
            ),
            (
                Broken::Constant {
                    expected: &Listed(&[Value::from(1)]),
                    found: &Sent::Kind("null"),
                },
                Rule::Enum,
                "must be 1, found null",
            ),
            (
                Broken::MinProperties { min: 1, len: 0 },
                Rule::Custom,
                "must have at least 1 member, found 0",
            ),
            (
                Broken::MaxProperties { max: 2, len: 3 },
                Rule::Custom,
                "must have at most 2 members, found 3",
            ),
            (
                Broken::SeveralAlternatives,
                Rule::Type,
                "fits more than one of the schema's alternatives (`oneOf`)",
            ),
            (
                Broken::Unsatisfied {
                    keyword: "dependentRequired",
                },
                Rule::Custom,
                "does not satisfy the schema's `dependentRequired` rule",
            ),
        ];
        assert_wordings(cases);
    }

    /// S3: a quoted string is shortened, so a violation never carries the whole of a long one.
    #[test]
    fn s3_a_quoted_string_is_short() {
        let long = "x".repeat(10_000);
        assert!(Quoted(&long).to_string().chars().count() < 200);
    }
}
