//! [`ResumeError`]: why a paused run cannot be resumed (H3, H4).

use super::PendingKind;

/// Why a paused run was refused: it cannot be read, it was altered, the agent's tools are not
/// the ones it paused with, or the decisions do not fit its pending calls (H3, H4). Match on
/// it: each variant says which.
///
/// [`crate::Agent::resume`] returns it as a [`crate::RunError`] of kind
/// [`tool_core::ErrorKind::Resume`] ([`crate::RunError::resume_error`]); nothing ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The text is not a paused run (not JSON, or not of its shape).
    #[error("this is not a paused run: {reason}")]
    Malformed {
        /// What the reader found wrong.
        reason: String,
    },
    /// The paused run was written in another format or version than this build reads.
    #[error(
        "the paused run is in format `{format}` version {version}; this build reads `{}` \
         version {}",
        super::FORMAT,
        super::VERSION
    )]
    Version {
        /// The format it names.
        format: String,
        /// The version it names.
        version: u32,
    },
    /// The content does not match its digest: the paused run was altered after it was
    /// written (or, for a keyed state written before seals named their key, sealed under
    /// another key).
    #[error("the paused run was altered after it was written: its content does not match its seal")]
    Altered,
    /// The paused run was sealed with another key than this agent's: its seal names a key
    /// that is not this one. Nothing says it was altered; resume it with the key it was
    /// sealed with.
    #[error(
        "the state was sealed with another key than this agent's: set the key it was sealed \
         with (`AgentBuilder::state_key`)"
    )]
    WrongKey,
    /// The paused run is sealed with a key, and this agent has none.
    #[error(
        "the paused run is sealed with a key, and this agent has none: set the same key with \
         `AgentBuilder::state_key`"
    )]
    KeyRequired,
    /// This agent has a key, and the paused run is sealed without one: anyone could have
    /// written it.
    #[error(
        "the paused run is sealed without a key, and this agent requires one: anyone could \
         have written it"
    )]
    NotKeyed,
    /// A tool advertised when the run paused is not held by this agent.
    #[error("tool `{tool}` was advertised when the run paused, and this agent does not hold it")]
    ToolMissing {
        /// The tool's name.
        tool: String,
    },
    /// A tool advertised when the run paused changed since: its schema, or whether it has a
    /// handler here.
    #[error(
        "tool `{tool}` changed since the run paused (its input schema, or whether it has a \
         handler here)"
    )]
    ToolChanged {
        /// The tool's name.
        tool: String,
    },
    /// The paused run's parts do not fit together (a pending call that is not a call of its
    /// last turn, say).
    #[error("the paused run is inconsistent: {reason}")]
    Inconsistent {
        /// What does not fit.
        reason: String,
    },
    /// A pending call has no decision.
    #[error("pending call `{call_id}` has no decision: approve or deny every pending call")]
    Undecided {
        /// The call's id.
        call_id: String,
    },
    /// A decision names a call that is not pending.
    #[error("a decision names call `{call_id}`, which is not a pending call of this run")]
    UnknownCall {
        /// The id the decision names.
        call_id: String,
    },
    /// The pause was resumed before (H9): the ledger given to the resume had consumed its
    /// id. Resuming it again would run its approved calls twice.
    #[error("pause `{pause_id}` of run `{run_id}` was resumed before: a paused run resumes once")]
    Replayed {
        /// The run's id.
        run_id: String,
        /// The pause's id.
        pause_id: String,
    },
    /// The ledger could not record the resume (H9); nothing ran.
    #[error("the ledger could not record the resume of pause `{pause_id}`: {reason}")]
    Ledger {
        /// The pause's id.
        pause_id: String,
        /// The store's failure.
        reason: String,
    },
    /// The run wants a typed final answer (O2), and the resume named none, or another type
    /// (a schema that differs from the one the run started with); or the run wants none and
    /// the resume named one.
    #[error("{}", answer_mismatch(*wanted))]
    AnswerMismatch {
        /// Whether the paused run wants a typed answer.
        wanted: bool,
    },
    /// A decision does not fit its call: an approval for a deferred call (which needs its
    /// result), or a result for a call awaiting approval.
    #[error("{}", wrong_decision(call_id, *kind))]
    WrongDecision {
        /// The call's id.
        call_id: String,
        /// What the call waits for.
        kind: PendingKind,
    },
    /// The arguments an approver gave a call (B3) do not fit its tool's schema: the resume is
    /// refused, and nothing ran.
    #[error("{}", invalid_arguments(call_id, violations))]
    InvalidArguments {
        /// The call's id.
        call_id: String,
        /// What does not fit, as the parser found it (S3).
        violations: Vec<tool_core::Violation>,
    },
    /// The paused run of a sub-agent (B2) was refused: `path` names the calls that lead to
    /// it, from the top-level run's.
    #[error("the paused run of the sub-agent started by call `{}` was refused: {error}", path.join("` > `"))]
    Nested {
        /// The call ids from the top-level run's call to the one that started the refused run.
        path: Vec<String>,
        /// Why it was refused.
        error: Box<ResumeError>,
    },
}

fn invalid_arguments(call_id: &str, violations: &[tool_core::Violation]) -> String {
    let listed: Vec<String> = violations
        .iter()
        .map(|v| {
            let at = if v.path.is_empty() {
                "/"
            } else {
                v.path.as_str()
            };
            format!("{at}: {}", v.message)
        })
        .collect();
    format!(
        "the arguments given to approve call `{call_id}` do not fit its tool's schema: {}",
        listed.join("; ")
    )
}

fn answer_mismatch(wanted: bool) -> &'static str {
    if wanted {
        "the paused run wants a typed final answer: resume it with `RunRequest::resume(..).typed::<T>()` and \
         the answer type it was started with (the same schema)"
    } else {
        "the paused run wants no typed final answer: resume it with `Agent::resume`"
    }
}

fn wrong_decision(call_id: &str, kind: PendingKind) -> String {
    match kind {
        PendingKind::Approval => format!(
            "call `{call_id}` awaits approval: approve or deny it (a result is for deferred calls)"
        ),
        PendingKind::Deferred => format!(
            "call `{call_id}` is deferred: give its result or deny it (there is no handler here to \
             approve)"
        ),
        PendingKind::Nested => format!(
            "call `{call_id}` started a sub-agent run that paused: give that run's decisions \
             (`Decisions::nested`) or deny the call"
        ),
    }
}
