//! T3: the schema a transport publishes admits exactly what the parser accepts. A value that
//! the parser takes (`null` for an `Option` or a defaulted field) is valid against the
//! published schema, and a value it refuses is not, checked with a JSON Schema validator as a
//! client on the other side of MCP would.
#![cfg(feature = "mcp")]

use serde_json::{Value, json};
use tool_runtime::Schema;
use tool_runtime::schema::{parse_arguments, render_root};
use tool_runtime::violation::ParseCx;

/// A mode.
#[derive(Debug, Default, Schema)]
#[schema(rename_all = "kebab-case")]
enum Mode {
    #[default]
    Fast,
    Safe,
}

/// A nested part.
#[derive(Debug, Schema)]
struct Part {
    /// A count.
    #[schema(range = 0..=9)]
    n: u8,
}

/// Fields that take `null` in every way the parser allows.
#[derive(Debug, Schema)]
#[allow(dead_code)]
struct Query {
    /// Required.
    #[schema(min_len = 1)]
    service_id: String,
    /// Defaulted integer.
    #[schema(default = 7, range = 1..=30)]
    days: u32,
    /// Defaulted enum.
    #[schema(default)]
    mode: Mode,
    /// Defaulted list.
    #[schema(default)]
    tags: Vec<String>,
    /// Optional string.
    note: Option<String>,
    /// Optional nested object.
    part: Option<Part>,
    /// A list of optional numbers.
    #[schema(default)]
    slots: Vec<Option<u8>>,
    /// Labels, each constrained (`items(...)`, published under `items`).
    #[schema(items(pattern = "^[a-z]+$", max_len = 3))]
    labels: Option<Vec<String>>,
    /// Ratings, each from 1 to 5.
    #[schema(default, items(range = 1..=5))]
    ratings: Vec<u8>,
}

fn parses(args: &Value) -> bool {
    let mut cx = ParseCx::new();
    matches!(
        parse_arguments::<Query>(args.to_string().as_bytes(), &mut cx),
        Ok(Some(_))
    )
}

#[test]
fn t3_the_published_schema_admits_exactly_what_the_parser_accepts() {
    let schema = render_root::<Query>().expect("an object schema");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let cases = [
        json!({"service_id": "a"}),
        json!({"service_id": "a", "days": null}),
        json!({"service_id": "a", "days": 3}),
        json!({"service_id": "a", "days": 31}),
        json!({"service_id": "a", "days": "3"}),
        json!({"service_id": "a", "mode": null}),
        json!({"service_id": "a", "mode": "safe"}),
        json!({"service_id": "a", "mode": "slow"}),
        json!({"service_id": "a", "tags": null}),
        json!({"service_id": "a", "tags": ["x"]}),
        json!({"service_id": "a", "tags": [null]}),
        json!({"service_id": "a", "note": null}),
        json!({"service_id": "a", "note": 5}),
        json!({"service_id": "a", "part": null}),
        json!({"service_id": "a", "part": {"n": 3}}),
        json!({"service_id": "a", "part": {"n": 10}}),
        json!({"service_id": "a", "slots": [1, null, 2]}),
        json!({"service_id": "a", "slots": [1, "x"]}),
        json!({"service_id": "a", "labels": ["abc", "de"]}),
        json!({"service_id": "a", "labels": ["abcd"]}),
        json!({"service_id": "a", "labels": ["ab", "A"]}),
        json!({"service_id": "a", "labels": null}),
        json!({"service_id": "a", "ratings": [1, 5]}),
        json!({"service_id": "a", "ratings": [0]}),
        json!({"service_id": "a", "ratings": [6]}),
        json!({"service_id": "a", "ratings": [300]}),
        json!({"service_id": null}),
        json!({"service_id": ""}),
        json!({}),
        json!({"service_id": "a", "other": 1}),
    ];
    for args in cases {
        assert_eq!(
            validator.is_valid(&args),
            parses(&args),
            "the schema and the parser disagree on {args}; schema: {schema:#}"
        );
    }
}
