//! One tool's entry in the surface: what it declares, and what each publisher sends of it.
//!
//! Every rendering here is the publisher's own: the provider drivers' [`Model::tool_spec`]
//! (the rendering each driver keeps and sends in its requests) and the MCP server's
//! `tools/list` entry, serialized as the MCP SDK serializes it. Nothing is rendered twice.
//!
//! The dialects an application opts into (Anthropic's strict tools) or whose driver is a
//! feature of its own (Gemini, Bedrock) show a schema they cannot express as
//! `{"unsupported": {"reason": …, "at": …}}`, where the default publishers fail the surface:
//! a tool a dialect cannot take is what that provider loses (V4), not a broken surface.

use serde_json::{Map, Value, json};
use tool_core::Tool;

use super::SurfaceError;
use crate::mcp::McpNaming;
use crate::model::{Model, SchemaUnsupported};
use crate::providers::anthropic::Anthropic;
use crate::providers::openai::{OpenAiChat, OpenAiResponses, StrictMode};

/// Chat Completions in strict mode where the schema allows it (the driver's default).
pub(super) const OPENAI_CHAT_STRICT: &str = "openai.chat.strict";
/// Chat Completions with strict mode off (a compatible server's default).
pub(super) const OPENAI_CHAT: &str = "openai.chat";
/// Responses in strict mode where the schema allows it (the driver's default).
pub(super) const OPENAI_RESPONSES_STRICT: &str = "openai.responses.strict";
/// Anthropic's Messages API.
pub(super) const ANTHROPIC: &str = "anthropic";
/// Anthropic's Messages API with strict tools (`AnthropicBuilder::strict_tools`, V4).
pub(super) const ANTHROPIC_STRICT: &str = "anthropic.strict";
/// Google's Gemini API: a function declaration's `parametersJsonSchema` (V4).
pub(super) const GEMINI: &str = "gemini";
/// Amazon Bedrock's Converse API: a tool's `inputSchema.json`, its `$defs` inlined (V4).
pub(super) const BEDROCK: &str = "bedrock";
/// An MCP server's `tools/list`.
pub(super) const MCP: &str = "mcp";

/// The drivers whose renderings a surface holds, built once per surface. They are never
/// asked to send anything: only [`Model::tool_spec`] is called.
pub(super) struct Publishers {
    chat_strict: OpenAiChat,
    chat: OpenAiChat,
    responses_strict: OpenAiResponses,
    anthropic: Anthropic,
    anthropic_strict: Anthropic,
    #[cfg(feature = "gemini")]
    gemini: crate::providers::gemini::Gemini,
    #[cfg(feature = "bedrock")]
    bedrock: crate::providers::bedrock::Bedrock,
}

/// What a publisher's rendering shows when it cannot express a tool's schema.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WhenUnsupported {
    /// The surface fails ([`SurfaceError::Unsupported`]): a default publisher.
    Fail,
    /// The rendering says why, as `{"unsupported": {"reason": …, "at": …}}`.
    Show,
}

/// A key the drivers are built with; it is never sent anywhere.
const NO_KEY: &str = "surface-rendering-only";

impl Publishers {
    /// The drivers as an application builds them by default: strict mode where the schema
    /// allows it (V1), and Chat Completions once more with strict mode off, as a compatible
    /// server or `StrictMode::Off` gets it.
    pub(super) fn new() -> Result<Self, SurfaceError> {
        let config = |source| SurfaceError::Driver { source };
        Ok(Self {
            chat_strict: OpenAiChat::builder()
                .api_key(NO_KEY)
                .strict(StrictMode::Auto)
                .build()
                .map_err(config)?,
            chat: OpenAiChat::builder()
                .api_key(NO_KEY)
                .strict(StrictMode::Off)
                .build()
                .map_err(config)?,
            responses_strict: OpenAiResponses::builder()
                .api_key(NO_KEY)
                .strict(StrictMode::Auto)
                .build()
                .map_err(config)?,
            anthropic: Anthropic::builder()
                .api_key(NO_KEY)
                .build()
                .map_err(config)?,
            anthropic_strict: Anthropic::builder()
                .api_key(NO_KEY)
                .strict_tools(true)
                .build()
                .map_err(config)?,
            #[cfg(feature = "gemini")]
            gemini: crate::providers::gemini::Gemini::builder()
                .api_key(NO_KEY)
                .build()
                .map_err(config)?,
            #[cfg(feature = "bedrock")]
            bedrock: crate::providers::bedrock::Bedrock::builder()
                .region("us-east-1")
                .api_key(NO_KEY)
                .build()
                .map_err(config)?,
        })
    }

