//! OpenAI strict mode (V1): how `#[derive(Schema)]` schemas are rewritten, once per tool at
//! `build()`, and which ones fall back or fail; the Anthropic driver keeps them as they are.

#![cfg(all(feature = "openai", feature = "anthropic"))]

mod support {
    pub mod dialect_shapes;
    pub mod provider;
    pub mod trace;
}

use serde_json::{Value, json};
use support::dialect_shapes::{Drawing, Empty, L1, L2, Loose, Node, Tagged, tool};
use tool_runtime::providers::anthropic::Anthropic;
use tool_runtime::providers::openai::{OpenAiChat, StrictMode};
use tool_runtime::{Model, Tool};

fn openai(mode: StrictMode) -> OpenAiChat {
    OpenAiChat::builder()
        .api_key("sk-test-key")
        .strict(mode)
        .build()
        .expect("a valid configuration")
}

fn strict_schema(tool: &Tool) -> Value {
    let spec = openai(StrictMode::Require)
        .tool_spec(tool)
        .unwrap_or_else(|e| panic!("{} should be strict-capable: {e}", tool.name()));
    assert!(spec.is_strict());
    spec.parameters().clone()
}

// V1: a recursive type keeps its `$defs` and `$ref`s; every object is closed and lists every
// property as required; the optional one is nullable, as the neutral schema already says (T3),
// with its description outside the `anyOf` (strict mode takes no keyword beside `$ref`).
#[test]
fn v1_recursive_types_keep_defs_and_refs() {
    let schema = strict_schema(&tool::<Node>("tree"));
    assert_eq!(schema["required"], json!(["children", "name", "next"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["children"]["items"],
        json!({"$ref": "#"})
    );
    let next = &schema["properties"]["next"];
    assert_eq!(next["description"], "The next sibling.");
    let branches = next["anyOf"].as_array().expect("nullable through anyOf");
    assert_eq!(branches, &[json!({"$ref": "#"}), json!({"type": "null"})]);
}

// V1: a tagged enum stays an `anyOf` of closed objects; `default`, `examples` and formats
// strict mode does not take (`uri`) are removed; constraints it takes (`minimum`) are kept.
#[test]
fn v1_tagged_enums_and_removed_keywords() {
    let schema = strict_schema(&tool::<Drawing>("draw"));
    let shapes = &schema["properties"]["shapes"]["items"];
    let circle = &shapes["anyOf"][0];
    assert_eq!(circle["additionalProperties"], false);
    assert_eq!(circle["required"], json!(["kind", "radius"]));
    assert_eq!(
        circle["properties"]["radius"],
        json!({"type": "number", "description": "Its radius.", "minimum": 0.0})
    );
    let square = &shapes["anyOf"][1];
    assert_eq!(square["required"], json!(["kind", "rounded", "side"]));
    assert_eq!(
        square["properties"]["rounded"],
        json!({"type": ["boolean", "null"]})
    );
    assert_eq!(
        schema["properties"]["url"],
        json!({"type": ["string", "null"], "description": "Where to publish it."})
    );
    let text = schema.to_string();
    assert!(
        !text.contains("\"default\"") && !text.contains("\"examples\""),
        "{text}"
    );
}

// V1 and S1: the constraints of each item stay under `items` in strict mode where strict mode
// takes them (`pattern`, `minimum`, `maximum`); `maxLength` is dropped there, as on a field, and
// the parser still enforces it. Anthropic gets them all, as the neutral schema has them.
#[test]
fn v1_item_constraints_are_kept_under_items() {
    let tagged = tool::<Tagged>("tag");
    let neutral = tagged.schema();
    assert_eq!(
        neutral["properties"]["tags"]["items"],
        json!({"type": "string", "pattern": "^[a-z]+$", "maxLength": 8})
    );
    let schema = strict_schema(&tagged);
    assert_eq!(
        schema["properties"]["tags"],
        json!({"type": "array", "description": "Tags.", "maxItems": 4,
               "items": {"type": "string", "pattern": "^[a-z]+$"}})
    );
    assert_eq!(
        schema["properties"]["scores"]["anyOf"][0]["items"],
        json!({"type": "integer", "minimum": 1, "maximum": 5})
    );
    let claude = Anthropic::builder().api_key("k").build().expect("valid");
    let spec = claude.tool_spec(&tagged).expect("taken as it is");
    let wire: Value =
        serde_json::from_str(spec.wire("anthropic.messages").expect("rendered")).expect("JSON");
    assert_eq!(&wire["input_schema"], neutral);
}

// V1: a value that may be anything cannot be strict: Auto sends it without strict mode,
// Require fails with the JSON pointer of the field, naming the reason.
#[test]
fn v1_any_value_falls_back_or_fails() {
    let loose = tool::<Loose>("loose");
    let spec = openai(StrictMode::Auto)
        .tool_spec(&loose)
        .expect("falls back");
    assert!(!spec.is_strict());
    assert_eq!(
        spec.parameters(),
        loose.schema(),
        "the neutral schema, unchanged"
    );
    let err = openai(StrictMode::Require)
        .tool_spec(&loose)
        .expect_err("cannot be strict");
    assert_eq!(err.path(), Some("/properties/extra"));
    assert!(err.reason().contains("serde_json::Value"), "{err}");
    // Off: never strict, the neutral schema.
    let spec = openai(StrictMode::Off)
        .tool_spec(&tool::<Drawing>("draw"))
        .expect("ok");
    assert!(!spec.is_strict());
}

// V1: OpenAI's nesting limit (10 levels of objects) is checked at build.
#[test]
fn v1_nesting_past_the_limit_cannot_be_strict() {
    let ten = tool::<L2>("ten-levels");
    assert!(openai(StrictMode::Require).tool_spec(&ten).is_ok());
    let eleven = tool::<L1>("eleven-levels");
    let err = openai(StrictMode::Require)
        .tool_spec(&eleven)
        .expect_err("too deep");
    assert!(err.reason().contains("levels"), "{err}");
    assert!(
        !openai(StrictMode::Auto)
            .tool_spec(&eleven)
            .expect("falls back")
            .is_strict()
    );
}

// V1: a tool without input is a closed empty object.
#[test]
fn v1_a_tool_without_input_is_a_closed_empty_object() {
    let schema = strict_schema(&tool::<Empty>("ping"));
    assert_eq!(
        schema,
        json!({"type": "object", "description": "Nothing at all.", "properties": {},
               "required": [], "additionalProperties": false})
    );
}

// V1: Anthropic takes the neutral schema as it is, maps and free values included.
#[test]
fn v1_anthropic_keeps_the_neutral_schema() {
    let claude = Anthropic::builder().api_key("k").build().expect("valid");
    for tool in [
        tool::<Loose>("loose"),
        tool::<Drawing>("draw"),
        tool::<L1>("deep"),
    ] {
        let spec = claude.tool_spec(&tool).expect("taken as it is");
        assert_eq!(spec.parameters(), tool.schema());
        let wire: Value =
            serde_json::from_str(spec.wire("anthropic.messages").expect("rendered")).expect("JSON");
        assert_eq!(&wire["input_schema"], tool.schema());
    }
}

/// A subscriber that keeps the fields of every `warn` event.
#[derive(Clone, Default)]
struct Warnings(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl tracing::Subscriber for Warnings {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() == tracing::Level::WARN
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        struct Text<'a>(&'a mut String);
        impl tracing::field::Visit for Text<'_> {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!("{}={value:?} ", field.name()));
            }
        }
        let mut text = String::new();
        event.record(&mut Text(&mut text));
        self.0.lock().expect("not poisoned").push(text);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

// V1: falling back from strict mode is not silent: a `warn` event names the tool and why.
#[test]
fn v1_a_fallback_from_strict_mode_is_logged() {
    let warnings = Warnings::default();
    let model = openai(StrictMode::Auto);
    let loose = tool::<Loose>("loose");
    {
        let _guard = support::trace::install(warnings.clone());
        model.tool_spec(&loose).expect("falls back");
        model.tool_spec(&tool::<Drawing>("draw")).expect("strict");
    }
    let seen = warnings.0.lock().expect("not poisoned").clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].contains("tool=\"loose\"") && seen[0].contains("/properties/extra"),
        "{}",
        seen[0]
    );
}
