//! V4 and C2: the surface shows every dialect (Chat Completions and Responses, Anthropic with
//! and without strict tools, Gemini, Bedrock, MCP), and its portability report says per tool
//! what each provider loses: a keyword moved into the description, rewritten, inlined,
//! changed or dropped, or the whole tool not offered. The document of a rich tool is committed
//! (`tests/surface/portability_v4.json`, rewritten with `UPDATE_SURFACE=1`); a document whose
//! renderings changed without its report, or the reverse, is refused.
#![cfg(all(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock",
    feature = "mcp"
))]

use std::collections::HashMap;

use serde_json::Value;
use tool_runtime::surface::{Fate, Loss, Surface, SurfaceError, assert_snapshot};
use tool_runtime::{Context, Schema, Tool, ToolError};

/// A maintenance plan.
#[derive(Schema)]
pub struct Plan {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    pub days: u32,
    /// A share of the traffic.
    #[schema(exclusive_min = 0.0, max = 1.0, multiple_of = 0.25)]
    pub share: f64,
    /// Who to tell.
    #[schema(format = "email")]
    pub contact: String,
    /// The region, if not the default.
    pub region: Option<String>,
    /// How urgent.
    #[schema(one_of = ["low", "high"])]
    pub urgency: String,
    /// The steps, as a tree.
    pub steps: Vec<Step>,
}

/// A step and the steps under it.
#[derive(Schema)]
pub struct Step {
    /// What is done.
    pub action: String,
    /// The steps after it.
    pub then: Vec<Step>,
}

/// A window to look up.
#[derive(Schema)]
pub struct Window {
    /// The service.
    #[schema(max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead.
    #[schema(range = 1..=30)]
    pub days: u32,
    /// The region, if not the default.
    pub region: Option<String>,
}

/// Labels by name.
#[derive(Schema)]
pub struct Labelled {
    /// The labels.
    pub labels: HashMap<String, String>,
}

fn tool<I: Schema + Send + 'static>(name: &str) -> Tool {
    Tool::builder(name, "Plan maintenance.")
        .handler(|_ctx: Context, _input: I| async { Ok::<_, ToolError>("ok") })
        .build()
}

fn surface() -> Surface {
    let tools = [
        tool::<Plan>("plan"),
        tool::<Window>("window"),
        tool::<Labelled>("label"),
    ];
    Surface::of_tools(tools).expect("the tools render")
}

/// Where the committed document is.
fn committed() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/surface/portability_v4.json")
}

/// The fates of `publisher`'s losses of `tool`, by pointer.
fn fates(surface: &Surface, tool: &str, publisher: &str) -> Vec<(String, Fate)> {
    let report = surface.portability();
    let losses = report
        .losses(tool, publisher)
        .unwrap_or_else(|| panic!("{tool} {publisher}"));
    losses
        .iter()
        .map(|Loss { at, fate }| (at.clone(), fate.clone()))
        .collect()
}

#[test]
fn v4_c2_the_surface_shows_every_dialect_and_its_report_is_committed() {
    let surface = surface();
    let published = surface
        .tool("plan")
        .and_then(|entry| entry["published"].as_object());
    let publishers: Vec<&str> = published
        .expect("published")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        publishers,
        [
            "anthropic",
            "anthropic.strict",
            "bedrock",
            "gemini",
            "mcp",
            "openai.chat",
            "openai.chat.strict",
            "openai.responses.strict"
        ]
    );
    // `UPDATE_SURFACE=1` rewrites it; a change of any dialect's rewriting fails here with
    // the diff until the file (renderings and report together) is rewritten and committed.
    assert_snapshot(&surface, committed());
}

#[test]
fn v4_the_report_says_what_each_dialect_loses() {
    let surface = surface();
    let described = |at: &str| (at.to_owned(), Fate::Described);
    // Gemini's dialect has no `exclusiveMinimum` nor `multipleOf`: both move into the text.
    let gemini = fates(&surface, "plan", "gemini");
    assert!(
        gemini.contains(&described("/properties/share/exclusiveMinimum")),
        "{gemini:?}"
    );
    assert!(
        gemini.contains(&described("/properties/share/multipleOf")),
        "{gemini:?}"
    );
    // Anthropic's strict tools: bounds and lengths into the description; an optional
    // field's type list rewritten as `anyOf`; recursion and open maps not offered at all.
    let strict = fates(&surface, "window", "anthropic.strict");
    for at in [
        "/properties/days/maximum",
        "/properties/days/minimum",
        "/properties/service_id/maxLength",
    ] {
        assert!(strict.contains(&described(at)), "{at}: {strict:?}");
    }
    assert!(
        strict.contains(&(
            "/properties/region/type".to_owned(),
            Fate::Rewritten(vec!["anyOf".to_owned()])
        )),
        "{strict:?}"
    );
    for tool in ["plan", "label"] {
        let fates = fates(&surface, tool, "anthropic.strict");
        assert!(
            matches!(fates[..], [(_, Fate::Unsupported(_))]),
            "{tool}: {fates:?}"
        );
    }
    // Bedrock inlines `$defs` where it can.
    let bedrock = fates(&surface, "plan", "bedrock");
    assert!(
        bedrock.contains(&("/properties/steps/items/$ref".to_owned(), Fate::Inlined)),
        "{bedrock:?}"
    );
    // OpenAI's strict mode requires every field (the optional ones nullable).
    let chat = fates(&surface, "window", "openai.chat.strict");
    assert!(
        chat.iter()
            .any(|(at, fate)| at == "/required" && matches!(fate, Fate::Changed(_))),
        "{chat:?}"
    );
    // MCP and Chat Completions without strict mode send the schema as it is.
    for publisher in ["mcp", "openai.chat", "anthropic"] {
        for tool in ["plan", "window", "label"] {
            assert_eq!(fates(&surface, tool, publisher), [], "{tool} {publisher}");
        }
    }
}

