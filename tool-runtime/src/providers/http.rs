//! The HTTP side of every driver: one client per driver, requests with timeouts and
//! retries (V2), errors with the provider's status, message and request id, and never the
//! API key.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Url};
use tool_core::BoxError;
pub(crate) use tool_core::preview::preview;

use super::error::ConfigError;
use super::error_body::is_quota;
pub(crate) use super::error_body::parse_api_error;
use super::retry::{RetryPolicy, retry_after, should_retry_header, status_is_retryable};
use crate::model::{ApiError, ModelError};

/// The largest error body read from a failed response, in bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time to wait for the response's status and headers.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default longest silence while a reply streams (reasoning models think quietly).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// Why reading a provider's answer failed below the level of its events.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The request could not be sent: no connection, or it broke while sending.
    #[error("could not send the request to {endpoint} ({attempts} attempt(s))")]
    Send {
        /// The endpoint, without credentials or query.
        endpoint: String,
        /// How many attempts were made.
        attempts: u32,
        /// The HTTP client's error.
        #[source]
        source: BoxError,
    },
    /// The connection broke while the answer was read: the answer is incomplete.
    #[error(
        "the provider's answer stream ended before it was complete (the connection to \
         {endpoint} broke)"
    )]
    Read {
        /// The endpoint, without credentials or query.
        endpoint: String,
        /// The HTTP client's error.
        #[source]
        source: BoxError,
    },
    /// The stream ended before the provider's end marker: the answer is incomplete.
    #[error(
        "the provider's answer stream ended before it was complete (it never sent its end \
         marker `{expected}`)"
    )]
    Truncated {
        /// The end marker expected (`[DONE]`, `message_stop`, …).
        expected: &'static str,
    },
    /// The provider answered with a success status and an empty body, on every attempt.
    /// Nothing of an answer had come, so it was retried like a connection failure.
    #[error("the provider's answer from {endpoint} was empty ({attempts} attempt(s))")]
    Empty {
        /// The endpoint, without credentials or query.
        endpoint: String,
        /// How many attempts were made.
        attempts: u32,
    },
}

/// An API key. Neither `Debug` nor any error shows it.
#[derive(Clone)]
pub(crate) struct ApiKey(Arc<str>);

impl ApiKey {
    pub(crate) fn new(key: impl Into<String>) -> Self {
        Self(Arc::from(key.into()))
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// Timeouts, retries and extra headers, shared by every driver's builder.
#[derive(Debug, Clone)]
pub(crate) struct HttpSettings {
    pub(crate) connect_timeout: Duration,
    pub(crate) response_timeout: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) headers: Vec<(String, String)>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            retry: RetryPolicy::new(),
            headers: Vec::new(),
        }
    }
}

