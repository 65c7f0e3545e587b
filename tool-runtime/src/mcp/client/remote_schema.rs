//! Schemas known only at run time, from a peer that is not trusted: bounds on their size, depth
//! and `$ref`s, and [`JsonSchemaValidator`], which enforces them on a call's arguments before
//! anything is sent, with violations like those of a typed tool (S2, S3, R5).

use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{PatternOptions, ValidationError, Validator};
use serde_json::Value;
use tool_core::ArgumentValidator;
use tool_core::violation::{ParseCx, Rule, preview_str};

use crate::mcp::json_kind;

/// The longest piece of a schema's own text (an `enum`, a `const`) a violation quotes.
const SCHEMA_QUOTE_CHARS: usize = 160;

/// Bounds on a schema received at run time (a remote MCP tool's `inputSchema`).
///
/// A schema over a bound is rejected before it is compiled: the tool is not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaLimits {
    /// The largest schema accepted, in bytes of its JSON encoding. Default: 64 KiB.
    pub max_bytes: usize,
    /// The deepest nesting of objects and arrays accepted. Default: 32.
    pub max_depth: usize,
    /// The most `$ref`, `$dynamicRef` and `$recursiveRef` keywords accepted. Default: 64.
    pub max_refs: usize,
}

impl Default for SchemaLimits {
    fn default() -> Self {
        Self {
            max_bytes: 64 * 1024,
            max_depth: 32,
            max_refs: 64,
        }
    }
}

/// Why a run-time schema was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaRejected {
    /// The schema's root is not an object schema (`"type": "object"`).
    #[error("the schema's root is not an object schema (`\"type\": \"object\"`)")]
    NotAnObject,
    /// The schema is larger than [`SchemaLimits::max_bytes`].
    #[error("the schema has {len} bytes, more than the {limit} accepted")]
    TooLarge {
        /// Its size, in bytes.
        len: usize,
        /// The bound.
        limit: usize,
    },
    /// The schema nests deeper than [`SchemaLimits::max_depth`].
    #[error("the schema nests deeper than the {limit} levels accepted")]
    TooDeep {
        /// The bound.
        limit: usize,
    },
    /// The schema holds more references than [`SchemaLimits::max_refs`].
    #[error("the schema holds more than the {limit} `$ref`s accepted")]
    TooManyRefs {
        /// The bound.
        limit: usize,
    },
    /// The schema refers to a document other than itself: only `#…` references are followed.
    #[error(
        "the schema refers to another document ({reference:?}); only `#…` references are accepted"
    )]
    RemoteRef {
        /// The reference (shortened).
        reference: String,
    },
    /// The schema is not a valid JSON Schema (or uses a `pattern` the regex engine rejects).
    #[error("the schema is not valid: {message}")]
    Invalid {
        /// What the validator said.
        message: String,
    },
}

/// Checks `schema` against `limits` without compiling it: its root, size, depth and
/// references.
///
/// # Errors
///
/// Returns the first bound `schema` breaks.
pub fn check_schema(schema: &Value, limits: &SchemaLimits) -> Result<(), SchemaRejected> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(SchemaRejected::NotAnObject);
    }
    let mut refs = 0_usize;
    // (value, depth, whether `$ref`s in it are keywords rather than data)
    let mut stack: Vec<(&Value, usize, bool)> = vec![(schema, 1, true)];
    while let Some((value, depth, keywords)) = stack.pop() {
        if depth > limits.max_depth {
            return Err(SchemaRejected::TooDeep {
                limit: limits.max_depth,
            });
        }
        match value {
            Value::Object(members) => {
                for (key, member) in members {
                    if keywords
                        && is_ref_keyword(key)
                        && let Value::String(reference) = member
                    {
                        refs += 1;
                        if refs > limits.max_refs {
                            return Err(SchemaRejected::TooManyRefs {
                                limit: limits.max_refs,
                            });
                        }
                        if !reference.starts_with('#') {
                            return Err(SchemaRejected::RemoteRef {
                                reference: preview_str(reference),
                            });
                        }
                    }
                    // The values of these keywords are data, not schemas.
                    let data = matches!(key.as_str(), "const" | "enum" | "default" | "examples");
                    stack.push((member, depth + 1, keywords && !data));
                }
            }
            Value::Array(items) => {
                stack.extend(items.iter().map(|item| (item, depth + 1, keywords)));
            }
            _ => {}
        }
    }
    let len = serde_json::to_vec(schema).map_or(usize::MAX, |bytes| bytes.len());
    if len > limits.max_bytes {
        return Err(SchemaRejected::TooLarge {
            len,
            limit: limits.max_bytes,
        });
    }
    Ok(())
}

