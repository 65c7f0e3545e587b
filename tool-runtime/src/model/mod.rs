//! The model interface: the provider-neutral [`Model`] trait a driver implements, what a
//! request holds ([`ModelRequest`], [`ToolSpec`]) and the deltas a reply streams
//! ([`ModelEvent`], [`FinishReason`], [`Usage`]).
//!
//! The conversation is [`Message`]s ([`ToolCall`], [`ToolResult`]) and a run's [`Input`];
//! a driver reports what went wrong as a [`ModelError`] ([`ApiError`], [`SchemaUnsupported`]),
//! and what cannot be a conversation is a [`ProtocolError`].
//!
//! A driver (OpenAI, Anthropic, … or [`crate::ScriptedModel`] and [`crate::OfflineModel`])
//! implements [`Model`]: it adapts each tool's neutral schema once, when the agent is built
//! ([`Model::tool_spec`]), and answers each request with a stream of [`ModelEvent`]s.

mod error;
mod message;

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign};
use std::pin::Pin;
use std::sync::Arc;

use futures_core::Stream;
use serde_json::Value;
use tool_core::Tool;

pub(crate) use error::preview;
pub use error::{ApiError, ModelError, ProtocolError, SchemaUnsupported};
pub use message::{Input, Message, ToolCall, ToolResult};
pub(crate) use message::{check_transcript, first_duplicate};

/// A language model, behind a provider driver.
///
/// # For driver authors
///
/// - [`Model::tool_spec`] runs once per tool when the agent is built: rewrite the neutral
///   schema into what the provider accepts (strict mode, say), or return
///   [`SchemaUnsupported`]; the agent fails to build with every such problem listed (V1).
///   The specs are cached by the agent; a request borrows them, so advertising tools costs
///   no schema work per turn.
/// - [`Model::stream`] answers one request. Report text as [`ModelEvent::TextDelta`]s and
///   each tool call as a [`ModelEvent::ToolCallStart`], any number of
///   [`ModelEvent::ToolCallArguments`] fragments and, optionally, a
///   [`ModelEvent::ToolCallEnd`], all keyed by the call's index in the reply. Report usage and
///   the finish reason when the provider does. A failure (connection, status, a wire format
///   that cannot be read) is an `Err` item; the agent stops reading after it.
/// - Arguments are passed on as the raw text the provider sent: the agent validates them
///   (R5), so a driver must not repair or drop them.
///
/// The agent drops the stream to cancel the request (P4): a stream must stop its I/O when
/// dropped.
///
/// - [`Model::provider_name`] and [`Model::model_name`] name the provider and the model for
///   telemetry (K2): each request's `chat {model}` span carries them as
///   `gen_ai.provider.name` and `gen_ai.request.model`. Return the OpenTelemetry name of the
///   provider where it has one (`openai`, `anthropic`, `aws.bedrock`, …).
pub trait Model: Send + Sync + 'static {
    /// Adapts one tool for this model, once, when the agent is built.
    ///
    /// The default advertises the neutral schema unchanged ([`ToolSpec::from_tool`]).
    ///
    /// # Errors
    ///
    /// Returns [`SchemaUnsupported`] when the provider (in the driver's mode) cannot express
    /// the tool's schema; `build()` then fails with kind `Declaration`.
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        Ok(ToolSpec::from_tool(tool))
    }

    /// Sends one request and streams the reply.
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a>;

    /// Whether this model sends [`ModelRequest::answer`] as its provider's native structured
    /// output, so that its final text is the answer's JSON (O2). The default is `false`: a
    /// run asking for a typed answer then offers a final-answer tool instead.
    fn native_answers(&self) -> bool {
        false
    }

    /// Whether this model's provider runs its own tool search over tools sent with
    /// [`ToolSpec::with_defer_loading`] (Q1), reporting what it loads with
    /// [`ModelEvent::ToolsLoaded`]. The default is `false`: a run with deferred tools then
    /// offers a local search tool instead.
    fn native_tool_search(&self) -> bool {
        false
    }

    /// The provider that serves the model, as telemetry names it (`gen_ai.provider.name`,
    /// K2): `openai`, `anthropic`, … The default is [`UNKNOWN_PROVIDER`].
    fn provider_name(&self) -> &str {
        UNKNOWN_PROVIDER
    }

    /// The name of the model that requests ask for (`gen_ai.request.model`, K2), or `""`
    /// when the driver does not know it (the default): the request's span is then named
    /// `chat`, without a model.
    fn model_name(&self) -> &str {
        ""
    }

    /// The host and port of the server requests go to (`server.address` and `server.port` of
    /// a request's span, K4), or `None` for a model that runs in the process (the default).
    fn server(&self) -> Option<(&str, u16)> {
        None
    }
}

