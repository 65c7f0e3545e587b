//! [`Outcome`]: how one call ended, what the model reads of it and what the application keeps;
//! and its recorded form, which a durable run's journal holds (W1, W4).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::NOT_APPROVED;
use crate::error::{Error, ErrorKind, RelayedKind, ToolError};
use crate::tool::{Image, Rendered, Resource};
use crate::violation::{Violation, render_violations};

/// What the model is told when a tool is hidden, or does not exist (A4, A5).
pub const UNAVAILABLE: &str = "tool unavailable";
/// What the model is told when a tool failed and approved no text (E2).
pub const FAILED: &str = "the tool failed";
/// What the model is told when a call ran past its timeout.
pub const TIMED_OUT: &str = "the tool timed out";
/// What the model is told when a call was cancelled.
pub const CANCELLED: &str = "the tool call was cancelled";
/// The text of a call that awaits approval (H2). The agent loop never sends it to the model:
/// the run pauses instead, and the call's result is decided at resume.
pub const AWAITING_APPROVAL: &str = "the call awaits approval";
/// The text of a call of a deferred tool (H5). The agent loop never sends it to the model:
/// the run pauses instead, and the call's result is given at resume.
pub const DEFERRED: &str = "the call awaits its result from elsewhere";

/// How a call ended. Serialized as its snake_case name, as [`fmt::Display`] writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutcomeKind {
    /// The handler returned a result.
    Success,
    /// The tool is hidden by its policy, or does not exist (A4, A5).
    Unavailable,
    /// The arguments broke the schema; the handler did not run (S2).
    InvalidArguments,
    /// The handler failed with text it approved for the model ([`crate::ToolError`]).
    Rejected,
    /// The handler (or a validator) failed; the model was told only `the tool failed` (E2).
    Failed,
    /// The call ran past its timeout.
    TimedOut,
    /// The call was cancelled.
    Cancelled,
    /// The call failed in a way that ends the run: a permanent failure, a policy error or a
    /// panic (P1, A6, E4).
    Fatal,
    /// The call passed the availability re-check and validation, and waits for approval; its
    /// handler has not run (H1, H2). [`Outcome::approval_reason`] says why.
    AwaitingApproval,
    /// The call of a deferred tool passed the availability re-check and validation, and waits
    /// for its result from elsewhere (H5).
    Deferred,
    /// The call was not approved; its handler never ran. The model got the denial's message
    /// (H4, H6).
    Denied,
}

impl OutcomeKind {
    /// Whether a call that ended so waits for a decision or a result: the run pauses (H2,
    /// H5).
    pub fn is_pending(self) -> bool {
        matches!(self, OutcomeKind::AwaitingApproval | OutcomeKind::Deferred)
    }
}

impl fmt::Display for OutcomeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            OutcomeKind::Success => "success",
            OutcomeKind::Unavailable => "unavailable",
            OutcomeKind::InvalidArguments => "invalid_arguments",
            OutcomeKind::Rejected => "rejected",
            OutcomeKind::Failed => "failed",
            OutcomeKind::TimedOut => "timed_out",
            OutcomeKind::Cancelled => "cancelled",
            OutcomeKind::Fatal => "fatal",
            OutcomeKind::AwaitingApproval => "awaiting_approval",
            OutcomeKind::Deferred => "deferred",
            OutcomeKind::Denied => "denied",
        };
        f.write_str(s)
    }
}

/// The end of one call: the text the model receives, and for the application the violations
/// and the unredacted error (E3).
///
/// It serializes to its recorded form, the one a durable run's journal holds (W1, W4): the
/// kind, the model-facing text, violations and images, a pending call's validated arguments
/// and reason, and of the application's error only its kind and whether it was permanent,
/// never its message or cause. An outcome read back from that form has an error of the same
/// kind that says it was not recorded ([`RECORDED_ERROR`]); the log of the process that ran
/// the call has the cause.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Recorded", from = "Recorded")]
pub struct Outcome {
    kind: OutcomeKind,
    text: String,
    violations: Vec<Violation>,
    /// The images (and audio) of a successful result (O3, M4).
    images: Vec<Image>,
    /// The resources of a successful result (M4).
    resources: Vec<Resource>,
    error: Option<Error>,
    /// What a pending call waits with (kinds `AwaitingApproval` and `Deferred`).
    pending: Option<Box<Pending>>,
}

