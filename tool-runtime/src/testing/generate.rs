//! Arguments generated from a tool's JSON Schema: valid ones, honouring types, `required`,
//! `enum`/`const`, string lengths, simple `pattern`s, `format`s, number bounds and steps,
//! array sizes, nested objects and `$ref`/`$defs`; and deliberately invalid ones.
//!
//! [`crate::OfflineModel`] calls tools with these; they are public so that a test can make
//! arguments for any schema.

use regex_syntax::hir::{Class, Hir, HirKind};
use serde_json::{Map, Value, json};
use tool_core::schema::Pattern;

/// How deep `$ref`s and nesting are followed; past half of it, optional parts are left out.
const MAX_DEPTH: usize = 12;
/// The longest string made from a pattern.
const MAX_PATTERN_LEN: usize = 4096;

/// Arguments that fit `schema` (a tool's input schema), as far as the generator can tell.
///
/// A value given in the schema wins, in this order: `const`, the first of `examples`,
/// `default`, the first of `enum`. Otherwise the value is made from the type and constraints:
/// a string of an allowed length that matches a simple `pattern` (literals, character classes,
/// groups, alternatives, repetitions) or has the `format` (`email`, `uri`, `uuid`, `date`,
/// `date-time`, …); the number nearest 0 within the bounds that is a multiple of `multipleOf`;
/// `true`; arrays of `minItems` items (at least one where allowed); objects with every
/// declared property. `$ref`s to `#` and to JSON pointers (`#/$defs/…`) are followed; a
/// recursive schema stops at its optional parts.
///
/// ```
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "service_id": {"type": "string", "pattern": "^[a-z0-9-]+$", "minLength": 3},
///         "days": {"type": "integer", "minimum": 1, "maximum": 30}
///     },
///     "required": ["service_id"],
///     "additionalProperties": false
/// });
/// let args = tool_runtime::generate::valid_arguments(&schema);
/// assert_eq!(args, json!({"service_id": "aaa", "days": 1}));
/// ```
pub fn valid_arguments(schema: &Value) -> Value {
    Generator { root: schema }.valid(schema, 0, 0)
}

/// Arguments that break `schema` in one clear way, to exercise validation feedback.
///
/// The valid arguments are made first; then the first property (in the schema's key order)
/// with a constraint that a value of the right type can break (a length, `pattern`, `format`,
/// `enum`, bound or item count) gets such a value; failing that, the first property gets a
/// value of the wrong type; an object schema without properties gets a property it does not
/// declare.
///
/// ```
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"days": {"type": "integer", "minimum": 1, "maximum": 30}},
///     "required": ["days"]
/// });
/// assert_eq!(tool_runtime::generate::invalid_arguments(&schema), json!({"days": 31}));
/// ```
pub fn invalid_arguments(schema: &Value) -> Value {
    let generator = Generator { root: schema };
    let resolved = generator.resolve(schema, 0);
    let mut value = generator.valid(resolved, 0, 0);
    let Some(object) = value.as_object_mut() else {
        return json!({"unexpected_property": true});
    };
    let properties = resolved.get("properties").and_then(Value::as_object);
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        object.insert("unexpected_property".to_owned(), Value::Bool(true));
        return value;
    };
    let broken = properties.iter().find_map(|(key, sub)| {
        break_constraint(generator.resolve(sub, 1)).map(|bad| (key.clone(), bad))
    });
    let (key, bad) = match broken {
        Some(found) => found,
        None => match properties.iter().next() {
            Some((key, sub)) => (key.clone(), wrong_type(generator.resolve(sub, 1))),
            None => return value,
        },
    };
    object.insert(key, bad);
    value
}

struct Generator<'r> {
    root: &'r Value,
}