/// The provider name of a [`Model`] that does not name its own
/// ([`Model::provider_name`]'s default).
pub const UNKNOWN_PROVIDER: &str = "unknown";

impl<M: Model + ?Sized> Model for Arc<M> {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        (**self).tool_spec(tool)
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        (**self).stream(request)
    }

    fn provider_name(&self) -> &str {
        (**self).provider_name()
    }

    fn native_answers(&self) -> bool {
        (**self).native_answers()
    }

    fn native_tool_search(&self) -> bool {
        (**self).native_tool_search()
    }

    fn model_name(&self) -> &str {
        (**self).model_name()
    }

    fn server(&self) -> Option<(&str, u16)> {
        (**self).server()
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        (**self).tool_spec(tool)
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        (**self).stream(request)
    }

    fn provider_name(&self) -> &str {
        (**self).provider_name()
    }

    fn native_answers(&self) -> bool {
        (**self).native_answers()
    }

    fn native_tool_search(&self) -> bool {
        (**self).native_tool_search()
    }

    fn model_name(&self) -> &str {
        (**self).model_name()
    }

    fn server(&self) -> Option<(&str, u16)> {
        (**self).server()
    }
}

/// The reply to one request, as a stream of deltas.
pub type ModelStream<'a> = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send + 'a>>;

/// One request to the model: the instructions, the conversation so far and the tools
/// advertised for this run (the same list on every turn of a run, A8).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ModelRequest<'a> {
    /// The agent's instructions, sent as the provider's system prompt.
    pub instructions: Option<&'a str>,
    /// The conversation, oldest first.
    pub messages: &'a [Message],
    /// The tools the model may call, as adapted by [`Model::tool_spec`].
    pub tools: &'a [ToolSpec],
    /// Which tools the model may or must call in this request (L3); `None` leaves it to the
    /// driver's own setting, else the provider's default (`auto`). A driver maps it to its
    /// provider's wire form.
    pub tool_choice: Option<&'a ToolChoice>,
    /// The form the final answer must take (O2), for a model that takes it natively
    /// ([`Model::native_answers`]); `None` for free text.
    pub answer: Option<&'a AnswerFormat>,
}

/// The form a run's final answer must take (O2): a JSON object that fits `schema` (the
/// answer type's schema), sent as the provider's native structured output
/// ([`Model::native_answers`]), else asked for through a final-answer tool of this name.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerFormat {
    name: String,
    schema: Arc<Value>,
}

impl AnswerFormat {
    /// An answer named `name` (a tool name: `final_answer`) that fits `schema`, an object
    /// schema.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        Self {
            name: name.into(),
            schema: Arc::new(schema),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }
}

/// Which tools the model may or must call (L3), as a run asks for it; each driver sends it in
/// its provider's form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model may not call tools.
    None,
    /// The model must call this tool.
    Tool(String),
}

impl<'a> ModelRequest<'a> {
    /// A request for `messages` with `tools` and no instructions.
    pub fn new(messages: &'a [Message], tools: &'a [ToolSpec]) -> Self {
        Self {
            instructions: None,
            messages,
            tools,
            tool_choice: None,
            answer: None,
        }
    }