    /// Each publisher by key, its driver, and what it shows of a schema it cannot express.
    fn all(&self) -> Vec<(&'static str, &dyn Model, WhenUnsupported)> {
        use WhenUnsupported::{Fail, Show};
        let mut all: Vec<(&'static str, &dyn Model, WhenUnsupported)> = vec![
            (OPENAI_CHAT_STRICT, &self.chat_strict, Fail),
            (OPENAI_CHAT, &self.chat, Fail),
            (OPENAI_RESPONSES_STRICT, &self.responses_strict, Fail),
            (ANTHROPIC, &self.anthropic, Fail),
            (ANTHROPIC_STRICT, &self.anthropic_strict, Show),
        ];
        #[cfg(feature = "gemini")]
        all.push((GEMINI, &self.gemini, Show));
        #[cfg(feature = "bedrock")]
        all.push((BEDROCK, &self.bedrock, Show));
        all
    }

    /// `tool` as each provider driver sends it, by publisher key.
    fn drivers(&self, tool: &Tool) -> Result<Map<String, Value>, SurfaceError> {
        let mut out = Map::new();
        for (publisher, driver, when_unsupported) in self.all() {
            let spec = match driver.tool_spec(tool) {
                Ok(spec) => spec,
                Err(source) if when_unsupported == WhenUnsupported::Show => {
                    out.insert(publisher.to_owned(), unsupported(&source));
                    continue;
                }
                Err(source) => {
                    return Err(SurfaceError::Unsupported {
                        tool: tool.name().to_owned(),
                        publisher,
                        source,
                    });
                }
            };
            let rendered = spec.rendered().ok_or_else(|| SurfaceError::NotRendered {
                tool: tool.name().to_owned(),
                publisher,
            })?;
            let mut value: Value =
                serde_json::from_str(rendered).map_err(|source| SurfaceError::Rendering {
                    tool: tool.name().to_owned(),
                    publisher,
                    source,
                })?;
            // Q1: a driver with a tool search of its provider's sends a deferred tool marked
            // for that search to load (Anthropic's `defer_loading`).
            if tool.is_deferred_loading()
                && driver.native_tool_search()
                && let Some(object) = value.as_object_mut()
            {
                object.insert("defer_loading".to_owned(), Value::Bool(true));
            }
            out.insert(publisher.to_owned(), value);
        }
        Ok(out)
    }
}

/// A rendering that says why the publisher cannot express the schema.
fn unsupported(why: &SchemaUnsupported) -> Value {
    json!({"unsupported": {"reason": why.reason(), "at": why.path().unwrap_or("")}})
}

/// `tool`'s entry in `tools/list`, as an `McpServer` built with `naming` lists it.
pub(super) fn mcp_entry(tool: &Tool, naming: &McpNaming) -> Result<Value, SurfaceError> {
    let entry = crate::mcp::list_entry(tool, naming);
    serde_json::to_value(&entry).map_err(|source| SurfaceError::Rendering {
        tool: tool.name().to_owned(),
        publisher: MCP,
        source,
    })
}

/// `tool`'s entry in the surface: what it declares (name, title, description, the neutral
/// input schema the parser enforces, the output schema, hints, approval, policy, the
/// sequential flag and retry budget, whether it is offered only once a search loads it) and, under `published`, what each publisher sends.
/// `mcp` is its `tools/list` entry.
pub(super) fn tool_entry(
    tool: &Tool,
    publishers: &Publishers,
    mcp: Value,
) -> Result<Value, SurfaceError> {
    let hints = tool.annotations();
    let mut published = publishers.drivers(tool)?;
    published.insert(MCP.to_owned(), mcp);
    Ok(json!({
        "name": tool.name(),
        "title": hints.title,
        "description": tool.description(),
        "input_schema": tool.schema(),
        "output_schema": tool.output_schema().map(|output| output.schema()),
        "hints": {
            "read_only": hints.read_only,
            "destructive": hints.destructive,
            "idempotent": hints.idempotent,
            "open_world": hints.open_world,
        },
        "approval": tool.requires_approval(),
        "deferred": tool.is_deferred(),
        "deferred_loading": tool.is_deferred_loading(),
        "availability_policy": tool.has_policy(),
        "sequential": tool.is_sequential(),
        "retries": tool.retries(),
        "published": published,
    }))
}

/// `value` with the members of every object in the order of their keys' bytes, whatever
/// order the map type keeps (serde_json's `preserve_order` keeps insertion order).
pub(super) fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::with_capacity(map.len());
            for key in keys {
                if let Some(member) = map.get(key) {
                    out.insert(key.clone(), sorted(member));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