/// How a provider takes its key.
pub(crate) enum Auth {
    /// `authorization: Bearer <key>` (OpenAI and compatible servers).
    #[cfg(feature = "openai")]
    Bearer,
    /// The key as the value of this header (Anthropic's `x-api-key`, Gemini's
    /// `x-goog-api-key`).
    #[cfg(any(feature = "anthropic", feature = "gemini"))]
    Header(&'static str),
}

/// One provider endpoint: the URL requests go to, with the client and headers to send.
pub(crate) struct Endpoint {
    client: Client,
    url: Url,
    shown: String,
    headers: HeaderMap,
    key: Option<ApiKey>,
    settings: HttpSettings,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.shown)
            .field("key", &self.key)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The host and port requests go to (`server.address` and `server.port` of a request's
    /// span, K4); the scheme's port when the URL names none.
    pub(crate) fn server(&self) -> Option<(&str, u16)> {
        Some((self.url.host_str()?, self.url.port_or_known_default()?))
    }

    /// An endpoint at `path` under `base_url`.
    ///
    /// # Errors
    ///
    /// Returns a [`ConfigError`] for a base URL that is not absolute `http(s)`, a key or
    /// header that cannot be sent, or a client that cannot be built.
    pub(crate) fn new(
        base_url: &str,
        path: &str,
        key: Option<ApiKey>,
        auth: Auth,
        fixed: &[(&'static str, &str)],
        settings: HttpSettings,
    ) -> Result<Self, ConfigError> {
        let key = key.filter(|k| !k.expose().is_empty());
        let url = endpoint_url(base_url, path)?;
        let shown = shown_url(&url);
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        headers.insert(
            "user-agent",
            HeaderValue::from_static(concat!("tool-runtime/", env!("CARGO_PKG_VERSION"))),
        );
        for (name, value) in fixed {
            let value = HeaderValue::from_str(value).map_err(|_| ConfigError::InvalidHeader {
                name: (*name).to_owned(),
            })?;
            headers.insert(*name, value);
        }
        for (name, value) in &settings.headers {
            let invalid = || ConfigError::InvalidHeader { name: name.clone() };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            let mut value = HeaderValue::from_str(value).map_err(|_| invalid())?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        if let Some(key) = &key {
            let (name, text): (&str, String) = match auth {
                #[cfg(feature = "openai")]
                Auth::Bearer => ("authorization", format!("Bearer {}", key.expose())),
                #[cfg(any(feature = "anthropic", feature = "gemini"))]
                Auth::Header(name) => (name, key.expose().to_owned()),
            };
            let mut value = HeaderValue::from_str(&text).map_err(|_| ConfigError::InvalidApiKey)?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let client = Client::builder()
            .connect_timeout(settings.connect_timeout)
            .build()
            .map_err(|e| ConfigError::Client(Box::new(e.without_url())))?;
        Ok(Self {
            client,
            url,
            shown,
            headers,
            key,
            settings,
        })
    }

    /// The URL requests go to (without credentials or query).
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// `error` with the API key replaced wherever the provider's words echo it.
    pub(crate) fn scrub_error(&self, error: ModelError) -> ModelError {
        match error {
            ModelError::Api(mut api) => {
                api.message = scrub(&api.message, self.key.as_ref());
                ModelError::Api(api)
            }
            ModelError::Protocol(text) => ModelError::Protocol(scrub(&text, self.key.as_ref())),
            other => other,
        }
    }

    /// Sends `body` and waits for a success status and the first chunk of the answer,
    /// retrying what is worth retrying (V2). Nothing of the answer has been handed on yet, so
    /// a retry cannot duplicate or drop a piece of it.
    ///
    /// # Errors
    ///
    /// [`ModelError::Api`] for an error status (the last one, after retries),
    /// [`ModelError::Timeout`] when the provider did not answer in time (or its body stayed
    /// silent), [`ModelError::Transport`] ([`TransportError`]) when it could not be reached or
    /// its body was empty, and [`ModelError::Protocol`] when the body is not an event stream.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the request in flight (its connection closes).
    pub(crate) async fn open(&self, body: String) -> Result<Opened, ModelError> {
        let policy = self.settings.retry;
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let failure = match self.attempt(&body).await {
                Ok(opened) => return Ok(opened),
                Err(failure) => failure,
            };
            let wait = if attempt <= policy.retries() && failure.retryable() {
                policy.delay(attempt, failure.asked_wait())
            } else {
                None
            };
            match wait {
                Some(wait) => {
                    tracing::debug!(
                        endpoint = %self.shown,
                        attempt,
                        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        failure = %failure,
                        "retrying the model request"
                    );
                    tokio::time::sleep(wait).await;
                }
                None => return Err(self.give_up(failure, attempt)),
            }
        }
    }

    async fn attempt(&self, body: &str) -> Result<Opened, Failure> {
        let request = self
            .client
            .post(self.url.clone())
            .headers(self.headers.clone())
            .body(body.to_owned())
            .send();
        let response = match tokio::time::timeout(self.settings.response_timeout, request).await {
            Err(_) => return Err(Failure::Timeout(self.settings.response_timeout)),
            Ok(Err(e)) if e.is_timeout() => {
                return Err(Failure::Timeout(self.settings.connect_timeout));
            }
            Ok(Err(e)) => return Err(Failure::Send(e.without_url())),
            Ok(Ok(response)) => response,
        };
        let headers = response.headers().clone();
        let request_id = request_id(&headers);
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let body = read_capped(response, self.settings.response_timeout).await;
            let mut error = parse_api_error(Some(status), &body);
            error.message = scrub(&error.message, self.key.as_ref());
            error.request_id = request_id.or(error.request_id);
            error.retry_after = retry_after(&headers, SystemTime::now()).or(error.retry_after);
            let quota = is_quota(&error);
            let retryable = status_is_retryable(status, should_retry_header(&headers), quota);
            return Err(Failure::Status(error, retryable));
        }
        if let Some(content_type) = not_a_stream(&headers) {
            let body = read_capped(response, self.settings.response_timeout).await;
            return Err(Failure::NotAStream {
                content_type,
                body: String::from_utf8_lossy(&body).into_owned(),
            });
        }
        let mut opened = Opened {
            response,
            first: None,
            request_id,
            idle_timeout: self.settings.idle_timeout,
            endpoint: self.shown.clone(),
        };
        match opened.read(<[u8]>::to_vec).await {
            Ok(Some(first)) => {
                opened.first = Some(first);
                Ok(opened)
            }
            Ok(None) => Err(Failure::Empty),
            Err(ChunkError::Read(e)) => Err(Failure::Read(e.without_url())),
            Err(ChunkError::Idle(after)) => Err(Failure::Idle(after)),
        }
    }

    fn give_up(&self, failure: Failure, attempts: u32) -> ModelError {
        match failure {
            Failure::Status(mut error, _) => {
                error.attempts = attempts;
                ModelError::Api(error)
            }
            Failure::Timeout(after) | Failure::Idle(after) => ModelError::Timeout { after },
            Failure::Send(e) => ModelError::Transport(Box::new(TransportError::Send {
                endpoint: self.shown.clone(),
                attempts,
                source: Box::new(e),
            })),
            Failure::Read(e) => ModelError::Transport(Box::new(TransportError::Read {
                endpoint: self.shown.clone(),
                source: Box::new(e),
            })),
            Failure::Empty => ModelError::Transport(Box::new(TransportError::Empty {
                endpoint: self.shown.clone(),
                attempts,
            })),
            Failure::NotAStream { content_type, body } => {
                let mut text = format!(
                    "the provider answered with content type `{content_type}` where an event \
                     stream (`text/event-stream`) was expected"
                );
                let body = body.trim();
                if !body.is_empty() {
                    text.push_str(": ");
                    text.push_str(&preview(body, 300));
                }
                ModelError::Protocol(scrub(&text, self.key.as_ref()))
            }
        }
    }
}

/// A response whose status was a success, with the first chunk of its body read.
#[derive(Debug)]
pub(crate) struct Opened {
    response: reqwest::Response,
    first: Option<Vec<u8>>,
    request_id: Option<String>,
    idle_timeout: Duration,
    endpoint: String,
}

enum ChunkError {
    Read(reqwest::Error),
    Idle(Duration),
}

impl Opened {
    /// The request id the provider gave.
    pub(crate) fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The first chunk, read while opening (once; never empty: an empty body fails to open).
    pub(crate) fn take_first(&mut self) -> Option<Vec<u8>> {
        self.first.take()
    }

    /// Reads the next chunk of the body into `use_chunk`; `None` at its end.
    ///
    /// # Errors
    ///
    /// [`ModelError::Timeout`] after the idle timeout without data, and
    /// [`ModelError::Transport`] when the connection breaks.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future loses nothing already handed on.
    pub(crate) async fn next_chunk<R>(
        &mut self,
        use_chunk: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, ModelError> {
        self.read(use_chunk).await.map_err(|e| match e {
            ChunkError::Idle(after) => ModelError::Timeout { after },
            ChunkError::Read(e) => ModelError::Transport(Box::new(TransportError::Read {
                endpoint: self.endpoint.clone(),
                source: Box::new(e.without_url()),
            })),
        })
    }

    async fn read<R>(
        &mut self,
        use_chunk: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>, ChunkError> {
        match tokio::time::timeout(self.idle_timeout, self.response.chunk()).await {
            Err(_) => Err(ChunkError::Idle(self.idle_timeout)),
            Ok(Err(e)) => Err(ChunkError::Read(e)),
            Ok(Ok(chunk)) => Ok(chunk.map(|c| use_chunk(&c))),
        }
    }
}

/// Why one attempt failed.
enum Failure {
    Status(ApiError, bool),
    Timeout(Duration),
    Send(reqwest::Error),
    /// The body broke before its first byte.
    Read(reqwest::Error),
    /// The body stayed silent past the idle timeout before its first byte.
    Idle(Duration),
    /// A success status with an empty body.
    Empty,
    /// A success status with a body that is not an event stream.
    NotAStream {
        content_type: String,
        body: String,
    },
}

impl Failure {
    /// Whether another attempt may succeed. Every failure before the first byte of the
    /// answer is "before the answer" (nothing was handed on), so an empty or silent body is
    /// retried like a connection failure; a body that is not a stream is not.
    fn retryable(&self) -> bool {
        match self {
            Failure::Status(_, retryable) => *retryable,
            Failure::Timeout(_) | Failure::Read(_) | Failure::Idle(_) | Failure::Empty => true,
            Failure::Send(e) => !e.is_builder(),
            Failure::NotAStream { .. } => false,
        }
    }

    fn asked_wait(&self) -> Option<Duration> {
        match self {
            Failure::Status(error, _) => error.retry_after,
            _ => None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Status(error, _) => write!(f, "{error}"),
            Failure::Timeout(after) => write!(f, "no response within {after:?}"),
            Failure::Send(e) => write!(f, "{e}"),
            Failure::Read(e) => write!(f, "{e}"),
            Failure::Idle(after) => write!(f, "no data within {after:?}"),
            Failure::Empty => f.write_str("an empty answer"),
            Failure::NotAStream { content_type, .. } => {
                write!(f, "a `{content_type}` answer instead of an event stream")
            }
        }
    }
}

/// `base_url` joined with `path`, checked.
fn endpoint_url(base_url: &str, path: &str) -> Result<Url, ConfigError> {
    let invalid = |reason: &str| ConfigError::InvalidBaseUrl {
        url: base_url.to_owned(),
        reason: reason.to_owned(),
    };
    let base = Url::parse(base_url.trim()).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(base.scheme(), "http" | "https") {
        return Err(invalid("the scheme must be http or https"));
    }
    if base.query().is_some() || base.fragment().is_some() {
        return Err(invalid("a base URL has no query or fragment"));
    }
    let joined = format!("{}{path}", base.as_str().trim_end_matches('/'));
    Url::parse(&joined).map_err(|e| invalid(&e.to_string()))
}

/// A URL as errors show it: no user, password or query.
fn shown_url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.to_string()
}

/// The request id in the headers: OpenAI's `x-request-id` or Anthropic's `request-id`.
fn request_id(headers: &HeaderMap) -> Option<String> {
    ["x-request-id", "request-id"]
        .iter()
        .find_map(|name| headers.get(*name)?.to_str().ok())
        .map(str::to_owned)
}

/// The `content-type` of a success response that is not an event stream, as it was sent;
/// `None` for `text/event-stream` (any parameters, any case), and for a response that names
/// no type at all (some servers send their stream without one).
fn not_a_stream(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("content-type")?;
    let text = String::from_utf8_lossy(value.as_bytes());
    let media_type = text.split(';').next().unwrap_or_default().trim();
    let stream = media_type.is_empty() || media_type.eq_ignore_ascii_case("text/event-stream");
    (!stream).then(|| text.trim().to_owned())
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of a body, giving up quietly at `timeout`.
async fn read_capped(mut response: reqwest::Response, timeout: Duration) -> Vec<u8> {
    let mut body = Vec::new();
    let read = async {
        while body.len() < MAX_ERROR_BODY {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(timeout, read).await;
    body.truncate(MAX_ERROR_BODY);
    body
}

/// `text` with every occurrence of the key replaced.
pub(crate) fn scrub(text: &str, key: Option<&ApiKey>) -> String {
    match key {
        Some(key) if !key.expose().is_empty() && text.contains(key.expose()) => {
            text.replace(key.expose(), "[redacted]")
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_error_bodies_of_every_shape() {
        let openai = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        let e = parse_api_error(Some(429), openai);
        assert_eq!(e.message, "You exceeded your current quota");
        assert!(is_quota(&e));
        let anthropic = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#;
        let e = parse_api_error(Some(529), anthropic);
        assert_eq!(e.error_type.as_deref(), Some("overloaded_error"));
        assert_eq!(e.request_id.as_deref(), Some("req_1"));
        assert!(!is_quota(&e));
        let bare = parse_api_error(Some(404), br#"{"error":"model 'llama9' not found"}"#);
        assert_eq!(bare.message, "model 'llama9' not found");
        let vllm = parse_api_error(
            Some(400),
            br#"{"object":"error","message":"too long","type":"BadRequestError","code":400}"#,
        );
        assert_eq!(
            (vllm.message.as_str(), vllm.code.as_deref()),
            ("too long", Some("400"))
        );
        let html = parse_api_error(Some(502), b"<html>Bad gateway</html>");
        assert_eq!(html.message, "<html>Bad gateway</html>");
        let google = br#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}"#;
        let e = parse_api_error(Some(429), google);
        assert_eq!(e.error_type.as_deref(), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(e.code.as_deref(), Some("429"));
        assert_eq!(e.retry_after, Some(Duration::from_millis(1500)));
        let bad_delay = br#"{"error":{"message":"m","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-1s"}]}}"#;
        assert_eq!(parse_api_error(Some(429), bad_delay).retry_after, None);
        let empty = parse_api_error(Some(503), b"");
        assert_eq!(empty.message, "Service Unavailable");
    }

    #[test]
    fn urls_are_joined_and_checked() {
        let url = endpoint_url("https://api.example.invalid/v1/", "/chat/completions");
        assert_eq!(
            url.map(|u| u.to_string()).ok().as_deref(),
            Some("https://api.example.invalid/v1/chat/completions")
        );
        assert!(matches!(
            endpoint_url("ftp://x", "/y"),
            Err(ConfigError::InvalidBaseUrl { .. })
        ));
        assert!(endpoint_url("localhost:11434", "/v1").is_err());
        let secret = Url::parse("http://me:pw@host:1/v1?k=1").map(|u| shown_url(&u));
        assert_eq!(secret.ok().as_deref(), Some("http://host:1/v1"));
    }

    // V2: only an event stream (or a body of no named type) is read as one.
    #[test]
    fn only_an_event_stream_is_read_as_one() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert("content-type", HeaderValue::from_static(value));
            not_a_stream(&headers)
        };
        assert_eq!(with("text/event-stream"), None);
        assert_eq!(with("Text/Event-Stream ; charset=utf-8"), None);
        assert_eq!(with(""), None);
        assert_eq!(not_a_stream(&HeaderMap::new()), None);
        assert_eq!(
            with("text/html; charset=utf-8").as_deref(),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(
            with("application/json").as_deref(),
            Some("application/json")
        );
        assert_eq!(
            with("application/x-ndjson").as_deref(),
            Some("application/x-ndjson")
        );
    }

    #[test]
    fn keys_are_scrubbed_from_provider_messages() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(
            scrub("Incorrect API key provided: sk-secret-123.", Some(&key)),
            "Incorrect API key provided: [redacted]."
        );
        assert_eq!(format!("{key:?}"), "ApiKey([redacted])");
    }
}
