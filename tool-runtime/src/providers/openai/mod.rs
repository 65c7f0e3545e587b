//! OpenAI's APIs: [`OpenAiChat`] (Chat Completions, also for OpenAI-compatible servers) and
//! [`OpenAiResponses`] (Responses), with per-tool strict mode (V1).
//!
//! # Defaults
//!
//! | setting | default |
//! |---|---|
//! | base URL | [`DEFAULT_BASE_URL`] (`https://api.openai.com/v1`) |
//! | model | [`DEFAULT_MODEL`] (`gpt-5-mini`); none for a compatible server |
//! | strict mode | [`StrictMode::Auto`]; [`StrictMode::Off`] for a compatible server |
//! | `tool_choice`, `parallel_tool_calls` | not sent (the provider's default: `auto`, parallel calls on) |
//! | deferred tools (Q1) | the agent's local search tool; Responses' own `tool_search` with [`OpenAiBuilder::tool_search`] |
//!
//! A compatible server ([`OpenAiChat::compatible`], [`OpenAiResponses::compatible`]) needs
//! no API key, needs a model name, has strict mode off, and gets a named
//! [`ToolChoice::Tool`] as `"required"` with only that tool advertised.
//!
//! # Strict mode
//!
//! With strict mode the provider constrains the model's arguments to the tool's schema. It
//! takes a subset of JSON Schema, so each tool's neutral schema is rewritten once, at
//! `build()`: every object gets `additionalProperties: false` and lists every property in
//! `required`; a property the neutral schema does not require is made nullable, so the model
//! can leave it out by sending `null` (the parser reads `null` as absent and applies the
//! default); `oneOf` becomes `anyOf`; `default`, `examples`, `minLength`, `maxLength`,
//! `uniqueItems` and formats other than `date-time`, `time`, `date`, `duration`, `email`,
//! `hostname`, `ipv4`, `ipv6` and `uuid` are removed (the parser still enforces them, R5).
//!
//! A schema strict mode cannot express (an open map such as a `HashMap` field, a
//! `serde_json::Value` field, or one past the provider's limits) is sent without strict mode
//! under [`StrictMode::Auto`], with a `tracing` warning, and is a declaration error under
//! [`StrictMode::Require`].

/// What the two OpenAI drivers share once their body is written: `build` on their builder
/// (the API's path) and the [`Model`](crate::model::Model) impl over their [`Driver`] and
/// their stream's event mapper. The doc comment given says how the API takes a typed answer.
macro_rules! api_driver {
    ($(#[$answers:meta])* $api:ident at $path:literal, events $events:ident) => {
        impl OpenAiBuilder<$api> {
            /// Builds the driver.
            ///
            /// # Errors
            ///
            /// Returns a [`ConfigError`]: no API key (for OpenAI itself), no model (for a
            /// compatible server), a base URL that is not `http(s)`, a header that cannot be
            /// sent.
            pub fn build(self) -> Result<$api, ConfigError> {
                Ok($api {
                    driver: self.settle($path)?,
                })
            }
        }

        impl Model for $api {
            fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
                self.driver.tool_spec(tool, &WIRE)
            }

            fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
                model_stream(
                    self.driver.endpoint.clone(),
                    self.body(&request),
                    $events::default(),
                )
            }

            /// `openai`, for a compatible server too: the OpenTelemetry conventions name the
            /// provider by the API the client speaks when the server behind it is not known
            /// (K2).
            fn provider_name(&self) -> &str {
                "openai"
            }

            $(#[$answers])*
            fn native_answers(&self) -> bool {
                !self.driver.options.compatible
            }

            /// Responses' own tool search when asked for
            /// ([`OpenAiBuilder::tool_search`], Q1).
            fn native_tool_search(&self) -> bool {
                self.driver.options.tool_search
            }

            fn model_name(&self) -> &str {
                &self.driver.model
            }

            fn server(&self) -> Option<(&str, u16)> {
                self.driver.endpoint.server()
            }
        }
    };
}

pub(crate) mod chat;
pub(crate) mod responses;
mod strict;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tool_core::Tool;

pub use chat::OpenAiChat;
pub use responses::OpenAiResponses;
pub use strict::{MAX_ENUM_VALUES, MAX_NESTING, MAX_PROPERTIES, MAX_SCHEMA_STRING_LENGTH};

