//! The spans of a run (K2), named and filled as the OpenTelemetry GenAI semantic conventions
//! say:
//!
//! | span | name | kind | parent |
//! |---|---|---|---|
//! | a run | `invoke_agent {agent}` (`invoke_agent` without a name) | internal | the caller's |
//! | a model request | `chat {model}` (`chat` without a model name) | client | the run |
//! | a tool call | `execute_tool {tool}` | internal | the run |
//!
//! with the `gen_ai.*` attributes (operation name, provider, request model, agent name, token
//! usage, finish reason, tool name, call id and type) and, on failure, `error.type` (a kind,
//! never a message) and the error status. A call's arguments and result are recorded only
//! when the agent was built with `record_tool_content(true)`. The `tracing` span names are
//! the operations (`invoke_agent`, `chat`, `execute_tool`); `otel.name` gives the full name.
//!
//! A request's span also carries what the provider answered with (`gen_ai.response.model`,
//! `gen_ai.response.id`, `gen_ai.response.finish_reasons`) and, for a remote provider, where it
//! was sent (`server.address`, `server.port`); a call's span carries the tool's description
//! (`gen_ai.tool.description`) when the run advertised the tool (K4).
//!
//! The library's own attributes live under `tool_runtime.*`: a run's span keeps
//! `tool_runtime.tools`, `tool_runtime.max_turns`, `tool_runtime.turns` and
//! `tool_runtime.outcome` (`answered`, or the error kind), a request's `tool_runtime.turn` and
//! `tool_runtime.calls`, and a call's `tool_runtime.outcome` (the outcome kind).
//!
//! A resumed run's span has the same `gen_ai.conversation.id` (the run's id, H9) as the run
//! that paused and, with the `opentelemetry` feature, a link to that run's span; a durable
//! run's replay (a later attempt, in another process) links to the span of its first attempt,
//! whose `traceparent` its discovery step recorded.

use std::time::Duration;

use tool_core::Outcome;
use tracing::Span;
use tracing::field::{Empty, display};

use super::error::RunError;
use super::output::RunOutput;
use super::reply::{Reply, ReplyError};
use super::shared::Shared;
use crate::model::{FinishReason, ModelError, ToolCall, Usage};
use crate::telemetry::metrics::{self, ChatRecord};
use crate::telemetry::{Named, SnakeCase, record_call_end, record_error, record_finish_reasons};

/// The span of one run.
pub(crate) fn run(shared: &Shared) -> Span {
    let model = shared.model.as_ref();
    tracing::info_span!(
        "invoke_agent",
        otel.name = %Named::new("invoke_agent ", shared.name.as_deref().unwrap_or("")),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = shared.name.as_deref(),
        gen_ai.conversation.id = Empty,
        gen_ai.provider.name = model.provider_name(),
        gen_ai.request.model = non_empty(model.model_name()),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        "error.type" = Empty,
        tool_runtime.tools = int(shared.set.tools.len()),
        tool_runtime.max_turns = int(shared.max_turns),
        tool_runtime.turns = Empty,
        tool_runtime.outcome = Empty,
    )
}

/// Records the run's id (H9) on its span: the same in every process that continues the run,
/// so that a backend groups a paused run with its resumes.
pub(crate) fn record_run_id(span: &Span, run_id: &str) {
    span.record("gen_ai.conversation.id", run_id);
}

/// Links a resumed run's span to the span of the run that paused (K4), whose W3C
/// `traceparent` the paused state kept (`trace`); without the `opentelemetry` feature the
/// shared `gen_ai.conversation.id` is what relates them.
pub(crate) fn record_resumed(span: &Span, trace: Option<&str>) {
    crate::telemetry::link(span, trace);
}

/// Records how a run ended on its span: turns, the run's token usage, and its outcome.
pub(crate) fn record_run(span: &Span, result: &Result<RunOutput, RunError>) {
    if span.is_disabled() {
        return;
    }
    let usage = match result {
        Ok(out) => &out.usage,
        Err(e) => e.usage(),
    };
    span.record("tool_runtime.turns", int(usage.len()));
    record_usage(span, usage.iter().copied().sum());
    match result {
        Ok(_) => {
            span.record("tool_runtime.outcome", "answered");
        }
        Err(e) => {
            span.record("tool_runtime.outcome", display(e.kind()));
            record_error(span, SnakeCase(e.kind()));
        }
    }
}

