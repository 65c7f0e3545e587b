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
//! Besides the conventions' fields, a run's span keeps `tools`, `max_turns`, `turns` and
//! `outcome` (`answered`, or the error kind), a request's `turn` and `calls`, and a call's
//! `outcome` (the outcome kind).

use tool_core::Outcome;
use tracing::Span;
use tracing::field::{Empty, display};

use super::error::RunError;
use super::output::RunOutput;
use super::reply::{Reply, ReplyError};
use super::shared::Shared;
use crate::model::{FinishReason, ModelError, ToolCall, Usage};
use crate::telemetry::{Named, SnakeCase, record_call_end, record_error};

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
        tools = int(shared.tools.len()),
        max_turns = int(shared.max_turns),
        turns = Empty,
        outcome = Empty,
    )
}

/// Records the run's id (H9) on its span: the same in every process that continues the run,
/// so that a backend groups a paused run with its resumes.
pub(crate) fn record_run_id(span: &Span, run_id: &str) {
    span.record("gen_ai.conversation.id", run_id);
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
    span.record("turns", int(usage.len()));
    record_usage(span, usage.iter().copied().sum());
    match result {
        Ok(_) => {
            span.record("outcome", "answered");
        }
        Err(e) => {
            span.record("outcome", display(e.kind()));
            record_error(span, SnakeCase(e.kind()));
        }
    }
}

/// The span of the model request of turn `turn`.
pub(crate) fn chat(shared: &Shared, turn: usize) -> Span {
    let model = shared.model.as_ref();
    tracing::info_span!(
        "chat",
        otel.name = %Named::new("chat ", model.model_name()),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = model.provider_name(),
        gen_ai.request.model = non_empty(model.model_name()),
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.response.finish_reasons = Empty,
        "error.type" = Empty,
        turn = int(turn),
        calls = Empty,
    )
}

/// Records the reply (its usage, finish reason and number of calls) or the failure of a
/// request on its span.
pub(crate) fn record_reply(span: &Span, reply: &Result<Reply, ReplyError>) {
    match reply {
        Ok(reply) => {
            span.record("calls", int(reply.calls.len()));
            record_usage(span, reply.usage);
            if let Some(finish) = &reply.finish {
                span.record("gen_ai.response.finish_reasons", finish_reason(finish));
            }
        }
        Err(ReplyError::Cancelled) => record_error(span, "cancelled"),
        Err(ReplyError::Model(e)) => record_error(span, model_error_type(e)),
        Err(ReplyError::Protocol(_)) => record_error(span, "protocol"),
        Err(ReplyError::Journal(_)) => record_error(span, "journal"),
    }
}

/// The span of one call. With `content`, it records the raw arguments the model sent.
pub(crate) fn call(call: &ToolCall, content: bool) -> Span {
    tracing::info_span!(
        "execute_tool",
        otel.name = %Named::new("execute_tool ", &call.name),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %Named::short(&call.name),
        gen_ai.tool.call.id = %Named::short(&call.id),
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = content.then_some(call.arguments.as_str()),
        gen_ai.tool.call.result = Empty,
        "error.type" = Empty,
        outcome = Empty,
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

/// A finish reason as the conventions write it. A reply has one, so the attribute holds that
/// one reason (a `tracing` field cannot hold a list).
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