fn is_ref_keyword(key: &str) -> bool {
    matches!(key, "$ref" | "$dynamicRef" | "$recursiveRef")
}

/// Enforces a JSON Schema known only at run time on a call's arguments: an
/// [`ArgumentValidator`] for [`ToolBuilder::dynamic_handler`](tool_core::ToolBuilder::dynamic_handler).
///
/// The schema is bounded ([`SchemaLimits`]) and compiled once, with remote references refused
/// (nothing is fetched: only `#…` references into the schema itself are followed), patterns
/// run by a linear-time regex engine, and `format` enforced. Each error becomes a
/// [`Violation`](tool_core::Violation) at the JSON pointer of the offending value, with the
/// [`Rule`] of its keyword (keywords without a rule of their own are reported as
/// [`Rule::Custom`]), quoting at most a short piece of the model's input (S3).
///
/// ```
/// use serde_json::json;
/// use tool_runtime::mcp::JsonSchemaValidator;
/// use tool_runtime::{Context, Tool};
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string", "minLength": 1}},
///     "required": ["city"]
/// });
/// let validator = JsonSchemaValidator::new(&schema)?;
/// let weather = Tool::builder("weather", "Tells the weather of a city.")
///     .dynamic_handler(schema, validator, |_ctx: Context, args: serde_json::Value| async move {
///         Ok::<_, std::convert::Infallible>(format!("sunny in {}", args["city"]))
///     })
///     .build();
/// assert!(weather.declaration_error().is_none());
/// # Ok::<(), tool_runtime::mcp::SchemaRejected>(())
/// ```
pub struct JsonSchemaValidator {
    validator: Validator,
}

impl JsonSchemaValidator {
    /// Compiles `schema` within the default [`SchemaLimits`].
    ///
    /// # Errors
    ///
    /// Returns why the schema is rejected: a bound it breaks, a remote reference, or a schema
    /// that does not compile.
    pub fn new(schema: &Value) -> Result<Self, SchemaRejected> {
        Self::with_limits(schema, &SchemaLimits::default())
    }

    /// Compiles `schema` within `limits`.
    ///
    /// # Errors
    ///
    /// As [`JsonSchemaValidator::new`].
    pub fn with_limits(schema: &Value, limits: &SchemaLimits) -> Result<Self, SchemaRejected> {
        check_schema(schema, limits)?;
        let validator = jsonschema::options()
            .offline()
            .should_validate_formats(true)
            .with_pattern_options(PatternOptions::regex())
            .build(schema)
            .map_err(|e| SchemaRejected::Invalid {
                message: e.masked().to_string(),
            })?;
        Ok(Self { validator })
    }
}

impl fmt::Debug for JsonSchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonSchemaValidator")
            .finish_non_exhaustive()
    }
}

impl ArgumentValidator for JsonSchemaValidator {
    fn validate(&self, value: &Value, cx: &mut ParseCx) {
        for error in self.validator.iter_errors(value) {
            record(&error, cx);
        }
    }
}

/// Records one error of the validator in `cx`, at its instance path.
fn record(error: &ValidationError<'_>, cx: &mut ParseCx) {
    let depth = enter_pointer(cx, error.instance_path().as_str());
    let instance = error.instance();
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let key = property
                .as_str()
                .map_or_else(|| property.to_string(), preview_str);
            cx.violate_at(&key, Rule::Required, "is required");
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for key in unexpected {
                cx.violate_at(
                    &preview_str(key),
                    Rule::AdditionalProperties,
                    "is not a property of this object",
                );
            }
        }
        ValidationErrorKind::BacktrackLimitExceeded { .. }
        | ValidationErrorKind::RegexEngineFailure { .. }
        | ValidationErrorKind::Referencing(_) => {
            // Operational: redacted from the model like any validator failure (S5, E2).
            cx.fail(error.masked().to_string().into());
        }
        kind => {
            let (rule, message) = describe(kind, instance);
            cx.violate(rule, message);
        }
    }
    for _ in 0..depth {
        cx.leave();
    }
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

