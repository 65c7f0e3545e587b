//! Anthropic's Messages API: [`Anthropic`].
//!
//! # Defaults
//!
//! | setting | default |
//! |---|---|
//! | base URL | [`DEFAULT_BASE_URL`] (`https://api.anthropic.com`) |
//! | model | [`DEFAULT_MODEL`] (`claude-sonnet-4-5`) |
//! | `max_tokens` (required by the API) | [`DEFAULT_MAX_TOKENS`] (4096) |
//! | `anthropic-version` | [`API_VERSION`] (`2023-06-01`) |
//! | `tool_choice` | not sent (the API's default: `auto`, parallel calls on) |
//!
//! A tool's neutral schema goes to `input_schema` as it is: its root is an object, and the
//! API takes the JSON Schema keywords the neutral schema uses (V1). With
//! [`AnthropicBuilder::strict_tools`], each tool is a strict tool instead, its schema
//! rewritten into the strict dialect (V4, [`strict`]).
//!
//! A tool's examples go as `input_examples` (Q3); a deferred tool not yet loaded goes with
//! `"defer_loading": true`, beside the API's BM25 tool search tool (Q1). A request that
//! carries either sends the `anthropic-beta` header [`ADVANCED_TOOL_USE_BETA`].

pub(crate) mod events;
pub mod strict;
mod wire;

use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::Tool;

use super::http::{Auth, Endpoint};
use super::stream::model_stream;
use super::{Common, ConfigError, common_setters};
use crate::model::{Model, ModelError, ModelRequest, ModelStream, SchemaUnsupported, ToolSpec};
use events::AnthropicEvents;

/// The model used when none is given.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The base URL used when none is given.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `max_tokens` sent when none is given.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The `anthropic-version` header sent.
pub const API_VERSION: &str = "2023-06-01";

/// The `anthropic-beta` header value of requests whose tools carry `input_examples` (Q3) or
/// `defer_loading` with the tool search tool (Q1).
pub const ADVANCED_TOOL_USE_BETA: &str = "advanced-tool-use-2025-11-20";

/// The wire format tag of tools rendered for the Messages API.
const FORMAT: &str = "anthropic.messages";

/// Which tools the model may call, sent as `tool_choice`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the API's default).
    Auto,
    /// The model must call at least one tool (`any`). An agent's run then never gets a final
    /// answer: use it with [`crate::AgentBuilder::max_turns`].
    Any,
    /// The model may not call tools.
    None,
    /// The model must call this tool.
    Tool(String),
}

/// A model behind Anthropic's Messages API (`POST {base}/v1/messages`).
///
/// The instructions (and any system messages of the conversation) go in `system`; calls
/// come back as `tool_use` blocks, and results go back as `tool_result` blocks (with
/// `is_error` for failures) at the start of the next user message, consecutive results in
/// one message.
///
/// ```no_run
/// use tool_runtime::providers::anthropic::Anthropic;
///
/// # fn main() -> Result<(), tool_runtime::providers::ConfigError> {
/// let claude = Anthropic::builder().api_key("sk-ant-…").max_tokens(2048).build()?;
/// # let _ = claude; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Anthropic {
    endpoint: Arc<Endpoint>,
    /// The same endpoint, with the `anthropic-beta` header of tool search and examples.
    advanced: Arc<Endpoint>,
    model: String,
    max_tokens: u32,
    tool_choice: Option<ToolChoice>,
    parallel_tool_calls: Option<bool>,
    strict_tools: bool,
    body: Map<String, Value>,
}

impl Anthropic {
    /// A builder: an API key is required, the model defaults to [`DEFAULT_MODEL`].
    pub fn builder() -> AnthropicBuilder {
        AnthropicBuilder {
            common: Common::default(),
            max_tokens: DEFAULT_MAX_TOKENS,
            version: API_VERSION.to_owned(),
            tool_choice: None,
            parallel_tool_calls: None,
            strict_tools: false,
        }
    }