impl Generator<'_> {
    /// Follows `$ref`s to `#` and to JSON pointers into the root.
    fn resolve<'s>(&'s self, mut schema: &'s Value, depth: usize) -> &'s Value {
        let mut hops = 0;
        while let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            let found = if target == "#" {
                Some(self.root)
            } else {
                target
                    .strip_prefix('#')
                    .and_then(|pointer| self.root.pointer(pointer))
            };
            match found {
                Some(next) if hops < MAX_DEPTH && depth <= MAX_DEPTH => {
                    schema = next;
                    hops += 1;
                }
                _ => return &Value::Null,
            }
        }
        schema
    }

    fn valid(&self, schema: &Value, depth: usize, variant: usize) -> Value {
        let schema = self.resolve(schema, depth);
        let Some(obj) = schema.as_object() else {
            // `true`, or a reference too deep to follow: anything goes.
            return Value::String("example".to_owned());
        };
        if let Some(c) = obj.get("const") {
            return c.clone();
        }
        if let Some(example) = obj
            .get("examples")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return example.clone();
        }
        if let Some(default) = obj.get("default") {
            return default.clone();
        }
        if let Some(values) = obj
            .get("enum")
            .and_then(Value::as_array)
            .filter(|v| !v.is_empty())
        {
            return values[variant % values.len()].clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = obj.get(key).and_then(Value::as_array) {
                let branch = branches
                    .iter()
                    .find(|b| type_of(self.resolve(b, depth)) != Some("null"))
                    .or_else(|| branches.first());
                if let Some(branch) = branch {
                    return self.valid(branch, depth + 1, variant);
                }
            }
        }
        if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
            let mut merged = obj.clone();
            merged.remove("allOf");
            for part in parts {
                if let Some(part) = self.resolve(part, depth + 1).as_object() {
                    for (k, v) in part {
                        merged.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            return self.valid(&Value::Object(merged), depth + 1, variant);
        }
        match type_of(schema) {
            Some("object") => self.object(obj, depth, variant),
            Some("array") => self.array(obj, depth, variant),
            Some("string") => string(obj, variant),
            Some("integer") => integer(obj, variant),
            Some("number") => number(obj, variant),
            Some("boolean") => Value::Bool(true),
            Some("null") => Value::Null,
            _ => Value::String("example".to_owned()),
        }
    }

    fn object(&self, obj: &Map<String, Value>, depth: usize, variant: usize) -> Value {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(properties) = obj.get("properties").and_then(Value::as_object) {
            for (key, sub) in properties {
                if required.contains(&key.as_str()) || depth < MAX_DEPTH / 2 {
                    out.insert(key.clone(), self.valid(sub, depth + 1, variant));
                }
            }
        }
        let min = as_usize(obj.get("minProperties")).unwrap_or(0);
        if let Some(extra) = obj.get("additionalProperties").filter(|v| v.is_object()) {
            let mut n = 1;
            while out.len() < min && n <= 64 {
                out.insert(format!("key{n}"), self.valid(extra, depth + 1, n));
                n += 1;
            }
        }
        Value::Object(out)
    }

    fn array(&self, obj: &Map<String, Value>, depth: usize, variant: usize) -> Value {
        let min = as_usize(obj.get("minItems")).unwrap_or(0);
        let wanted = if depth < MAX_DEPTH / 2 {
            min.max(1)
        } else {
            min
        };
        let count = as_usize(obj.get("maxItems"))
            .map_or(wanted, |max| wanted.min(max))
            .min(64);
        let items = obj.get("items").unwrap_or(&Value::Bool(true));
        (0..count)
            .map(|i| self.valid(items, depth + 1, variant + i))
            .collect()
    }
}

fn as_usize(v: Option<&Value>) -> Option<usize> {
    v.and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .or_else(|| types.iter().find_map(Value::as_str)),
        _ => {
            let obj = schema.as_object()?;
            let has = |k: &str| obj.contains_key(k);
            if has("properties") || has("additionalProperties") {
                Some("object")
            } else if has("items") {
                Some("array")
            } else if has("pattern") || has("minLength") || has("maxLength") || has("format") {
                Some("string")
            } else if has("minimum") || has("maximum") || has("multipleOf") {
                Some("number")
            } else {
                None
            }
        }
    }
}

/// A sample of a string `format`, if the generator knows it.
fn format_sample(format: &str) -> Option<&'static str> {
    Some(match format {
        "email" => "user@example.com",
        "uri" | "url" | "iri" => "https://example.com/",
        "uuid" => "00000000-0000-4000-8000-000000000000",
        "date" => "2024-01-01",
        "date-time" => "2024-01-01T00:00:00Z",
        "time" => "00:00:00Z",
        "hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        _ => return None,
    })
}

