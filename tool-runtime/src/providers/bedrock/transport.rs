//! Sending a Converse request: each attempt signed anew (SigV4's date is part of the
//! signature), retried on a connection failure, a timeout, 408, 429, 5xx and the
//! exceptions that say to wait (`ThrottlingException`, `ServiceUnavailableException`,
//! `ModelNotReadyException`, `InternalServerException`), never once the answer has begun (V2).

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Url};

use super::auth::{self, Auth};
use crate::model::{ApiError, ModelError};
use crate::providers::ConfigError;
use crate::providers::http::{HttpSettings, TransportError, parse_api_error, preview};
use crate::providers::retry::{retry_after, status_is_retryable};

/// The largest error body read, in bytes.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// The exceptions worth another attempt.
const RETRYABLE: [&str; 4] = [
    "ThrottlingException",
    "ServiceUnavailableException",
    "ModelNotReadyException",
    "InternalServerException",
];

/// Where requests go and how they are sent.
#[derive(Debug)]
pub(super) struct Transport {
    client: Client,
    url: Url,
    shown: String,
    auth: Auth,
    headers: HeaderMap,
    pub(super) settings: HttpSettings,
}

/// A response whose status was a success.
#[derive(Debug)]
pub(super) struct Opened {
    response: reqwest::Response,
    first: Option<bytes::Bytes>,
    pub(super) request_id: Option<String>,
    idle_timeout: Duration,
    endpoint: String,
}

enum Failure {
    Status(ApiError, bool),
    Timeout(Duration),
    Send(reqwest::Error),
    Sign(String),
    /// A success whose body was empty: nothing was handed on, so it is retried.
    Empty,
    /// A success whose body broke before its first byte.
    Read(reqwest::Error),
    /// A success whose body stayed silent past the idle timeout before its first byte.
    Idle(Duration),
}

impl Transport {
    /// A transport to `url` (already joined and checked).
    pub(super) fn new(url: Url, auth: Auth, settings: HttpSettings) -> Result<Self, ConfigError> {
        let mut headers = HeaderMap::new();
        for (name, value) in &settings.headers {
            let invalid = || ConfigError::InvalidHeader { name: name.clone() };
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            let mut value = HeaderValue::from_str(value).map_err(|_| invalid())?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        if let Auth::Bearer(key) = &auth {
            HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                .map_err(|_| ConfigError::InvalidApiKey)?;
        }
        let client = Client::builder()
            .connect_timeout(settings.connect_timeout)
            .build()
            .map_err(|e| ConfigError::Client(Box::new(e.without_url())))?;
        let mut shown = url.clone();
        shown.set_query(None);
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        Ok(Self {
            client,
            shown: shown.to_string(),
            url,
            auth,
            headers,
            settings,
        })
    }

    /// The URL requests go to.
    pub(super) fn shown(&self) -> &str {
        &self.shown
    }

    /// The host and port requests go to.
    pub(super) fn server(&self) -> Option<(&str, u16)> {
        Some((self.url.host_str()?, self.url.port_or_known_default()?))
    }

    /// Sends `body` until a success status, retrying what is worth retrying.
    pub(super) async fn open(
        &self,
        body: &str,
        accept: &'static str,
    ) -> Result<Opened, ModelError> {
        let policy = self.settings.retry;
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let failure = match self.attempt(body, accept).await {
                Ok(opened) => return Ok(opened),
                Err(failure) => failure,
            };
            let (retryable, asked) = match &failure {
                Failure::Status(error, retryable) => (*retryable, error.retry_after),
                Failure::Timeout(_) | Failure::Empty | Failure::Read(_) | Failure::Idle(_) => {
                    (true, None)
                }
                Failure::Send(e) => (!e.is_builder(), None),
                Failure::Sign(_) => (false, None),
            };
            let wait = (attempt <= policy.retries() && retryable)
                .then(|| policy.delay(attempt, asked))
                .flatten();
            match wait {
                Some(wait) => {
                    tracing::debug!(endpoint = %self.shown, attempt, "retrying the model request");
                    tokio::time::sleep(wait).await;
                }
                None => return Err(self.give_up(failure, attempt)),
            }
        }
    }

    fn give_up(&self, failure: Failure, attempts: u32) -> ModelError {
        match failure {
            Failure::Status(mut error, _) => {
                error.attempts = attempts;
                ModelError::Api(error)
            }
            Failure::Timeout(after) | Failure::Idle(after) => ModelError::Timeout { after },
            Failure::Empty => ModelError::Transport(Box::new(TransportError::Empty {
                endpoint: self.shown.clone(),
                attempts,
            })),
            Failure::Read(e) => ModelError::Transport(Box::new(TransportError::Read {
                endpoint: self.shown.clone(),
                source: Box::new(e),
            })),
            Failure::Send(e) => ModelError::Transport(Box::new(TransportError::Send {
                endpoint: self.shown.clone(),
                attempts,
                source: Box::new(e),
            })),
            Failure::Sign(text) => ModelError::Protocol(text),
        }
    }

