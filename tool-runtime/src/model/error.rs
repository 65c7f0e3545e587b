//! What can go wrong between the agent and a model: the driver's errors ([`ModelError`], with
//! the provider's own [`ApiError`]), a tool schema a driver cannot express
//! ([`SchemaUnsupported`]), and a reply or a transcript that cannot be a conversation
//! ([`ProtocolError`]); and [`preview`], how these errors quote what a model wrote.

use std::fmt;
use std::time::Duration;

use tool_core::BoxError;

/// The longest piece of a model-supplied id or name an error quotes, in characters.
const PREVIEW_CHARS: usize = 64;

/// `text`, cut to a short preview for errors and logs (the one preview helper of
/// [`tool_core::preview`], at this limit).
pub(crate) fn preview(text: &str) -> String {
    tool_core::preview::preview(text, PREVIEW_CHARS)
}

/// Why a model could not answer. Match on it; [`crate::RunError::model_error`] gives it back
/// from a failed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A [`crate::ScriptedModel`] was asked for more turns than it was given.
    #[error(
        "the scripted model ran out of script: request {request} arrived, but only {scripted} turn(s) were scripted"
    )]
    ScriptExhausted {
        /// The number of the request, from 1.
        request: usize,
        /// How many turns were scripted.
        scripted: usize,
    },
    /// The provider refused the request (a status that is not retried).
    #[error("the provider answered {status}: {message}")]
    Provider {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider could not be reached, the connection broke, or the answer stream ended
    /// before it was complete. Shows its cause's own message (for the built-in drivers, a
    /// `providers::TransportError`), which says which.
    #[error(transparent)]
    Transport(BoxError),
    /// The provider's reply could not be read as a turn.
    #[error("the model's reply broke the protocol: {0}")]
    Protocol(String),
    /// Any other failure of the driver. Shows its cause's own message.
    #[error(transparent)]
    Other(BoxError),
    /// The provider answered with an error: an error status (after any retries), or an error
    /// event in a stream that had started. Carries the status, the provider's own message and
    /// the request id.
    #[error("{0}")]
    Api(ApiError),
    /// A model failure recorded in a durable run's journal, read back on a replay: the
    /// recorded message (its kind and status, never the provider's text, W4).
    #[error("{0}")]
    Replayed(String),
    /// The provider did not answer in time: no connection, no response, or no new data in a
    /// stream within the configured timeout.
    #[error("the model provider did not answer within {after:?}")]
    Timeout {
        /// The timeout that ran out.
        after: Duration,
    },
}

/// An error the provider reported, with what it said about it. Never holds credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status, or `None` for an error reported inside a stream that had started with
    /// a success status.
    pub status: Option<u16>,
    /// The provider's own message.
    pub message: String,
    /// The provider's error type (`invalid_request_error`, `overloaded_error`, …), if given.
    pub error_type: Option<String>,
    /// The provider's error code (`insufficient_quota`, `rate_limit_exceeded`, …), if given.
    pub code: Option<String>,
    /// The request id the provider gave (`x-request-id` or `request-id`), for its support.
    pub request_id: Option<String>,
    /// How long the provider asked the client to wait before retrying, if it did.
    pub retry_after: Option<Duration>,
    /// How many HTTP requests were made for this answer, retries included (0 when unknown).
    pub attempts: u32,
}

impl ApiError {
    /// An error with this status (or `None`, in a stream) and message.
    pub fn new(status: Option<u16>, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            error_type: None,
            code: None,
            request_id: None,
            retry_after: None,
            attempts: 0,
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "the provider answered {status}: {}", self.message)?,
            None => write!(
                f,
                "the provider reported an error mid-stream: {}",
                self.message
            )?,
        }
        let mut details = Vec::new();
        if let Some(t) = &self.error_type {
            details.push(format!("type {t}"));
        }
        if let Some(c) = self
            .code
            .as_ref()
            .filter(|c| Some(*c) != self.error_type.as_ref())
        {
            details.push(format!("code {c}"));
        }
        if let Some(id) = &self.request_id {
            details.push(format!("request id {id}"));
        }
        if self.attempts > 1 {
            details.push(format!("after {} attempts", self.attempts));
        }
        if !details.is_empty() {
            write!(f, " ({})", details.join(", "))?;
        }
        Ok(())
    }
}

/// A tool's schema that a model (in its driver's mode) cannot express (V1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}{}", at_path(.path))]
pub struct SchemaUnsupported {
    reason: String,
    path: Option<String>,
}

fn at_path(path: &Option<String>) -> String {
    path.as_ref()
        .map(|p| format!(" (at {p})"))
        .unwrap_or_default()
}

impl SchemaUnsupported {
    /// The schema cannot be expressed, for this reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            path: None,
        }
    }

    /// The same problem, located at a JSON pointer into the schema.
    #[must_use]
    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.path = Some(pointer.into());
        self
    }

    /// Why the schema cannot be expressed.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Where in the schema, as a JSON pointer, if known.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }
}

/// A model reply or a transcript that cannot be part of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The model streamed a delta for a tool call it never started.
    #[error("the model streamed a delta for tool call #{index}, which it never started")]
    UnknownCallIndex {
        /// The call's index in the reply.
        index: usize,
    },
    /// The model started the tool call with one index twice.
    #[error("the model started tool call #{index} twice")]
    CallStartedTwice {
        /// The call's index in the reply.
        index: usize,
    },
    /// The model streamed arguments for a tool call it had ended.
    #[error("the model streamed arguments for tool call #{index} after ending it")]
    CallAlreadyEnded {
        /// The call's index in the reply.
        index: usize,
    },
    /// Two tool calls of one turn (or one assistant message) share an id: their results
    /// could not be told apart.
    #[error("two tool calls in one turn share the id {id:?}")]
    DuplicateCallId {
        /// The shared id (shortened).
        id: String,
    },
    /// A transcript holds a tool result that no assistant message asked for (or a second
    /// result for one call).
    #[error(
        "the transcript holds a result for call id {call_id:?}, which no assistant message asked for"
    )]
    UnrequestedResult {
        /// The result's call id (shortened).
        call_id: String,
    },
    /// A transcript leaves a tool call without a result.
    #[error("the transcript holds no result for the tool call {call_id:?}")]
    MissingResult {
        /// The call's id (shortened).
        call_id: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_cut_long_text() {
        assert_eq!(preview("short"), "short");
        let long = "x".repeat(1000);
        assert_eq!(preview(&long).chars().count(), PREVIEW_CHARS + 1);
    }
}
