//! Gemini's schema dialect (V4), checked differentially against Google's own SDK: for every
//! shape the strict-mode tests use (and hand-written schemas with the keywords derived ones
//! never hold), google-genai's `JSONSchema` type (unknown keywords refused) must take the
//! rewritten schema, and must refuse in the neutral schema exactly the keywords the rewriting
//! declares it changed, at the same pointers. A schema the dialect cannot express fails
//! `build()`, naming the tool, the pointer and the keyword.
//!
//! The same shapes check the Anthropic strict-tools dialect against the anthropic SDK's own
//! `transform_schema`.

#![cfg(feature = "gemini")]

mod support {
    pub mod dialect_shapes;
    pub mod gemini;
    pub mod provider;
}

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::dialect_shapes::{Empty, raw, shapes, tool};
use support::gemini::Checker;
use support::provider::scenario::LookupWindow;
use tool_runtime::providers::anthropic::{Anthropic, strict};
use tool_runtime::providers::gemini::Gemini;
use tool_runtime::providers::gemini::dialect::{ChangeKind, rewrite};
use tool_runtime::{Agent, BuildProblem, Model};

/// Changes the SDK does not make, with the reason (see the test below).
const DEVIATIONS: &[(&str, &str)] = &[(
    "$ref",
    "a reference to the root points at its copy in `$defs`: Gemini documents `$defs` references only",
)];

fn gemini() -> Gemini {
    Gemini::builder()
        .api_key("AIza-test")
        .build()
        .expect("valid")
}

// V4: for every shape, google-genai takes the rewritten schema, and refuses in the neutral
// one exactly what the rewriting says it changed. The build uses the same rewriting.
//
// Deviations from the SDK, by design (`DEVIATIONS`): a `$ref` to the root (`#`) is rewritten
// to point into `$defs`, which the SDK's type would take as it is (it does not read `$ref`'s
// value), because Gemini documents references into `$defs` only. And the SDK's type has no
// `prefixItems`, `$anchor` or `propertyOrdering`, which the API's documentation lists: the
// dialect follows the SDK and refuses tuples rather than send what the SDK would not.
#[test]
fn v4_the_rewriting_matches_google_genai_on_every_shape() {
    let mut checker = Checker::start();
    let driver = gemini();
    for tool in shapes() {
        let neutral = tool.schema();
        let rewritten = rewrite(neutral).unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
        let refused: BTreeSet<(String, String)> = checker
            .schema(neutral, &rewritten.schema)
            .unwrap_or_else(|e| panic!("{}: {e}", tool.name()))
            .into_iter()
            .collect();
        let changed: BTreeSet<(String, String)> = rewritten
            .changes
            .iter()
            .filter(|c| !DEVIATIONS.iter().any(|(keyword, _)| c.keyword == *keyword))
            .map(|c| (c.pointer.clone(), c.keyword.clone()))
            .collect();
        assert_eq!(
            refused,
            changed,
            "{}: what google-genai refuses (left) is what the rewriting changed (right)",
            tool.name()
        );
        let spec = driver.tool_spec(&tool).expect("expressible");
        let wire: Value = serde_json::from_str(
            spec.wire("gemini.generate_content")
                .expect("rendered at build"),
        )
        .expect("JSON");
        assert_eq!(
            wire["parametersJsonSchema"],
            rewritten.schema,
            "{}",
            tool.name()
        );
    }
    // The deviation is real: the recursive shapes hold it.
    let node = rewrite(shapes()[0].schema()).expect("expressible");
    assert!(node.changes.iter().any(|c| c.keyword == "$ref"));
    assert_eq!(
        node.schema["properties"]["children"]["items"]["$ref"],
        "#/$defs/Root"
    );
}

// V4: what moved into a description is still there for the model, and still enforced by
// the parser (R5): a value breaking `exclusiveMinimum` is refused before the handler.
#[test]
fn v4_moved_constraints_are_described() {
    let tool = &shapes()[8];
    let rewritten = rewrite(tool.schema()).expect("expressible");
    let ratio = &rewritten.schema["properties"]["ratio"];
    let text = ratio["description"].as_str().expect("a description");
    assert!(text.starts_with("A ratio.\n\n"), "{text}");
    for keyword in [
        "exclusiveMinimum: 0",
        "exclusiveMaximum: 1",
        "multipleOf: 0.05",
    ] {
        assert!(text.contains(keyword), "{text}");
    }
    assert_eq!(
        rewritten.schema["properties"]["mode"],
        json!({"enum": ["fast"]})
    );
    assert!(
        rewritten
            .changes
            .iter()
            .any(|c| c.keyword == "$schema" && c.kind == ChangeKind::Dropped)
    );
}