/// What a pending call waits with: its validated arguments and, when it awaits approval, the
/// predicate's reason.
#[derive(Debug, Clone)]
struct Pending {
    arguments: Value,
    reason: Option<String>,
}

impl Outcome {
    /// An outcome of `kind` with `text` and nothing else.
    fn plain(kind: OutcomeKind, text: String) -> Self {
        Self {
            kind,
            text,
            violations: Vec::new(),
            images: Vec::new(),
            resources: Vec::new(),
            error: None,
            pending: None,
        }
    }

    /// A successful call whose result rendered as `rendered`: its text, and the images beside
    /// it (O3).
    pub fn rendered(rendered: Rendered) -> Self {
        Self {
            kind: OutcomeKind::Success,
            text: rendered.text,
            violations: Vec::new(),
            images: rendered.images,
            resources: rendered.resources,
            error: None,
            pending: None,
        }
    }

    /// A successful call whose result renders as `text`.
    pub fn success(text: String) -> Self {
        Self::plain(OutcomeKind::Success, text)
    }

    /// A call that waits for approval, for `reason`, with its validated `arguments` (H2).
    pub fn awaiting_approval(reason: impl Into<String>, arguments: Value) -> Self {
        Self {
            pending: Some(Box::new(Pending {
                arguments,
                reason: Some(reason.into()),
            })),
            ..Self::plain(OutcomeKind::AwaitingApproval, AWAITING_APPROVAL.to_owned())
        }
    }

    /// A call of a deferred tool, waiting for its result, with its validated `arguments` (H5).
    pub fn deferred(arguments: Value) -> Self {
        Self {
            pending: Some(Box::new(Pending {
                arguments,
                reason: None,
            })),
            ..Self::plain(OutcomeKind::Deferred, DEFERRED.to_owned())
        }
    }

    /// A call that was not approved: the model reads `message` (H4), by default
    /// [`NOT_APPROVED`].
    pub fn denied(message: impl Into<String>) -> Self {
        Self::plain(OutcomeKind::Denied, message.into())
    }

    /// The same outcome with `text`, which the application approved for the model, as its
    /// text: kind `Rejected`, the error kept for the application (K1: a hook's replacement).
    pub(crate) fn approved(self, text: String) -> Self {
        Self {
            error: self.error,
            ..Self::plain(OutcomeKind::Rejected, text)
        }
    }

    /// A call that was not approved, with the default message [`NOT_APPROVED`].
    pub fn not_approved() -> Self {
        Self::denied(NOT_APPROVED)
    }

    /// The answer to a hidden or unknown tool (A4, A5).
    pub fn unavailable() -> Self {
        Self::plain(OutcomeKind::Unavailable, UNAVAILABLE.to_owned())
    }

    /// Arguments that broke the schema.
    pub fn invalid(violations: Vec<Violation>, dropped: usize) -> Self {
        Self {
            kind: OutcomeKind::InvalidArguments,
            text: render_violations(&violations, dropped),
            violations,
            images: Vec::new(),
            resources: Vec::new(),
            error: None,
            pending: None,
        }
    }

    /// A call that ran past its timeout.
    pub fn timed_out(error: Error) -> Self {
        Self {
            error: Some(error),
            ..Self::plain(OutcomeKind::TimedOut, TIMED_OUT.to_owned())
        }
    }

    /// A call that was cancelled.
    pub fn cancelled(error: Error) -> Self {
        Self {
            error: Some(error),
            ..Self::plain(OutcomeKind::Cancelled, CANCELLED.to_owned())
        }
    }

