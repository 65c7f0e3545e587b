//! The shapes the schema dialects are checked on (V4): the strict tests' shapes (recursive,
//! tagged unions, constrained items, free-form values, nothing at all, deep nesting), the
//! provider tests' tools, and a hand-written schema with the keywords derived ones never hold.
//! Gemini's dialect is checked on them against google-genai, Anthropic's strict tools against
//! the anthropic SDK, Bedrock's against pydantic-ai.
#![allow(dead_code, unreachable_pub)]

use serde_json::{Value, json};
use tool_runtime::{Context, Schema, Tool};

use super::provider::scenario::{LookupWindow, tag_service};

/// A node of a tree.
#[derive(Schema)]
pub struct Node {
    /// The node's name.
    name: String,
    /// Its children.
    children: Vec<Node>,
    /// The next sibling.
    next: Option<Box<Node>>,
}

/// A drawing instruction.
#[derive(Schema)]
#[schema(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Its radius.
        #[schema(min = 0.0, example = 2.0)]
        radius: f64,
    },
    Square {
        side: f64,
        #[schema(default)]
        rounded: bool,
    },
}

/// Shapes to draw, and anything else.
#[derive(Schema)]
pub struct Drawing {
    shapes: Vec<Shape>,
    /// Where to publish it.
    #[schema(format = "uri")]
    url: Option<String>,
}

/// Lists whose items are constrained (`items(...)`).
#[derive(Schema)]
pub struct Tagged {
    /// Tags.
    #[schema(max_items = 4, items(pattern = "^[a-z]+$", max_len = 8))]
    tags: Vec<String>,
    /// Scores.
    #[schema(items(range = 1..=5))]
    scores: Option<Vec<u8>>,
}

/// Free-form input.
#[derive(Schema)]
pub struct Loose {
    /// Anything at all.
    extra: serde_json::Value,
}

/// Nothing at all.
#[derive(Schema)]
pub struct Empty {}

macro_rules! nest {
    ($name:ident, $inner:ty) => {
        #[derive(Schema)]
        pub struct $name {
            inner: $inner,
        }
    };
}
nest!(L11, u8);
nest!(L10, L11);
nest!(L9, L10);
nest!(L8, L9);
nest!(L7, L8);
nest!(L6, L7);
nest!(L5, L6);
nest!(L4, L5);
nest!(L3, L4);
nest!(L2, L3);
nest!(L1, L2);

pub fn tool<I: Schema + Send + 'static>(name: &str) -> Tool {
    Tool::builder(name, "A test tool.")
        .handler(|_ctx: Context, _input: I| async move { Ok::<_, std::convert::Infallible>("ok") })
        .build()
}

pub fn raw(name: &str, schema: Value) -> Tool {
    Tool::builder(name, "A raw tool.")
        .dynamic_handler(
            schema,
            |_: &Value, _: &mut tool_runtime::violation::ParseCx| {},
            |_ctx: Context, _args: Value| async move { Ok::<_, std::convert::Infallible>("ok") },
        )
        .build()
}

/// Every shape of the strict tests, the provider tests' tools, and raw schemas with the
/// keywords the dialect rewrites.
pub fn shapes() -> Vec<Tool> {
    vec![
        tool::<Node>("node"),
        tool::<Drawing>("drawing"),
        tool::<Tagged>("tagged"),
        tool::<Loose>("loose"),
        tool::<Empty>("empty"),
        tool::<L1>("deep"),
        tool_runtime::IntoTool::into_tool(LookupWindow),
        tag_service(),
        raw(
            "rewritten",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$comment": "hand-written",
                "type": "object",
                "properties": {
                    "mode": {"const": "fast"},
                    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1,
                              "multipleOf": 0.05, "description": "A ratio."},
                    "ids": {"type": "array", "items": {"type": "string", "examples": ["a1"]},
                            "uniqueItems": true, "minItems": 1},
                    "meta": {"type": "object", "minProperties": 1, "maxProperties": 3,
                             "additionalProperties": true, "deprecated": true},
                    "any": true,
                    "pick": {"oneOf": [{"type": "integer"}, {"type": "string", "readOnly": true}]},
                },
                "required": ["mode"],
            }),
        ),
    ]
}