fn string(obj: &Map<String, Value>, variant: usize) -> Value {
    let min = as_usize(obj.get("minLength")).unwrap_or(0);
    let max = as_usize(obj.get("maxLength"));
    let fits = |s: &str| {
        let n = s.chars().count();
        n >= min && max.is_none_or(|m| n <= m)
    };
    let pattern = obj.get("pattern").and_then(Value::as_str);
    if let Some(sample) = obj
        .get("format")
        .and_then(Value::as_str)
        .and_then(format_sample)
    {
        let matches =
            pattern.is_none_or(|p| Pattern::compile(p).is_ok_and(|re| re.is_match(sample)));
        if fits(sample) && matches {
            return Value::String(sample.to_owned());
        }
    }
    if let Some(s) = pattern.and_then(|p| from_pattern(p, variant, min, &fits)) {
        return Value::String(s);
    }
    let mut s = if variant == 0 {
        "example".to_owned()
    } else {
        format!("example{variant}")
    };
    while s.chars().count() < min {
        s.push('x');
    }
    if let Some(max) = max {
        s = s.chars().take(max).collect();
    }
    Value::String(s)
}

/// A string that matches `pattern` and `fits`, made by walking the syntax tree of the
/// pattern's translation (ECMA-262 as the parser reads it: `\d` is ASCII) with each repetition
/// stretched a little more until the length fits, and checked with the regex the parser uses.
fn from_pattern(
    pattern: &str,
    variant: usize,
    min: usize,
    fits: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let hir = regex_syntax::Parser::new()
        .parse(&Pattern::translate(pattern).ok()?)
        .ok()?;
    let re = Pattern::compile(pattern).ok()?;
    (variant..=variant + min.max(8)).find_map(|stretch| {
        let mut out = String::new();
        walk(&hir, stretch, &mut out)?;
        (fits(&out) && re.is_match(&out)).then_some(out)
    })
}

fn walk(hir: &Hir, stretch: usize, out: &mut String) -> Option<()> {
    if out.len() > MAX_PATTERN_LEN {
        return None;
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(literal) => out.push_str(std::str::from_utf8(&literal.0).ok()?),
        HirKind::Class(Class::Unicode(class)) => {
            out.push(pick(class.ranges().iter().map(|r| (r.start(), r.end())))?);
        }
        HirKind::Class(Class::Bytes(class)) => {
            out.push(pick(
                class
                    .ranges()
                    .iter()
                    .map(|r| (char::from(r.start()), char::from(r.end()))),
            )?);
        }
        HirKind::Repetition(rep) => {
            let min = usize::try_from(rep.min).ok()?;
            let max = rep
                .max
                .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
            for _ in 0..min.saturating_add(stretch).min(max).min(256) {
                walk(&rep.sub, stretch, out)?;
            }
        }
        HirKind::Capture(capture) => walk(&capture.sub, stretch, out)?,
        HirKind::Concat(parts) => {
            for part in parts {
                walk(part, stretch, out)?;
            }
        }
        HirKind::Alternation(branches) => walk(branches.first()?, stretch, out)?,
    }
    Some(())
}

/// A readable character from a class: a lowercase letter or digit where there is one.
fn pick(ranges: impl Iterator<Item = (char, char)> + Clone) -> Option<char> {
    const PREFERRED: [char; 10] = ['a', 'b', 'x', '0', '1', 'A', 'B', '-', '_', '.'];
    let inside = |c: char| ranges.clone().any(|(lo, hi)| lo <= c && c <= hi);
    if let Some(c) = PREFERRED.into_iter().find(|&c| inside(c)) {
        return Some(c);
    }
    ranges.clone().find_map(|(lo, hi)| {
        (u32::from(lo)..=u32::from(hi).min(u32::from(lo) + 256))
            .filter_map(char::from_u32)
            .find(|c| !c.is_control() && !c.is_whitespace())
    })
}

/// A number bound as read from the schema.
fn bound(obj: &Map<String, Value>, key: &str) -> Option<f64> {
    obj.get(key).and_then(Value::as_f64)
}

fn integer(obj: &Map<String, Value>, variant: usize) -> Value {
    let int = |key: &str, up: bool| {
        let v = obj.get(key)?;
        v.as_i64()
            .map(i128::from)
            .or_else(|| v.as_u64().map(i128::from))
            .or_else(|| {
                let f = v.as_f64()?;
                // Non-integer bounds of integer fields round inwards.
                #[allow(clippy::cast_possible_truncation)]
                Some(if up { f.ceil() } else { f.floor() } as i128)
            })
    };
    let lo = [
        int("minimum", true),
        int("exclusiveMinimum", false).map(|x| x + 1),
    ]
    .into_iter()
    .flatten()
    .max();
    let hi = [
        int("maximum", false),
        int("exclusiveMaximum", true).map(|x| x - 1),
    ]
    .into_iter()
    .flatten()
    .min();
    let offset = i128::try_from(variant).unwrap_or(0);
    let mut v = match (lo, hi) {
        (Some(lo), _) if lo > 0 => lo + offset,
        (_, Some(hi)) if hi < 0 => hi - offset,
        _ => offset,
    };
    if let Some(hi) = hi {
        v = v.min(hi);
    }
    if let Some(lo) = lo {
        v = v.max(lo);
    }
    if let Some(step) = int("multipleOf", true).filter(|&s| s > 0) {
        let up = v.div_euclid(step) * step + if v.rem_euclid(step) == 0 { 0 } else { step };
        v = if hi.is_some_and(|hi| up > hi) {
            up - step
        } else {
            up
        };
    }
    i64::try_from(v)
        .map(Value::from)
        .or_else(|_| u64::try_from(v).map(Value::from))
        .unwrap_or(Value::from(0))
}