/// The rule and the message of an error that concerns the value at its path itself.
fn describe(kind: &ValidationErrorKind, instance: &Value) -> (Rule, String) {
    use ValidationErrorKind as K;
    match kind {
        K::Type { kind } => (
            Rule::Type,
            format!("expected {}, found {}", types(kind), json_kind(instance)),
        ),
        K::MinLength { limit } => (
            Rule::MinLength,
            format!(
                "must be at least {limit} characters long, found {}",
                char_len(instance)
            ),
        ),
        K::MaxLength { limit } => (
            Rule::MaxLength,
            format!(
                "must be at most {limit} characters long, found {}",
                char_len(instance)
            ),
        ),
        K::Pattern { pattern } => (
            Rule::Pattern,
            format!(
                "must match the pattern {}, found {}",
                quote(pattern),
                found(instance)
            ),
        ),
        K::Format { format } => (
            Rule::Format,
            format!("must be a valid {format}, found {}", found(instance)),
        ),
        K::Enum { options } => (
            Rule::Enum,
            format!(
                "must be one of {}, found {}",
                quote(&options.to_string()),
                found(instance)
            ),
        ),
        K::Constant { expected_value } => (
            Rule::Enum,
            format!(
                "must be {}, found {}",
                quote(&expected_value.to_string()),
                found(instance)
            ),
        ),
        K::Minimum { limit } => (
            Rule::Minimum,
            format!("must be at least {limit}, found {}", found(instance)),
        ),
        K::Maximum { limit } => (
            Rule::Maximum,
            format!("must be at most {limit}, found {}", found(instance)),
        ),
        K::ExclusiveMinimum { limit } => (
            Rule::ExclusiveMinimum,
            format!("must be greater than {limit}, found {}", found(instance)),
        ),
        K::ExclusiveMaximum { limit } => (
            Rule::ExclusiveMaximum,
            format!("must be less than {limit}, found {}", found(instance)),
        ),
        K::MultipleOf { multiple_of } => (
            Rule::MultipleOf,
            format!(
                "must be a multiple of {multiple_of}, found {}",
                found(instance)
            ),
        ),
        K::MinItems { limit } => (
            Rule::MinItems,
            format!(
                "must have at least {limit} items, found {}",
                item_count(instance)
            ),
        ),
        K::MaxItems { limit } => (
            Rule::MaxItems,
            format!(
                "must have at most {limit} items, found {}",
                item_count(instance)
            ),
        ),
        K::UniqueItems => (
            Rule::UniqueItems,
            "must not hold the same item twice".into(),
        ),
        K::MinProperties { limit } => (
            Rule::Custom,
            format!("must have at least {limit} properties (minProperties)"),
        ),
        K::MaxProperties { limit } => (
            Rule::Custom,
            format!("must have at most {limit} properties (maxProperties)"),
        ),
        K::AdditionalItems { limit } => (
            Rule::MaxItems,
            format!("must have at most {limit} items (additionalItems)"),
        ),
        K::FalseSchema => (Rule::Custom, "is not allowed here".into()),
        other => (
            Rule::Custom,
            format!("does not satisfy the schema's `{}` rule", other.keyword()),
        ),
    }
}

fn types(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

/// A short quote of the model's value (S3).
fn found(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{:?}", preview_str(s)),
        Value::Number(n) => preview_str(&n.to_string()),
        Value::Bool(b) => b.to_string(),
        other => json_kind(other).to_owned(),
    }
}