// V4: a schema the dialect cannot express fails `build()`, naming the tool, the keyword and
// its pointer, before any request.
#[test]
fn v4_an_inexpressible_schema_fails_build_naming_tool_pointer_and_keyword() {
    let tuple = raw(
        "tuple",
        json!({"type": "object", "properties": {
            "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]},
            "both": {"allOf": [{"type": "string"}, {"maxLength": 3}]},
        }}),
    );
    let err = Agent::builder(gemini())
        .tool(LookupWindow)
        .tool(tuple)
        .build()
        .expect_err("inexpressible");
    assert_eq!(err.problems().len(), 1);
    let BuildProblem::SchemaUnsupported { name, source, .. } = &err.problems()[0] else {
        panic!("expected SchemaUnsupported, got {err}");
    };
    assert_eq!(name, "tuple");
    let path = source.path().expect("a pointer");
    assert!(
        path == "/properties/both/allOf" || path == "/properties/point/prefixItems",
        "{path}"
    );
    let keyword = path.rsplit('/').next().unwrap_or_default();
    assert!(err.to_string().contains(&format!("`{keyword}`")), "{err}");
}

// V3: a tool name N1 allows but Gemini refuses (a leading digit) fails `build()`, naming the
// tool, before any request.
#[test]
fn v3_a_name_gemini_refuses_fails_build() {
    let err = Agent::builder(gemini())
        .tool(tool::<Empty>("2fa-check"))
        .build()
        .expect_err("refused");
    let BuildProblem::SchemaUnsupported { name, source, .. } = &err.problems()[0] else {
        panic!("expected SchemaUnsupported, got {err}");
    };
    assert_eq!(name, "2fa-check");
    assert!(source.reason().contains("starts with a letter"), "{source}");
}

/// The shapes the Anthropic strict dialect refuses where the SDK would send something, with
/// the reason (see the `strict` module).
const ANTHROPIC_DEVIATIONS: &[(&str, &str)] = &[
    (
        "node",
        "recursive: strict tools take no recursion; the SDK keeps the `$ref`",
    ),
    (
        "tag-service",
        "an open map: the SDK would close it, leaving the model no way to send it",
    ),
];

// V4: the Anthropic strict dialect against the anthropic SDK's `transform_schema`: on every
// shape, the SDK leaves our rewriting as it is (it is already in the SDK's form, descriptions
// included); where the neutral schema has no `type` list (which the SDK cannot take), the SDK's
// rewriting of it is ours exactly; a shape we refuse is one the SDK refuses too, or a declared
// deviation.
#[test]
fn v4_the_anthropic_strict_dialect_matches_the_sdk() {
    let mut checker = Checker::start();
    let driver = Anthropic::builder()
        .api_key("sk-ant-test")
        .strict_tools(true)
        .build()
        .expect("valid");
    let extra = raw(
        "strict-extra",
        json!({
            "type": "object",
            "properties": {
                "mode": {"const": "fast", "description": "The mode."},
                "level": {"type": "integer", "enum": [1, 2, 3], "default": 2},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1, "multipleOf": 0.5},
                "link": {"type": "string", "format": "uri-reference", "maxLength": 200},
                "when": {"type": "string", "format": "date-time"},
                "ids": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"},
                        "minItems": 2, "uniqueItems": true},
                "some": {"type": "array", "items": {"type": "boolean"}, "minItems": 1},
                "pick": {"oneOf": [{"type": "integer"}, {"type": "string", "examples": ["it's"]}]},
                "both": {"allOf": [{"$ref": "#/$defs/Base", "description": "A base."}]},
            },
            "required": ["mode", "pick"],
            "$defs": {"Base": {"type": "object", "properties": {"n": {"type": "number"}},
                               "title": "Base"}},
        }),
    );
    let mut refused = Vec::new();
    for tool in shapes().into_iter().chain([extra]) {
        let neutral = tool.schema();
        let sdk = checker.anthropic_strict(neutral);
        let ours = match strict::rewrite(neutral) {
            Ok(ours) => ours,
            Err(e) => {
                refused.push(tool.name().to_owned());
                let declared = ANTHROPIC_DEVIATIONS.iter().any(|(n, _)| *n == tool.name());
                assert!(
                    declared || sdk.is_err(),
                    "{}: we refuse ({e}), the SDK takes it",
                    tool.name()
                );
                continue;
            }
        };
        let fixpoint = checker
            .anthropic_strict(&ours)
            .unwrap_or_else(|e| panic!("{}: the SDK refuses our rewriting: {e}", tool.name()));
        assert_eq!(
            fixpoint,
            ours,
            "{}: the SDK changes our rewriting",
            tool.name()
        );
        if !neutral.to_string().contains("\"type\":[") {
            let sdk = sdk.unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
            assert_eq!(
                sdk,
                ours,
                "{}: the SDK's rewriting (left) is ours (right)",
                tool.name()
            );
        }
        let spec = driver.tool_spec(&tool).expect("expressible");
        assert!(spec.is_strict());
        let wire: Value =
            serde_json::from_str(spec.wire("anthropic.messages").expect("rendered")).expect("JSON");
        assert_eq!(
            (&wire["input_schema"], &wire["strict"]),
            (&ours, &json!(true))
        );
    }
    // `rewritten` holds a schema `true` and an open map, which the SDK refuses too.
    assert_eq!(
        refused,
        ["node", "loose", "tag-service", "rewritten"],
        "the shapes refused"
    );
}
