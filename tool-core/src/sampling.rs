//! Asking the client's model in the middle of a call (M8): [`Context::sample`](crate::Context::sample),
//! and the [`Sampler`] a transport or an agent puts in the call's context to carry the request.
//!
//! Over MCP the request is a `sampling/createMessage` to the client, whose model answers
//! (before 2026-07-28 during the call; on 2026-07-28 in the call's answer, round by round); in
//! an agent run it is the application's sampling handler, or the run's own model when the
//! application says so. Only text is asked and taken: an answer that is not one text block of
//! the assistant, or is larger than [`MAX_ANSWER_BYTES`], is an error, never unchecked data.

use std::future::Future;
use std::pin::Pin;

use crate::Context;

/// A boxed future, as a [`Sampler`] returns.
pub type SampleFuture<'a> =
    Pin<Box<dyn Future<Output = Result<SamplingAnswer, SampleError>> + Send + 'a>>;

/// The largest answer a handler is given, in bytes of text: a larger one is
/// [`SampleError::TooLarge`].
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The most messages one request may carry.
pub const MAX_MESSAGES: usize = 256;

/// Who said a message of a [`SamplingRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplingRole {
    /// The user (the request's question).
    User,
    /// The model (an earlier answer).
    Assistant,
}

/// One text message of a [`SamplingRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingMessage {
    /// Who said it.
    pub role: SamplingRole,
    /// What was said.
    pub text: String,
}

impl SamplingMessage {
    /// A message of the user.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: SamplingRole::User,
            text: text.into(),
        }
    }

    /// A message of the model.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: SamplingRole::Assistant,
            text: text.into(),
        }
    }
}

/// What a handler asks the client's model (M8): a conversation of text messages, at most
/// `max_tokens` tokens of answer, and optionally a system prompt, a temperature and stop
/// sequences. The client (its user) may change or refuse it.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The conversation, the last message the user's.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// A system prompt the client may use.
    pub system_prompt: Option<String>,
    /// The sampling temperature, 0 to 1.
    pub temperature: Option<f32>,
    /// Where the model should stop.
    pub stop_sequences: Vec<String>,
}

impl SamplingRequest {
    /// A request of one user message, `prompt`, answered in at most `max_tokens` tokens.
    pub fn new(prompt: impl Into<String>, max_tokens: u32) -> Self {
        Self {
            messages: vec![SamplingMessage::user(prompt)],
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
        }
    }

    /// The same request with `system_prompt`.
    #[must_use]
    pub fn with_system_prompt(mut self, system_prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(system_prompt.into());
        self
    }

    /// The same request with `message` after its messages.
    #[must_use]
    pub fn with_message(mut self, message: SamplingMessage) -> Self {
        self.messages.push(message);
        self
    }

    /// Whether the request can be asked: it has 1 to [`MAX_MESSAGES`] messages and asks for
    /// at least one token.
    ///
    /// # Errors
    ///
    /// [`SampleError::Request`] naming what is wrong.
    pub fn check(&self) -> Result<(), SampleError> {
        if self.messages.is_empty() || self.messages.len() > MAX_MESSAGES {
            return Err(SampleError::Request(
                "a sampling request has 1 to 256 messages",
            ));
        }
        if self.max_tokens == 0 {
            return Err(SampleError::Request(
                "a sampling request asks for at least one token",
            ));
        }
        Ok(())
    }
}

/// What the client's model answered (M8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingAnswer {
    /// The answer's text.
    pub text: String,
    /// The model that answered, as the client names it.
    pub model: String,
    /// Why the model stopped (`endTurn`, `maxTokens`, …), when the client says.
    pub stop_reason: Option<String>,
}

impl SamplingAnswer {
    /// Whether the answer can be given to a handler: its text is at most
    /// [`MAX_ANSWER_BYTES`] bytes.
    ///
    /// # Errors
    ///
    /// [`SampleError::TooLarge`].
    pub fn check(self) -> Result<Self, SampleError> {
        if self.text.len() > MAX_ANSWER_BYTES {
            return Err(SampleError::TooLarge {
                limit: MAX_ANSWER_BYTES,
            });
        }
        Ok(self)
    }
}

/// Why the client's model could not be asked or its answer taken (M8). A handler that returns
/// it fails as any handler failure does: redacted for the model (E2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleError {
    /// Nobody in this call can be asked: the MCP client declared no sampling, or the agent has
    /// no sampler.
    #[error(
        "the client cannot sample: it declared no sampling capability, or the agent has no sampler"
    )]
    Unsupported,
    /// The request cannot be asked.
    #[error("the sampling request cannot be asked: {0}")]
    Request(&'static str),
    /// The client refused the request (its user said no, say).
    #[error("the client refused the sampling request: {0}")]
    Refused(String),
    /// The answer is not one the handler can take: not text, not the model's, not the shape
    /// of a sampling answer.
    #[error("the sampling answer is not one a handler can take: {0}")]
    Invalid(String),
    /// The answer's text is larger than a handler is given.
    #[error("the sampling answer is larger than {limit} bytes")]
    TooLarge {
        /// The limit, [`MAX_ANSWER_BYTES`].
        limit: usize,
    },
    /// The call was cancelled while its model was asked.
    #[error("the call was cancelled while the client's model was asked")]
    Cancelled,
    /// The transport failed to ask or to bring the answer back.
    #[error("the client's model could not be asked: {0}")]
    Failed(String),
}

