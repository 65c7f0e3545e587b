//! The errors of the JSON Schema validator said as the typed parser says them (T1): the same
//! rules, wording and pointers, so that a call checked against a remote tool's schema reads to
//! the model as the same call checked by a derived parser.
//!
//! The validator's verdict stands; only how it is said changes:
//! - a value of the wrong type gets one `type` violation and nothing else (the parser stops
//!   at the type), worded `expected an integer, found string`; `null` at a member is that
//!   member being absent (`is required`), as the parser reads it (S2);
//! - an `anyOf`/`oneOf` says what the branch that fits the value says: the branch whose type
//!   the value has (a nullable field's), or the variant its tag names (a tagged enum's);
//! - numbers are written as the parser writes them ([`Num`]); fixed choices, unknown members
//!   and formats in the parser's words.

use std::collections::HashSet;

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind as K};
use serde_json::Value;
use tool_core::__private::{unknown_field, unknown_variant};
use tool_core::schema::{Broken, Expected, Format, Listed, Num, Sent, type_of};
use tool_core::violation::{ParseCx, Rule, preview_str};

/// One thing to say about the arguments.
enum Said<'e> {
    /// An error of the validator, said in the parser's words.
    Error(&'e ValidationError<'static>),
    /// The value at `path` has none of the types `expected`.
    Types {
        path: &'e str,
        expected: Vec<String>,
        instance: &'e Value,
    },
    /// A tagged enum's tag at `path` (its member `tag`) is missing or names no variant.
    Tag {
        path: &'e str,
        tag: String,
        found: Option<&'e Value>,
        variants: Vec<String>,
    },
}

impl Said<'_> {
    fn path(&self) -> &str {
        match self {
            Said::Error(error) => error.instance_path().as_str(),
            Said::Types { path, .. } | Said::Tag { path, .. } => path,
        }
    }

    fn is_type(&self) -> bool {
        match self {
            Said::Error(error) => matches!(error.kind(), K::Type { .. }),
            Said::Types { .. } => true,
            Said::Tag { .. } => false,
        }
    }
}

/// Records in `cx` what the validator's `errors` (for `value`, against `schema`) say.
pub(super) fn record_all(
    errors: &[ValidationError<'static>],
    value: &Value,
    schema: &Value,
    cx: &mut ParseCx,
) {
    let mut said = Vec::new();
    for error in errors {
        resolve(error, schema, &mut said);
    }
    // The parser says nothing more of a value of the wrong type.
    let typed: HashSet<&str> = said
        .iter()
        .filter(|s| s.is_type())
        .map(Said::path)
        .collect();
    for item in &said {
        if item.is_type() || !typed.contains(item.path()) {
            say(item, value, schema, cx);
        }
    }
}

/// What `error` comes to: itself, or for an `anyOf`/`oneOf`, what its fitting branch says.
fn resolve<'e>(error: &'e ValidationError<'static>, schema: &Value, out: &mut Vec<Said<'e>>) {
    let context = match error.kind() {
        K::AnyOf { context } | K::OneOfNotValid { context } => context,
        _ => {
            out.push(Said::Error(error));
            return;
        }
    };
    let at = error.instance_path().as_str();
    let instance: &Value = error.instance();
    // A tagged enum's object: the branch its tag names.
    if instance.is_object()
        && let Some((tag, variants)) = tag_of(schema, error.schema_path().as_str())
    {
        let found = instance.get(&tag);
        match found
            .and_then(Value::as_str)
            .and_then(|name| variants.iter().position(|v| v == name))
        {
            Some(index) => {
                for inner in context.get(index).into_iter().flatten() {
                    resolve(inner, schema, out);
                }
            }
            None => out.push(Said::Tag {
                path: at,
                tag,
                found,
                variants,
            }),
        }
        return;
    }
    // Otherwise the branches whose type the value has.
    let fits = |branch: &&Vec<ValidationError<'static>>| {
        !branch
            .iter()
            .any(|e| matches!(e.kind(), K::Type { .. }) && e.instance_path().as_str() == at)
    };
    let fitting: Vec<&Vec<ValidationError<'static>>> = context.iter().filter(fits).collect();
    match fitting.as_slice() {
        [branch] => {
            for inner in branch.iter() {
                resolve(inner, schema, out);
            }
        }
        [] => {
            let mut expected = Vec::new();
            for e in context.iter().flatten() {
                if let K::Type { kind } = e.kind()
                    && e.instance_path().as_str() == at
                {
                    for name in type_names(kind) {
                        if !expected.contains(&name) {
                            expected.push(name);
                        }
                    }
                }
            }
            out.push(Said::Types {
                path: at,
                expected,
                instance,
            });
        }
        _ => out.push(Said::Error(error)),
    }
}