fn number(obj: &Map<String, Value>, variant: usize) -> Value {
    let lo = bound(obj, "minimum");
    let hi = bound(obj, "maximum");
    let xlo = bound(obj, "exclusiveMinimum");
    let xhi = bound(obj, "exclusiveMaximum");
    // Variants only tell items apart; precision is not a concern.
    #[allow(clippy::cast_precision_loss)]
    let mut v = variant as f64;
    if let Some(lo) = lo {
        v = v.max(lo);
    }
    if let Some(hi) = hi {
        v = v.min(hi);
    }
    if let Some(x) = xlo.filter(|&x| v <= x) {
        v = match xhi.or(hi) {
            Some(top) => x + (top - x) / 2.0,
            None => x + 1.0,
        };
    }
    if let Some(x) = xhi.filter(|&x| v >= x) {
        v = match xlo.or(lo) {
            Some(bottom) => bottom + (x - bottom) / 2.0,
            None => x - 1.0,
        };
    }
    if let Some(step) = bound(obj, "multipleOf").filter(|&s| s > 0.0) {
        v = (v / step).ceil() * step;
    }
    json!(v)
}

/// A value of the right type that breaks one of the schema's constraints, if it has one.
fn break_constraint(schema: &Value) -> Option<Value> {
    let obj = schema.as_object()?;
    let integer = type_of(schema) == Some("integer");
    match type_of(schema)? {
        "string" => {
            if let Some(max) = as_usize(obj.get("maxLength")) {
                return Some(Value::String(
                    "x".repeat(max.saturating_add(1).min(1 << 16)),
                ));
            }
            if let Some(pattern) = obj.get("pattern").and_then(Value::as_str) {
                let re = Pattern::compile(pattern).ok()?;
                return ["NOT VALID!", "", " ", "?"]
                    .into_iter()
                    .find(|s| !re.is_match(s))
                    .map(|s| Value::String(s.to_owned()));
            }
            if as_usize(obj.get("minLength")).is_some_and(|m| m > 0) {
                return Some(Value::String(String::new()));
            }
            if obj.contains_key("format") || obj.contains_key("enum") {
                return Some(Value::String("not one of the allowed values!".to_owned()));
            }
            None
        }
        "integer" | "number" => {
            let shifted =
                |key: &str, by: f64| bound(obj, key).map(|b| json_number(b + by, integer));
            shifted("maximum", 1.0)
                .or_else(|| shifted("minimum", -1.0))
                .or_else(|| shifted("exclusiveMaximum", 0.0))
                .or_else(|| shifted("exclusiveMinimum", 0.0))
        }
        "array" => as_usize(obj.get("minItems"))
            .filter(|&m| m > 0)
            .map(|_| Value::Array(Vec::new())),
        _ => None,
    }
}

/// A value of another type than the schema's.
fn wrong_type(schema: &Value) -> Value {
    match type_of(schema) {
        Some("string") => json!(12345),
        _ => json!("not the right type"),
    }
}