use super::http::{Auth, Endpoint};
use super::{Common, ConfigError, RequestError, common_setters};
use crate::model::{ModelError, SchemaUnsupported, ToolSpec};

/// The model used when none is given.
pub const DEFAULT_MODEL: &str = "gpt-5-mini";
/// The base URL used when none is given.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The most tools OpenAI takes in one request.
pub const MAX_TOOLS: usize = 128;

/// Whether a tool's schema is sent in strict mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StrictMode {
    /// Never: the neutral schema is sent as it is.
    Off,
    /// Where the schema allows it; otherwise the tool is sent without strict mode, and a
    /// `tracing` warning says why.
    #[default]
    Auto,
    /// Always: a schema strict mode cannot express fails the agent's `build()`.
    Require,
}

/// Which tools the model may call, sent as `tool_choice`: the run's own
/// ([`RunOptions::tool_choice`](crate::RunOptions::tool_choice), L3) when it has one, else the
/// driver's ([`OpenAiBuilder::tool_choice`]). OpenAI gets a named tool in its object form. A
/// compatible server ([`OpenAiChat::compatible`], [`OpenAiResponses::compatible`]) gets
/// `"required"` with only that tool advertised, since some (llama.cpp's) take `tool_choice`
/// only as a string and would silently ignore the object. A request that does not advertise
/// the named tool (misspelt, or unavailable to the run's context) fails before any I/O with
/// [`crate::providers::RequestError::UnknownToolChoice`]. `Required` leaves the model no way
/// to answer: a run forces it on its first request only, unless asked otherwise.
pub use crate::model::ToolChoice;

/// Builds an [`OpenAiChat`] or an [`OpenAiResponses`]; start with [`OpenAiChat::builder`],
/// [`OpenAiChat::compatible`], [`OpenAiResponses::builder`] or [`OpenAiResponses::compatible`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct OpenAiBuilder<A> {
    common: Common,
    options: Options,
    api: PhantomData<fn() -> A>,
}

/// The OpenAI-specific settings.
#[derive(Debug, Clone)]
struct Options {
    compatible: bool,
    strict: StrictMode,
    tool_strict: HashMap<String, StrictMode>,
    tool_choice: Option<ToolChoice>,
    parallel_tool_calls: Option<bool>,
    max_output_tokens: Option<u32>,
    include_usage: bool,
    store: Option<bool>,
    /// Whether deferred tools go to the provider's own tool search (Responses, Q1).
    tool_search: bool,
}

impl<A> OpenAiBuilder<A> {
    fn new(compatible: bool) -> Self {
        Self {
            common: Common::default(),
            options: Options {
                compatible,
                strict: if compatible {
                    StrictMode::Off
                } else {
                    StrictMode::Auto
                },
                tool_strict: HashMap::new(),
                tool_choice: None,
                parallel_tool_calls: None,
                max_output_tokens: None,
                include_usage: true,
                store: Some(false),
                tool_search: false,
            },
            api: PhantomData,
        }
    }

    common_setters!();

    /// Sets the strict mode of every tool (default [`StrictMode::Auto`], or
    /// [`StrictMode::Off`] for a compatible server).
    pub fn strict(mut self, mode: StrictMode) -> Self {
        self.options.strict = mode;
        self
    }

    /// Sets the strict mode of the tool named `tool`, overriding [`OpenAiBuilder::strict`].
    pub fn tool_strict(mut self, tool: impl Into<String>, mode: StrictMode) -> Self {
        self.options.tool_strict.insert(tool.into(), mode);
        self
    }

