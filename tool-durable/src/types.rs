//! What a durable run takes, answers and shows: its request, its end, its status and the
//! decisions that resume its waiting calls.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_runtime::{Decision, ErrorKind, PendingKind, RunOptions, Usage};

/// What starts a durable run: the user's message, application data the worker turns into
/// the run's [`tool_runtime::Context`] ([`crate::AgentRun::with_context`]), and the run's
/// options. All of it is the workflow's input, kept by Restate: put no secret in it (W4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The user's message.
    pub input: String,
    /// Data for the worker's context factory (a principal's name, a tenant): never a secret
    /// and never the model's.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// The run's options (tool choice, stopping tools, usage limits); the agent's when absent.
    /// Its usage limits are bounded by the agent's: a request may tighten a limit, never lift
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<RunOptions>,
}

impl RunRequest {
    /// A run of `input`, with no context data and the agent's options.
    pub fn new(input: impl Into<String>) -> Self {
        Self {
            input: input.into(),
            context: Value::Null,
            options: None,
        }
    }

    /// The same request, with `context` for the worker's context factory.
    #[must_use]
    pub fn with_context(mut self, context: Value) -> Self {
        self.context = context;
        self
    }

    /// The same request, with the run's own options.
    #[must_use]
    pub fn with_options(mut self, options: RunOptions) -> Self {
        self.options = Some(options);
        self
    }
}

/// How a durable run ended: the workflow's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEnd {
    /// The final answer.
    Answer {
        /// The answer's text.
        text: String,
        /// The run's usage.
        usage: Usage,
        /// The tool whose success ended the run (L5), if one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stopped_at: Option<String>,
    },
    /// The run ended without an answer (a usage limit, its turn limit, a fatal call, …).
    Failed {
        /// Why, as [`tool_runtime::RunError::kind`] says.
        kind: ErrorKind,
        /// What happened, without its cause (W4: the worker's log has the cause).
        message: String,
        /// The run's usage.
        usage: Usage,
    },
}

impl RunEnd {
    /// The final answer's text read as JSON of `T`: the typed answer of a run of an
    /// [`crate::AgentRun::typed`] workflow (W10). `None` for a run that ended without an
    /// answer, or whose answer is not JSON of `T`.
    pub fn answer_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        match self {
            RunEnd::Answer { text, .. } => serde_json::from_str(text).ok(),
            _ => None,
        }
    }

    /// A final answer of `text`, with the run's `usage`.
    pub fn answer(text: impl Into<String>, usage: Usage) -> Self {
        RunEnd::Answer {
            text: text.into(),
            usage,
            stopped_at: None,
        }
    }

    /// A final answer of `text` given by the success of `tool`, a stopping tool (L5).
    pub fn stopped_at(text: impl Into<String>, usage: Usage, tool: impl Into<String>) -> Self {
        RunEnd::Answer {
            text: text.into(),
            usage,
            stopped_at: Some(tool.into()),
        }
    }

    /// A run that ended without an answer, with `kind` and `message`.
    pub fn failed(kind: ErrorKind, message: impl Into<String>, usage: Usage) -> Self {
        RunEnd::Failed {
            kind,
            message: message.into(),
            usage,
        }
    }
}

/// Where a durable run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Phase {
    /// The run has not started (or its workflow is unknown).
    NotStarted,
    /// The run is working: a model request or a tool call.
    Running,
    /// Some calls wait for a decision ([`RunStatus::pending`]); no process holds the run.
    Waiting,
    /// The run ended; its output is the workflow's.
    Ended,
}

/// What can be read of a durable run while it goes (W5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStatus {
    /// Where the run is.
    pub phase: Phase,
    /// The calls that wait for a decision, with the awakeable that takes each.
    pub pending: Vec<PendingApproval>,
    /// The run's usage so far.
    pub usage: Usage,
    /// The calls decided so far, each with the decision the run took (W8).
    #[serde(default)]
    pub decided: Vec<DecidedCall>,
}

impl RunStatus {
    /// The status of a run that has not started: no call waits, nothing used.
    pub fn not_started() -> Self {
        Self {
            phase: Phase::NotStarted,
            pending: Vec::new(),
            usage: Usage::default(),
            decided: Vec::new(),
        }
    }
}

/// A call of a durable run that was decided: the decision the run took for it (the first
/// that reached it; a later one changes nothing, W8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecidedCall {
    /// The call id the model gave.
    pub call_id: String,
    /// The awakeable that took the decision.
    pub awakeable_id: String,
    /// The decision the run took: the one given, or a denial when it could not be read or did
    /// not fit the call (W3).
    pub decision: DecisionBody,
}

/// A call of a durable run that waits for a decision (W3): what an approver sees, and the
/// awakeable to resolve with a [`DecisionBody`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The call id the model gave.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments, as validated.
    pub arguments: Value,
    /// What the call waits for: approval, or (a deferred tool) its result.
    pub kind: PendingKind,
    /// Why it needs approval, as the predicate said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The Restate awakeable that takes the decision.
    pub awakeable_id: String,
}

/// A decision on a waiting call, as the body that resolves its awakeable:
/// `{"decision":"approve"}`, `{"decision":"deny","message":"…"}`,
/// `{"decision":"result","result":…}` (a deferred call's result),
/// `{"decision":"approve_with","arguments":…}` (approved with edited arguments, B3) or
/// `{"decision":"allow_for_run"}` (approved, and the tool allowed for the rest of the run,
/// B3).
///
/// A body that is not one of these is read as a denial: nothing runs on a decision that
/// cannot be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum DecisionBody {
    /// Run the call.
    Approve,
    /// Do not run it; the model reads `message` (or the default denial).
    Deny {
        /// What the model reads.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The result of a deferred call.
    Result {
        /// The result, as JSON.
        result: Value,
    },
    /// Run the call with these arguments instead of the model's (B3). Arguments that do not
    /// fit the tool's schema deny the call, as a decision that does not fit it does.
    ApproveWith {
        /// The arguments the call runs with.
        arguments: Value,
    },
    /// Run the call, and the later calls of its tool in this run without asking (B3).
    AllowForRun,
}