/// A quote of the schema's own text, shortened.
fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(SCHEMA_QUOTE_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

fn char_len(value: &Value) -> usize {
    value.as_str().map_or(0, |s| s.chars().count())
}

fn item_count(value: &Value) -> usize {
    value.as_array().map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_core::Violation;

    use super::*;

    fn violations(schema: &Value, args: &Value) -> Vec<Violation> {
        let validator = JsonSchemaValidator::new(schema).expect("a valid schema");
        let mut cx = ParseCx::new();
        validator.validate(args, &mut cx);
        let (violations, _, failure) = cx.finish();
        assert!(failure.is_none());
        violations
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"},
                "days": {"type": "integer", "minimum": 1, "maximum": 30},
                "unit": {"enum": ["c", "f"]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "when": {"type": "string", "format": "date"},
                "a/b": {"$ref": "#/$defs/flag"}
            },
            "required": ["city"],
            "additionalProperties": false,
            "$defs": {"flag": {"type": "boolean"}}
        })
    }

    #[test]
    fn s2_every_violation_is_collected_with_its_pointer_and_rule() {
        let args = json!({
            "days": 0,
            "unit": "k",
            "tags": ["a", 7, "c"],
            "when": "tomorrow",
            "a/b": "yes",
            "extra": true
        });
        let mut found: Vec<(String, Rule)> = violations(&schema(), &args)
            .into_iter()
            .map(|v| (v.path, v.rule))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            found,
            vec![
                ("/a~1b".into(), Rule::Type),
                ("/city".into(), Rule::Required),
                ("/days".into(), Rule::Minimum),
                ("/extra".into(), Rule::AdditionalProperties),
                ("/tags".into(), Rule::MaxItems),
                ("/tags/1".into(), Rule::Type),
                ("/unit".into(), Rule::Enum),
                ("/when".into(), Rule::Format),
            ]
        );
    }

    #[test]
    fn valid_arguments_pass() {
        let args = json!({"city": "oslo", "days": 3, "unit": "c", "when": "2026-01-02"});
        assert!(violations(&schema(), &args).is_empty());
    }

    #[test]
    fn s3_violations_quote_only_a_short_piece_of_the_input() {
        let long = "Z".repeat(500);
        let key = "k".repeat(500);
        let args = json!({"city": long.clone(), key.clone(): 1});
        for v in violations(&schema(), &args) {
            assert!(!v.message.contains(&long[..30]), "{v}");
            assert!(!v.path.contains(&key[..30]), "{v}");
        }
    }

    #[test]
    fn remote_and_excess_refs_are_rejected() {
        let remote =
            json!({"type": "object", "properties": {"a": {"$ref": "https://x.test/s.json"}}});
        assert!(matches!(
            JsonSchemaValidator::new(&remote),
            Err(SchemaRejected::RemoteRef { .. })
        ));
        let relative = json!({"type": "object", "properties": {"a": {"$ref": "other.json#/a"}}});
        assert!(matches!(
            JsonSchemaValidator::new(&relative),
            Err(SchemaRejected::RemoteRef { .. })
        ));
        let many: serde_json::Map<String, Value> = (0..100)
            .map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/x"})))
            .collect();
        let fan_out = json!({"type": "object", "properties": many, "$defs": {"x": {}}});
        assert_eq!(
            JsonSchemaValidator::new(&fan_out).err(),
            Some(SchemaRejected::TooManyRefs { limit: 64 })
        );
        // `$ref` inside data (an enum value) is not a reference.
        let data = json!({"type": "object", "properties": {"a": {"enum": [{"$ref": "http://x"}]}}});
        assert!(JsonSchemaValidator::new(&data).is_ok());
    }

    #[test]
    fn size_and_depth_are_bounded() {
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        assert_eq!(
            JsonSchemaValidator::new(&deep).err(),
            Some(SchemaRejected::TooDeep { limit: 32 })
        );
        let big = json!({"type": "object", "description": "x".repeat(70_000)});
        assert!(matches!(
            JsonSchemaValidator::new(&big),
            Err(SchemaRejected::TooLarge { limit: 65_536, .. })
        ));
        let tight = SchemaLimits {
            max_bytes: 20,
            ..SchemaLimits::default()
        };
        assert!(JsonSchemaValidator::with_limits(&json!({"type": "object"}), &tight).is_ok());
        assert!(matches!(
            JsonSchemaValidator::new(&json!({"type": "array"})),
            Err(SchemaRejected::NotAnObject)
        ));
        assert!(matches!(
            JsonSchemaValidator::new(
                &json!({"type": "object", "properties": {"a": {"pattern": "(?<=a)b"}}})
            ),
            Err(SchemaRejected::Invalid { .. })
        ));
    }
}
