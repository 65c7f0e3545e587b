//! The steps of a durable run besides its calls (W1): discovery and each model request, each
//! one step of the run's journal. (Each tool call is a step too, in `agent::calls`.) What a step records is what a paused run may hold (W4): tool names, the
//! model's reply, and of a failure its kind and a message of ours; discovery also keeps the
//! `traceparent` of the attempt's span, for a replay's span to link to (K4).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::ErrorKind;

use crate::agent::discovery::discover as discover_here;
use crate::agent::env::Env;
use crate::agent::error::RunError;
use crate::agent::journal::{Journal, JournalError, Retry, Step, StepKind};
use crate::agent::reply::{Reply, ReplyError, read_reply};
use crate::model::{ModelError, ModelRequest};

/// How a step that ended the run ended, as recorded: a kind and a message of ours, never the
/// cause (W4); the log of the process that took the step has it.
#[derive(Debug, Serialize, Deserialize)]
struct Failed {
    kind: ErrorKind,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<String>,
}

/// Discovery's recorded step: its result and the W3C `traceparent` of the span of the attempt
/// that took it (K4), which a replay in another process links to. (A journal recorded before
/// the trace was kept has none.)
#[derive(Debug, Serialize, Deserialize)]
struct DiscoveryStep {
    #[serde(flatten)]
    found: Discovered,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace: Option<String>,
}

/// Discovery's recorded result.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Discovered {
    /// The names of the tools the run advertises, in declaration order.
    Advertised(Vec<String>),
    /// Discovery ended the run.
    Failed(Failed),
}

/// A model request's recorded result.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Replied {
    /// The whole reply.
    Reply(Reply),
    /// The request ended the run (a failure that is not retried).
    Failed(Failed),
    /// The caller cancelled the run while the reply streamed.
    Cancelled,
}

/// Discovery (A2), a step of `journal`: which tools the run advertises, by name, so that a
/// replay advertises the same tools without asking their policies again. The step keeps the
/// run span's `traceparent`: a replay whose span is another (a later attempt, in another
/// process) links to the first attempt's (K4).
pub(super) async fn discover(journal: &dyn Journal, env: Env<'_>) -> Result<Vec<bool>, RunError> {
    let kind = StepKind::Discovery;
    let span = tracing::Span::current();
    let here = crate::telemetry::of_span(&span).map(|cx| cx.traceparent);
    let trace = here.clone();
    let run = async move {
        let found = match discover_here(env.shared, env.ctx).await {
            Ok(visible) => Discovered::Advertised(
                env.shared
                    .set
                    .tools
                    .iter()
                    .zip(visible)
                    .filter(|(_, shown)| *shown)
                    .map(|(tool, _)| tool.name().to_owned())
                    .collect(),
            ),
            Err(e) => Discovered::Failed(Failed {
                kind: e.kind(),
                message: e.to_string(),
                tool: e.tool().map(str::to_owned),
            }),
        };
        to_value(&DiscoveryStep { found, trace }, &StepKind::Discovery)
    };
    let value = journal.step(Step::new(kind.clone(), Box::pin(run))).await?;
    let recorded = read::<DiscoveryStep>(value, &kind)?;
    if recorded.trace.is_some() && recorded.trace != here {
        crate::telemetry::link(&span, recorded.trace.as_deref());
    }
    match recorded.found {
        Discovered::Advertised(names) => {
            let visible: Vec<bool> = env
                .shared
                .set
                .tools
                .iter()
                .map(|tool| names.iter().any(|name| name == tool.name()))
                .collect();
            let held = visible.iter().filter(|shown| **shown).count();
            if held != names.len() {
                return Err(JournalError::new(
                    kind.to_string(),
                    "the journal advertises a tool this agent does not hold: a run is replayed by the agent that started it",
                )
                .into());
            }
            Ok(visible)
        }
        Discovered::Failed(failed) => Err(failed.into_run_error()),
    }
}