/// The span of the model request of turn `turn`.
pub(crate) fn chat(shared: &Shared, turn: usize) -> Span {
    let model = shared.model.as_ref();
    let span = tracing::info_span!(
        "chat",
        otel.name = %Named::new("chat ", model.model_name()),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = model.provider_name(),
        gen_ai.request.model = non_empty(model.model_name()),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.finish_reasons = Empty,
        server.address = Empty,
        server.port = Empty,
        "error.type" = Empty,
        tool_runtime.turn = int(turn),
        tool_runtime.calls = Empty,
    );
    if let Some((address, port)) = model.server() {
        span.record("server.address", address);
        span.record("server.port", i64::from(port));
    }
    span
}

/// Records the reply (its usage, finish reason and number of calls) or the failure of a
/// request on its span, and the request's metrics (K5): its duration (`elapsed`) and tokens.
pub(crate) fn record_reply(
    span: &Span,
    shared: &Shared,
    reply: &Result<Reply, ReplyError>,
    elapsed: Duration,
) {
    let model = shared.model.as_ref();
    let ok = reply.as_ref().ok();
    metrics::record_chat(&ChatRecord {
        provider: model.provider_name(),
        request_model: model.model_name(),
        response_model: ok.and_then(|reply| reply.response.model.as_deref()),
        server: model.server(),
        tokens: ok
            .map(|reply| reply.usage)
            .filter(|usage| *usage != Usage::default())
            .map(|usage| (usage.input_tokens, usage.output_tokens)),
        error_type: reply.as_ref().err().map(reply_error_type),
        elapsed,
    });
    match reply {
        Ok(reply) => {
            span.record("tool_runtime.calls", int(reply.calls.len()));
            record_usage(span, reply.usage);
            if let Some(model) = &reply.response.model {
                span.record("gen_ai.response.model", model.as_str());
            }
            if let Some(id) = &reply.response.id {
                span.record("gen_ai.response.id", display(Named::short(id)));
            }
            if let Some(finish) = &reply.finish {
                record_finish_reasons(span, &[finish_reason(finish)]);
            }
        }
        Err(e) => record_error(span, reply_error_type(e)),
    }
}

/// The `error.type` of a request that failed.
fn reply_error_type(error: &ReplyError) -> &'static str {
    match error {
        ReplyError::Cancelled => "cancelled",
        ReplyError::Model(e) => model_error_type(e),
        ReplyError::Protocol(_) => "protocol",
        ReplyError::Journal(_) => "journal",
    }
}

/// The span of one call, with the description of the tool it names (`None` when the run did
/// not advertise it). With `content`, it records the raw arguments the model sent.
pub(crate) fn call(call: &ToolCall, description: Option<&str>, content: bool) -> Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = %Named::new("execute_tool ", &call.name),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %Named::short(&call.name),
        gen_ai.tool.call.id = %Named::short(&call.id),
        gen_ai.tool.type = "function",
        gen_ai.tool.description = description.and_then(non_empty),
        gen_ai.tool.call.arguments = content.then_some(call.arguments.as_str()),
        gen_ai.tool.call.result = Empty,
        "error.type" = Empty,
        tool_runtime.outcome = Empty,
    )
}

/// Records how a call ended on its span: `error.type` is the outcome kind (`failed`,
/// `invalid_arguments`, …) for any outcome but a success.
pub(crate) fn record_call(span: &Span, outcome: &Outcome, content: bool) {
    record_call_end(span, outcome, outcome.kind(), content);
}

/// The token counts, unless the driver reported none.
fn record_usage(span: &Span, usage: Usage) {
    if usage != Usage::default() {
        span.record("gen_ai.usage.input_tokens", int(usage.input_tokens));
        span.record("gen_ai.usage.output_tokens", int(usage.output_tokens));
    }
}

/// A finish reason as the conventions write it.
fn finish_reason(finish: &FinishReason) -> &str {
    match finish {
        FinishReason::Stop => "stop",
        FinishReason::ToolCalls => "tool_calls",
        FinishReason::Length => "length",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other(other) => other,
    }
}

/// The `error.type` of a model's failure: which kind of failure, never the provider's
/// message.
fn model_error_type(error: &ModelError) -> &'static str {
    match error {
        ModelError::ScriptExhausted { .. } => "script_exhausted",
        ModelError::Provider { .. } | ModelError::Api(_) => "provider_error",
        ModelError::Transport(_) => "transport",
        ModelError::Protocol(_) => "protocol",
        ModelError::Timeout { .. } => "timeout",
        ModelError::Replayed(_) => "replayed",
        ModelError::Other(_) => "_OTHER",
    }
}

/// A count as a signed integer: OpenTelemetry's integer attributes are `i64`, and
/// `tracing-opentelemetry` records an unsigned field as text.
fn int(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}
