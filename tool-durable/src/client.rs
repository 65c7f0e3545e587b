//! [`DurableClient`]: a durable run from outside, over Restate's HTTP ingress.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::WORKFLOW;
use crate::types::{DecisionBody, RunEnd, RunRequest, RunStatus};

/// Why a call to Restate's ingress failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A run id or awakeable id that cannot be part of a path: ids are made of letters,
    /// digits, `-`, `_` and `.`.
    #[error("`{0}` is not an id: use letters, digits, `-`, `_` and `.`")]
    Id(String),
    /// The ingress could not be reached, or the connection broke.
    #[error("the Restate ingress could not be reached: {0}")]
    Transport(#[from] reqwest::Error),
    /// The ingress answered with an error status.
    #[error("the Restate ingress answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// What it said.
        body: String,
    },
    /// The answer was not the JSON expected.
    #[error("the Restate ingress answered what is not a {what}: {source}")]
    Body {
        /// What was expected.
        what: &'static str,
        /// Why it did not read.
        source: serde_json::Error,
    },
}

/// Whether [`DurableClient::start`] started the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Started {
    /// The run started now.
    Now,
    /// A run of this id was started before: this request started nothing.
    Before,
}

/// Starts durable runs ([`crate::AgentRun`]), reads their status, decides their waiting calls
/// and waits for their ends, through Restate's ingress (`http://host:8080` by default). Any
/// process may do any of these: no worker needs to run.
#[derive(Debug, Clone)]
pub struct DurableClient {
    http: reqwest::Client,
    ingress: String,
}

impl DurableClient {
    /// A client of the ingress at `ingress` (its base URL, such as `http://127.0.0.1:8080`).
    pub fn new(ingress: impl Into<String>) -> Self {
        let ingress = ingress.into().trim_end_matches('/').to_owned();
        Self {
            http: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .unwrap_or_default(),
            ingress,
        }
    }

    /// Starts the run `run_id` without waiting for it. The workflow runs once per id: a run id
    /// that was started before answers [`Started::Before`], and `request` is not used (its
    /// input and context data are the first start's).
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses or cannot be reached.
    pub async fn start(&self, run_id: &str, request: &RunRequest) -> Result<Started, ClientError> {
        let url = format!("{}/{WORKFLOW}/{}/run/send", self.ingress, id(run_id)?);
        let answer: serde_json::Value = self.post(&url, request, "invocation").await?;
        Ok(
            match answer.get("status").and_then(serde_json::Value::as_str) {
                Some("PreviouslyAccepted") => Started::Before,
                _ => Started::Now,
            },
        )
    }

    /// Where the run is, what waits and what it used (W5).
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses or cannot be reached.
    pub async fn status(&self, run_id: &str) -> Result<RunStatus, ClientError> {
        let url = format!("{}/{WORKFLOW}/{}/status", self.ingress, id(run_id)?);
        // The handler takes no input: the body is empty.
        let response = self.http.post(url).send().await?;
        let body = check(response).await?;
        serde_json::from_slice(&body).map_err(|source| ClientError::Body {
            what: "run status",
            source,
        })
    }

    /// Decides a waiting call: resolves its awakeable with `decision` (W3). The first
    /// decision of an awakeable counts: Restate accepts a later one and ignores it, so a
    /// decider that must know reads [`DurableClient::status`] again.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses (an awakeable id it does not know) or cannot
    /// be reached.
    pub async fn decide(
        &self,
        awakeable_id: &str,
        decision: &DecisionBody,
    ) -> Result<(), ClientError> {
        let url = format!(
            "{}/restate/awakeables/{}/resolve",
            self.ingress,
            id(awakeable_id)?
        );
        let response = self.http.post(url).json(decision).send().await?;
        check(response).await.map(drop)
    }

    /// Waits for the run's end and answers it.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses or cannot be reached.
    pub async fn output(&self, run_id: &str) -> Result<RunEnd, ClientError> {
        let url = format!(
            "{}/restate/workflow/{WORKFLOW}/{}/attach",
            self.ingress,
            id(run_id)?
        );
        let response = self.http.get(url).send().await?;
        let body = check(response).await?;
        serde_json::from_slice(&body).map_err(|source| ClientError::Body {
            what: "run end",
            source,
        })
    }

    async fn post<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        url: &str,
        body: &B,
        what: &'static str,
    ) -> Result<T, ClientError> {
        let response = self.http.post(url).json(body).send().await?;
        let body = check(response).await?;
        serde_json::from_slice(&body).map_err(|source| ClientError::Body { what, source })
    }
}

