//! Schemas known only at run time, from a peer that is not trusted: bounds on their size, depth
//! and `$ref`s, and [`JsonSchemaValidator`], which enforces them on a call's arguments before
//! anything is sent, with violations like those of a typed tool (S2, S3, R5).

use std::fmt;

use jsonschema::{PatternOptions, ValidationError, Validator};
use serde_json::Value;
use tool_core::ArgumentValidator;
use tool_core::schema::Format;
use tool_core::violation::{ParseCx, preview_str};

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
/// run by a linear-time regex engine, and `format` enforced (the formats the parser knows are
/// checked by the parser's own code). Each error becomes a
/// [`Violation`](tool_core::Violation) at the JSON pointer of the offending value, with the
/// [`Rule`](tool_core::Rule) of its keyword (keywords without a rule of their own are reported
/// as [`Rule::Custom`](tool_core::Rule::Custom)), quoting at most a short piece of the model's
/// input (S3), in the words, order and pointers the typed parser uses for the same value (T1).
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
    /// The schema, for what a violation quotes of it (the properties an object declares).
    schema: Value,
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
        let options = jsonschema::options()
            .offline()
            .should_validate_formats(true)
            .with_pattern_options(PatternOptions::regex());
        // The formats the parser knows, checked as the parser checks them (T1).
        let options = Format::ALL.into_iter().fold(options, |options, format| {
            options.with_format(format.as_str(), move |s: &str| format.matches(s))
        });
        let validator = options.build(schema).map_err(|e| SchemaRejected::Invalid {
            message: e.masked().to_string(),
        })?;
        Ok(Self {
            validator,
            schema: schema.clone(),
        })
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
        // S2: `null` at a member the schema does not require is that member left out, as the
        // typed parser reads it (and as the 2026-07-28 client leaves out its `Mcp-Param-*`
        // header, M10): the arguments are judged without it.
        let present = without_optional_nulls(value, &self.schema);
        let value = present.as_ref().unwrap_or(value);
        let errors: Vec<ValidationError<'static>> = self
            .validator
            .iter_errors(value)
            .map(ValidationError::to_owned)
            .collect();
        if !errors.is_empty() {
            super::remote_violations::record_all(&errors, value, &self.schema, cx);
        }
    }
}

/// `value` without the `null` members its object schema (`schema`, followed through
/// `properties`, not through references or combinators) does not list in `required`;
/// `None` when it has none, so that the common call is not copied. Linear in `value`.
fn without_optional_nulls(value: &Value, schema: &Value) -> Option<Value> {
    let (Value::Object(members), Some(properties)) = (value, schema.get("properties")) else {
        return None;
    };
    let required: std::collections::HashSet<&str> = match members.values().any(Value::is_null) {
        true => (schema.get("required").and_then(Value::as_array))
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default(),
        false => std::collections::HashSet::new(),
    };
    let mut changed = false;
    let mut kept = serde_json::Map::with_capacity(members.len());
    for (name, member) in members {
        if member.is_null() && !required.contains(name.as_str()) {
            changed = true;
            continue;
        }
        let inner = properties
            .get(name)
            .and_then(|property| without_optional_nulls(member, property));
        changed |= inner.is_some();
        kept.insert(name.clone(), inner.unwrap_or_else(|| member.clone()));
    }
    changed.then_some(Value::Object(kept))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tool_core::{Rule, Violation};

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
