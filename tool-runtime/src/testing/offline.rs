//! [`OfflineModel`]: a deterministic model that calls your tools with arguments generated from
//! their schemas and then sums up what came back: test an agent end to end without a
//! provider, a network or a key.

use std::fmt::Write as _;

use super::generate::{invalid_arguments, valid_arguments};
use super::reply_events;
use crate::model::{
    Message, Model, ModelError, ModelEvent, ModelRequest, ModelStream, ToolCall, Usage,
};

/// Which arguments the [`OfflineModel`] sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Arguments {
    /// Arguments that fit each schema ([`crate::generate::valid_arguments`]).
    #[default]
    Valid,
    /// Arguments that break each schema in one clear way
    /// ([`crate::generate::invalid_arguments`]), to exercise validation feedback.
    Invalid,
    /// Invalid arguments first; then, for every call that failed, the same call again with
    /// valid arguments, the way a model corrects itself after reading the violations.
    InvalidThenValid,
}

/// A deterministic model for running agents offline, in tests and demos.
///
/// On the first turn of a conversation (after the last user message) it calls every
/// advertised tool, in the order advertised (or only those named with
/// [`OfflineModel::call_tools`]), with arguments generated from each tool's JSON Schema
/// ([`crate::generate`]): valid by default, deliberately invalid on request ([`Arguments`]).
/// Once it has the results, it answers with a text summary of what came back, one line per
/// call. With no tool to call it answers at once. Its replies stream as real deltas and report
/// a token usage estimated from the text (about four characters a token).
///
/// It sees only what a real model sees: the request. It holds no state, so one model serves
/// any number of runs, and it runs through the same loop a provider would (discovery, the
/// availability re-check, validation, concurrency, E2 redaction), which makes it the way to
/// test your own agent without a provider:
///
/// ```
/// use tool_runtime::{Agent, Arguments, Context, OfflineModel, OutcomeKind, Schema, Tool};
///
/// /// Which service to check.
/// #[derive(Schema)]
/// struct StatusQuery {
///     /// The service identifier.
///     #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
///     service_id: String,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let status = Tool::builder("service-status", "Reports a service's status.")
///     .handler(|_ctx: Context, q: StatusQuery| async move {
///         Ok::<_, std::io::Error>(format!("{} is green", q.service_id))
///     })
///     .build();
///
/// // Valid arguments: the tool runs, and the answer sums up its result.
/// let agent = Agent::builder(OfflineModel::new()).tool(status.clone()).build()?;
/// let out = agent.run(&Context::new(), "How is everything?").await?;
/// assert_eq!(out.calls[0].kind(), OutcomeKind::Success);
/// assert!(out.text.contains("- service-status: a is green"));
///
/// // Invalid arguments: the handler never runs, and the model reads the violations.
/// let agent = Agent::builder(OfflineModel::new().arguments(Arguments::Invalid))
///     .tool(status)
///     .build()?;
/// let out = agent.run(&Context::new(), "How is everything?").await?;
/// assert_eq!(out.calls[0].kind(), OutcomeKind::InvalidArguments);
/// assert!(out.text.contains("(failed)"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct OfflineModel {
    only: Option<Vec<String>>,
    arguments: Arguments,
    final_text: Option<String>,
}

impl OfflineModel {
    /// A model that calls every advertised tool once with valid arguments, then sums up.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls only the advertised tools with these names (none, for an empty list).
    #[must_use]
    pub fn call_tools<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.only = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Sets which arguments the model sends.
    #[must_use]
    pub fn arguments(mut self, arguments: Arguments) -> Self {
        self.arguments = arguments;
        self
    }

    /// Answers with exactly this text instead of the summary.
    #[must_use]
    pub fn final_text(mut self, text: impl Into<String>) -> Self {
        self.final_text = Some(text.into());
        self
    }

