//! C3: a type deriving `schemars::JsonSchema` and `serde::Deserialize` is a tool's input
//! through `Parameters`: its schema is published (inlined, closed, strict-rewritten) as a
//! derived type's is, its arguments are checked before the handler with the violations a
//! derived type gives (S2–S4), and a keyword the parser cannot enforce fails the build.
#![cfg(all(
    feature = "schemars",
    feature = "openai",
    feature = "anthropic",
    feature = "mcp"
))]

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};
use tool_runtime::schemars::{self, JsonSchema};
use tool_runtime::surface::Surface;
use tool_runtime::{
    Agent, Context, IntoTool, OutcomeKind, Parameters, Rule, Schema, ScriptedModel, Tool,
    ToolError, tool,
};

// ─── The same input, written for schemars and derived ───────────────────────────────────────

/// Where to look.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
struct Place {
    /// The city.
    city: String,
    /// The floor, if any.
    floor: Option<i16>,
}

/// What to do.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
#[serde(tag = "op")]
enum Command {
    /// Move some steps.
    Move { steps: u8 },
    /// Stop.
    Stop,
}

/// A colour.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum Colour {
    /// Dark.
    DeepRed,
    /// Fresh.
    Green,
}

/// A lookup.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
struct Lookup {
    /// The service.
    service_id: String,
    /// How many days ahead.
    days: u8,
    /// Labels.
    tags: Vec<String>,
    /// A note.
    note: Option<String>,
    /// Where.
    place: Place,
    /// What to do.
    command: Command,
    /// Which colour.
    colour: Option<Colour>,
    /// Limits by name.
    limits: BTreeMap<String, u32>,
}

/// Where to look.
#[derive(Schema, Debug)]
struct DerivedPlace {
    /// The city.
    city: String,
    /// The floor, if any.
    floor: Option<i16>,
}

/// What to do.
#[derive(Schema, Debug)]
#[schema(tag = "op")]
enum DerivedCommand {
    /// Move some steps.
    Move { steps: u8 },
    /// Stop.
    Stop,
}

/// A colour.
#[derive(Schema, Debug)]
#[schema(rename_all = "kebab-case")]
enum DerivedColour {
    /// Dark.
    DeepRed,
    /// Fresh.
    Green,
}

/// A lookup.
#[derive(Schema, Debug)]
struct DerivedLookup {
    /// The service.
    service_id: String,
    /// How many days ahead.
    days: u8,
    /// Labels.
    tags: Vec<String>,
    /// A note.
    note: Option<String>,
    /// Where.
    place: DerivedPlace,
    /// What to do.
    command: DerivedCommand,
    /// Which colour.
    colour: Option<DerivedColour>,
    /// Limits by name.
    limits: BTreeMap<String, u32>,
}

fn schemars_tool() -> Tool {
    Tool::builder("lookup", "Look a window up.")
        .handler(
            |_ctx: Context, Parameters(input): Parameters<Lookup>| async move {
                Ok::<_, ToolError>(format!("{input:?}"))
            },
        )
        .build()
}

fn derived_tool() -> Tool {
    Tool::builder("lookup", "Look a window up.")
        .handler(|_ctx: Context, input: DerivedLookup| async move {
            Ok::<_, ToolError>(format!("{input:?}"))
        })
        .build()
}

/// `value` said as a derived schema says the same: without `format` on numbers (which strict
/// mode drops anyway), `oneOf` read as `anyOf` (which strict mode makes of it), `const` as an
/// `enum` of one, and without the description schemars keeps on a type inside an `anyOf`
/// (an annotation, where a derived schema keeps the field's alone).
fn comparable(value: &Value) -> Value {
    comparable_in(value, false)
}

fn comparable_in(value: &Value, branch: bool) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "format" && !(branch && k.as_str() == "description"))
                .map(|(k, v)| match k.as_str() {
                    "const" => ("enum".to_owned(), json!([v])),
                    "oneOf" | "anyOf" => ("anyOf".to_owned(), comparable_in(v, true)),
                    _ => (k.clone(), comparable_in(v, false)),
                })
                .collect(),
        ),
        Value::Array(items) if branch => {
            Value::Array(items.iter().map(|item| comparable_in(item, true)).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(comparable).collect()),
        other => other.clone(),
    }
}

fn surface_of(tool: Tool) -> Value {
    let surface = Surface::of_tools([tool]).expect("the tool renders");
    surface.tool("lookup").cloned().expect("the tool is listed")
}

// ─── The schema published ───────────────────────────────────────────────────────────────────