/// The model request of turn `turn`, one step of `journal`: the stream is read whole inside
/// the step (its text deltas reach the run's stream while it is read; a replay emits none),
/// and a failure a later attempt may not have (the provider unreachable, overloaded, slow)
/// is retried by the journal rather than recorded.
pub(super) async fn request(
    journal: &dyn Journal,
    env: Env<'_>,
    request: ModelRequest<'_>,
    turn: usize,
    chat: &tracing::Span,
) -> Result<Reply, ReplyError> {
    let kind = StepKind::Request { turn };
    let step_kind = kind.clone();
    let run = async move {
        let stream = chat.in_scope(|| env.shared.model.stream(request));
        let replied = match read_reply(stream, env.ctx, env.sink, turn, &env.shared.set).await {
            Ok(reply) => Replied::Reply(reply),
            // The engine keeps the retry's message: its kind and status only (W4).
            Err(ReplyError::Model(e)) if transient(&e) => {
                tracing::warn!(error = %e, turn, "the model failed; the step is retried");
                return Err(Retry::new(summary(&e)));
            }
            Err(ReplyError::Model(e)) => {
                tracing::warn!(error = %e, turn, "the model failed; the journal records its kind only");
                Replied::Failed(Failed {
                    kind: ErrorKind::Model,
                    message: summary(&e),
                    tool: None,
                })
            }
            // The protocol error says what of the model's own reply broke the protocol.
            Err(ReplyError::Protocol(e)) => Replied::Failed(Failed {
                kind: ErrorKind::Protocol,
                message: e.to_string(),
                tool: None,
            }),
            Err(ReplyError::Journal(e)) => return Err(Retry::new(e.to_string())),
            Err(ReplyError::Cancelled) => Replied::Cancelled,
        };
        to_value(&replied, &step_kind)
    };
    let value = journal
        .step(Step::new(kind.clone(), Box::pin(run)))
        .await
        .map_err(ReplyError::Journal)?;
    match read::<Replied>(value, &kind).map_err(ReplyError::Journal)? {
        Replied::Reply(reply) => Ok(reply),
        Replied::Cancelled => Err(ReplyError::Cancelled),
        Replied::Failed(failed) => Err(ReplyError::Model(ModelError::Replayed(failed.message))),
    }
}

impl Failed {
    fn into_run_error(self) -> RunError {
        let error = RunError::new(self.kind, self.message);
        match &self.tool {
            Some(tool) => error.with_tool(tool),
            None => error,
        }
    }
}

/// Whether a later attempt of the request may succeed: the provider could not be reached,
/// did not answer in time, or answered a status that is retried (408, 409, 429, 5xx).
fn transient(error: &ModelError) -> bool {
    match error {
        ModelError::Transport(_) | ModelError::Timeout { .. } => true,
        ModelError::Api(api) => api
            .status
            .is_none_or(|status| matches!(status, 408 | 409 | 429 | 500..=599)),
        _ => false,
    }
}

/// What the journal records of a model failure: its kind and status, not the provider's
/// message (W4).
fn summary(error: &ModelError) -> String {
    let status = match error {
        ModelError::Provider { status, .. } => Some(*status),
        ModelError::Api(api) => api.status,
        _ => None,
    };
    match status {
        Some(status) => format!(
            "the provider answered {status} (its message is in the log of the process that made the request)"
        ),
        None => "the provider failed (the log of the process that made the request has the cause)"
            .to_owned(),
    }
}

fn to_value<T: Serialize>(value: &T, kind: &StepKind) -> Result<Value, Retry> {
    serde_json::to_value(value)
        .map_err(|e| Retry::new(format!("step `{kind}`: its result did not serialize: {e}")))
}

fn read<T: for<'de> Deserialize<'de>>(value: Value, kind: &StepKind) -> Result<T, JournalError> {
    serde_json::from_value(value).map_err(|e| {
        JournalError::new(
            kind.to_string(),
            format!("the recorded result does not read back: {e}"),
        )
    })
}
