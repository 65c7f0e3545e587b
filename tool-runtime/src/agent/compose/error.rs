//! [`SubAgentError`]: how the call of a sub-agent whose run gave no answer fails.

use tool_core::ErrorKind;

use crate::agent::error::RunError;

/// A sub-agent's run ended without an answer (B1): its kind and its message, with no cause
/// chain, so that nothing of the sub-agent's own failures (a tool's error meant for the
/// sub-agent's model, a permanent failure of one of its calls) reaches the parent's model or
/// ends the parent's run: the parent's model reads `the tool failed` (E2), and the
/// application reads this in the call's record (E3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the sub-agent's run ended without an answer ({kind}): {message}")]
pub struct SubAgentError {
    kind: ErrorKind,
    message: String,
}

impl SubAgentError {
    /// A failure of `kind`.
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The failure of the sub-agent's run `error`.
    pub(crate) fn of(error: &RunError) -> Self {
        Self::new(error.kind(), format!("{error:#}"))
    }

    /// The sub-agent's run paused: its parent pauses with it (B2).
    pub(crate) fn paused() -> Self {
        Self::new(
            ErrorKind::Paused,
            "the sub-agent's run paused; the parent's run pauses with it",
        )
    }

    /// How the sub-agent's run ended.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// What the sub-agent's run said of its end.
    pub fn message(&self) -> &str {
        &self.message
    }
}