#[test]
fn c3_a_schemars_input_publishes_what_the_derived_equivalent_publishes() {
    let ours = surface_of(schemars_tool());
    let derived = surface_of(derived_tool());
    // Neutral, strict OpenAI (chat and responses), OpenAI without strict mode, Anthropic, MCP.
    for part in [
        "/input_schema",
        "/published/openai.chat.strict",
        "/published/openai.responses.strict",
        "/published/openai.chat",
        "/published/anthropic",
        "/published/mcp",
    ] {
        let (a, b) = (ours.pointer(part), derived.pointer(part));
        assert!(a.is_some(), "{part} is published");
        assert_eq!(
            a.map(comparable),
            b.map(comparable),
            "{part}:\n{}\n{}",
            serde_json::to_string_pretty(&a).unwrap_or_default(),
            serde_json::to_string_pretty(&b).unwrap_or_default()
        );
    }
}

#[test]
fn c3_the_published_schema_is_inlined_closed_and_ranged() {
    let schema = schemars_tool().schema().clone();
    let text = schema.to_string();
    assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(
        schema["properties"]["place"]["additionalProperties"],
        json!(false)
    );
    // `i16` says its range, as `#[derive(Schema)]` says it (S4, T3).
    let floor = &schema["properties"]["place"]["properties"]["floor"];
    assert_eq!(
        (&floor["minimum"], &floor["maximum"]),
        (&json!(-32768), &json!(32767))
    );
    assert_eq!(
        schema["required"],
        json!(["service_id", "days", "tags", "place", "command", "limits"])
    );
}

/// A list that refers to itself.
#[allow(dead_code)] // read by serde only
#[derive(Deserialize, JsonSchema, Debug)]
struct Tree {
    /// Its name.
    name: String,
    /// Its children.
    children: Vec<Tree>,
}

/// A forest.
#[derive(Deserialize, JsonSchema, Debug)]
struct Forest {
    /// The trees.
    trees: Vec<Tree>,
}

#[test]
fn c3_a_recursive_type_keeps_its_definition_and_is_checked_at_depth() {
    let tool = Tool::builder("forest", "Plants trees.")
        .handler(
            |_ctx: Context, Parameters(forest): Parameters<Forest>| async move {
                Ok::<_, ToolError>(forest.trees.len())
            },
        )
        .build();
    assert!(
        tool.declaration_error().is_none(),
        "{:?}",
        tool.declaration_error()
    );
    assert_eq!(
        tool.schema()["properties"]["trees"]["items"],
        json!({"$ref": "#/$defs/Tree"})
    );
    assert!(tool.schema()["$defs"]["Tree"]["properties"]["children"].is_object());
    let outcome = block_on(tool.invoke(
        &Context::new(),
        br#"{"trees": [{"name": "a", "children": [{"name": 1, "children": [], "x": 0}]}]}"#,
    ));
    assert_eq!(
        pairs(outcome.violations()),
        [
            ("/trees/0/children/0/name".to_owned(), Rule::Type),
            (
                "/trees/0/children/0/x".to_owned(),
                Rule::AdditionalProperties
            ),
        ]
    );
}

// ─── Arguments: the same violations, then serde ─────────────────────────────────────────────

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(future)
}

fn pairs(violations: &[tool_runtime::Violation]) -> Vec<(String, Rule)> {
    violations
        .iter()
        .map(|v| (v.path.clone(), v.rule))
        .collect()
}

const VALID: &str = r#"{"service_id": "svc-42", "days": 3, "tags": ["a"], "note": null,
    "place": {"city": "Oslo"}, "command": {"op": "Move", "steps": 2}, "colour": "deep-red",
    "limits": {"cpu": 4}}"#;

#[test]
fn c3_invalid_arguments_give_the_violations_of_the_derived_equivalent_in_its_order() {
    let cases = [
        "{}",
        "[]",
        r#"{"service_id": 5, "days": 300, "tags": ["a", 1], "note": 2, "extra": true,
            "place": {"city": "x", "floor": 1e6, "zip": 1}, "command": {"op": "Stop", "steps": 1},
            "colour": "DeepRed", "limits": {"cpu": -1, "mem": "lots"}}"#,
        r#"{"service_id": null, "days": 3.5, "tags": "a", "place": null,
            "command": {"steps": 3}, "limits": {}}"#,
        r#"{"service_id": "s", "days": -1, "tags": [], "place": {"city": ["x"]},
            "command": {"op": "Jump"}, "colour": 1, "limits": []}"#,
        r#"{"service_id": "s", "days": 1, "tags": [], "place": {"city": "x"},
            "command": {"op": 1}, "limits": {"a": 1.5}}"#,
        r#"{"service_id": "s", "days": 1, "tags": [], "place": {"city": "x"},
            "command": {"op": "Move", "steps": 256}, "limits": {"a": 4294967296}}"#,
    ];
    let ours = schemars_tool();
    let derived = derived_tool();
    for args in cases {
        let a = block_on(ours.invoke(&Context::new(), args.as_bytes()));
        let b = block_on(derived.invoke(&Context::new(), args.as_bytes()));
        assert_eq!(
            a.kind(),
            OutcomeKind::InvalidArguments,
            "{args}: {}",
            a.text()
        );
        assert_eq!(
            pairs(a.violations()),
            pairs(b.violations()),
            "{args}:\n{}\n{}",
            a.text(),
            b.text()
        );
        assert_eq!(a.text(), b.text(), "{args}: the same words");
    }
}