fn json_number(x: f64, integer: bool) -> Value {
    if integer {
        // Integer bounds are integers; exact below 2^53, and saturating past it.
        #[allow(clippy::cast_possible_truncation)]
        let i = x as i64;
        json!(i)
    } else {
        json!(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_lengths_and_formats_are_honoured() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": "^svc-[0-9]{2,4}$"},
                "slug": {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "minLength": 5, "maxLength": 8},
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "when": {"type": "string", "format": "date-time"},
                "mail": {"type": "string", "format": "email"},
                "name": {"type": "string", "minLength": 10, "maxLength": 12},
                "short": {"type": "string", "maxLength": 3}
            },
            "required": ["id", "slug", "code", "when", "mail", "name", "short"]
        });
        let v = valid_arguments(&schema);
        assert_eq!(v["id"], "svc-00");
        let slug = v["slug"].as_str().unwrap();
        assert!((5..=8).contains(&slug.len()), "{slug}");
        assert!(
            Pattern::compile("^[a-z]+(-[a-z]+)*$")
                .unwrap()
                .is_match(slug)
        );
        assert_eq!(v["code"], "AAA");
        assert_eq!(v["when"], "2024-01-01T00:00:00Z");
        assert_eq!(v["mail"], "user@example.com");
        assert_eq!(v["name"].as_str().unwrap().len(), 10);
        assert_eq!(v["short"], "exa");
    }

    /// S2: strings are made from the pattern as ECMA-262 reads it, so
    /// they pass the parser: ASCII digits for `\d`, no line terminator for `.`.
    #[test]
    fn patterns_are_read_as_ecma_262() {
        let schema = json!({
            "type": "object",
            "properties": {
                "digits": {"type": "string", "pattern": "^\\d{3}$"},
                "word": {"type": "string", "pattern": "^\\w+\\s\\W$"},
                "any": {"type": "string", "pattern": "^.\\u{1F600}[^\\d\\s]$"},
                "date": {"type": "string", "format": "date", "pattern": "^\\d{4}-\\d\\d-\\d\\d$"}
            }
        });
        let v = valid_arguments(&schema);
        for (key, expected) in [("digits", "000"), ("date", "2024-01-01")] {
            assert_eq!(v[key], expected, "{key}");
        }
        for key in ["word", "any"] {
            let pattern = schema["properties"][key]["pattern"].as_str().unwrap();
            let value = v[key].as_str().unwrap();
            assert!(
                Pattern::compile(pattern).unwrap().is_match(value),
                "{key}: {value:?}"
            );
        }
        let invalid = json!({
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "^\\d+$"}},
        });
        assert_eq!(invalid_arguments(&invalid), json!({"code": "NOT VALID!"}));
    }

    #[test]
    fn numbers_respect_bounds_and_steps() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": 5, "maximum": 9},
                "b": {"type": "integer", "maximum": -3},
                "c": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 4},
                "d": {"type": "number", "exclusiveMinimum": 0.5, "exclusiveMaximum": 1.5},
                "e": {"type": "integer", "minimum": 0, "maximum": 4294967295u64}
            }
        });
        let v = valid_arguments(&schema);
        assert_eq!(v["a"], 5);
        assert_eq!(v["b"], -3);
        assert_eq!(v["c"], 4);
        assert_eq!(v["d"], 1.0);
        assert_eq!(v["e"], 0);
    }

    #[test]
    fn given_values_win_in_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "k": {"const": "fixed", "default": "no"},
                "e": {"type": "string", "examples": ["svc-42"], "default": "no"},
                "d": {"type": "integer", "default": 7, "minimum": 1},
                "n": {"type": "string", "enum": ["low", "high"]}
            }
        });
        assert_eq!(
            valid_arguments(&schema),
            json!({"k": "fixed", "e": "svc-42", "d": 7, "n": "low"})
        );
    }

    #[test]
    fn references_nesting_and_recursion_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "node": {"$ref": "#/$defs/Node"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
                         "minItems": 2, "uniqueItems": true},
                "choice": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
                "self": {"$ref": "#"}
            },
            "required": ["node", "tags"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer", "minimum": 1},
                        "next": {"$ref": "#/$defs/Node"}
                    },
                    "required": ["value"]
                }
            }
        });
        let v = valid_arguments(&schema);
        assert_eq!(v["node"]["value"], 1);
        assert_eq!(v["node"]["next"]["value"], 1);
        assert_eq!(v["tags"], json!(["a", "b"]));
        assert_eq!(v["choice"], true);
        assert!(v["self"].is_object());
    }

    #[test]
    fn invalid_arguments_break_one_constraint() {
        let pattern = json!({
            "type": "object",
            "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
            "required": ["id"]
        });
        assert_eq!(invalid_arguments(&pattern), json!({"id": "NOT VALID!"}));
        let long = json!({
            "type": "object",
            "properties": {"id": {"type": "string", "maxLength": 4}},
        });
        assert_eq!(invalid_arguments(&long), json!({"id": "xxxxx"}));
        let plain = json!({
            "type": "object",
            "properties": {"flag": {"type": "boolean"}},
        });
        assert_eq!(
            invalid_arguments(&plain),
            json!({"flag": "not the right type"})
        );
        let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
        assert_eq!(
            invalid_arguments(&empty),
            json!({"unexpected_property": true})
        );
    }
}
