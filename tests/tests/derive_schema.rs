//! S1: the JSON Schema `#[derive(Schema)]` renders, exactly, and recursive types (S1 with
//! `$defs`/`$ref`).

use std::collections::{BTreeMap, HashMap};

use serde_json::json;
use tool_runtime::Schema;
use tool_tests::{parse_args, schema_of};

/// A maintenance request.
///
/// It spans two lines in the source.
#[derive(Schema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
struct Request {
    /// The service identifier.
    #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
    service_id: String,
    /// How many days ahead to look.
    #[schema(default = 7, range = 1..=30)]
    days_ahead: u32,
    /// A contact address.
    #[schema(format = "email")]
    contact: Option<String>,
    /// This doc comment is replaced.
    #[schema(
        describe = "Labels to attach.",
        min_items = 1,
        max_items = 5,
        unique_items
    )]
    labels: Vec<String>,
    /// Extra settings.
    settings: BTreeMap<String, i64>,
    /// Anything else.
    extra: serde_json::Value,
    /// The priority.
    #[schema(rename = "prio")]
    priority: Priority,
    /// Where to look.
    target: Target,
    #[schema(exclusive_min = 0.0, max = 1.0, multiple_of = 0.25)]
    ratio: f64,
    #[schema(one_of = ["fast", "safe"], default = "safe", example = "fast")]
    mode: String,
    #[schema(range = -10..10)]
    offset: i8,
    tags: HashMap<String, bool>,
}

/// How urgent a request is.
#[derive(Schema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
enum Priority {
    /// Whenever there is time.
    Low,
    High,
    /// Before anything else.
    Urgent,
}

/// A place.
#[derive(Schema)]
#[allow(dead_code)]
struct Target {
    /// The region.
    region: String,
    zone: Option<u8>,
}

// S1: required lists every field that is neither `Option` nor defaulted; additionalProperties
// is false; T3: an `Option` or defaulted field admits `null`, as the parser does; descriptions come from doc comments (or `describe`); constraints, defaults and
// examples render; `rename`/`rename_all` name the properties; nested types render inline.
#[test]
fn s1_renders_a_representative_struct_exactly() {
    let schema = schema_of::<Request>().expect("an object schema");
    let expected = json!({
        "type": "object",
        "description": "A maintenance request.\n\nIt spans two lines in the source.",
        "properties": {
            "serviceId": {
                "type": "string",
                "description": "The service identifier.",
                "minLength": 1,
                "maxLength": 64,
                "pattern": "^[a-z0-9-]+$"
            },
            "daysAhead": {
                "type": ["integer", "null"],
                "description": "How many days ahead to look.",
                "minimum": 1,
                "maximum": 30,
                "default": 7
            },
            "contact": {
                "type": ["string", "null"],
                "description": "A contact address.",
                "format": "email"
            },
            "labels": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Labels to attach.",
                "minItems": 1,
                "maxItems": 5,
                "uniqueItems": true
            },
            "settings": {
                "type": "object",
                // An `i64`'s own bounds lie past 2^53: left out, enforced by the parser (S4).
                "additionalProperties": {"type": "integer"},
                "description": "Extra settings."
            },
            "extra": {"description": "Anything else."},
            "prio": {
                "type": "string",
                "enum": ["low", "high", "urgent"],
                "description": "The priority."
            },
            "target": {
                "type": "object",
                "description": "Where to look.",
                "properties": {
                    "region": {"type": "string", "description": "The region."},
                    "zone": {"type": ["integer", "null"], "minimum": 0, "maximum": 255}
                },
                "required": ["region"],
                "additionalProperties": false
            },
            "ratio": {
                "type": "number",
                "exclusiveMinimum": 0.0,
                "maximum": 1.0,
                "multipleOf": 0.25
            },
            "mode": {
                "anyOf": [{"type": "string", "enum": ["fast", "safe"]}, {"type": "null"}],
                "default": "safe",
                "examples": ["fast"]
            },
            "offset": {
                "type": "integer",
                "minimum": -10,
                "exclusiveMaximum": 10
            },
            "tags": {
                "type": "object",
                "additionalProperties": {"type": "boolean"}
            }
        },
        "required": ["serviceId", "labels", "settings", "extra", "prio", "target", "ratio", "offset", "tags"],
        "additionalProperties": false
    });
    assert_eq!(schema, expected, "{schema:#}");
}

