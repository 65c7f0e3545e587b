//! Bedrock's schema dialect (V4), checked differentially. botocore has no schema transform
//! (`inputSchema.json` is a free document to it), so the reference is pydantic-ai's
//! `BedrockJsonSchemaTransformer` (pinned, in a virtual environment the test provisions under
//! `target/peers/`), the transformer its Bedrock profile applies to tools that are not strict,
//! as the driver's are. On every shape the other dialects are checked on:
//!
//! - pydantic-ai's default transform changes no keyword but the annotations it drops (`title`,
//!   `$schema`): like the driver's, it moves nothing into descriptions and drops no constraint;
//! - with its definitions inlined (`prefer_inlined_defs`, what it sends to the models that do
//!   not resolve references), it is the driver's rendering exactly, once those annotations are
//!   set aside, save the declared deviations ([`DEVIATIONS`]): a reference to the root, which
//!   pydantic-ai refuses to inline and the driver sends as it is, and a recursive definition
//!   below the root, for which pydantic-ai moves the root into `$defs` where the driver keeps
//!   it an object. Both keep such a recursion with only the definitions it needs, each
//!   inlined but for the recursion.

#![cfg(feature = "bedrock")]

mod support {
    pub mod bedrock_peers;
    pub mod dialect_shapes;
    pub mod provider;
}

use serde_json::{Value, json};
use support::bedrock_peers::pydantic_ai;
use support::dialect_shapes::{raw, shapes};
use tool_runtime::Model;
use tool_runtime::providers::bedrock::Bedrock;

/// Where the driver's rendering differs from pydantic-ai's inlined one, and why the driver's
/// is the one to send.
const DEVIATIONS: &[(&str, &str)] = &[
    (
        "annotations",
        "pydantic-ai drops `title` and `$schema` at every level; the driver keeps them: Converse \
         takes them, and the model reads a title as a name",
    ),
    (
        "reference to the root",
        "pydantic-ai refuses to inline a `$ref` to the root (`#`, a type that holds itself); the \
         driver sends it as it is, as it sends every recursive reference: inlining cannot end, \
         and the parser enforces the recursion either way",
    ),
    (
        "recursive root",
        "with a recursive definition below the root, pydantic-ai moves the root itself into \
         `$defs` (as `root`) and sends `{\"$ref\": \"#/$defs/root\"}` at the root; the driver keeps \
         the root an object (Converse's models want `type: object` at the root of a tool's \
         input), with the same `$defs` beside it",
    ),
];

/// `schema` without the annotations pydantic-ai drops (`title`, `$schema`), at every level of
/// its subschemas (data keywords are left as they are).
fn without_annotations(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "title" | "$schema"))
                .map(|(k, v)| {
                    let kept = if matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        v.clone()
                    } else if k == "properties" || k == "$defs" {
                        match v {
                            Value::Object(named) => Value::Object(
                                named
                                    .iter()
                                    .map(|(n, s)| (n.clone(), without_annotations(s)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        without_annotations(v)
                    };
                    (k.clone(), kept)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_annotations).collect()),
        other => other.clone(),
    }
}

/// The driver's `inputSchema.json` for `tool`.
fn rendering(driver: &Bedrock, tool: &tool_runtime::Tool) -> Value {
    let spec = driver.tool_spec(tool).expect("expressible");
    let wire: Value =
        serde_json::from_str(spec.wire("bedrock.converse").expect("rendered at build"))
            .expect("JSON");
    wire["toolSpec"]["inputSchema"]["json"].clone()
}

/// pydantic-ai's root made an object again, for a rendering whose root it moved into `$defs`:
/// the definition the root reference names, with the other definitions beside it.
fn root_unwrapped(theirs: &Value) -> Option<Value> {
    let name = theirs.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
    let mut defs = theirs.get("$defs")?.as_object()?.clone();
    let mut root = defs.remove(name)?;
    if let Some(map) = root.as_object_mut()
        && !defs.is_empty()
    {
        map.insert("$defs".into(), Value::Object(defs));
    }
    Some(root)
}

// V4: on every shape, pydantic-ai's Bedrock transform agrees with the driver's rendering:
// neither moves or drops a constraint, and with references inlined both send the same
// schema, save the declared deviations.
#[test]
fn v4_the_bedrock_rendering_matches_pydantic_ai_on_every_shape() {
    let driver = Bedrock::builder()
        .region("eu-west-3")
        .api_key("bedrock-api-key-test")
        .build()
        .expect("builds");
    let mut tools = shapes();
    // A recursive definition below the root (the shapes' recursive type is the root itself).
    tools.push(raw(
        "forest",
        json!({
            "type": "object",
            "properties": {
                "kind": {"$ref": "#/$defs/Kind"},
                "trees": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            },
            "required": ["trees"],
            "$defs": {
                "Kind": {"type": "string", "enum": ["oak", "ash"]},
                "Tree": {"type": "object",
                         "properties": {"kind": {"$ref": "#/$defs/Kind"},
                                        "children": {"type": "array",
                                                     "items": {"$ref": "#/$defs/Tree"}}}},
            },
        }),
    ));
    let neutral: Vec<Value> = tools.iter().map(|t| t.schema().clone()).collect();
    let theirs = pydantic_ai(&neutral).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(theirs.len(), tools.len());
    assert_eq!(theirs[0]["profile"], "BedrockJsonSchemaTransformer");
    let (mut recursive, mut root_references) = (Vec::new(), Vec::new());
    for ((tool, neutral), theirs) in tools.iter().zip(&neutral).zip(&theirs) {
        let name = tool.name();
        assert_eq!(
            theirs["default"],
            without_annotations(neutral),
            "{name}: pydantic-ai's default transform changes only annotations"
        );
        let ours = without_annotations(&rendering(&driver, tool));
        if let Some(refused) = theirs.get("inlined_refused") {
            // The declared deviation: a reference to the root, which the driver keeps.
            assert!(
                refused.as_str().is_some_and(|e| e.contains("'#'")),
                "{name}: {refused}"
            );
            assert!(ours.to_string().contains(r##""$ref":"#""##), "{name}");
            root_references.push(name);
            continue;
        }
        let inlined = &theirs["inlined"];
        if ours == *inlined {
            continue;
        }
        // The declared deviation: pydantic-ai's root is a reference into `$defs`.
        assert_eq!(
            Some(&ours),
            root_unwrapped(inlined).as_ref(),
            "{name}: ours (left) against pydantic-ai's inlined rendering, its root unwrapped \
             (right); deviations: {DEVIATIONS:?}"
        );
        assert_eq!(ours["type"], "object", "{name}: our root stays an object");
        recursive.push(name);
    }
    // Every other shape is the same schema on both sides.
    assert_eq!(root_references, ["node"]);
    assert_eq!(recursive, ["forest"]);
}
