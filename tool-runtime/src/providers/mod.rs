//! Drivers for real model providers (V1–V3): OpenAI's Chat Completions and Responses APIs,
//! Anthropic's Messages API, Google's Gemini API, and servers that speak OpenAI's Chat Completions API (Ollama,
//! vLLM, llama.cpp's server, LM Studio) or its Responses API (llama.cpp's server).
//!
//! Each driver is behind a cargo feature that is on by default: `openai` (which covers
//! OpenAI-compatible servers), `anthropic` and `gemini`; Amazon Bedrock's (`bedrock`) is behind
//! the feature `bedrock`, off by default.
//!
//! # Picking a provider from the environment
//!
//! [`from_env`] reads the variables below and returns the provider they name, so a program
//! switches from the [`crate::testing::OfflineModel`] to a real provider with one variable:
//!
//! ```no_run
//! use tool_runtime::{Agent, OfflineModel};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let builder = match tool_runtime::providers::from_env()? {
//!     Some(model) => Agent::builder(model),
//!     None => Agent::builder(OfflineModel::new()),
//! };
//! let agent = builder.instructions("You help operators plan maintenance.").build()?;
//! # let _ = agent; Ok(()) }
//! ```
//!
//! | variable | meaning |
//! |---|---|
//! | `OPENAI_API_KEY` | selects OpenAI (Chat Completions), strict mode on where a schema allows |
//! | `OPENAI_BASE_URL` | the API's base URL; set without a key, it selects an OpenAI-compatible server (strict mode off, `OPENAI_MODEL` required) |
//! | `OPENAI_MODEL` | the model; default [`openai::DEFAULT_MODEL`] (`gpt-5-mini`) |
//! | `ANTHROPIC_API_KEY` | selects Anthropic, when no OpenAI variable is set |
//! | `ANTHROPIC_BASE_URL` | the API's base URL; default `https://api.anthropic.com` |
//! | `ANTHROPIC_MODEL` | the model; default [`anthropic::DEFAULT_MODEL`] (`claude-sonnet-4-5`) |
//! | `GEMINI_API_KEY` (or `GOOGLE_API_KEY`) | selects Gemini, when no OpenAI or Anthropic variable is set |
//! | `GEMINI_BASE_URL` | the API's base URL; default `https://generativelanguage.googleapis.com` |
//! | `GEMINI_MODEL` | the model; default [`gemini::DEFAULT_MODEL`] (`gemini-2.5-flash`) |
//! | `AWS_BEARER_TOKEN_BEDROCK`, or `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` | select Amazon Bedrock (feature `bedrock`), when no OpenAI or Anthropic variable is set: SigV4 with the keys (and `AWS_SESSION_TOKEN`), else the API key; the keys select it only with `AWS_REGION` |
//! | `AWS_REGION` | Bedrock's region (required) |
//! | `BEDROCK_BASE_URL`, `BEDROCK_MODEL` | Bedrock's endpoint (default `https://bedrock-runtime.{region}.amazonaws.com`) and model |
//!
//! # Configuring a driver in code
//!
//! ```no_run
//! use std::time::Duration;
//! use tool_runtime::providers::RetryPolicy;
//! use tool_runtime::providers::anthropic::Anthropic;
//! use tool_runtime::providers::openai::{OpenAiChat, OpenAiResponses, StrictMode};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let openai = OpenAiChat::builder()
//!     .api_key("sk-…")
//!     .model("gpt-5-mini")
//!     .strict(StrictMode::Require) // every tool's schema must be strict-capable
//!     .retry(RetryPolicy::new().max_retries(4))
//!     .build()?;
//! let responses = OpenAiResponses::builder().api_key("sk-…").build()?;
//! let ollama = OpenAiChat::compatible("http://localhost:11434/v1")
//!     .model("llama3.2")
//!     .build()?;
//! let claude = Anthropic::builder()
//!     .api_key("sk-ant-…")
//!     .max_tokens(2048)
//!     .response_timeout(Duration::from_secs(30))
//!     .build()?;
//! # let _ = (openai, responses, ollama, claude); Ok(()) }
//! ```
//!
//! # What every driver does
//!
//! - Each tool's schema is adapted once, when the agent is built ([`crate::model::Model::tool_spec`]),
//!   and the tool is rendered to its wire JSON then; requests reuse that text.
//! - Requests stream (server-sent events). Text and each call's raw argument fragments are
//!   passed on as they come; the agent validates the arguments (R5).
//! - A request is retried on a connection failure, a timeout before the answer, and the
//!   statuses 408, 409, 429 and 5xx, with bounded exponential backoff and jitter, honouring
//!   `retry-after-ms`, `retry-after`, `x-should-retry` and the `retryDelay` of a Google error's
//!   `google.rpc.RetryInfo` ([`RetryPolicy`]); never once any
//!   of the answer was handed on. A success status whose body is empty, or stays silent past
//!   the idle timeout before its first byte, is still before the answer and is retried too.
//!   A 429 for `insufficient_quota`, and 400, 401, 403 and 404, are returned at once as
//!   [`crate::model::ModelError::Api`], with the status, the provider's message and the request id.
//! - A success response is read as an event stream only if its `content-type` says
//!   `text/event-stream` (or it names none); anything else (a proxy's HTML page, JSON) is a
//!   [`crate::model::ModelError::Protocol`] that names the type and shows the start of the body, and
//!   is not retried.
//! - A stream that ends before the provider's end marker (Gemini's: a `finishReason`), cleanly
//!   or with the connection
//!   broken, is an error whose message says the answer stream ended before it was complete
//!   ([`TransportError::Truncated`], [`TransportError::Read`]), never a silent partial
//!   answer; an event that is not JSON is a [`crate::model::ModelError::Protocol`]; unknown event
//!   types are ignored.
//! - Dropping the stream closes the connection (P4).
//! - The API key is sent only in its header, which is marked sensitive; no error and no
//!   `Debug` output shows it, and a provider message that echoes it has it replaced.
//!
//! # Limits
//!
//! - Only text and tool calls are read from a reply: reasoning items (Responses), thinking
//!   blocks (Anthropic) and server-side tools are ignored, and not sent back. Turning on
//!   Anthropic's extended thinking with tools (through [`anthropic::AnthropicBuilder::body_field`])
//!   is therefore not supported. (Bedrock's reasoning is read and sent back: see
//!   [`bedrock`].)
//! - Responses requests are stateless (`store: false`, the whole conversation each time).
//! - A tool call whose arguments are not a JSON object goes back to Anthropic with an empty
//!   `input`, and to Gemini with empty `args` (the APIs take only objects); its result already
//!   told the model what was wrong.
//! - Gemini: images and PDFs in a tool result go as `functionResponse.parts` on the models
//!   after the 2.x line, and as lines of text that stand for them (M4) before it; audio always
//!   goes as text. Parallel calls cannot be turned off (the API has no
//!   switch); thought parts are not passed on, and only the signatures of function calls are
//!   sent back (not those of text parts, which the API does not require).

