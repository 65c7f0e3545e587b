//! Typed LLM tools from attribute macros.
//!
//! Put `#[tool]` on an async fn and `#[derive(Schema)]` on its input, and you get a JSON
//! Schema rendered for the model provider, arguments validated before the handler runs, a tool
//! name checked at compile time, a link-time registry entry, and an agent run loop that
//! re-checks permissions on every call, keeps internal errors away from the model, and stops
//! cleanly on a fatal failure.
//!
//! This is the one crate an application depends on: it re-exports the core types and both
//! macros.
//!
//! # Running agents
//!
//! An [`Agent`] holds a [`Model`], instructions and tools; [`Agent::run`] drives a
//! conversation to its final answer and [`Agent::run_stream`] yields the same run as
//! [`RunEvent`]s. [`OfflineModel`] runs an agent with no provider (it calls your tools with
//! arguments generated from their schemas), and [`ScriptedModel`] replays replies written in
//! advance and records every request, for tests.
//!
//! # Real providers
//!
//! [`providers`] holds the drivers for OpenAI (Chat Completions and Responses), Anthropic
//! (Messages) and OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio), behind the
//! default features `openai` and `anthropic`; [`providers::from_env`] picks one from
//! `OPENAI_API_KEY`, `OPENAI_BASE_URL` or `ANTHROPIC_API_KEY`.
//!
//! # Hooks
//!
//! A [`Hook`] runs around each call that reaches the handler (K1), registered with
//! [`AgentBuilder::hook`] and, over MCP, `McpServerBuilder::hook`: before the handler (after
//! the availability re-check, validation and approval) it may deny the call or end the run;
//! after it, it may replace the model's text, never revealing the redacted error. See
//! [`hook`]. A call refused before the handler never reaches a hook:
//! [`AgentBuilder::on_outcome`] and `McpServerBuilder::on_outcome` see every call's outcome.
//!
//! # Telemetry
//!
//! Runs, model requests and calls are `tracing` spans named and filled as the OpenTelemetry
//! GenAI semantic conventions say (K2): `invoke_agent {agent}`, `chat {model}` and
//! `execute_tool {tool}`, with `gen_ai.*` attributes, their kinds in `otel.kind` and failures
//! in `error.type`, ready for the `tracing-opentelemetry` layer (see `examples/telemetry.rs`).
//! [`AgentBuilder::name`] names the run's span; [`AgentBuilder::record_tool_content`] opts in
//! to arguments and results. A request's span names the provider's response
//! (`gen_ai.response.model`, `gen_ai.response.id`) and a remote provider's server
//! ([`Model::server`]); the library's own attributes are under `tool_runtime.*` (K4).
//!
//! With the `opentelemetry` feature the library also uses the OpenTelemetry API (never an SDK
//! or an exporter) for what a `tracing` field cannot carry: finish reasons as a string array,
//! a resumed run's link to the run that paused (K4), the W3C trace context that
//! `McpToolset` sends in each call's `_meta` and `McpServer` continues (K6), and
//! the conventions' histograms of model requests and MCP calls, recorded with the global meter
//! provider (K5). They take effect when the application installs the `tracing-opentelemetry`
//! layer and a meter provider.
//!
//! A handler reports progress with [`Context::progress`] (K3): [`Agent::run_stream`] yields it
//! as [`RunEvent::Progress`].
//!
//! # The Model Context Protocol
//!
//! With the feature `mcp` (off by default), the module `mcp` serves tools to MCP clients over
//! stdio or streamable HTTP (`McpServer`), each call through the same pipeline as the agent
//! loop, and turns the tools of MCP servers into tools an agent holds beside its own
//! (`McpToolset`).
//!
//! # The tool surface
//!
//! With `mcp` beside the default features, the module `surface` renders what the models and
//! MCP clients are told about a set of tools as one deterministic document (C2), lists the
//! changes between two such documents as breaking or compatible, and holds one against a
//! committed file in a test (`surface::assert_snapshot`, rewritten with `UPDATE_SURFACE=1`).

// On docs.rs (nightly, `--cfg docsrs`) each item behind a feature is marked with the feature it
// needs; a stable build never sees the attribute.
#![cfg_attr(docsrs, feature(doc_cfg))]

