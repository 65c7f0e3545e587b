//! What the engine holds of a durable run, read from Restate's admin API with SQL
//! (`POST /query`) while no worker needs to run (W5, W8): the workflow's state, its
//! invocation, the failure that parked it and the decisions its journal holds.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http::{ClientError, Http};
use crate::journal::CALL_HANDLER;
use crate::state;
use crate::types::{DecisionBody, RunStatus};

/// What the engine holds of a durable run ([`crate::DurableClient::inspect`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Inspection {
    /// The run's status, from the workflow's state (as its `status` handler answers).
    pub status: RunStatus,
    /// The id of the run's invocation (`inv_…`), if the run was started.
    pub invocation_id: Option<String>,
    /// Restate's status of the run's invocation (`running`, `suspended`, `backing-off`,
    /// `paused` when it was parked after a step's attempts, W5, W7, `completed`, …), if any.
    pub invocation: Option<String>,
    /// The last failure of the invocation: the one that parked it, or the last retried one.
    pub last_failure: Option<Failure>,
}

impl Inspection {
    /// Whether the engine parked the run: a step failed its whole budget of attempts (W5,
    /// W7). Starting a worker does not go on with a parked run;
    /// [`crate::DurableClient::resume`] does, once the cause is gone.
    pub fn is_parked(&self) -> bool {
        self.invocation.as_deref() == Some("paused")
    }
}

/// A failure of a durable run's attempt, as the engine recorded it: what failed and where,
/// never a cause or a secret (a step's failure says only its kind and status, W4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// What failed.
    pub kind: FailureKind,
    /// The step it failed at, by its journal name (`request 2`, `call c1 restart`), when the
    /// engine knows it.
    pub step: Option<String>,
    /// The engine's error code (`500` for a step that asked to be retried).
    pub code: Option<String>,
    /// What was said: a step's summary of its failure, or the engine's of a worker it could
    /// not reach.
    pub message: String,
}

/// What failed in a durable run's attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// A step failed in a way a later attempt may not (its model provider down, say).
    Step,
    /// The attempt broke off or never reached the worker: a crash, a redeploy, no worker.
    Worker,
}

/// The admin API of a Restate server, with a timeout on each call.
#[derive(Debug, Clone)]
pub(crate) struct Admin {
    pub(crate) http: Http,
    pub(crate) url: String,
    /// The workflow's name (a checked id: it cannot end an SQL string).
    pub(crate) workflow: String,
}

/// The row of a run's invocation (or of one of its calls') in `sys_invocation`.
#[derive(Clone)]
struct Invocation {
    id: String,
    status: Option<String>,
    failure: Option<Failure>,
}

impl Admin {
    /// The rows of `sql`.
    async fn query(&self, sql: &str) -> Result<Vec<Value>, ClientError> {
        let url = format!("{}/query", self.url);
        let body = serde_json::json!({ "query": sql });
        // Without `accept: application/json`, the server answers in Arrow's format.
        let request = self
            .http
            .post(&url)
            .header("accept", "application/json")
            .json(&body);
        let mut answer: Value = self.http.json("query", request).await?;
        Ok(match answer.get_mut("rows").map(Value::take) {
            Some(Value::Array(rows)) => rows,
            _ => Vec::new(),
        })
    }

    /// The run's status, from the workflow's state. `key` is a checked id: letters, digits,
    /// `-`, `_` and `.`, which cannot end an SQL string.
    pub(crate) async fn status(&self, key: &str) -> Result<RunStatus, ClientError> {
        let rows = self
            .query(&format!(
                "SELECT key, value_utf8 FROM state \
                 WHERE service_name = '{}' AND service_key = '{key}'",
                self.workflow
            ))
            .await?;
        let mut status = RunStatus::not_started();
        for row in rows {
            let value = text(&row, "value_utf8").unwrap_or("null");
            let unreadable = |source| ClientError::Body {
                what: "run state",
                source,
            };
            match text(&row, "key") {
                Some(state::PHASE) => {
                    status.phase = serde_json::from_str(value).map_err(unreadable)?
                }
                Some(state::PENDING) => {
                    status.pending = serde_json::from_str(value).map_err(unreadable)?;
                }
                Some(state::USAGE) => {
                    status.usage = serde_json::from_str(value).map_err(unreadable)?
                }
                Some(state::DECIDED) => {
                    status.decided = serde_json::from_str(value).map_err(unreadable)?;
                }
                _ => {}
            }
        }
        Ok(status)
    }