    /// The reply to `request`: tool calls, or the final text.
    fn reply(&self, request: &ModelRequest<'_>) -> (String, Vec<ToolCall>) {
        let messages = request.messages;
        let since_user = messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }))
            .map_or(messages, |at| &messages[at + 1..]);
        let round = since_user
            .iter()
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        let callable: Vec<_> = request
            .tools
            .iter()
            .filter(|spec| {
                self.only
                    .as_ref()
                    .is_none_or(|names| names.iter().any(|n| n == spec.name()))
            })
            .collect();

        if round == 0 && !callable.is_empty() {
            let valid = self.arguments == Arguments::Valid;
            let calls = callable
                .iter()
                .enumerate()
                .map(|(i, spec)| {
                    let args = if valid {
                        valid_arguments(spec.parameters())
                    } else {
                        invalid_arguments(spec.parameters())
                    };
                    ToolCall::new(
                        format!("offline-1-{}", i + 1),
                        spec.name(),
                        args.to_string(),
                    )
                })
                .collect();
            return (String::new(), calls);
        }
        if round == 1 && self.arguments == Arguments::InvalidThenValid {
            let retry: Vec<ToolCall> = since_user
                .iter()
                .filter_map(Message::tool_result)
                .filter(|r| r.is_error)
                .filter_map(|r| request.tools.iter().find(|s| s.name() == &*r.name))
                .enumerate()
                .map(|(i, spec)| {
                    ToolCall::new(
                        format!("offline-2-{}", i + 1),
                        spec.name(),
                        valid_arguments(spec.parameters()).to_string(),
                    )
                })
                .collect();
            if !retry.is_empty() {
                return (String::new(), retry);
            }
        }
        // O2: a typed answer is a JSON object made from its schema.
        if let Some(answer) = request.answer {
            return (valid_arguments(answer.schema()).to_string(), Vec::new());
        }
        if let Some(text) = &self.final_text {
            return (text.clone(), Vec::new());
        }
        (summary(since_user), Vec::new())
    }
}

/// One line per call since the user's message, with what came back.
fn summary(since_user: &[Message]) -> String {
    let results: Vec<_> = since_user.iter().filter_map(Message::tool_result).collect();
    if results.is_empty() {
        return "Offline model: I had no tool to call, so I have nothing to report.".to_owned();
    }
    let mut text = format!(
        "Offline model: I made {} tool call{}.",
        results.len(),
        if results.len() == 1 { "" } else { "s" }
    );
    for r in results {
        let status = if r.is_error { " (failed)" } else { "" };
        let body = r.text.replace('\n', "\n  ");
        let _ = write!(text, "\n- {}{status}: {body}", r.name);
    }
    text
}

/// About four characters a token.
fn tokens(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX)
}

impl Model for OfflineModel {
    fn stream<'a>(&'a self, request: ModelRequest<'a>) -> ModelStream<'a> {
        let (text, calls) = self.reply(&request);
        let read = request.instructions.map_or(0, str::len)
            + request
                .messages
                .iter()
                .map(|m| {
                    m.text().len()
                        + m.tool_calls()
                            .iter()
                            .map(|c| c.arguments.len())
                            .sum::<usize>()
                })
                .sum::<usize>()
            + request
                .tools
                .iter()
                .map(|t| t.description().len() + t.parameters_json().len())
                .sum::<usize>();
        let written = text.len() + calls.iter().map(|c| c.arguments.len()).sum::<usize>();
        let usage = Usage::new(tokens(read), tokens(written));
        let events = reply_events(&text, &calls, Some(usage));
        Box::pin(Ready(events.into_iter().map(Ok).collect()))
    }

    /// A typed answer (O2) is made from its schema, as a provider's structured output is.
    fn native_answers(&self) -> bool {
        true
    }

    /// `offline`, for telemetry (K2): no provider serves it.
    fn provider_name(&self) -> &str {
        "offline"
    }

    /// `offline`, for telemetry (K2).
    fn model_name(&self) -> &str {
        "offline"
    }
}

/// A stream of events already at hand.
struct Ready(std::collections::VecDeque<Result<ModelEvent, ModelError>>);

impl futures_core::Stream for Ready {
    type Item = Result<ModelEvent, ModelError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        std::task::Poll::Ready(self.0.pop_front())
    }
}
