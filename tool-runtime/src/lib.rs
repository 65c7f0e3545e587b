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
//! # Where things are
//!
//! At the root, the names of a first program: [`tool`] and [`Schema`] to declare, [`Tool`],
//! [`Context`], [`ToolError`] and [`Permanent`] for handlers, [`registry`] for the tools
//! declared with the attribute, [`Agent`] and [`RunRequest`] to
//! run, [`Model`] with [`OfflineModel`] and [`ScriptedModel`]. Everything else lives in the
//! module named for what it holds:
//!
//! | module | holds |
//! |---|---|
//! | [`agent`] | the agent, its builder, runs and their options, events, outputs, pauses and decisions |
//! | [`model`] | the [`Model`] trait drivers implement, the conversation, the model's errors |
//! | [`providers`] | OpenAI, Anthropic and OpenAI-compatible drivers (features `openai`, `anthropic`) |
//! | [`testing`] | models for tests and offline runs, arguments generated from a schema |
//! | [`tools`] | tools built at run time, annotations and output schemas, the link-time registry |
//! | [`outcome`] | how a call ends, the texts a model reads, images and resources |
//! | [`context`], [`approval`], [`elicit`], [`hook`], [`policy`], [`progress`] | what a handler, a policy, an approval predicate or a hook is given and returns |
//! | [`schema`], [`json`], [`violation`], [`name`] | schemas, arguments, violations and tool names |
//! | [`error`] | the error kinds, [`ToolError`], [`Permanent`] |
//! | [`journal`] | the journal of a durable run |
//! | `mcp` | MCP servers and clients (feature `mcp`) |
//! | `surface` | the tool surface as one document, its diff and snapshot test |
//! | [`guide`] | the guide, chapter by chapter, its code compiled and run as doc tests |
//! | [`contract`] | every rule the code, tests and docs cite by id |
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

/// The behaviour contract: every rule the code, the tests and the docs cite by id.
pub use tool_core::contract;
// The crate root is a table of contents: the names of the first hour here, everything else in
// the module that holds it. Names that earlier releases had at the root stay there, hidden
// (see the end of this file).