    /// The same request asking for a final answer in `answer`'s form (O2), natively.
    #[must_use]
    pub fn with_answer(mut self, answer: Option<&'a AnswerFormat>) -> Self {
        self.answer = answer;
        self
    }

    /// The same request with `tool_choice` (L3).
    #[must_use]
    pub fn with_tool_choice(mut self, tool_choice: Option<&'a ToolChoice>) -> Self {
        self.tool_choice = tool_choice;
        self
    }

    /// The same request with `instructions`.
    #[must_use]
    pub fn with_instructions(mut self, instructions: Option<&'a str>) -> Self {
        self.instructions = instructions;
        self
    }
}

/// A tool as advertised to one model: name, description and input schema. Cheap to clone.
///
/// A driver may also mark the spec as enforced by the provider's strict mode
/// ([`ToolSpec::with_strict`]) and keep the tool exactly as its requests carry it, rendered
/// once at `build()` ([`ToolSpec::with_wire`]), so that no request re-renders a schema.
#[derive(Clone, PartialEq)]
pub struct ToolSpec {
    name: Arc<str>,
    description: Arc<str>,
    parameters: Arc<Value>,
    parameters_json: Arc<str>,
    strict: bool,
    wire: Option<(&'static str, Arc<str>)>,
    /// Sent for the provider's own tool search to load (Q1): advertised as deferred.
    defer_loading: bool,
}

impl ToolSpec {
    /// A spec with this name, description and JSON Schema for the arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        let parameters_json = parameters.to_string();
        Self {
            name: Arc::from(name.into()),
            description: Arc::from(description.into()),
            parameters: Arc::new(parameters),
            parameters_json: Arc::from(parameters_json),
            strict: false,
            wire: None,
            defer_loading: false,
        }
    }

    /// The tool's neutral spec: its name, description and schema, unchanged (the schema is
    /// shared with the tool, not copied).
    pub fn from_tool(tool: &Tool) -> Self {
        Self {
            name: Arc::from(tool.name()),
            description: Arc::from(tool.description()),
            parameters: tool.schema_shared(),
            parameters_json: tool.schema_json_shared(),
            strict: false,
            wire: None,
            defer_loading: false,
        }
    }

    /// The same spec, marked as enforced (or not) by the provider's strict mode: the provider
    /// then constrains the model's arguments to [`ToolSpec::parameters`]. The agent still
    /// validates every call (R5).
    #[must_use]
    pub fn with_strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The same spec, sent (or not) for the provider's own tool search to load (Q1): a driver
    /// with a native tool search marks it deferred (Anthropic's `defer_loading`).
    #[must_use]
    pub fn with_defer_loading(mut self, defer: bool) -> Self {
        self.defer_loading = defer;
        self
    }

    /// Whether the spec is sent for the provider's own tool search to load (Q1).
    pub fn defers_loading(&self) -> bool {
        self.defer_loading
    }

    /// Whether the provider enforces the schema (strict mode).
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    /// The same spec, with the tool rendered as one driver's requests carry it (`json`, a
    /// JSON value), tagged with the name of that wire `format` (such as `"openai.chat"`).
    #[must_use]
    pub fn with_wire(mut self, format: &'static str, json: impl Into<String>) -> Self {
        self.wire = Some((format, Arc::from(json.into())));
        self
    }

    /// The tool as rendered for the wire `format`, if a driver of that format rendered it.
    pub fn wire(&self, format: &str) -> Option<&str> {
        match &self.wire {
            Some((tag, json)) if *tag == format => Some(json),
            _ => None,
        }
    }

    /// The tool as its driver rendered it for its wire format, whichever format that is.
    #[cfg(all(feature = "openai", feature = "anthropic", feature = "mcp"))]
    pub(crate) fn rendered(&self) -> Option<&str> {
        self.wire.as_ref().map(|(_, json)| &**json)
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description the model reads.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The JSON Schema of the arguments.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// The JSON Schema of the arguments, as JSON text rendered once.
    pub fn parameters_json(&self) -> &str {
        &self.parameters_json
    }
}

impl fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("parameters", &self.parameters_json)
            .field("strict", &self.strict)
            .finish()
    }
}

