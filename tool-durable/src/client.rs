//! [`DurableClient`]: a durable run from outside, over Restate's ingress and admin API, each
//! call with a timeout (W8).

use std::time::Duration;

use crate::WORKFLOW;
use crate::admin::{Admin, Inspection};
pub use crate::http::ClientError;
use crate::http::Http;
use crate::text::{self, TEXT_OBJECT, TextDeltas};
use crate::types::{DecisionBody, RunEnd, RunRequest, RunStatus};

/// The default timeout of each call of a [`DurableClient`] but [`DurableClient::output`]:
/// 30 s ([`DurableClient::with_timeout`]).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default time [`DurableClient::output`] waits for a run's end: 10 minutes
/// ([`DurableClient::with_wait`]).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// Whether [`DurableClient::start`] started the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum Started {
    /// The run started now.
    Now,
    /// A run of this id was started before: this request started nothing.
    Before,
}

/// What became of a decision given with [`DurableClient::decide`] (W8).
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Decided {
    /// The decision went to the waiting call.
    Now,
    /// The call was decided before: this decision changed nothing; `first` is the one the
    /// run took.
    Before {
        /// The call's decision, as the run took it.
        first: DecisionBody,
    },
}

/// Starts durable runs ([`crate::AgentRun`]), reads their status, decides their waiting calls,
/// resumes parked ones and waits for their ends, through Restate's ingress (`http://host:8080`
/// by default) and its admin API (`http://host:9070`, [`DurableClient::with_admin`]). Any
/// process may do any of these: no worker needs to run. Each call has a timeout
/// ([`DEFAULT_TIMEOUT`], [`DEFAULT_WAIT`] for [`DurableClient::output`]).
#[derive(Debug, Clone)]
pub struct DurableClient {
    http: Http,
    ingress: String,
    admin: Option<String>,
    wait: Duration,
    /// The workflow's name: [`WORKFLOW`], or the one an agent was served under (W10).
    workflow: String,
}

impl DurableClient {
    /// A client of the ingress at `ingress` (its base URL, such as `http://127.0.0.1:8080`).
    pub fn new(ingress: impl Into<String>) -> Self {
        let ingress = ingress.into().trim_end_matches('/').to_owned();
        Self {
            http: Http {
                client: reqwest::Client::builder()
                    .connect_timeout(Duration::from_secs(10))
                    .build()
                    .unwrap_or_default(),
                timeout: DEFAULT_TIMEOUT,
            },
            ingress,
            admin: None,
            wait: DEFAULT_WAIT,
            workflow: WORKFLOW.to_owned(),
        }
    }

    /// The same client, for the runs of the agent served under the workflow name `workflow`
    /// ([`crate::AgentRun::named`], W10) rather than [`WORKFLOW`].
    ///
    /// # Errors
    ///
    /// [`ClientError::Id`] when `workflow` is not a name (letters, digits, `-`, `_` and `.`).
    pub fn for_workflow(mut self, workflow: &str) -> Result<Self, ClientError> {
        self.workflow = id(workflow)?.to_owned();
        Ok(self)
    }

    /// The same client, reading the engine's state through the admin API at `admin` (its base
    /// URL, such as `http://127.0.0.1:9070`): [`DurableClient::status`],
    /// [`DurableClient::inspect`], [`DurableClient::decide`] and [`DurableClient::resume`]
    /// need it.
    #[must_use]
    pub fn with_admin(mut self, admin: impl Into<String>) -> Self {
        self.admin = Some(admin.into().trim_end_matches('/').to_owned());
        self
    }