    /// Sets `tool_choice` for every request (not sent by default; sent only with tools). See
    /// [`ToolChoice::Tool`] for how a named tool goes to a compatible server.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.options.tool_choice = Some(choice);
        self
    }

    /// Sets `parallel_tool_calls`: whether one reply may hold several calls (not sent by
    /// default, which means yes; sent only with tools).
    pub fn parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.options.parallel_tool_calls = Some(parallel);
        self
    }

    /// Sets the most tokens one reply may hold (`max_completion_tokens`, `max_tokens` for a
    /// compatible server, `max_output_tokens` for Responses). Not sent by default.
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.options.max_output_tokens = Some(tokens);
        self
    }

    /// Checks the settings and makes the endpoint at `path`.
    fn settle(self, path: &str) -> Result<Driver, ConfigError> {
        let Self {
            common, options, ..
        } = self;
        if common.api_key.is_none() && !options.compatible {
            return Err(ConfigError::MissingApiKey {
                var: "OPENAI_API_KEY",
            });
        }
        let model = match (common.model, options.compatible) {
            (Some(model), _) => model,
            (None, false) => DEFAULT_MODEL.to_owned(),
            (None, true) => {
                return Err(ConfigError::MissingModel {
                    var: "OPENAI_MODEL",
                });
            }
        };
        let base_url = common.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let endpoint = Endpoint::new(
            base_url,
            path,
            common.api_key,
            Auth::Bearer,
            &[],
            common.http,
        )?;
        Ok(Driver {
            endpoint: Arc::new(endpoint),
            model,
            body: common.body,
            options,
        })
    }
}

/// How one OpenAI API takes tools.
#[derive(Debug)]
struct Wire {
    /// The tag of its wire format, under which a [`ToolSpec`] keeps the tool rendered for it.
    format: &'static str,
    /// A tool (name, description, parameters, strict) as the API takes it.
    render: fn(&str, &str, &Value, bool) -> String,
    /// `tool_choice` as the API takes it.
    choice: fn(&ToolChoice) -> Value,
}

/// What both OpenAI drivers hold once built.
#[derive(Debug)]
struct Driver {
    endpoint: Arc<Endpoint>,
    model: String,
    body: Map<String, Value>,
    options: Options,
}

impl Driver {
    /// The strict mode of the tool named `name`.
    fn strict_for(&self, name: &str) -> StrictMode {
        self.options
            .tool_strict
            .get(name)
            .copied()
            .unwrap_or(self.options.strict)
    }

    /// Adapts `tool` to the strict mode it gets, and renders it for `wire`, once (V1).
    fn tool_spec(&self, tool: &Tool, wire: &Wire) -> Result<ToolSpec, SchemaUnsupported> {
        let neutral = tool.schema();
        if neutral.get("type").and_then(Value::as_str) != Some("object") {
            return Err(SchemaUnsupported::new(
                "OpenAI requires the schema's root to be an object",
            )
            .at("/type"));
        }
        // `None`: the neutral schema, unchanged (shared with the tool, not copied).
        let adapted = match self.strict_for(tool.name()) {
            StrictMode::Off => None,
            StrictMode::Auto => match strict::adapt(neutral) {
                Ok(schema) => Some(schema),
                Err(why) => {
                    tracing::warn!(
                        tool = tool.name(),
                        reason = %why,
                        "OpenAI strict mode cannot express this tool's schema; it is sent without strict mode"
                    );
                    None
                }
            },
            StrictMode::Require => Some(strict::adapt(neutral)?),
        };
        let strict = adapted.is_some();
        let parameters = adapted.as_ref().unwrap_or(neutral);
        // Q3: no field for examples: they go in the description (V4).
        let description = super::described(tool);
        let rendered = (wire.render)(tool.name(), &description, parameters, strict);
        let spec = match adapted {
            Some(schema) => ToolSpec::new(tool.name(), tool.description(), schema),
            None => ToolSpec::from_tool(tool),
        };
        Ok(spec.with_strict(strict).with_wire(wire.format, rendered))
    }