// With Bedrock alone, the server-sent-event pipeline of the other drivers is not used.
#![cfg_attr(
    not(any(feature = "openai", feature = "anthropic")),
    allow(dead_code, unused_variables, unreachable_code)
)]

mod error;
mod error_body;
mod http;
mod retry;
pub mod sse;
mod stream;

mod env;
#[cfg(all(test, feature = "openai", feature = "anthropic"))]
mod recorded;

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(feature = "bedrock")]
pub mod bedrock;
#[cfg(feature = "gemini")]
pub mod gemini;
#[cfg(feature = "openai")]
pub mod openai;

use std::time::Duration;

use serde_json::{Map, Value};

pub use env::{EnvModel, from_env, from_lookup};
pub use error::ConfigError;
pub use http::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_RESPONSE_TIMEOUT, TransportError,
};
pub use retry::RetryPolicy;

use http::{ApiKey, HttpSettings};

/// A request that a driver refuses to send, before any I/O.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// More tools than the provider takes in one request.
    #[error("the request advertises {count} tools, more than the provider's limit of {limit}")]
    TooManyTools {
        /// How many tools the request holds.
        count: usize,
        /// The provider's limit.
        limit: usize,
    },
    /// The tool choice names a tool that the request does not advertise (a misspelt name,
    /// or a tool unavailable to this context, A2). A provider would refuse it, or (some
    /// OpenAI-compatible servers) silently ignore it.
    #[error(
        "the tool choice names the tool `{name}`, which this request does not advertise (it \
         is not among the agent's tools, or is unavailable to this context)"
    )]
    UnknownToolChoice {
        /// The tool named.
        name: String,
    },
}

/// What every driver's builder holds: key, base URL, model, HTTP settings, extra body.
#[derive(Debug, Clone, Default)]
pub(crate) struct Common {
    pub(crate) api_key: Option<ApiKey>,
    pub(crate) base_url: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) http: HttpSettings,
    pub(crate) body: Map<String, Value>,
}

impl Common {
    fn set_timeout(&mut self, which: Timeout, after: Duration) {
        match which {
            Timeout::Connect => self.http.connect_timeout = after,
            Timeout::Response => self.http.response_timeout = after,
            Timeout::Idle => self.http.idle_timeout = after,
        }
    }
}

#[derive(Clone, Copy)]
enum Timeout {
    Connect,
    Response,
    Idle,
}