/// What the engine holds of a durable run, read from Restate's admin API
/// ([`inspect`]): no worker needs to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The run's status, from the workflow's state (as its `status` handler answers).
    pub status: RunStatus,
    /// Restate's status of the run's invocation (`running`, `suspended`, `backing-off`,
    /// `paused` when it was parked after its attempts, W5, `completed`, …), if it has one.
    pub invocation: Option<String>,
    /// The last failure of the invocation, as Restate recorded it, if any.
    pub last_failure: Option<String>,
}

/// Reads a durable run's status and its invocation's from the Restate server whose admin API
/// is at `admin`, with SQL (`POST /query`): works while no worker runs, and says when Restate
/// has parked the run (W5).
///
/// # Errors
///
/// [`ClientError`] when the server refuses or cannot be reached, or answers what is not rows.
pub async fn inspect(admin: &str, run_id: &str) -> Result<Inspection, ClientError> {
    let key = id(run_id)?;
    let http = reqwest::Client::new();
    let query = |sql: String| {
        let http = http.clone();
        let url = format!("{}/query", admin.trim_end_matches('/'));
        async move {
            let response = http
                .post(url)
                .header("accept", "application/json")
                .json(&serde_json::json!({ "query": sql }))
                .send()
                .await?;
            let body = check(response).await?;
            let mut answer: serde_json::Value =
                serde_json::from_slice(&body).map_err(|source| ClientError::Body {
                    what: "query answer",
                    source,
                })?;
            Ok::<_, ClientError>(match answer.get_mut("rows").map(serde_json::Value::take) {
                Some(serde_json::Value::Array(rows)) => rows,
                _ => Vec::new(),
            })
        }
    };
    // `key` is letters, digits, `-`, `_` and `.` only: it cannot end the SQL string.
    let rows = query(format!(
        "SELECT key, value_utf8 FROM state WHERE service_name = '{WORKFLOW}' AND service_key = '{key}'"
    ))
    .await?;
    let mut status = RunStatus {
        phase: crate::Phase::NotStarted,
        pending: Vec::new(),
        usage: tool_runtime::Usage::default(),
    };
    for row in rows {
        let value = row
            .get("value_utf8")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("null");
        match row.get("key").and_then(serde_json::Value::as_str) {
            Some(crate::state::PHASE) => {
                status.phase = serde_json::from_str(value).unwrap_or(status.phase)
            }
            Some(crate::state::PENDING) => {
                status.pending = serde_json::from_str(value).unwrap_or_default()
            }
            Some(crate::state::USAGE) => {
                status.usage = serde_json::from_str(value).unwrap_or_default()
            }
            _ => {}
        }
    }
    let invocation = query(format!(
        "SELECT status, last_failure FROM sys_invocation WHERE target_service_name = '{WORKFLOW}' \
         AND target_service_key = '{key}' AND target_handler_name = 'run'"
    ))
    .await?;
    let first = invocation.first();
    let text = |field: &str| {
        first
            .and_then(|row| row.get(field))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    Ok(Inspection {
        status,
        invocation: text("status"),
        last_failure: text("last_failure"),
    })
}

/// Registers the worker serving at `worker` (its base URL) with the Restate server whose
/// admin API is at `admin` (`http://host:9070` by default), as `POST /deployments` does,
/// replacing an earlier registration of the same address.
///
/// # Errors
///
/// [`ClientError`] when the server refuses (it could not reach the worker) or cannot be
/// reached.
pub async fn register(admin: &str, worker: &str) -> Result<(), ClientError> {
    let url = format!("{}/deployments", admin.trim_end_matches('/'));
    let body = serde_json::json!({ "uri": worker, "force": true });
    let response = reqwest::Client::new().post(url).json(&body).send().await?;
    check(response).await.map(drop)
}

/// `id` when it can be a path segment as it is.
fn id(id: &str) -> Result<&str, ClientError> {
    let fits = !id.is_empty()
        && id.len() <= 256
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && id != "."
        && id != "..";
    if fits {
        Ok(id)
    } else {
        Err(ClientError::Id(id.to_owned()))
    }
}

async fn check(response: reqwest::Response) -> Result<bytes::Bytes, ClientError> {
    let status = response.status();
    let body = response.bytes().await?;
    if status.is_success() {
        Ok(body)
    } else {
        Err(ClientError::Status {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).chars().take(2000).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id that could change the path it is put in is refused before any request.
    #[test]
    fn ids_that_are_not_path_segments_are_refused() {
        for bad in ["", ".", "..", "a/b", "run 1", "x?y", "é", &"a".repeat(257)] {
            assert!(matches!(id(bad), Err(ClientError::Id(_))), "{bad:?}");
        }
        for good in ["run-1", "sign_1abc.DEF", "a"] {
            assert_eq!(id(good).ok(), Some(good));
        }
    }
}