/// The tag member and the variant names of the `oneOf`/`anyOf` at `keyword` in `schema`, when
/// every branch is an object whose member `tag` is one fixed string (`const`, or an `enum` of
/// one): a tagged enum.
fn tag_of(schema: &Value, keyword: &str) -> Option<(String, Vec<String>)> {
    let branches = resolve_ref(schema, schema.pointer(keyword)?)?.as_array()?;
    let first = resolve_ref(schema, branches.first()?)?;
    let properties = first.get("properties")?.as_object()?;
    properties.iter().find_map(|(tag, property)| {
        fixed_string(property)?;
        let variants = branches
            .iter()
            .map(|branch| {
                let property = resolve_ref(schema, branch)?.get("properties")?.get(tag)?;
                fixed_string(property).map(str::to_owned)
            })
            .collect::<Option<Vec<String>>>()?;
        Some((tag.clone(), variants))
    })
}

/// The one string a schema admits, if it admits one only.
fn fixed_string(property: &Value) -> Option<&str> {
    if let Some(fixed) = property.get("const") {
        return fixed.as_str();
    }
    match property.get("enum")?.as_array()?.as_slice() {
        [only] => only.as_str(),
        _ => None,
    }
}

/// `node`, or what its local `$ref` points to (one level: enough for the branches of a
/// derived schema).
fn resolve_ref<'s>(schema: &'s Value, node: &'s Value) -> Option<&'s Value> {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => schema.pointer(reference.strip_prefix('#')?),
        None => Some(node),
    }
}

/// Records what `item` says at its path.
fn say(item: &Said<'_>, root: &Value, schema: &Value, cx: &mut ParseCx) {
    let depth = enter_pointer(cx, item.path());
    match item {
        Said::Error(error) => say_error(error, root, schema, cx),
        Said::Types {
            expected, instance, ..
        } => say_type(expected, instance, item.path(), root, cx),
        Said::Tag {
            tag,
            found,
            variants,
            ..
        } => {
            let variants: Vec<&str> = variants.iter().map(String::as_str).collect();
            let found = found.map(|v| tool_core::json::Json::from_value(v.clone()));
            tool_core::__private::bad_tag(tag, found.as_ref(), &variants, cx);
        }
    }
    for _ in 0..depth {
        cx.leave();
    }
}

/// Records one error of the validator at the current path.
fn say_error(error: &ValidationError<'_>, root: &Value, schema: &Value, cx: &mut ParseCx) {
    let instance: &Value = error.instance();
    match error.kind() {
        K::Type { kind } => say_type(
            &type_names(kind),
            instance,
            error.instance_path().as_str(),
            root,
            cx,
        ),
        K::Required { property } => {
            let key = property
                .as_str()
                .map_or_else(|| property.to_string(), preview_str);
            cx.broke_at(&key, Broken::Required);
        }
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            let declared = declared_properties(schema, error.schema_path().as_str());
            let declared: Vec<&str> = declared.iter().map(String::as_str).collect();
            for key in unexpected {
                unknown_field(key, &declared, cx);
            }
        }
        K::BacktrackLimitExceeded { .. } | K::RegexEngineFailure { .. } | K::Referencing(_) => {
            // Operational: redacted from the model like any validator failure (S5, E2).
            cx.fail(error.masked().to_string().into());
        }
        K::Enum { options } => match (options.as_array(), instance.as_str()) {
            (Some(options), Some(found)) if options.iter().all(Value::is_string) => {
                let names: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
                unknown_variant(found, &names, cx);
            }
            _ => cx.broke(Broken::OneOf {
                listed: &Listed(options.as_array().map_or(&[], Vec::as_slice)),
                found: &Sent::of_value(instance),
            }),
        },
        K::Constant { expected_value } => match (expected_value.as_str(), instance.as_str()) {
            (Some(expected), Some(found)) => unknown_variant(found, &[expected], cx),
            _ => cx.broke(Broken::Constant {
                expected: &Listed(std::slice::from_ref(expected_value)),
                found: &Sent::of_value(instance),
            }),
        },
        kind => {
            let (rule, message) = describe(kind, instance);
            cx.violate(rule, message);
        }
    }
}