/// The setters every driver's builder has.
#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
macro_rules! common_setters {
    () => {
        /// Sets the API key. It is sent only in its header, and no error or `Debug` output
        /// shows it.
        pub fn api_key(mut self, key: impl Into<String>) -> Self {
            self.common.api_key = Some($crate::providers::http::ApiKey::new(key));
            self
        }

        /// Sets the base URL of the API, such as `http://localhost:11434/v1`.
        pub fn base_url(mut self, url: impl Into<String>) -> Self {
            self.common.base_url = Some(url.into());
            self
        }

        /// Sets the model's name.
        pub fn model(mut self, model: impl Into<String>) -> Self {
            self.common.model = Some(model.into());
            self
        }

        /// Sets how long connecting may take (default
        /// [`DEFAULT_CONNECT_TIMEOUT`](crate::providers::DEFAULT_CONNECT_TIMEOUT), 10 s).
        pub fn connect_timeout(mut self, after: ::std::time::Duration) -> Self {
            self.common
                .set_timeout($crate::providers::Timeout::Connect, after);
            self
        }

        /// Sets how long to wait for the response's status and headers, per attempt
        /// (default [`DEFAULT_RESPONSE_TIMEOUT`](crate::providers::DEFAULT_RESPONSE_TIMEOUT),
        /// 60 s). A timeout is retried like a connection failure.
        pub fn response_timeout(mut self, after: ::std::time::Duration) -> Self {
            self.common
                .set_timeout($crate::providers::Timeout::Response, after);
            self
        }

        /// Sets the longest silence while the answer streams (default
        /// [`DEFAULT_IDLE_TIMEOUT`](crate::providers::DEFAULT_IDLE_TIMEOUT), 600 s, since
        /// reasoning models may think quietly for minutes).
        pub fn idle_timeout(mut self, after: ::std::time::Duration) -> Self {
            self.common
                .set_timeout($crate::providers::Timeout::Idle, after);
            self
        }

        /// Sets the retry policy (default [`RetryPolicy::new`](crate::providers::RetryPolicy::new)).
        pub fn retry(mut self, policy: $crate::providers::RetryPolicy) -> Self {
            self.common.http.retry = policy;
            self
        }

        /// Adds a header to every request (an organization or project id, a proxy's token, a
        /// beta flag). Its value is treated as sensitive and never shown.
        pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.common.http.headers.push((name.into(), value.into()));
            self
        }

        /// Adds a field to every request's JSON body, or replaces one the driver sets
        /// (`temperature`, `reasoning`, `metadata`, …). The tool list cannot be replaced.
        pub fn body_field(mut self, key: impl Into<String>, value: ::serde_json::Value) -> Self {
            self.common.body.insert(key.into(), value);
            self
        }
    };
}

#[cfg(any(
    feature = "openai",
    feature = "anthropic",
    feature = "gemini",
    feature = "bedrock"
))]
pub(crate) use common_setters;

/// The start of a [`crate::model::ToolCall::signature`] that holds Bedrock's reasoning blocks
/// (V3): the Bedrock driver sends them back before the calls, and the others take such a call
/// as unsigned.
#[cfg(any(feature = "gemini", feature = "bedrock"))]
pub(crate) const REASONING_SIGNATURE: &str = "bedrock.reasoning:";

/// A tool's description as a provider without a field for input examples reads it (Q3, V4):
/// the description, then each example as one line of JSON; the description alone when the
/// tool has none.
pub(crate) fn described(tool: &tool_core::Tool) -> std::borrow::Cow<'_, str> {
    if tool.examples().is_empty() {
        return std::borrow::Cow::Borrowed(tool.description());
    }
    let mut text = format!("{}\n\nExamples of input:", tool.description());
    for example in tool.examples() {
        text.push('\n');
        text.push_str(&example.to_string());
    }
    std::borrow::Cow::Owned(text)
}

/// `head` (a JSON object) with `"tools": [...]` made of the already-rendered `tools`
/// appended, so requests never re-serialize a tool's schema.
pub(crate) fn with_tools(head: &Map<String, Value>, tools: &[&str]) -> String {
    let mut head = head.clone();
    if !tools.is_empty() {
        head.remove("tools");
    }
    let mut body = Value::Object(head.clone()).to_string();
    if tools.is_empty() {
        return body;
    }
    body.pop(); // the closing brace
    if !head.is_empty() {
        body.push(',');
    }
    body.push_str("\"tools\":[");
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(tool);
    }
    body.push_str("]}");
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_spliced_as_rendered() {
        let mut head = Map::new();
        head.insert("model".into(), "m".into());
        let body = with_tools(&head, &[r#"{"name":"a"}"#, r#"{"name":"b"}"#]);
        let parsed: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            parsed,
            serde_json::json!({"model": "m", "tools": [{"name": "a"}, {"name": "b"}]})
        );
        assert_eq!(with_tools(&head, &[]), r#"{"model":"m"}"#);
        let empty = with_tools(&Map::new(), &["{}"]);
        assert_eq!(empty, r#"{"tools":[{}]}"#);
        head.insert("tools".into(), "not these".into());
        assert_eq!(with_tools(&head, &["{}"]), r#"{"model":"m","tools":[{}]}"#);
    }
}
