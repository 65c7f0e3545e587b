//! The provider-neutral [`Model`] trait: what a request holds, the deltas a reply streams,
//! and the errors a driver reports.
//!
//! A driver (OpenAI, Anthropic, … or [`crate::ScriptedModel`] and [`crate::OfflineModel`])
//! implements [`Model`]: it adapts each tool's neutral schema once, when the agent is built
//! ([`Model::tool_spec`]), and answers each request with a stream of [`ModelEvent`]s.

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_core::Stream;
use serde_json::Value;
use tool_core::{BoxError, Tool};

use crate::message::{Message, ToolCall};

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
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        (**self).tool_spec(tool)
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        (**self).stream(request)
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn tool_spec(&self, tool: &Tool) -> Result<ToolSpec, SchemaUnsupported> {
        (**self).tool_spec(tool)
    }

    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        (**self).stream(request)
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
}

impl<'a> ModelRequest<'a> {
    /// A request for `messages` with `tools` and no instructions.
    pub fn new(messages: &'a [Message], tools: &'a [ToolSpec]) -> Self {
        Self {
            instructions: None,
            messages,
            tools,
        }
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

/// A tool's schema that a model (in its driver's mode) cannot express (V1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}{}", at_path(.path))]
pub struct SchemaUnsupported {
    reason: String,
    path: Option<String>,
}

fn at_path(path: &Option<String>) -> String {
    path.as_ref()
        .map(|p| format!(" (at {p})"))
        .unwrap_or_default()
}

impl SchemaUnsupported {
    /// The schema cannot be expressed, for this reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            path: None,
        }
    }

    /// The same problem, located at a JSON pointer into the schema.
    #[must_use]
    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.path = Some(pointer.into());
        self
    }

    /// Why the schema cannot be expressed.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Where in the schema, as a JSON pointer, if known.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
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
    /// A call's arguments are complete. Optional: every call ends with the stream.
    ToolCallEnd {
        /// The call's index in this reply.
        index: usize,
    },
    /// Token usage so far; for each field the largest value reported is kept.
    Usage(Usage),
    /// Why the model stopped. Optional: the stream's end ends the reply.
    Finish(FinishReason),
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
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

/// Why a model could not answer. Match on it; [`crate::RunError::model_error`] gives it back
/// from a failed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A [`crate::ScriptedModel`] was asked for more turns than it was given.
    #[error(
        "the scripted model ran out of script: request {request} arrived, but only {scripted} turn(s) were scripted"
    )]
    ScriptExhausted {
        /// The number of the request, from 1.
        request: usize,
        /// How many turns were scripted.
        scripted: usize,
    },
    /// The provider refused the request (a status that is not retried).
    #[error("the provider answered {status}: {message}")]
    Provider {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider could not be reached, the connection broke, or the answer stream ended
    /// before it was complete. Shows its cause's own message (for the built-in drivers, a
    /// `providers::TransportError`), which says which.
    #[error(transparent)]
    Transport(BoxError),
    /// The provider's reply could not be read as a turn.
    #[error("the model's reply broke the protocol: {0}")]
    Protocol(String),
    /// Any other failure of the driver. Shows its cause's own message.
    #[error(transparent)]
    Other(BoxError),
    /// The provider answered with an error: an error status (after any retries), or an error
    /// event in a stream that had started. Carries the status, the provider's own message and
    /// the request id.
    #[error("{0}")]
    Api(ApiError),
    /// The provider did not answer in time: no connection, no response, or no new data in a
    /// stream within the configured timeout.
    #[error("the model provider did not answer within {after:?}")]
    Timeout {
        /// The timeout that ran out.
        after: Duration,
    },
}

/// An error the provider reported, with what it said about it. Never holds credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status, or `None` for an error reported inside a stream that had started with
    /// a success status.
    pub status: Option<u16>,
    /// The provider's own message.
    pub message: String,
    /// The provider's error type (`invalid_request_error`, `overloaded_error`, …), if given.
    pub error_type: Option<String>,
    /// The provider's error code (`insufficient_quota`, `rate_limit_exceeded`, …), if given.
    pub code: Option<String>,
    /// The request id the provider gave (`x-request-id` or `request-id`), for its support.
    pub request_id: Option<String>,
    /// How long the provider asked the client to wait before retrying, if it did.
    pub retry_after: Option<Duration>,
    /// How many HTTP requests were made for this answer, retries included (0 when unknown).
    pub attempts: u32,
}

impl ApiError {
    /// An error with this status (or `None`, in a stream) and message.
    pub fn new(status: Option<u16>, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            error_type: None,
            code: None,
            request_id: None,
            retry_after: None,
            attempts: 0,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "the provider answered {status}: {}", self.message)?,
            None => write!(
                f,
                "the provider reported an error mid-stream: {}",
                self.message
            )?,
        }
        let mut details = Vec::new();
        if let Some(t) = &self.error_type {
            details.push(format!("type {t}"));
        }
        if let Some(c) = self
            .code
            .as_ref()
            .filter(|c| Some(*c) != self.error_type.as_ref())
        {
            details.push(format!("code {c}"));
        }
        if let Some(id) = &self.request_id {
            details.push(format!("request id {id}"));
        }
        if self.attempts > 1 {
            details.push(format!("after {} attempts", self.attempts));
        }
        if !details.is_empty() {
            write!(f, " ({})", details.join(", "))?;
        }
        Ok(())
    }
}

/// The events of a complete reply: `text` in a few deltas, then each call (start, its
/// arguments in up to three fragments, end), then usage and the finish reason. Used by the
/// built-in models, so that the agent always reads real deltas.
pub(crate) fn reply_events(
    text: &str,
    calls: &[ToolCall],
    usage: Option<Usage>,
) -> Vec<ModelEvent> {
    let mut events: Vec<ModelEvent> = chunks(text, 16)
        .into_iter()
        .map(|piece| ModelEvent::TextDelta(piece.to_owned()))
        .collect();
    for (index, call) in calls.iter().enumerate() {
        events.push(ModelEvent::ToolCallStart {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        let size = call.arguments.len().div_ceil(3).max(1);
        for piece in chunks(&call.arguments, size) {
            events.push(ModelEvent::ToolCallArguments {
                index,
                fragment: piece.to_owned(),
            });
        }
        events.push(ModelEvent::ToolCallEnd { index });
    }
    if let Some(usage) = usage {
        events.push(ModelEvent::Usage(usage));
    }
    events.push(ModelEvent::Finish(if calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    }));
    events
}

/// Splits `text` into pieces of about `size` bytes, on character boundaries.
fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        out.push(piece);
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_characters_whole() {
        let text = "héllo wörld, ünïcode";
        let pieces = chunks(text, 3);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.len() > 3);
    }

    #[test]
    fn reply_events_stream_every_call() {
        let calls = [
            ToolCall::new("a", "t", r#"{"x":1}"#),
            ToolCall::new("b", "u", ""),
        ];
        let events = reply_events("hi", &calls, Some(Usage::new(3, 4)));
        assert_eq!(events.first(), Some(&ModelEvent::TextDelta("hi".into())));
        assert!(events.contains(&ModelEvent::ToolCallEnd { index: 1 }));
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Finish(FinishReason::ToolCalls))
        );
    }

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