    /// A failed call: what the model reads follows E2 (the chain's [`crate::ToolError`] text,
    /// else `the tool failed`; never anything of a permanent failure). A handler failure whose
    /// chain holds a [`crate::Relayed`] outcome takes its kind and that kind's fixed text (T2).
    pub fn failure(error: Error) -> Self {
        let relayed = error
            .relayed()
            .filter(|_| error.kind() == ErrorKind::Handler);
        let mut violations = Vec::new();
        let (kind, text) = if error.is_permanent() {
            (OutcomeKind::Fatal, FAILED.to_owned())
        } else if let Some(relayed) = relayed {
            match relayed.kind() {
                RelayedKind::Unavailable => (OutcomeKind::Unavailable, UNAVAILABLE.to_owned()),
                RelayedKind::TimedOut => (OutcomeKind::TimedOut, TIMED_OUT.to_owned()),
                RelayedKind::InvalidArguments => {
                    let (found, text) = relayed.violations().unwrap_or((&[], "invalid arguments:"));
                    violations = found.to_vec();
                    (OutcomeKind::InvalidArguments, text.to_owned())
                }
                RelayedKind::Cancelled => (OutcomeKind::Cancelled, CANCELLED.to_owned()),
                RelayedKind::Denied => (
                    OutcomeKind::Denied,
                    relayed.text().unwrap_or(NOT_APPROVED).to_owned(),
                ),
                // M3, H2: the call waits here as it waits there.
                RelayedKind::AwaitingApproval => {
                    let reason = relayed.text().unwrap_or(AWAITING_APPROVAL).to_owned();
                    let arguments = relayed.arguments().cloned().unwrap_or_default();
                    return Self::awaiting_approval(reason, arguments);
                }
            }
        } else if let Some(approved) = error
            .tool_error()
            .filter(|_| error.kind() == ErrorKind::Handler)
        {
            (OutcomeKind::Rejected, approved.text().to_owned())
        } else {
            (OutcomeKind::Failed, FAILED.to_owned())
        };
        if matches!(kind, OutcomeKind::Failed | OutcomeKind::Fatal) {
            tracing::warn!(
                error = %format_args!("{error:#}"),
                kind = %error.kind(),
                permanent = error.is_permanent(),
                "tool call failed; the model is told only that it failed"
            );
        }
        Self {
            error: Some(error),
            violations,
            ..Self::plain(kind, text)
        }
    }

    /// How the call ended.
    pub fn kind(&self) -> OutcomeKind {
        self.kind
    }

    /// The text the model receives.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The violations, when the arguments broke the schema.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// The images (and audio) beside the text of a successful result (O3, M4).
    pub fn images(&self) -> &[Image] {
        &self.images
    }

    /// The resources beside the text of a successful result (M4).
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// The unredacted error, for the application (E3).
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Whether this outcome ends the run (P1, A6, E4).
    pub fn is_fatal(&self) -> bool {
        self.kind == OutcomeKind::Fatal
    }

    /// Whether the call waits for a decision or a result (H2, H5).
    pub fn is_pending(&self) -> bool {
        self.kind.is_pending()
    }

    /// Why the call awaits approval, as its predicate said (kind `AwaitingApproval`, H2).
    pub fn approval_reason(&self) -> Option<&str> {
        self.pending.as_ref().and_then(|p| p.reason.as_deref())
    }

    /// The arguments of a pending call as validated (S2: defaults filled in), rendered as
    /// JSON: what the handler would receive (kinds `AwaitingApproval` and `Deferred`, H2).
    pub fn validated_arguments(&self) -> Option<&Value> {
        self.pending.as_ref().map(|p| &p.arguments)
    }
}

/// What the error of an outcome read back from its recorded form says: the journal keeps the
/// error's kind, not its message or cause (W4).
pub const RECORDED_ERROR: &str = "the call's error is not recorded (a journal keeps its kind \
     only); the log of the process that ran the call holds its cause";

