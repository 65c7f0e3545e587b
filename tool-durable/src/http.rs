//! HTTP calls to Restate ([`Http`]), each with a timeout, and why one failed
//! ([`ClientError`]): what the client and the admin reader share.

use std::time::Duration;

use bytes::Bytes;
use reqwest::RequestBuilder;
use serde::de::DeserializeOwned;

/// Why a call to Restate failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A run id or awakeable id that cannot be part of a path: ids are made of letters,
    /// digits, `-`, `_` and `.`.
    #[error("`{0}` is not an id: use letters, digits, `-`, `_` and `.`")]
    Id(String),
    /// Restate could not be reached, or the connection broke.
    #[error("Restate could not be reached: {0}")]
    Transport(reqwest::Error),
    /// Restate did not answer within the call's timeout.
    #[error("Restate did not answer the {call} within {after:?}")]
    Timeout {
        /// The call (`status`, `output`, `resume`, …).
        call: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// Restate answered with an error status.
    #[error("Restate answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// What it said.
        body: String,
    },
    /// The answer was not the JSON expected.
    #[error("Restate answered what is not a {what}: {source}")]
    Body {
        /// What was expected.
        what: &'static str,
        /// Why it did not read.
        source: serde_json::Error,
    },
    /// The call reads the engine's state, and the client was given no admin API
    /// ([`DurableClient::with_admin`](crate::DurableClient::with_admin)).
    #[error("this call reads the engine's state: give the client the admin API's URL (with_admin)")]
    NoAdmin,
    /// No run of this id was started.
    #[error("no run `{0}` was started")]
    NoRun(String),
    /// The run is not parked: there is nothing to resume.
    #[error(
        "run `{run_id}` is not parked (its invocation is {status:?}): there is nothing to resume"
    )]
    NotParked {
        /// The run.
        run_id: String,
        /// Restate's status of its invocation.
        status: String,
    },
    /// The run has no call of this id waiting or decided.
    #[error("run `{run_id}` has no call `{call_id}` waiting for a decision")]
    NoCall {
        /// The run.
        run_id: String,
        /// The call id given.
        call_id: String,
    },
}

/// HTTP calls to Restate, each with a timeout, its failures as [`ClientError`]s.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    pub(crate) client: reqwest::Client,
    pub(crate) timeout: Duration,
}

impl Http {
    pub(crate) fn post(&self, url: &str) -> RequestBuilder {
        self.client.post(url).timeout(self.timeout)
    }

    pub(crate) fn patch(&self, url: &str) -> RequestBuilder {
        self.client.patch(url).timeout(self.timeout)
    }

    /// The body of `request`'s successful answer.
    pub(crate) async fn bytes(
        &self,
        call: &'static str,
        request: RequestBuilder,
    ) -> Result<Bytes, ClientError> {
        let after = request
            .try_clone()
            .and_then(|r| r.build().ok())
            .and_then(|r| r.timeout().copied())
            .unwrap_or(self.timeout);
        let failed = |e: reqwest::Error| {
            if e.is_timeout() {
                ClientError::Timeout { call, after }
            } else {
                ClientError::Transport(e)
            }
        };
        let response = request.send().await.map_err(failed)?;
        let status = response.status();
        let body = response.bytes().await.map_err(failed)?;
        if status.is_success() {
            Ok(body)
        } else {
            Err(ClientError::Status {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body).chars().take(2000).collect(),
            })
        }
    }

    /// `request`'s answer, read as JSON.
    pub(crate) async fn json<T: DeserializeOwned>(
        &self,
        what: &'static str,
        request: RequestBuilder,
    ) -> Result<T, ClientError> {
        let body = self.bytes(what, request).await?;
        serde_json::from_slice(&body).map_err(|source| ClientError::Body { what, source })
    }

    /// `request`, its answer's body dropped.
    pub(crate) async fn empty(
        &self,
        call: &'static str,
        request: RequestBuilder,
    ) -> Result<(), ClientError> {
        self.bytes(call, request).await.map(drop)
    }
}