#[test]
fn c3_valid_arguments_reach_the_handler_deserialized() {
    let outcome = block_on(schemars_tool().invoke(&Context::new(), VALID.as_bytes()));
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
    let expected = Lookup {
        service_id: "svc-42".into(),
        days: 3,
        tags: vec!["a".into()],
        note: None,
        place: Place {
            city: "Oslo".into(),
            floor: None,
        },
        command: Command::Move { steps: 2 },
        colour: Some(Colour::DeepRed),
        limits: BTreeMap::from([("cpu".to_owned(), 4)]),
    };
    assert_eq!(outcome.text(), format!("{expected:?}"));
    // An integer written as `3.0` is an integer, as the derived parser reads it (S4).
    let args = VALID.replace(r#""days": 3"#, r#""days": 3.0"#);
    let outcome = block_on(schemars_tool().invoke(&Context::new(), args.as_bytes()));
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
}

// ─── `#[tool]` takes it as rmcp's methods do ────────────────────────────────────────────────

/// Adds two numbers.
#[derive(Deserialize, JsonSchema)]
struct Sum {
    /// The first.
    a: i32,
    /// The second.
    b: i32,
}

/// Adds two numbers.
#[tool]
async fn c3_sum(Parameters(Sum { a, b }): Parameters<Sum>) -> i64 {
    i64::from(a) + i64::from(b)
}

/// Adds two numbers, by name.
#[tool]
async fn c3_sum_named(_ctx: &Context, input: Parameters<Sum>) -> i64 {
    i64::from(input.0.a) + i64::from(input.0.b)
}

#[test]
fn c3_tool_takes_a_destructured_or_named_parameters_input() {
    for tool in [C3Sum.into_tool(), C3SumNamed.into_tool()] {
        assert!(tool.declaration_error().is_none());
        let outcome = block_on(tool.invoke(&Context::new(), br#"{"a": 2, "b": 40}"#));
        assert_eq!(outcome.text(), "42");
        let outcome = block_on(tool.invoke(&Context::new(), br#"{"a": 2147483648}"#));
        assert_eq!(
            pairs(outcome.violations()),
            [
                ("/a".to_owned(), Rule::Maximum),
                ("/b".to_owned(), Rule::Required)
            ]
        );
    }
}

// ─── What the parser cannot enforce fails the build ─────────────────────────────────────────

/// An input whose schema says more than the parser checks.
#[derive(Deserialize)]
struct Conditional {
    #[allow(dead_code)]
    a: String,
}

impl JsonSchema for Conditional {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Conditional".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "if": {"properties": {"a": {"const": "x"}}},
            "then": {"required": ["b"]}
        })
    }
}

#[test]
fn c3_an_unsupported_keyword_is_a_build_error_naming_it() {
    let tool = Tool::builder("conditional", "Checks a condition.")
        .handler(|_ctx: Context, _input: Parameters<Conditional>| async move {
            Ok::<_, ToolError>("ok")
        })
        .build();
    let error = tool
        .declaration_error()
        .expect("a declaration error")
        .to_string();
    assert!(error.contains("`if` at `/if`"), "{error}");
    let built = Agent::builder(ScriptedModel::new([]))
        .tool(tool.clone())
        .build();
    let Err(error) = built else {
        panic!("the agent refuses it")
    };
    let error = error.to_string();
    assert!(error.contains("`if`"), "{error}");
    let built = tool_runtime::mcp::McpServer::builder()
        .tools([tool])
        .build();
    let Err(error) = built else {
        panic!("the server refuses it")
    };
    let error = error.to_string();
    assert!(error.contains("`if`"), "{error}");
}

// ─── Hostile arguments ──────────────────────────────────────────────────────────────────────

/// Shapes serde tells apart only by trying each: no tag, the same JSON type.
#[allow(dead_code)] // read by serde only
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(untagged)]
enum Nested {
    /// One way down.
    Left { a: Vec<Nested> },
    /// The same way down, and a flag.
    Flagged { a: Vec<Nested>, flag: bool },
    /// Another way down.
    Right { b: Vec<Nested> },
}

/// A root around the nest.
#[allow(dead_code)] // read by serde only
#[derive(Deserialize, JsonSchema, Debug)]
struct Nest {
    /// The nest.
    nest: Nested,
}

#[test]
fn c3_alternatives_told_apart_by_nothing_are_tried_once_per_value() {
    let tool = Tool::builder("nest", "Takes a nest.")
        .handler(|_ctx: Context, _nest: Parameters<Nest>| async move { Ok::<_, ToolError>("ok") })
        .build();
    assert!(
        tool.declaration_error().is_none(),
        "{:?}",
        tool.declaration_error()
    );
    // 50 levels of alternatives that fit down to the last one, which fits none: trying each
    // branch afresh at each level would take 3^50 steps.
    let depth = 50;
    let args = format!(
        r#"{{"nest": {}{{"a": 1}}{}}}"#,
        r#"{"a": ["#.repeat(depth),
        "]}".repeat(depth)
    );
    let started = std::time::Instant::now();
    let outcome = block_on(tool.invoke(&Context::new(), args.as_bytes()));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(
        outcome.kind(),
        OutcomeKind::InvalidArguments,
        "{}",
        outcome.text()
    );
    let path = format!("/nest{}/a", "/a/0".repeat(depth));
    assert_eq!(pairs(outcome.violations()), [(path, Rule::Type)]);
    // And a valid nest reaches the handler.
    let args = format!(
        r#"{{"nest": {}{{"b": []}}{}}}"#,
        r#"{"a": ["#.repeat(depth),
        "], \"flag\": true}".repeat(depth)
    );
    let outcome = block_on(tool.invoke(&Context::new(), args.as_bytes()));
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
}

// ─── A paused call holds the validated arguments ────────────────────────────────────────────

#[test]
fn c3_a_call_awaiting_approval_holds_the_arguments_as_validated() {
    let tool = Tool::builder("sum", "Adds two numbers.")
        .handler(
            |_ctx: Context, Parameters(Sum { a, b }): Parameters<Sum>| async move {
                Ok::<_, ToolError>(i64::from(a) + i64::from(b))
            },
        )
        .require_approval()
        .build();
    // `Sum` does not implement `Serialize`: the pending call keeps what the model sent.
    let outcome = block_on(tool.invoke(&Context::new(), br#"{"a": 2.0, "b": 40}"#));
    assert_eq!(outcome.kind(), OutcomeKind::AwaitingApproval);
    assert_eq!(
        outcome.validated_arguments(),
        Some(&json!({"a": 2, "b": 40}))
    );
}

// ─── serde's default enum form, which the derive does not write ─────────────────────────────

/// An action, externally tagged (serde's default).
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
enum Action {
    Start { service: String },
    Stop(u8),
    Pause,
}

/// An input holding an action.
#[derive(Deserialize, JsonSchema, Debug, PartialEq)]
struct Act {
    /// What to do.
    action: Action,
}

#[test]
fn c3_an_externally_tagged_enum_reports_the_variant_its_key_names() {
    let tool = Tool::builder("act", "Acts.")
        .handler(
            |_ctx: Context, Parameters(act): Parameters<Act>| async move {
                Ok::<_, ToolError>(format!("{:?}", act.action))
            },
        )
        .build();
    let call = |args: &str| block_on(tool.invoke(&Context::new(), args.as_bytes()));
    assert_eq!(call(r#"{"action": "Pause"}"#).text(), "Pause");
    assert_eq!(call(r#"{"action": {"Stop": 3}}"#).text(), "Stop(3)");
    let cases = [
        (
            r#"{"action": {"Stop": 300}}"#,
            "/action/Stop",
            Rule::Maximum,
        ),
        (
            r#"{"action": {"Start": {"service": 1}}}"#,
            "/action/Start/service",
            Rule::Type,
        ),
        (r#"{"action": "Jump"}"#, "/action", Rule::Enum),
        (r#"{"action": 7}"#, "/action", Rule::Type),
    ];
    for (args, path, rule) in cases {
        let outcome = call(args);
        assert_eq!(
            pairs(outcome.violations()),
            [(path.to_owned(), rule)],
            "{args}: {}",
            outcome.text()
        );
    }
}