/// Carries a call's sampling request to whoever can answer it (M8): an MCP server's client, an
/// agent's sampler. Transports and agents put one in a call's context
/// ([`Context::with_sampler`]); handlers ask through [`Context::sample`].
pub trait Sampler: Send + Sync {
    /// Asks `request` (checked before), named `key` when the handler named it
    /// ([`Context::sample_named`]): over MCP 2026-07-28 the key of its input request.
    fn sample<'a>(&'a self, key: Option<&'a str>, request: &'a SamplingRequest)
    -> SampleFuture<'a>;
}

impl<F, Fut> Sampler for F
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<SamplingAnswer, SampleError>> + Send + 'static,
{
    fn sample<'a>(
        &'a self,
        _key: Option<&'a str>,
        request: &'a SamplingRequest,
    ) -> SampleFuture<'a> {
        Box::pin(self(request.clone()))
    }
}

impl Context {
    /// The same context, asking its sampling requests through `sampler` (M8). Transports and
    /// agents call this for a call's context.
    #[must_use]
    pub fn with_sampler(mut self, sampler: std::sync::Arc<dyn Sampler>) -> Self {
        self.sampler = Some(sampler);
        self
    }

    /// Whether the client's model can be asked in this call ([`Context::sample`]).
    pub fn can_sample(&self) -> bool {
        self.sampler.is_some()
    }

    /// Asks the client's model `request` (M8) and gives its text answer.
    ///
    /// # Errors
    ///
    /// [`SampleError::Unsupported`] when nobody can be asked here (the client cannot sample);
    /// [`SampleError::Request`] for a request that cannot be asked; [`SampleError::Invalid`]
    /// and [`SampleError::TooLarge`] for an answer a handler cannot take;
    /// [`SampleError::Refused`], [`SampleError::Cancelled`] and [`SampleError::Failed`] as
    /// the transport reports.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingAnswer, SampleError> {
        self.sample_as(None, request).await
    }

    /// Asks as [`Context::sample`] does, naming the request `key` (over MCP 2026-07-28 the key
    /// of its input request; elsewhere not shown). A call's requests have names of their own.
    ///
    /// # Errors
    ///
    /// As [`Context::sample`]; [`SampleError::Request`] when `key` is not 1 to 64 ASCII
    /// letters, digits, `_`, `-` and `.`, or has the form `question-N`, which unnamed
    /// questions get.
    pub async fn sample_named(
        &self,
        key: &str,
        request: SamplingRequest,
    ) -> Result<SamplingAnswer, SampleError> {
        crate::elicit::check_key(key).map_err(|error| {
            SampleError::Request(match error {
                crate::elicit::ElicitError::Key { reason, .. } => reason,
                _ => "a request's name is 1 to 64 ASCII letters, digits, `_`, `-` and `.`",
            })
        })?;
        self.sample_as(Some(key), request).await
    }

    async fn sample_as(
        &self,
        key: Option<&str>,
        request: SamplingRequest,
    ) -> Result<SamplingAnswer, SampleError> {
        let Some(sampler) = self.sampler.as_deref() else {
            return Err(SampleError::Unsupported);
        };
        request.check()?;
        sampler.sample(key, &request).await?.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn m8_sampling_without_a_sampler_is_refused_as_unsupported() {
        let ctx = Context::new();
        assert!(!ctx.can_sample());
        let refused = ctx.sample(SamplingRequest::new("hi", 10)).await;
        assert_eq!(refused, Err(SampleError::Unsupported));
    }

    #[tokio::test]
    async fn m8_a_huge_answer_and_a_bad_request_are_clear_errors() {
        let huge = |_request: SamplingRequest| async {
            Ok(SamplingAnswer {
                text: "x".repeat(MAX_ANSWER_BYTES + 1),
                model: "m".into(),
                stop_reason: None,
            })
        };
        let ctx = Context::new().with_sampler(Arc::new(huge));
        let answer = ctx.sample(SamplingRequest::new("hi", 10)).await;
        assert_eq!(
            answer,
            Err(SampleError::TooLarge {
                limit: MAX_ANSWER_BYTES
            })
        );
        let zero = ctx.sample(SamplingRequest::new("hi", 0)).await;
        assert!(matches!(zero, Err(SampleError::Request(_))), "{zero:?}");
        let bad_key = ctx.sample_named("a b", SamplingRequest::new("hi", 5)).await;
        assert!(
            matches!(bad_key, Err(SampleError::Request(_))),
            "{bad_key:?}"
        );
    }
}