    /// The rendered tools of a request: each spec's own rendering for `wire`, or one made
    /// now for a spec that another source made. With a named tool choice on a compatible
    /// server, only the named tool (see [`Driver::choice`]).
    fn tools(
        &self,
        specs: &[ToolSpec],
        wire: &Wire,
        choice: Option<&ToolChoice>,
    ) -> Result<Vec<String>, ModelError> {
        if !self.options.compatible && specs.len() > MAX_TOOLS {
            return Err(ModelError::Other(Box::new(RequestError::TooManyTools {
                count: specs.len(),
                limit: MAX_TOOLS,
            })));
        }
        let only = match choice {
            Some(ToolChoice::Tool(name)) => {
                if !specs.iter().any(|spec| spec.name() == name) {
                    return Err(ModelError::Other(Box::new(
                        RequestError::UnknownToolChoice { name: name.clone() },
                    )));
                }
                self.options.compatible.then_some(name.as_str())
            }
            _ => None,
        };
        let mut tools: Vec<String> = specs
            .iter()
            .filter(|spec| only.is_none_or(|name| spec.name() == name))
            .map(|spec| {
                let rendered = match spec.wire(wire.format) {
                    Some(rendered) => rendered.to_owned(),
                    None => (wire.render)(
                        spec.name(),
                        spec.description(),
                        spec.parameters(),
                        spec.is_strict(),
                    ),
                };
                if spec.defers_loading() {
                    deferred(&rendered)
                } else {
                    rendered
                }
            })
            .collect();
        // Q1: deferred functions go beside the tool search that loads them.
        if specs.iter().any(ToolSpec::defers_loading) {
            tools.push(TOOL_SEARCH.to_owned());
        }
        Ok(tools)
    }

    /// The body of a request with the tools of `specs`: the API's own `fields` (the
    /// conversation, say), `model` and `stream`; with tools, `tool_choice` and
    /// `parallel_tool_calls` when set; then the extra fields, which win; then the tools
    /// rendered for `wire`.
    ///
    /// # Errors
    ///
    /// Returns [`RequestError::TooManyTools`] past [`MAX_TOOLS`] (not for a compatible
    /// server), and [`RequestError::UnknownToolChoice`] for a named tool choice that `specs`
    /// do not hold.
    fn request_body(
        &self,
        request: &crate::model::ModelRequest<'_>,
        wire: &Wire,
        mut fields: Map<String, Value>,
    ) -> Result<String, ModelError> {
        let specs = request.tools;
        // L3: the run's choice for this request wins over the driver's.
        let choice = request.tool_choice.or(self.options.tool_choice.as_ref());
        let tools = self.tools(specs, wire, choice)?;
        fields.insert("model".into(), self.model.clone().into());
        fields.insert("stream".into(), true.into());
        if !tools.is_empty() {
            if let Some(choice) = choice.and_then(|choice| self.choice(wire, choice)) {
                fields.insert("tool_choice".into(), choice);
            }
            if let Some(parallel) = self.options.parallel_tool_calls {
                fields.insert("parallel_tool_calls".into(), parallel.into());
            }
        }
        for (key, value) in &self.body {
            fields.insert(key.clone(), value.clone());
        }
        let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
        Ok(super::with_tools(&fields, &tools))
    }

    /// `tool_choice` as the server takes it. A compatible server gets a named tool as
    /// `"required"` (with only that tool advertised, [`Driver::tools`]): llama.cpp's server
    /// takes `tool_choice` only as a string and reads OpenAI's object form as `auto`,
    /// silently; `"required"` over one tool forces the same call on every server that
    /// honours `required`.
    fn choice(&self, wire: &Wire, choice: &ToolChoice) -> Option<Value> {
        match choice {
            ToolChoice::Tool(_) if self.options.compatible => Some("required".into()),
            choice => Some((wire.choice)(choice)),
        }
    }
}

/// The schema of a typed answer (O2) as strict mode takes it, and whether it is strict: the
/// neutral schema, not strict, when strict mode cannot express it (the parser still checks
/// the answer, S2).
fn answer_schema(answer: &crate::model::AnswerFormat) -> (Value, bool) {
    match strict::adapt(answer.schema()) {
        Ok(schema) => (schema, true),
        Err(_) => (answer.schema().clone(), false),
    }
}

/// `tool_choice` for Chat Completions.
fn chat_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::None => "none".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// `tool_choice` for Responses.
fn responses_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
        other => chat_choice(other),
    }
}

/// Responses' own tool search, executed by the provider (Q1).
const TOOL_SEARCH: &str = r#"{"type":"tool_search"}"#;

/// The function `rendered` (a JSON object) marked `"defer_loading": true`: sent for the
/// provider's tool search to load (Q1).
fn deferred(rendered: &str) -> String {
    match rendered.strip_suffix('}') {
        Some(open) => format!("{open},\"defer_loading\":true}}"),
        None => rendered.to_owned(),
    }
}

/// The number in `value[key]`, if it is one.
fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}