/// A tool input deriving `schemars::JsonSchema` and `serde::Deserialize`, as rmcp takes it
/// (C3, feature `schemars`); `docs/from-rmcp.md` moves an rmcp server over.
#[cfg(feature = "schemars")]
pub use tool_core::schema::Parameters;
/// The schemars crate (feature `schemars`): `use tool_runtime::schemars;` lets
/// `#[derive(schemars::JsonSchema)]` build without a dependency of its own.
#[cfg(feature = "schemars")]
pub use tool_core::schemars;
pub use tool_core::{AWAITING_APPROVAL, Approval, ApprovalPredicate, DEFERRED, NOT_APPROVED};
pub use tool_core::{Annotations, ArgumentValidator, Image, OutputSchema, Resource, WithImages};
pub use tool_core::{
    BoxError, CallInfo, CancellationToken, Context, DeclarationError, Error, ErrorKind, Hook,
    IntoTool, Invalid, Limits, MissingExtension, NameError, Outcome, OutcomeKind, Permanent,
    Policy, Progress, Relayed, RelayedKind, Rule, Schema, Site, Tool, ToolBuilder, ToolError,
    ToolName, Violation, registered, registry,
};
pub use tool_core::{
    CANCELLED, DEFAULT_MAX_ARGUMENT_BYTES, FAILED, RECORDED_ERROR, TIMED_OUT, UNAVAILABLE,
};
pub use tool_core::{CallId, CallName};
pub use tool_core::{ElicitAnswer, ElicitError, Elicited, Elicitor};
pub use tool_core::{
    approval, context, error, hook, json, name, policy, progress, schema, violation,
};
pub use tool_runtime_macros::Schema;
/// A compiled example of the attribute (the reference below lists every key):
///
/// ```
/// use tool_runtime::{tool, BoxError, Context, IntoTool, OutcomeKind, Schema};
///
/// /// Who is asking: put in the context by the application.
/// struct Operator {
///     name: String,
/// }
///
/// /// A pool, cloned for each call.
/// #[derive(Clone)]
/// struct Pool;
///
/// /// Input of a restart.
/// #[derive(Schema)]
/// struct RestartInput {
///     /// The service to restart.
///     service_id: String,
/// }
///
/// /// Restart a service now.
/// #[tool(name = "restart-service", destructive, retries = 1, available = open_hours)]
/// async fn restart(op: &Operator, #[context] _pool: Pool, input: RestartInput) -> String {
///     format!("{} restarts {}", op.name, input.service_id)
/// }
///
/// fn open_hours(_ctx: &Context) -> Result<bool, BoxError> {
///     Ok(true)
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let tool = RestartService.into_tool();
/// // The context values are not in the schema...
/// assert!(!tool.schema_json().contains(r#""op""#));
/// // ...and a context without them makes the tool unavailable.
/// let refused = tool.invoke(&Context::new(), br#"{"service_id": "svc-42"}"#).await;
/// assert_eq!(refused.kind(), OutcomeKind::Unavailable);
/// let ctx = Context::new().with(Operator { name: "ada".into() }).with(Pool);
/// let done = tool.invoke(&ctx, br#"{"service_id": "svc-42"}"#).await;
/// assert_eq!(done.text(), "ada restarts svc-42");
/// # });
/// ```
pub use tool_runtime_macros::tool;

// The agent: its handle and builder, the run loop, a turn's calls, the run's events, output
// and errors.
mod agent;
mod call;
// MCP: `server/` serves tools, `client/` uses the tools of MCP servers.
#[cfg(feature = "mcp")]
pub mod mcp;
// The model interface every driver implements, the conversation, the model's errors.
mod model;
// What the spans of the agent and of MCP share (K2, K4–K6): fields named as OpenTelemetry
// names them, trace context, metrics.
mod telemetry;
// The provider drivers: OpenAI, Anthropic, OpenAI-compatible servers, over HTTP and SSE.
#[cfg(any(feature = "openai", feature = "anthropic"))]
pub mod providers;
// The test models, which need no provider (scripted, offline), and argument generation.
mod testing;
// The tool surface as one document, its diff and its snapshot test (C2): it holds what each
// provider driver and MCP publish, so it needs all three.
#[cfg(all(feature = "openai", feature = "anthropic", feature = "mcp"))]
pub mod surface;

pub use agent::{
    Agent, AgentBuilder, Answer, BoxFuture, BuildError, BuildProblem, CallRecord,
    DEFAULT_MAX_CONCURRENCY, DEFAULT_MAX_TURNS, DEFAULT_RETRIES, Decision, Decisions, MemoryLedger,
    PauseLedger, PausedRun, PendingCall, PendingKind, ResumeError, ResumeOptions, RunError,
    RunEvent, RunOptions, RunOutput, RunRequest, RunStream, Typed, UsageLimits,
};
/// Durable runs (W1): the journal a run records its steps in
/// ([`RunRequest::journal`]), and a journal in memory.
pub mod journal {
    pub use crate::agent::{
        CallBatch, CallResults, CallStep, Journal, JournalError, MemoryJournal, Retry, Step,
        StepKind,
    };
}
pub use model::{
    AnswerFormat, ApiError, FinishReason, Input, Message, Model, ModelError, ModelEvent,
    ModelRequest, ModelStream, ProtocolError, SchemaUnsupported, ToolCall, ToolChoice, ToolResult,
    ToolSpec, UNKNOWN_PROVIDER, Usage,
};
pub use testing::generate;
pub use testing::{
    Arguments, ConversationModel, ConversationTurn, OfflineModel, RecordedRequest, ScriptedModel,
    ScriptedTurn,
};
pub use tool_core::Panicked;

/// The README's example, compiled and run as a doc test.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Support for the code the macros generate. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use tool_core::__private::*;
}