    /// The run's invocation, if it was started.
    async fn invocation(&self, key: &str) -> Result<Option<Invocation>, ClientError> {
        let found = self
            .invocations(key, "AND target_handler_name = 'run'")
            .await?;
        Ok(found.into_iter().next())
    }

    /// The invocations of the run's calls that the engine parked (W9: a run whose calls run
    /// concurrently runs each as an invocation of the workflow's `call` handler, W7: each with
    /// its own budget).
    async fn parked_calls(&self, key: &str) -> Result<Vec<Invocation>, ClientError> {
        self.invocations(
            key,
            &format!("AND target_handler_name = '{CALL_HANDLER}' AND status = 'paused'"),
        )
        .await
    }

    /// The invocations of the workflow keyed `key` that `filter` (more SQL conditions) keeps.
    async fn invocations(&self, key: &str, filter: &str) -> Result<Vec<Invocation>, ClientError> {
        let rows = self
            .query(&format!(
                "SELECT id, status, last_failure, last_failure_error_code, \
                 last_failure_related_command_name FROM sys_invocation \
                 WHERE target_service_name = '{}' AND target_service_key = '{key}' \
                 {filter} ORDER BY created_at",
                self.workflow
            ))
            .await?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let failure = text(row, "last_failure").map(|message| {
                    failure(
                        message,
                        text(row, "last_failure_error_code"),
                        text(row, "last_failure_related_command_name"),
                    )
                });
                Some(Invocation {
                    id: text(row, "id")?.to_owned(),
                    status: text(row, "status").map(str::to_owned),
                    failure,
                })
            })
            .collect())
    }

    /// The failure that parked invocation `id` (the engine keeps it in the journal's events,
    /// not in the invocation's row), or its last retried one.
    async fn journaled_failure(&self, id: &str) -> Result<Option<Failure>, ClientError> {
        // `id` comes from the engine: `inv_` and base62.
        if !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Ok(None);
        }
        let rows = self
            .query(&format!(
                "SELECT event_type, event_json FROM sys_journal_events WHERE id = '{id}' \
                 AND event_type IN ('Paused', 'TransientError') ORDER BY appended_at DESC LIMIT 1"
            ))
            .await?;
        let Some(event) = rows
            .first()
            .and_then(|row| text(row, "event_json"))
            .and_then(|json| serde_json::from_str::<Value>(json).ok())
        else {
            return Ok(None);
        };
        let error = event.get("last_failure").unwrap_or(&event);
        Ok(text(error, "error_message").map(|message| {
            failure(
                message,
                error
                    .get("error_code")
                    .map(|code| code.to_string().trim_matches('"').to_owned())
                    .as_deref(),
                text(error, "related_command_name"),
            )
        }))
    }

    /// The run's status and its invocation's, with its last failure.
    pub(crate) async fn inspect(&self, key: &str) -> Result<Inspection, ClientError> {
        let status = self.status(key).await?;
        let Some(invocation) = self.invocation(key).await? else {
            return Ok(Inspection {
                status,
                invocation_id: None,
                invocation: None,
                last_failure: None,
            });
        };
        // W9: a run that waits for a call the engine parked is parked with it; the call's
        // failure is the run's.
        let mut shown = None;
        if invocation.status.as_deref() != Some("paused") {
            shown = self.parked_calls(key).await?.into_iter().next();
        }
        let (status_of, failed) = match shown {
            Some(call) => (Some("paused".to_owned()), call),
            None => (invocation.status.clone(), invocation.clone()),
        };
        let last_failure = match failed.failure {
            Some(failure) => Some(failure),
            None => self.journaled_failure(&failed.id).await?,
        };
        Ok(Inspection {
            status,
            invocation_id: Some(invocation.id),
            invocation: status_of,
            last_failure,
        })
    }

    /// The decision the journal of the run's invocation already holds for the awakeable
    /// `awakeable_id`, if one arrived (the run may not have taken it yet: no worker ran since).
    pub(crate) async fn received_decision(
        &self,
        key: &str,
        awakeable_id: &str,
    ) -> Result<Option<DecisionBody>, ClientError> {
        let Some(index) = signal_index(awakeable_id) else {
            return Ok(None);
        };
        let rows = self
            .query(&format!(
                "SELECT j.entry_json FROM sys_journal j JOIN sys_invocation i ON j.id = i.id \
                 WHERE i.target_service_name = '{}' AND i.target_service_key = '{key}' \
                 AND i.target_handler_name = 'run' AND j.entry_type = 'Notification: Signal'",
                self.workflow
            ))
            .await?;
        for row in rows {
            let Some(entry) =
                text(&row, "entry_json").and_then(|json| serde_json::from_str::<Value>(json).ok())
            else {
                continue;
            };
            let signal = &entry["Notification"]["Signal"];
            if signal["id"]["Index"].as_u64() != Some(u64::from(index)) {
                continue;
            }
            let Some(bytes) = signal["result"]["Success"].as_array() else {
                // Rejected: the run denies the call.
                return Ok(Some(DecisionBody::Deny { message: None }));
            };
            let body: Vec<u8> = bytes
                .iter()
                .filter_map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect();
            return Ok(Some(DecisionBody::taken(&body)));
        }
        Ok(None)
    }

    /// Resumes the run's parked invocation and those of its parked calls (W9), each with
    /// `PATCH /invocations/{id}/resume`; answers the run's invocation id.
    pub(crate) async fn resume(&self, key: &str) -> Result<String, ClientError> {
        let invocation = self
            .invocation(key)
            .await?
            .ok_or_else(|| ClientError::NoRun(key.to_owned()))?;
        let status = invocation.status.clone().unwrap_or_default();
        let mut parked: Vec<String> = self
            .parked_calls(key)
            .await?
            .into_iter()
            .map(|call| call.id)
            .collect();
        if status == "paused" {
            parked.insert(0, invocation.id.clone());
        }
        if parked.is_empty() {
            return Err(ClientError::NotParked {
                run_id: key.to_owned(),
                status,
            });
        }
        for id in parked {
            let url = format!("{}/invocations/{id}/resume", self.url);
            self.http.empty("resume", self.http.patch(&url)).await?;
        }
        Ok(invocation.id)
    }

    /// Registers the worker at `worker` (`POST /deployments`, replacing an earlier
    /// registration of the same address).
    pub(crate) async fn register(&self, worker: &str) -> Result<(), ClientError> {
        let url = format!("{}/deployments", self.url);
        let body = serde_json::json!({ "uri": worker, "force": true });
        self.http
            .empty("register", self.http.post(&url).json(&body))
            .await
    }
}