// S1: a string enum keeps its variants' doc comments in its description, as `enum` has no
// per-value description.
#[test]
fn s1_unit_enum_lists_documented_variants() {
    let mut generator = tool_runtime::schema::SchemaGen::new();
    let schema = <Priority as Schema>::schema(&mut generator);
    assert_eq!(
        schema,
        json!({
            "type": "string",
            "description": "How urgent a request is.\n\n- `low`: Whenever there is time.\n- `urgent`: Before anything else.",
            "enum": ["low", "high", "urgent"]
        })
    );
}

/// A drawing instruction.
#[derive(Schema, Debug, PartialEq)]
#[schema(tag = "kind", rename_all = "snake_case")]
enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        #[schema(min = 0.0)]
        radius: f64,
    },
    RoundedSquare {
        side: f64,
        #[schema(default)]
        corner: f64,
    },
    Empty,
}

/// Draws shapes.
#[derive(Schema, Debug, PartialEq)]
struct Drawing {
    shapes: Vec<Shape>,
}

// S1: an enum with fields is an `anyOf` of objects, each tagged by a required string
// property whose only value is the variant's name.
#[test]
fn s1_tagged_enum_renders_any_of_tagged_objects() {
    let schema = schema_of::<Drawing>().expect("an object schema");
    assert_eq!(
        schema["properties"]["shapes"]["items"],
        json!({
            "description": "A drawing instruction.",
            "anyOf": [
                {
                    "type": "object",
                    "description": "A circle.",
                    "properties": {
                        "kind": {"type": "string", "enum": ["circle"]},
                        "radius": {"type": "number", "description": "Its radius.", "minimum": 0.0}
                    },
                    "required": ["kind", "radius"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": ["rounded_square"]},
                        "side": {"type": "number"},
                        "corner": {"type": ["number", "null"], "default": 0.0}
                    },
                    "required": ["kind", "side"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {"kind": {"type": "string", "enum": ["empty"]}},
                    "required": ["kind"],
                    "additionalProperties": false
                }
            ]
        })
    );
    let parsed: Drawing = parse_args(
        r#"{"shapes": [{"kind": "circle", "radius": 2}, {"kind": "rounded_square", "side": 1.5}, {"kind": "empty"}]}"#,
    )
    .expect("valid shapes");
    assert_eq!(
        parsed.shapes,
        vec![
            Shape::Circle { radius: 2.0 },
            Shape::RoundedSquare {
                side: 1.5,
                corner: 0.0
            },
            Shape::Empty
        ]
    );
    assert_eq!(
        Schema::to_json(&parsed),
        json!({"shapes": [
            {"kind": "circle", "radius": 2.0},
            {"kind": "rounded_square", "side": 1.5, "corner": 0.0},
            {"kind": "empty"}
        ]})
    );
}

/// A tree of comments.
#[derive(Schema, Debug)]
struct Comment {
    text: String,
    replies: Vec<Comment>,
}

/// A thread, holding comments that hold comments.
#[derive(Schema, Debug)]
struct Thread {
    title: String,
    root: Comment,
    pinned: Option<Box<Comment>>,
}

// S1: a type that refers to itself renders through `$defs`/`$ref`; the root refers to itself
// with `"$ref": "#"`. Both parse.
#[test]
fn s1_recursive_types_render_through_refs_and_parse() {
    assert_eq!(
        schema_of::<Comment>().expect("an object schema"),
        json!({
            "type": "object",
            "description": "A tree of comments.",
            "properties": {
                "text": {"type": "string"},
                "replies": {"type": "array", "items": {"$ref": "#"}}
            },
            "required": ["text", "replies"],
            "additionalProperties": false
        })
    );
    let thread = schema_of::<Thread>().expect("an object schema");
    assert_eq!(
        thread["properties"]["root"],
        json!({"$ref": "#/$defs/Comment"})
    );
    assert_eq!(
        thread["properties"]["pinned"],
        json!({"anyOf": [{"$ref": "#/$defs/Comment"}, {"type": "null"}]})
    );
    assert_eq!(
        thread["$defs"]["Comment"]["properties"]["replies"]["items"],
        json!({"$ref": "#/$defs/Comment"})
    );

    let parsed: Thread = parse_args(
        r#"{"title": "t", "root": {"text": "a", "replies": [{"text": "b", "replies": []}]}, "pinned": null}"#,
    )
    .expect("a valid thread");
    assert_eq!(parsed.root.replies[0].text, "b");
    assert!(parsed.pinned.is_none());

    let err = parse_args::<Thread>(
        r#"{"title": "t", "root": {"text": "a", "replies": [{"text": 1, "replies": []}]}}"#,
    )
    .expect_err("a nested violation");
    assert_eq!(err[0].path, "/root/replies/0/text");
}

/// A page of items.
#[derive(Schema, Debug)]
struct Page<T> {
    items: Vec<T>,
    next: Option<String>,
}

/// Takes nothing.
#[derive(Schema, Debug)]
struct Nothing;

/// Takes nothing either.
#[derive(Schema, Debug)]
struct Empty {}

// S1: a generic type renders with its parameter's schema; a unit or empty struct is an empty
// object that takes no property.
#[test]
fn s1_generic_and_empty_structs() {
    let page = schema_of::<Page<Target>>().expect("an object schema");
    assert_eq!(
        page["properties"]["items"]["items"]["properties"]["region"]["type"],
        "string"
    );
    assert_eq!(page["required"], json!(["items"]));
    let parsed: Page<u8> = parse_args(r#"{"items": [1, 2]}"#).expect("a valid page");
    assert_eq!(parsed.items, vec![1, 2]);
    assert_eq!(parsed.next, None);

    let empty = json!({
        "type": "object",
        "description": "Takes nothing.",
        "properties": {},
        "required": [],
        "additionalProperties": false
    });
    assert_eq!(schema_of::<Nothing>().expect("an object schema"), empty);
    assert!(parse_args::<Nothing>("{}").is_ok());
    assert!(parse_args::<Empty>("").is_ok());
    let err = parse_args::<Empty>(r#"{"x": 1}"#).expect_err("no property is allowed");
    assert_eq!(err[0].path, "/x");
}

/// Odds and ends.
#[derive(Schema, Debug)]
#[allow(dead_code)]
struct Odds {
    /// A keyword as a field name.
    r#type: String,
    /// A default that is an expression.
    #[schema(default = vec!["a".to_owned(), "b".to_owned()])]
    names: Vec<String>,
    /// An example of an optional number.
    #[schema(example = 5)]
    limit: Option<u32>,
    /// A default from `Default`.
    #[schema(default)]
    mode: Mode,
}

/// A mode.
#[derive(Schema, Debug, Default, PartialEq)]
enum Mode {
    /// The usual.
    #[default]
    #[schema(rename = "normal")]
    Normal,
    #[schema(describe = "Careful and slow.")]
    Safe,
}

// S1: raw identifiers lose their `r#`; defaults may be any expression of the field's type
// (or `Default::default()`), examples of an `Option` field are values of its inner type;
// variants take `rename` and `describe`.
#[test]
fn s1_raw_idents_expression_defaults_examples_and_variant_attributes() {
    let schema = schema_of::<Odds>().expect("an object schema");
    assert_eq!(
        schema["properties"],
        json!({
            "type": {"type": "string", "description": "A keyword as a field name."},
            "names": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "description": "A default that is an expression.",
                "default": ["a", "b"]
            },
            "limit": {
                "type": ["integer", "null"],
                "minimum": 0,
                "maximum": 4_294_967_295_u32,
                "description": "An example of an optional number.",
                "examples": [5]
            },
            "mode": {
                "anyOf": [{"type": "string", "enum": ["normal", "Safe"]}, {"type": "null"}],
                "description": "A default from `Default`.",
                "default": "normal"
            }
        })
    );
    assert_eq!(schema["required"], json!(["type"]));
    let mut generator = tool_runtime::schema::SchemaGen::new();
    assert_eq!(
        <Mode as Schema>::schema(&mut generator)["description"],
        "A mode.\n\n- `normal`: The usual.\n- `Safe`: Careful and slow."
    );
    let odds: Odds = parse_args(r#"{"type": "x"}"#).expect("valid");
    assert_eq!(
        (odds.r#type.as_str(), odds.names.len(), odds.mode),
        ("x", 2, Mode::Normal)
    );
}