pub use tool_core::{
    BoxError, CallId, CallName, Context, Error, ErrorKind, Hook, IntoTool, Outcome, OutcomeKind,
    Permanent, Schema, Tool, ToolError, registry,
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

// An agent: a model with instructions and tools ([`Agent`], [`AgentBuilder`]), its runs, the
// runs it pauses for approval or deferred results.
pub mod agent;

// One way into a call (U1): the function every call of every transport goes through.
mod call;

// MCP: `McpServer` serves tools over stdio and streamable HTTP; `McpToolset` uses the tools
// of MCP servers beside an agent's own.
#[cfg(feature = "mcp")]
pub mod mcp;

// The guide: chapters of text whose code blocks are doc tests.
pub mod guide;

// The model interface every driver implements, the conversation and the model's errors.
pub mod model;

// The provider drivers: OpenAI, Anthropic, Gemini, Bedrock, OpenAI-compatible servers, over HTTP
// and SSE.
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
pub mod providers;

// The tool surface as one document, its diff and its snapshot test (C2): it holds what each
// provider driver and MCP publish, so it needs all three.
#[cfg(all(feature = "openai", feature = "anthropic", feature = "mcp"))]
pub mod surface;

// What the spans of the agent and of MCP share (K2, K4–K6): fields named as OpenTelemetry
// names them, trace context, metrics.
mod telemetry;

// Models that need no provider, a network or a key, and arguments generated from a schema.
pub mod testing;

/// Durable runs (W1): the journal a run records its steps in
/// ([`RunRequest::journal`]), and a journal in memory.
pub mod journal {
    pub use crate::agent::{
        CallBatch, CallResults, CallStep, Journal, JournalError, MemoryJournal, Retry, Step,
        StepKind,
    };
}

/// Tools built at run time ([`tools::ToolBuilder`]), what a declaration says
/// besides its schema (annotations, output schema, limits), why one is refused, and the
/// link-time registry (R1).
pub mod tools {
    pub use tool_core::{
        Annotations, ArgumentValidator, DEFAULT_MAX_ARGUMENT_BYTES, DeclarationError, IntoTool,
        Limits, OutputSchema, Site, Tool, ToolBuilder, registered, registry,
    };
}

/// How a call ends ([`Outcome`], [`OutcomeKind`]), the fixed texts a model reads for the
/// calls that did not run or failed (A4, E2, H4), and the rich results a handler may return
/// (images, resources: M4).
pub mod outcome {
    pub use tool_core::{
        AWAITING_APPROVAL, CANCELLED, DEFERRED, FAILED, Image, NOT_APPROVED, Outcome, OutcomeKind,
        RECORDED_ERROR, Resource, TIMED_OUT, UNAVAILABLE, WithImages,
    };
}

pub use agent::{
    Agent, AgentBuilder, Decision, Decisions, PausedRun, RunError, RunEvent, RunOutput, RunRequest,
};
pub use agent::{LenientJson, RepairArguments, SEARCH_TOOL};
pub use model::Model;
pub use testing::{OfflineModel, ScriptedModel};

/// A tool input deriving `schemars::JsonSchema` and `serde::Deserialize`, as rmcp takes it
/// (C3, feature `schemars`); the [`guide`]'s chapter `from_rmcp` moves an rmcp server over.
#[cfg(feature = "schemars")]
pub use tool_core::schema::Parameters;
/// The schemars crate (feature `schemars`): `use tool_runtime::schemars;` lets
/// `#[derive(schemars::JsonSchema)]` build without a dependency of its own.
#[cfg(feature = "schemars")]
pub use tool_core::schemars;
pub use tool_core::{
    approval, context, elicit, error, hook, json, logging, name, policy, progress, schema,
    violation,
};
// M8: a handler's sampling requests and roots.
pub use tool_core::{roots, sampling};

/// The README's example, compiled and run as a doc test.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Support for the code the macros generate. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use tool_core::__private::*;
    // What `#[resource]` and `#[prompt]` generate (M7).
    #[cfg(feature = "mcp")]
    pub use crate::mcp::{IntoPrompt, IntoResource, McpPrompt, McpResource};
    #[cfg(feature = "mcp")]
    pub use crate::mcp::{PromptRegistration, ResourceRegistration};
}

// Names earlier releases had at the crate root, each now in the module named beside it: kept
// at the root, hidden from the docs, so that code written against them still compiles. The
// guide's chapter on migrating lists where each one lives.
#[doc(hidden)]
pub use {
    agent::{
        Answer, BoxFuture, BuildError, BuildProblem, CallRecord, DEFAULT_MAX_CONCURRENCY,
        DEFAULT_MAX_TURNS, DEFAULT_RETRIES, MemoryLedger, PauseLedger, PendingCall, PendingKind,
        ResumeError, ResumeOptions, RunOptions, RunStream, Typed, UsageLimits,
    },
    model::{
        AnswerFormat, ApiError, FinishReason, Input, Message, ModelError, ModelEvent, ModelRequest,
        ModelStream, ProtocolError, SchemaUnsupported, ToolCall, ToolChoice, ToolResult, ToolSpec,
        UNKNOWN_PROVIDER, Usage,
    },
    outcome::{
        AWAITING_APPROVAL, CANCELLED, DEFERRED, FAILED, Image, NOT_APPROVED, RECORDED_ERROR,
        Resource, TIMED_OUT, UNAVAILABLE, WithImages,
    },
    testing::{
        Arguments, ConversationModel, ConversationTurn, RecordedRequest, ScriptedTurn, generate,
    },
    tool_core::{
        Approval, ApprovalPredicate, CallInfo, CancellationToken, ElicitAnswer, ElicitError,
        Elicited, Elicitor, Invalid, LogLevel, LogMessage, MissingExtension, NameError, Panicked,
        Policy, Progress, Relayed, RelayedKind, Rule, ToolName, Violation,
    },
    tools::{
        Annotations, ArgumentValidator, DEFAULT_MAX_ARGUMENT_BYTES, DeclarationError, Limits,
        OutputSchema, Site, ToolBuilder, registered,
    },
};