/// Records that `instance` (at `path`) has none of the types `expected`: as the parser does,
/// `null` at a member is that member missing.
fn say_type(expected: &[String], instance: &Value, path: &str, root: &Value, cx: &mut ParseCx) {
    if instance.is_null()
        && let Some((parent, _)) = path.rsplit_once('/')
        && root.pointer(parent).is_some_and(Value::is_object)
    {
        cx.broke(Broken::Required);
        return;
    }
    // `null` is what an absent value is sent as: the parser names the other types only.
    let named: Vec<&str> = expected
        .iter()
        .map(String::as_str)
        .filter(|t| *t != "null" || expected.len() == 1)
        .collect();
    let wanted = Expected(&named).to_string();
    let integer_only = named.contains(&"integer") && !named.contains(&"number");
    match instance {
        Value::Number(n) if integer_only => cx.broke(Broken::Type {
            expected: &wanted,
            found: &Num::of_json(n),
        }),
        other => cx.type_mismatch(&wanted, type_of(other)),
    }
}

/// The JSON type names of a `type` keyword.
fn type_names(kind: &TypeKind) -> Vec<String> {
    match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect(),
    }
}

/// The declared properties of the object schema whose `additionalProperties` is at
/// `keyword`, in the order of their bytes (as the parser lists them).
fn declared_properties(schema: &Value, keyword: &str) -> Vec<String> {
    let parent = keyword.rsplit_once('/').map_or("", |(parent, _)| parent);
    let mut names: Vec<String> = schema
        .pointer(parent)
        .and_then(|node| resolve_ref(schema, node))
        .and_then(|node| node.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    names.sort_unstable();
    names
}

/// Enters each segment of the JSON pointer `pointer` (each key shortened, S3); returns how
/// many were entered.
fn enter_pointer(cx: &mut ParseCx, pointer: &str) -> usize {
    let mut depth = 0;
    for segment in pointer.split('/').skip(1) {
        let key = segment.replace("~1", "/").replace("~0", "~");
        cx.enter_key(&preview_str(&key));
        depth += 1;
    }
    depth
}

/// The rule and the message of a broken rule, in the words the parser says it with.
fn said(broken: Broken<'_>) -> (Rule, String) {
    (broken.rule(), broken.to_string())
}

/// The rule and the message of an error that concerns the value at its path itself.
fn describe(kind: &K, instance: &Value) -> (Rule, String) {
    describe_text(kind, instance)
        .or_else(|| describe_number(kind, instance))
        .or_else(|| describe_count(kind, instance))
        .unwrap_or_else(|| match kind {
            K::FalseSchema => said(Broken::NotAllowed),
            other => said(Broken::Unsatisfied {
                keyword: other.keyword(),
            }),
        })
}

/// The rules of a string's length, pattern and format.
fn describe_text(kind: &K, instance: &Value) -> Option<(Rule, String)> {
    match kind {
        K::MinLength { limit } => Some(said(Broken::MinLength {
            min: usize::try_from(*limit).unwrap_or(usize::MAX),
            len: char_len(instance),
        })),
        K::MaxLength { limit } => Some(said(Broken::MaxLength {
            max: usize::try_from(*limit).unwrap_or(usize::MAX),
            len: char_len(instance),
        })),
        K::Pattern { pattern } => Some(said(Broken::Pattern {
            pattern,
            found: &Sent::of_value(instance),
        })),
        K::Format { format } => Some(match Format::from_name(format) {
            Some(known) => said(Broken::Format {
                described: known.describe(),
                found: &Sent::of_value(instance),
            }),
            // A format the parser does not know: the remote validator's own.
            None => said(Broken::Format {
                described: &format!("a valid {format}"),
                found: &Sent::of_value(instance),
            }),
        }),
        _ => None,
    }
}

/// The rules of a number's range and multiple.
fn describe_number(kind: &K, instance: &Value) -> Option<(Rule, String)> {
    let n = |limit: &Value| {
        limit
            .as_number()
            .map_or_else(|| limit.to_string(), |n| Num::of_json(n).to_string())
    };
    match kind {
        K::Minimum { limit } => Some(said(Broken::Minimum {
            limit: &n(limit),
            found: &Sent::of_value(instance),
        })),
        K::Maximum { limit } => Some(said(Broken::Maximum {
            limit: &n(limit),
            found: &Sent::of_value(instance),
        })),
        K::ExclusiveMinimum { limit } => Some(said(Broken::ExclusiveMinimum {
            limit: &n(limit),
            found: &Sent::of_value(instance),
        })),
        K::ExclusiveMaximum { limit } => Some(said(Broken::ExclusiveMaximum {
            limit: &n(limit),
            found: &Sent::of_value(instance),
        })),
        K::MultipleOf { multiple_of } => Some(said(Broken::MultipleOf {
            step: &Num::Float(*multiple_of),
            found: &Sent::of_value(instance),
        })),
        _ => None,
    }
}

/// The rules of how many items or properties a value has.
fn describe_count(kind: &K, instance: &Value) -> Option<(Rule, String)> {
    match kind {
        K::MinItems { limit } => Some(said(Broken::MinItems {
            min: usize::try_from(*limit).unwrap_or(usize::MAX),
            len: item_count(instance),
        })),
        K::MaxItems { limit } => Some(said(Broken::MaxItems {
            max: usize::try_from(*limit).unwrap_or(usize::MAX),
            len: item_count(instance),
        })),
        K::UniqueItems => Some(said(Broken::UniqueItems)),
        K::MinProperties { limit } => Some(said(Broken::MinProperties {
            min: usize::try_from(*limit).unwrap_or(usize::MAX),
            len: member_count(instance),
        })),
        K::MaxProperties { limit } => Some(said(Broken::MaxProperties {
            max: usize::try_from(*limit).unwrap_or(usize::MAX),
            len: member_count(instance),
        })),
        K::AdditionalItems { limit } => Some(said(Broken::MaxItems {
            max: *limit,
            len: item_count(instance),
        })),
        _ => None,
    }
}

fn char_len(value: &Value) -> usize {
    value.as_str().map_or(0, |s| s.chars().count())
}

fn item_count(value: &Value) -> usize {
    value.as_array().map_or(0, Vec::len)
}

fn member_count(value: &Value) -> usize {
    value.as_object().map_or(0, serde_json::Map::len)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_core::ArgumentValidator;

    use super::super::JsonSchemaValidator;
    use super::*;

    fn said(schema: &Value, args: &Value) -> Vec<String> {
        let validator = JsonSchemaValidator::new(schema).expect("a valid schema");
        let mut cx = ParseCx::new();
        validator.validate(args, &mut cx);
        cx.finish().0.iter().map(ToString::to_string).collect()
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "days": {"type": ["integer", "null"], "minimum": 1, "maximum": 30, "default": 7},
                "name": {"type": "string"},
                "mode": {"anyOf": [{"type": "string", "enum": ["fast", "safe"]}, {"type": "null"}]},
                "action": {"$ref": "#/$defs/Action"}
            },
            "required": ["name", "action"],
            "additionalProperties": false,
            "$defs": {"Action": {"anyOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "enum": ["stop"]},
                    "secs": {"type": "integer", "maximum": 600}},
                 "required": ["kind", "secs"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"const": "look"}},
                 "required": ["kind"], "additionalProperties": false}
            ]}}
        })
    }

    #[test]
    fn t1_errors_read_as_the_parser_writes_them() {
        let args = json!({
            "days": 30.5, "name": null, "mode": 7, "zz": 1,
            "action": {"kind": "stop", "secs": 601}
        });
        assert_eq!(
            said(&schema(), &args),
            [
                "/action/secs: must be at most 600, found 601 [maximum]",
                "/days: expected an integer, found 30.5 [type]",
                "/mode: expected a string, found integer [type]",
                "/name: is required [required]",
                "/zz: is not a property of this object; its properties are \"action\", \
                 \"days\", \"mode\", \"name\" [additionalProperties]",
            ]
        );
    }

    #[test]
    fn t1_a_tagged_enum_says_what_its_tag_names() {
        let base = |action: Value| json!({"name": "n", "action": action});
        assert_eq!(
            said(&schema(), &base(json!({"kind": "jump"}))),
            ["/action/kind: must be one of \"stop\", \"look\", found \"jump\" [enum]"]
        );
        assert_eq!(
            said(&schema(), &base(json!({}))),
            ["/action/kind: is required: one of \"stop\", \"look\" [required]"]
        );
        assert_eq!(
            said(&schema(), &base(json!({"kind": "look", "secs": 1}))),
            [
                "/action/secs: is not a property of this object; its properties are \"kind\" \
              [additionalProperties]"
            ]
        );
        assert_eq!(
            said(&schema(), &base(json!("stop"))),
            ["/action: expected an object, found string [type]"]
        );
    }

    /// T1: the rules a derived type cannot declare (an `enum` of numbers, a `const`, counts of
    /// members, `additionalItems`, a keyword the parser has no words for such as `not`, an
    /// unknown format) are said in the one wording the schemars check also uses ([`Broken`]), not in
    /// words of the remote validator's own.
    #[test]
    fn t1_rules_without_a_derived_form_take_the_one_wording() {
        let schema = json!({
            "type": "object",
            "properties": {
                "level": {"enum": [1, 2, 3]},
                "version": {"const": 2},
                "tags": {"type": "object", "minProperties": 2, "maxProperties": 3},
                "mail": {"type": "string", "format": "x-custom"},
                "both": {"not": {"type": "string"}},
                "kind": {"type": ["integer", "number"]}
            },
            "additionalProperties": false
        });
        let args = json!({
            "level": 4, "version": "two", "tags": {"a": 1},
            "mail": "x", "both": "b", "kind": "k"
        });
        let at = |path: &str, broken: Broken<'_>| format!("{path}: {broken} [{}]", broken.rule());
        let mut expected = vec![
            at("/both", Broken::Unsatisfied { keyword: "not" }),
            at(
                "/kind",
                Broken::Type {
                    expected: &Expected(&["integer", "number"]).to_string(),
                    found: &"string",
                },
            ),
            at(
                "/level",
                Broken::OneOf {
                    listed: &Listed(&[json!(1), json!(2), json!(3)]),
                    found: &Sent::of_value(&json!(4)),
                },
            ),
            at("/tags", Broken::MinProperties { min: 2, len: 1 }),
            at(
                "/version",
                Broken::Constant {
                    expected: &Listed(&[json!(2)]),
                    found: &Sent::of_value(&json!("two")),
                },
            ),
        ];
        let mut got = said(&schema, &args);
        // A format the parser does not know is the remote validator's to check: when it
        // checks it, it is said as the parser says a format.
        got.retain(|line| !line.starts_with("/mail"));
        expected.sort();
        got.sort();
        assert_eq!(got, expected);
        assert!(
            expected
                .iter()
                .all(|line| line.contains("found") || line.contains("satisfy")),
            "{expected:?}"
        );
        // `additionalItems` is draft 7's (many servers still publish that draft).
        let draft7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "pair": {"type": "array", "items": [{"type": "integer"}], "additionalItems": false}
            }
        });
        let items = said(&draft7, &json!({"pair": [1, 2, 3]}));
        assert_eq!(items, [at("/pair", Broken::MaxItems { max: 1, len: 3 })]);
    }
}