/// The recorded form of an [`Outcome`] (W4).
#[derive(Serialize, Deserialize)]
struct Recorded {
    kind: OutcomeKind,
    text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    violations: Vec<Violation>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    images: Vec<Image>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    resources: Vec<Resource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<RecordedError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    arguments: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

/// Of an outcome's error, what is recorded: what run control reads of it (its kind, whether
/// it ends the run, whether the tool asked the model to try again, L1), never its text.
#[derive(Serialize, Deserialize)]
struct RecordedError {
    kind: ErrorKind,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    permanent: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    retry: bool,
}

impl From<Outcome> for Recorded {
    fn from(outcome: Outcome) -> Self {
        let (arguments, reason) = match outcome.pending {
            Some(pending) => (Some(pending.arguments), pending.reason),
            None => (None, None),
        };
        Recorded {
            kind: outcome.kind,
            text: outcome.text,
            violations: outcome.violations,
            images: outcome.images,
            resources: outcome.resources,
            error: outcome.error.map(|error| RecordedError {
                kind: error.kind(),
                permanent: error.is_permanent(),
                retry: error.tool_error().is_some_and(ToolError::asks_retry),
            }),
            arguments,
            reason,
        }
    }
}

impl From<Recorded> for Outcome {
    fn from(recorded: Recorded) -> Self {
        let text = recorded.text.clone();
        let error = recorded.error.map(|recorded| {
            // The tool's request to try again (L1) survives as a `ToolError` of the
            // model-facing text, which the model read anyway.
            let error = if recorded.retry {
                Error::with_source(recorded.kind, RECORDED_ERROR, ToolError::retry(text))
            } else {
                Error::new(recorded.kind, RECORDED_ERROR)
            };
            if recorded.permanent {
                error.into_permanent()
            } else {
                error
            }
        });
        let pending = match recorded.arguments {
            Some(arguments) if recorded.kind.is_pending() => Some(Box::new(Pending {
                arguments,
                reason: recorded.reason,
            })),
            _ => None,
        };
        Outcome {
            kind: recorded.kind,
            text: recorded.text,
            violations: recorded.violations,
            images: recorded.images,
            resources: recorded.resources,
            error,
            pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(outcome: &Outcome) -> Outcome {
        let json = serde_json::to_string(outcome).expect("an outcome serializes");
        serde_json::from_str(&json).expect("its recorded form reads back")
    }

    /// W4: the recorded form keeps what the model read and the error's kind, never the
    /// error's message or cause.
    #[test]
    fn w4_recorded_outcome_keeps_no_error_message() {
        let secret = "connection to db-7.internal:5432 refused (password=hunter2)";
        let failed = Outcome::failure(Error::new(ErrorKind::Handler, secret));
        let json = serde_json::to_string(&failed).expect("serializes");
        assert!(
            !json.contains("hunter2") && !json.contains("db-7"),
            "{json}"
        );
        let back = round_trip(&failed);
        assert_eq!(back.kind(), OutcomeKind::Failed);
        assert_eq!(back.text(), FAILED);
        let error = back.error().expect("the error's kind is kept");
        assert_eq!(error.kind(), ErrorKind::Handler);
        assert_eq!(error.message(), RECORDED_ERROR);

        let fatal = Outcome::failure(Error::new(ErrorKind::Panic, secret));
        let back = round_trip(&fatal);
        assert!(back.is_fatal());
        assert!(back.error().is_some_and(Error::is_permanent));

        // L1: a tool's request to try again survives, its text being the model's anyway.
        let retry = Outcome::failure(Error::with_source(
            ErrorKind::Handler,
            secret,
            ToolError::retry("try a shorter id"),
        ));
        let back = round_trip(&retry);
        assert_eq!(
            (back.kind(), back.text()),
            (OutcomeKind::Rejected, "try a shorter id")
        );
        assert!(
            back.error()
                .and_then(Error::tool_error)
                .is_some_and(ToolError::asks_retry)
        );
        assert!(
            !serde_json::to_string(&retry)
                .expect("JSON")
                .contains("hunter2")
        );
    }

    /// W1: a pending call reads back pending, with its validated arguments and reason.
    #[test]
    fn w1_recorded_pending_outcome_round_trips() {
        let waiting =
            Outcome::awaiting_approval("restarts production", serde_json::json!({"n": 7}));
        let back = round_trip(&waiting);
        assert_eq!(back.kind(), OutcomeKind::AwaitingApproval);
        assert_eq!(back.approval_reason(), Some("restarts production"));
        assert_eq!(
            back.validated_arguments(),
            Some(&serde_json::json!({"n": 7}))
        );
        let success = round_trip(&Outcome::success("ok".into()));
        assert_eq!(
            (success.kind(), success.text()),
            (OutcomeKind::Success, "ok")
        );
        assert!(success.error().is_none() && success.validated_arguments().is_none());
    }
}