    /// The model's name, as requests send it.
    pub fn model_name(&self) -> &str {
        &self.model
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.shown()
    }
}

/// Builds an [`Anthropic`]; start with [`Anthropic::builder`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct AnthropicBuilder {
    common: Common,
    max_tokens: u32,
    version: String,
    tool_choice: Option<ToolChoice>,
    parallel_tool_calls: Option<bool>,
    strict_tools: bool,
}

impl AnthropicBuilder {
    common_setters!();

    /// Sets `max_tokens`, the most tokens one reply may hold (default
    /// [`DEFAULT_MAX_TOKENS`]).
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// Sets the `anthropic-version` header (default [`API_VERSION`]).
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// Sets `tool_choice` (not sent by default; sent only with tools).
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets whether one reply may hold several calls (sent as `tool_choice`'s
    /// `disable_parallel_tool_use`; by default, yes).
    pub fn parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = Some(parallel);
        self
    }

    /// Sends every tool as a strict tool (`"strict": true`, off by default): the API then
    /// holds the model's input to the tool's schema, rewritten into the strict dialect
    /// ([`strict`], V4). A tool whose schema the dialect cannot express (an open map,
    /// recursion, a value that may be anything) fails the agent's `build()`.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// Builds the driver.
    ///
    /// # Errors
    ///
    /// Returns a [`ConfigError`]: no API key, a base URL that is not `http(s)`, a key or
    /// header that cannot be sent.
    pub fn build(self) -> Result<Anthropic, ConfigError> {
        let Self {
            common,
            max_tokens,
            version,
            tool_choice,
            parallel_tool_calls,
            strict_tools,
        } = self;
        if common.api_key.is_none() {
            return Err(ConfigError::MissingApiKey {
                var: "ANTHROPIC_API_KEY",
            });
        }
        let base = common.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let advanced = Endpoint::new(
            base,
            "/v1/messages",
            common.api_key.clone(),
            Auth::Header("x-api-key"),
            &[
                ("anthropic-version", &version),
                ("anthropic-beta", ADVANCED_TOOL_USE_BETA),
            ],
            common.http.clone(),
        )?;
        let endpoint = Endpoint::new(
            base,
            "/v1/messages",
            common.api_key,
            Auth::Header("x-api-key"),
            &[("anthropic-version", &version)],
            common.http,
        )?;
        Ok(Anthropic {
            endpoint: Arc::new(endpoint),
            advanced: Arc::new(advanced),
            model: common.model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            max_tokens,
            tool_choice,
            parallel_tool_calls,
            strict_tools,
            body: common.body,
        })
    }
}

impl Model for Anthropic {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        let schema = tool.schema();
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(SchemaUnsupported::new(
                "Anthropic requires `input_schema` to be an object schema",
            )
            .at("/type"));
        }
        if self.strict_tools {
            let strict = strict::rewrite(schema)?;
            let wire =
                wire::render_strict(tool.name(), tool.description(), &strict, tool.examples());
            return Ok(ToolSpec::from_tool(tool)
                .with_strict(true)
                .with_wire(FORMAT, wire));
        }
        let wire = wire::render(tool.name(), tool.description(), schema, tool.examples());
        Ok(ToolSpec::from_tool(tool).with_wire(FORMAT, wire))
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let (body, advanced) = wire::body(self, &request);
        let endpoint = if advanced {
            &self.advanced
        } else {
            &self.endpoint
        };
        model_stream(
            endpoint.clone(),
            Ok::<_, ModelError>(body),
            AnthropicEvents::default(),
        )
    }

    /// The API's BM25 tool search over tools sent with `defer_loading` (Q1).
    fn native_tool_search(&self) -> bool {
        true
    }

    /// `anthropic` (K2).
    fn provider_name(&self) -> &str {
        "anthropic"
    }

    fn model_name(&self) -> &str {
        &self.model
    }

    fn server(&self) -> Option<(&str, u16)> {
        self.endpoint.server()
    }
}