/// A failure as the engine recorded it: a step's when it names the step or comes from the
/// worker's handler (code 500), a worker's otherwise.
fn failure(message: &str, code: Option<&str>, step: Option<&str>) -> Failure {
    let kind = if step.is_some() || code == Some("500") {
        FailureKind::Step
    } else {
        FailureKind::Worker
    };
    Failure {
        kind,
        step: step.map(str::to_owned),
        code: code.map(str::to_owned),
        message: message.chars().take(2000).collect(),
    }
}

/// The text of `row`'s `field`.
fn text<'a>(row: &'a Value, field: &str) -> Option<&'a str> {
    row.get(field).and_then(Value::as_str)
}

/// The signal index an awakeable id names: `sign_1`, then base64 (URL-safe, unpadded) of the
/// invocation's id and the index, big-endian, in its last four bytes.
fn signal_index(awakeable_id: &str) -> Option<u32> {
    let encoded = awakeable_id.strip_prefix("sign_1")?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()?;
    let last: [u8; 4] = bytes.get(bytes.len().checked_sub(4)?..)?.try_into().ok()?;
    Some(u32::from_be_bytes(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// W8: the awakeable ids Restate hands out name their signal index; others name none.
    #[test]
    fn w8_an_awakeable_id_names_its_signal() {
        assert_eq!(
            signal_index("sign_1GIurxtapkoVAKMuGsxDPeCThicYhHu8IAAAAEQ"),
            Some(17)
        );
        for bad in ["", "sign_1", "prom_1abc", "sign_1!!", "sign_1AAA"] {
            assert_eq!(signal_index(bad), None, "{bad:?}");
        }
    }
}
