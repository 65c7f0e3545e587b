//! One tool's entry in the surface: what it declares, and what each publisher sends of it.
//!
//! Every rendering here is the publisher's own: the provider drivers' [`Model::tool_spec`]
//! (the rendering each driver keeps and sends in its requests) and the MCP server's
//! `tools/list` entry, serialized as the MCP SDK serializes it. Nothing is rendered twice.

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
/// An MCP server's `tools/list`.
pub(super) const MCP: &str = "mcp";

/// The drivers whose renderings a surface holds, built once per surface. They are never
/// asked to send anything: only [`Model::tool_spec`] is called.
pub(super) struct Publishers {
    chat_strict: OpenAiChat,
    chat: OpenAiChat,
    responses_strict: OpenAiResponses,
    anthropic: Anthropic,
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
        })
    }

    /// `tool` as each provider driver sends it, by publisher key.
    fn drivers(&self, tool: &Tool) -> Result<Map<String, Value>, SurfaceError> {
        let mut out = Map::new();
        let drivers: [(&str, &dyn Model); 4] = [
            (OPENAI_CHAT_STRICT, &self.chat_strict),
            (OPENAI_CHAT, &self.chat),
            (OPENAI_RESPONSES_STRICT, &self.responses_strict),
            (ANTHROPIC, &self.anthropic),
        ];
        for (publisher, driver) in drivers {
            let unsupported = |source: SchemaUnsupported| SurfaceError::Unsupported {
                tool: tool.name().to_owned(),
                publisher,
                source,
            };
            let spec = driver.tool_spec(tool).map_err(unsupported)?;
            let rendered = spec.rendered().ok_or_else(|| SurfaceError::NotRendered {
                tool: tool.name().to_owned(),
                publisher,
            })?;
            let value: Value =
                serde_json::from_str(rendered).map_err(|source| SurfaceError::Rendering {
                    tool: tool.name().to_owned(),
                    publisher,
                    source,
                })?;
            out.insert(publisher.to_owned(), value);
        }
        Ok(out)
    }
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
/// sequential flag and retry budget) and, under `published`, what each publisher sends.
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