/// The document, parsed, with `edit` applied, read back.
fn edited(surface: &Surface, edit: impl FnOnce(&mut Value)) -> Result<Surface, SurfaceError> {
    let mut document: Value = serde_json::from_str(&surface.to_json()).expect("JSON");
    edit(&mut document);
    Surface::from_json(&document.to_string())
}

#[test]
fn v4_a_rendering_changed_without_its_report_is_refused() {
    let surface = surface();
    assert_eq!(edited(&surface, |_| {}).expect("read back"), surface);
    // As if Gemini's rewriting kept `exclusiveMinimum`, and the report were not rewritten.
    let rendering_only = edited(&surface, |document| {
        let share = "/tools/plan/published/gemini/parametersJsonSchema/properties/share";
        let share = document.pointer_mut(share).and_then(Value::as_object_mut);
        share
            .expect("the rendering")
            .insert("exclusiveMinimum".into(), 0.0.into());
    });
    assert!(
        matches!(rendering_only, Err(SurfaceError::NotASurface(why)) if why.contains("what_each_provider_loses")),
        "{rendering_only:?}"
    );
    // And a report edited without its rendering.
    let report_only = edited(&surface, |document| {
        let gemini = document
            .pointer_mut("/what_each_provider_loses/plan/gemini")
            .and_then(Value::as_array_mut);
        gemini.expect("the report").clear();
    });
    assert!(
        matches!(report_only, Err(SurfaceError::NotASurface(_))),
        "{report_only:?}"
    );
}

/// A surface of one tool whose `input_schema` is `neutral` and whose `test` rendering (read
/// as Bedrock's) holds `rendered`.
fn crafted(neutral: Value, rendered: Value) -> Surface {
    let document = serde_json::json!({
        "surface_version": 1,
        "tools": {"t": {
            "input_schema": neutral,
            "published": {"bedrock": {"toolSpec": {"inputSchema": {"json": rendered}}}},
        }},
    });
    Surface::from_json(&document.to_string()).expect("a surface")
}

#[test]
fn v4_each_fate_is_told_apart() {
    let neutral = serde_json::json!({
        "type": "object",
        "properties": {
            "kind": {"const": "a", "description": "The kind."},
            "count": {"type": ["integer", "null"], "minimum": 1},
            "name": {"type": "string", "pattern": "^x", "maxLength": 9, "description": "A name."},
            "gone": {"type": "string"},
        },
        "required": ["kind"],
    });
    let rendered = serde_json::json!({
        "type": "object",
        "properties": {
            "kind": {"enum": ["a"], "description": "The kind."},
            "count": {"anyOf": [{"type": "integer", "description": "{minimum: 1}"}, {"type": "null"}]},
            "name": {"type": "string", "description": "Another name."},
        },
        "required": ["kind", "count"],
    });
    let surface = crafted(neutral, rendered);
    let rewritten = |k: &str| Fate::Rewritten(vec![k.to_owned()]);
    assert_eq!(
        fates(&surface, "t", "bedrock"),
        [
            ("/properties/count/minimum".to_owned(), Fate::Described),
            ("/properties/count/type".to_owned(), rewritten("anyOf")),
            ("/properties/gone".to_owned(), Fate::Dropped),
            ("/properties/kind/const".to_owned(), rewritten("enum")),
            (
                "/properties/name/description".to_owned(),
                Fate::Changed("\"Another name.\"".to_owned())
            ),
            ("/properties/name/maxLength".to_owned(), Fate::Dropped),
            ("/properties/name/pattern".to_owned(), Fate::Dropped),
            (
                "/required".to_owned(),
                Fate::Changed("[\"kind\",\"count\"]".to_owned())
            ),
        ]
    );
    let text = surface.portability().to_string();
    assert!(
        text.contains("t  bedrock  /properties/count/minimum: moved into the description"),
        "{text}"
    );
}