/// One delta of a streamed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// A piece of the answer's text.
    TextDelta(String),
    /// The model starts a tool call. `index` keys the call's later events; calls are in the
    /// order of their starts.
    ToolCallStart {
        /// The call's index in this reply.
        index: usize,
        /// The call id the provider gave (an empty id is replaced by the agent).
        id: String,
        /// The tool's name, as the model wrote it.
        name: String,
    },
    /// A piece of a call's raw arguments.
    ToolCallArguments {
        /// The call's index in this reply.
        index: usize,
        /// The next piece of the argument text.
        fragment: String,
    },
    /// What the provider signed a call with and wants back with it (Gemini's thought
    /// signature, Bedrock's reasoning blocks): kept on the call ([`ToolCall::signature`]) and sent back with it.
    ToolCallSignature {
        /// The call's index in this reply.
        index: usize,
        /// The signature, opaque.
        signature: String,
    },
    /// A call's arguments are complete. Optional: every call ends with the stream.
    ToolCallEnd {
        /// The call's index in this reply.
        index: usize,
    },
    /// Token usage so far; for each field the largest value reported is kept.
    Usage(Usage),
    /// Why the model stopped. Optional: the stream's end ends the reply.
    Finish(FinishReason),
    /// The provider's own tool search returned these tools (Q1): the run loads those it
    /// offers, and they are advertised from then on.
    ToolsLoaded {
        /// The names the search returned, as the provider wrote them.
        names: Vec<String>,
    },
    /// What the provider said of its answer (`gen_ai.response.id` and `gen_ai.response.model`
    /// of the request's span, K4): the response's id and the model that answered, each empty
    /// when unknown. Optional; a later report replaces the fields it fills.
    Response {
        /// The provider's id of the response.
        id: String,
        /// The model that answered, as the provider names it.
        model: String,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// A final answer.
    Stop,
    /// The model wants tool calls run.
    ToolCalls,
    /// The output token limit was reached.
    Length,
    /// The provider filtered the output.
    ContentFilter,
    /// Another reason, as the provider named it.
    Other(String),
}

/// Tokens used by one request.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Usage {
    /// Tokens read: instructions, conversation and tool specs.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl Usage {
    /// Usage of `input_tokens` read and `output_tokens` written.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
        }
    }

    /// Both counts together.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Keeps, for each field, the larger of the two (drivers report running totals).
    pub(crate) fn merge(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.max(other.input_tokens);
        self.output_tokens = self.output_tokens.max(other.output_tokens);
    }
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, rhs: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(rhs.input_tokens),
            output_tokens: self.output_tokens.saturating_add(rhs.output_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = *self + rhs;
    }
}

impl Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), Add::add)
    }
}

#[cfg(test)]
mod tests {
    use tool_core::BoxError;

    use super::*;

    #[test]
    fn a_neutral_spec_shares_the_tools_schema() {
        let tool = Tool::builder("echo", "Echo the arguments.")
            .dynamic_handler(
                serde_json::json!({"type": "object"}),
                |_: &Value, _: &mut tool_core::violation::ParseCx| {},
                |_, args: Value| async move { Ok::<_, BoxError>(args) },
            )
            .build();
        let spec = ToolSpec::from_tool(&tool);
        assert!(std::ptr::eq(spec.parameters(), tool.schema()));
        assert!(std::ptr::eq(spec.parameters_json(), tool.schema_json()));
        assert_eq!(spec.parameters_json(), r#"{"type":"object"}"#);
    }

    #[test]
    fn usage_adds_and_merges() {
        let mut u = Usage::new(10, 1);
        u.merge(Usage::new(5, 7));
        assert_eq!(u, Usage::new(10, 7));
        let total: Usage = [Usage::new(1, 2), Usage::new(3, 4)].into_iter().sum();
        assert_eq!(total.total(), 10);
    }
}