    /// The same client, each call but [`DurableClient::output`] failing with
    /// [`ClientError::Timeout`] after `timeout` (default [`DEFAULT_TIMEOUT`]).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.http.timeout = timeout;
        self
    }

    /// The same client, [`DurableClient::output`] waiting at most `wait` for a run's end
    /// (default [`DEFAULT_WAIT`]).
    #[must_use]
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    fn admin(&self) -> Result<Admin, ClientError> {
        let url = self.admin.clone().ok_or(ClientError::NoAdmin)?;
        Ok(Admin {
            http: self.http.clone(),
            url,
            workflow: self.workflow.clone(),
        })
    }

    /// Starts the run `run_id` without waiting for it. The workflow runs once per id: a run id
    /// that was started before answers [`Started::Before`], and `request` is not used (its
    /// input and context data are the first start's).
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses, cannot be reached or does not answer in time.
    pub async fn start(&self, run_id: &str, request: &RunRequest) -> Result<Started, ClientError> {
        let url = format!(
            "{}/{}/{}/run/send",
            self.ingress,
            self.workflow,
            id(run_id)?
        );
        let answer: serde_json::Value = self
            .http
            .json("invocation", self.http.post(&url).json(request))
            .await?;
        Ok(
            match answer.get("status").and_then(serde_json::Value::as_str) {
                Some("PreviouslyAccepted") => Started::Before,
                _ => Started::Now,
            },
        )
    }

    /// Where the run is, what waits, what was decided and what it used (W5), from the
    /// engine's state: one query to the admin API, answered whether a worker runs or not (W8).
    ///
    /// # Errors
    ///
    /// [`ClientError::NoAdmin`] without an admin API; [`ClientError`] when the server
    /// refuses, cannot be reached or does not answer in time.
    pub async fn status(&self, run_id: &str) -> Result<RunStatus, ClientError> {
        self.admin()?.status(id(run_id)?).await
    }

    /// What the engine holds of the run: its status, its invocation's id and status (`paused`
    /// when parked) and its last failure (what failed and at which step, never a cause, W8).
    /// A run whose calls run concurrently ([`crate::AgentRun::parallel_calls`], W9) is shown
    /// `paused` when the engine parked one of its calls, with that call's last failure.
    ///
    /// # Errors
    ///
    /// As [`DurableClient::status`].
    pub async fn inspect(&self, run_id: &str) -> Result<Inspection, ClientError> {
        self.admin()?.inspect(id(run_id)?).await
    }

    /// Resumes a parked run (W5, W7): the engine attempts its step again, with a fresh budget;
    /// so are the parked calls of a run whose calls run concurrently (W9). Answers the run's
    /// invocation id.
    ///
    /// # Errors
    ///
    /// [`ClientError::NoRun`] for a run never started, [`ClientError::NotParked`] for one
    /// that is not parked; otherwise as [`DurableClient::status`].
    pub async fn resume(&self, run_id: &str) -> Result<String, ClientError> {
        self.admin()?.resume(id(run_id)?).await
    }

    /// Decides the waiting call `call_id` of the run `run_id` (W3): resolves its awakeable
    /// with `decision`, unless the call was decided before, which answers
    /// [`Decided::Before`] with the decision the run took (W8). Reads the engine's state
    /// first, so it needs the admin API; [`DurableClient::resolve`] is the one call to the
    /// ingress alone.
    ///
    /// # Errors
    ///
    /// [`ClientError::NoCall`] when the run has no such call waiting or decided; otherwise as
    /// [`DurableClient::status`].
    pub async fn decide(
        &self,
        run_id: &str,
        call_id: &str,
        decision: &DecisionBody,
    ) -> Result<Decided, ClientError> {
        let admin = self.admin()?;
        let key = id(run_id)?;
        let status = admin.status(key).await?;
        let waiting = status.pending.iter().find(|call| call.call_id == call_id);
        let first = status.decided.iter().rev().find(|done| match waiting {
            Some(call) => done.awakeable_id == call.awakeable_id,
            None => done.call_id == call_id,
        });
        if let Some(first) = first {
            return Ok(Decided::Before {
                first: first.decision.clone(),
            });
        }
        let Some(call) = waiting else {
            return Err(ClientError::NoCall {
                run_id: run_id.to_owned(),
                call_id: call_id.to_owned(),
            });
        };
        if let Some(first) = admin.received_decision(key, &call.awakeable_id).await? {
            return Ok(Decided::Before { first });
        }
        self.resolve(&call.awakeable_id, decision).await?;
        Ok(Decided::Now)
    }

    /// Resolves the awakeable `awakeable_id` with `decision`: one call to the ingress (W3).
    /// The first decision of an awakeable counts: Restate accepts a later one and ignores it;
    /// [`DurableClient::decide`] says so instead.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses (an awakeable id it does not know), cannot be
    /// reached or does not answer in time.
    pub async fn resolve(
        &self,
        awakeable_id: &str,
        decision: &DecisionBody,
    ) -> Result<(), ClientError> {
        let url = format!(
            "{}/restate/awakeables/{}/resolve",
            self.ingress,
            id(awakeable_id)?
        );
        self.http
            .empty("decision", self.http.post(&url).json(decision))
            .await
    }

    /// Waits for the run's end and answers it, for at most the client's wait
    /// ([`DEFAULT_WAIT`], [`DurableClient::with_wait`]); a run still going then answers
    /// [`ClientError::Timeout`], and can be waited for again.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses, cannot be reached or the wait ends first.
    pub async fn output(&self, run_id: &str) -> Result<RunEnd, ClientError> {
        let url = format!(
            "{}/restate/workflow/{}/{}/attach",
            self.ingress,
            self.workflow,
            id(run_id)?
        );
        let request = self.http.client.get(url).timeout(self.wait);
        self.http.json("run end", request).await
    }

    /// The pieces of the run `run_id`'s text streamed after the piece `after` (0 for all),
    /// while the run goes or until [`crate::TEXT_KEPT`] after it ended, when its agent posts
    /// them ([`crate::AgentRun::text_to`], W10). Poll with the answer's
    /// [`TextDeltas::next`]; [`TextDeltas::text`] gives each turn's text so far. A worker of
    /// the deployment must run to answer; a run whose agent posts no text answers none.
    ///
    /// # Errors
    ///
    /// [`ClientError`] when the ingress refuses, cannot be reached or does not answer in time.
    pub async fn text(&self, run_id: &str, after: u64) -> Result<TextDeltas, ClientError> {
        let url = format!(
            "{}/{TEXT_OBJECT}/{}/read",
            self.ingress,
            text::key(&self.workflow, id(run_id)?)
        );
        let body = serde_json::json!({ "after": after });
        self.http
            .json("run text", self.http.post(&url).json(&body))
            .await
    }
}

/// Reads a durable run's status and its invocation's from the Restate server whose admin API
/// is at `admin`, as [`DurableClient::inspect`] does (with [`DEFAULT_TIMEOUT`]).
///
/// # Errors
///
/// As [`DurableClient::inspect`].
pub async fn inspect(admin: &str, run_id: &str) -> Result<Inspection, ClientError> {
    DurableClient::new("")
        .with_admin(admin)
        .inspect(run_id)
        .await
}

/// Registers the worker serving at `worker` (its base URL) with the Restate server whose
/// admin API is at `admin` (`http://host:9070` by default), as `POST /deployments` does,
/// replacing an earlier registration of the same address; with [`DEFAULT_TIMEOUT`].
///
/// # Errors
///
/// [`ClientError`] when the server refuses (it could not reach the worker), cannot be
/// reached or does not answer in time.
pub async fn register(admin: &str, worker: &str) -> Result<(), ClientError> {
    DurableClient::new("")
        .with_admin(admin)
        .admin()?
        .register(worker)
        .await
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