/// What the model reads of a call whose decision does not fit it (a result for a call that
/// waits for approval, an approval for a deferred call).
pub const UNFIT_DECISION: &str = "the call was not approved: its decision does not fit it";

/// What the model reads of a call whose decision could not be read.
pub const UNREADABLE_DECISION: &str = "the call was not approved: its decision could not be read";

impl DecisionBody {
    /// The decision an awakeable's body gives: a denial when it is not a [`DecisionBody`].
    pub fn read(body: &[u8]) -> Decision {
        Self::taken(body).into()
    }

    /// The body as the run takes it: itself, or a denial saying it could not be read.
    pub(crate) fn taken(body: &[u8]) -> Self {
        match serde_json::from_slice::<DecisionBody>(body) {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!(error = %e, "a decision could not be read; the call is denied");
                DecisionBody::Deny {
                    message: Some(UNREADABLE_DECISION.to_owned()),
                }
            }
        }
    }
}

impl From<DecisionBody> for Decision {
    fn from(body: DecisionBody) -> Self {
        match body {
            DecisionBody::Approve => Decision::Approve,
            DecisionBody::Deny { message: None } => Decision::deny(),
            DecisionBody::Deny {
                message: Some(message),
            } => Decision::deny_with(message),
            DecisionBody::Result { result } => Decision::result(&result),
            DecisionBody::ApproveWith { arguments } => Decision::approve_with(arguments),
            DecisionBody::AllowForRun => Decision::allow_for_run(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// W3: a decision that cannot be read denies its call; nothing runs on it.
    #[test]
    fn w3_an_unreadable_decision_denies_the_call() {
        let nested = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        for body in [
            &b""[..],
            b"not json",
            b"{\"decision\":\"maybe\"}",
            b"{\"approve\":true}",
            b"\xff\xfe",
            nested.as_bytes(),
        ] {
            let decision = DecisionBody::read(body);
            assert!(
                matches!(&decision, Decision::Deny { message } if message == UNREADABLE_DECISION),
                "{:?} -> {decision:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    /// B3: an approval with edited arguments and an allowance for the run, in their wire
    /// forms, become the library's decisions with the arguments as given.
    #[test]
    fn b3_edited_approvals_and_allowances_read_as_the_librarys_decisions() {
        let edited = DecisionBody::read(br#"{"decision":"approve_with","arguments":{"cents":5}}"#);
        assert!(
            matches!(&edited, Decision::ApproveWith { arguments } if *arguments == serde_json::json!({"cents": 5})),
            "{edited:?}"
        );
        let allowed = DecisionBody::read(br#"{"decision":"allow_for_run"}"#);
        assert!(matches!(allowed, Decision::AllowForRun), "{allowed:?}");
        let body = DecisionBody::ApproveWith {
            arguments: serde_json::json!({"cents": 5}),
        };
        assert_eq!(
            serde_json::to_value(&body).ok(),
            Some(serde_json::json!({"decision": "approve_with", "arguments": {"cents": 5}}))
        );
    }

    /// W10: the ends a test compares are built with constructors, as the workflow sends them.
    #[test]
    fn w10_run_ends_are_built_as_they_read() {
        let usage = Usage::new(200, 40);
        let read = |json: serde_json::Value| serde_json::from_value::<RunEnd>(json).ok();
        assert_eq!(
            read(
                serde_json::json!({"end":"answer","text":"Done.","usage":{"input_tokens":200,"output_tokens":40}})
            ),
            Some(RunEnd::answer("Done.", usage))
        );
        assert_eq!(
            read(
                serde_json::json!({"end":"answer","text":"ok","usage":{"input_tokens":200,"output_tokens":40},"stopped_at":"ship"})
            ),
            Some(RunEnd::stopped_at("ok", usage, "ship"))
        );
        let failed = RunEnd::failed(ErrorKind::UsageLimit, "the request limit", usage);
        let json = serde_json::to_value(&failed).ok();
        assert_eq!(json.and_then(read), Some(failed));
    }

    #[test]
    fn w3_decisions_read_as_written() {
        assert!(matches!(
            DecisionBody::read(br#"{"decision":"approve"}"#),
            Decision::Approve
        ));
        assert!(matches!(
            DecisionBody::read(br#"{"decision":"deny","message":"not today"}"#),
            Decision::Deny { message } if message == "not today"
        ));
        assert!(matches!(
            DecisionBody::read(br#"{"decision":"result","result":{"shipped":true}}"#),
            Decision::Complete(Ok(_))
        ));
        let request: RunRequest =
            serde_json::from_str(r#"{"input":"hi"}"#).expect("a request with defaults");
        assert_eq!(request, RunRequest::new("hi"));
    }
}

/// What the workflow's `call` handler gets (W9): one call of a run, and the run's context data
/// to make the call's [`tool_runtime::Context`] from, as the run's own attempts do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CallRequest {
    /// The run's context data ([`RunRequest::context`]).
    #[serde(default)]
    pub(crate) context: Value,
    /// The call.
    pub(crate) call: tool_runtime::journal::CallStep,
}