    /// The headers of one attempt, signed now.
    fn signed_headers(&self, body: &str, accept: &'static str) -> Result<HeaderMap, Failure> {
        let host = match (self.url.host_str(), self.url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => String::new(),
        };
        let signed = [
            ("host", host.as_str()),
            ("content-type", "application/json"),
            ("accept", accept),
        ];
        let extra = auth::headers(
            &self.auth,
            self.url.as_str(),
            &signed,
            body.as_bytes(),
            SystemTime::now(),
        )
        .map_err(|e| Failure::Sign(e.to_string()))?;
        let mut headers = self.headers.clone();
        for (name, value) in signed
            .into_iter()
            .chain(extra.iter().map(|(n, v, _)| (*n, v.as_str())))
        {
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| Failure::Sign(format!("the `{name}` header cannot be sent")))?;
            value.set_sensitive(extra.iter().any(|(n, _, s)| *n == name && *s));
            headers.insert(name, value);
        }
        Ok(headers)
    }

    async fn attempt(&self, body: &str, accept: &'static str) -> Result<Opened, Failure> {
        let headers = self.signed_headers(body, accept)?;
        let request = self
            .client
            .post(self.url.clone())
            .headers(headers)
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
        let request_id = header(&headers, "x-amzn-requestid");
        let status = response.status().as_u16();
        if response.status().is_success() {
            let mut opened = Opened {
                response,
                first: None,
                request_id,
                idle_timeout: self.settings.idle_timeout,
                endpoint: self.shown.clone(),
            };
            opened.first = Some(opened.first_chunk().await?);
            return Ok(opened);
        }
        let body = read_capped(response, self.settings.response_timeout).await;
        let mut error = parse_api_error(Some(status), &body);
        error.error_type = header(&headers, "x-amzn-errortype")
            .map(|t| t.split(':').next().unwrap_or_default().to_owned())
            .or(error.error_type);
        error.request_id = request_id.or(error.request_id);
        error.retry_after = retry_after(&headers, SystemTime::now());
        let named = error
            .error_type
            .as_deref()
            .is_some_and(|t| RETRYABLE.contains(&t));
        let retryable = named || status_is_retryable(status, None, false);
        Err(Failure::Status(error, retryable))
    }
}

impl Opened {
    /// The response's `content-type`, lowercase, without parameters.
    pub(super) fn content_type(&self) -> String {
        header(self.response.headers(), "content-type")
            .and_then(|t| t.split(';').next().map(|t| t.trim().to_ascii_lowercase()))
            .unwrap_or_default()
    }

    /// The body's first chunk, read while opening: a body that is empty, breaks or stays
    /// silent before it is still before the answer (V2).
    async fn first_chunk(&mut self) -> Result<bytes::Bytes, Failure> {
        match tokio::time::timeout(self.idle_timeout, self.response.chunk()).await {
            Err(_) => Err(Failure::Idle(self.idle_timeout)),
            Ok(Err(e)) => Err(Failure::Read(e.without_url())),
            Ok(Ok(None)) => Err(Failure::Empty),
            Ok(Ok(Some(chunk))) => Ok(chunk),
        }
    }

    /// The next chunk of the body (the first, read while opening, first); `None` at its end.
    pub(super) async fn next_chunk(&mut self) -> Result<Option<bytes::Bytes>, ModelError> {
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        match tokio::time::timeout(self.idle_timeout, self.response.chunk()).await {
            Err(_) => Err(ModelError::Timeout {
                after: self.idle_timeout,
            }),
            Ok(Err(e)) => Err(ModelError::Transport(Box::new(TransportError::Read {
                endpoint: self.endpoint.clone(),
                source: Box::new(e.without_url()),
            }))),
            Ok(Ok(chunk)) => Ok(chunk),
        }
    }

    /// The whole body, at most `limit` bytes.
    pub(super) async fn read_all(&mut self, limit: usize) -> Result<Vec<u8>, ModelError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk().await? {
            body.extend_from_slice(&chunk);
            if body.len() > limit {
                return Err(ModelError::Protocol(format!(
                    "the Converse answer is larger than {limit} bytes: {}",
                    preview(&String::from_utf8_lossy(&body[..body.len().min(200)]), 200)
                )));
            }
        }
        Ok(body)
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name)?.to_str().ok().map(str::to_owned)
}

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
