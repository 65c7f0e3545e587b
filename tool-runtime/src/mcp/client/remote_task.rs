//! A remote tool that runs only as a task (M5, protocol 2025-11-25): the call made as a task,
//! its result awaited with `tasks/result`, a cancelled call's task cancelled. A task of the
//! Tasks extension (2026-07-28) is awaited by polling `tasks/get`, its questions answered as a
//! call's are (M3) and sent with `tasks/update` (M9).
//!
//! The SDK has another protocol's tasks, so these requests go as the methods they are, their
//! answers read as JSON.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, ClientRequest, CustomRequest, GetTaskParams, InputRequests,
    InputRequiredResult, ProtocolVersion, ServerResult, TaskPayload, UpdateTaskParams,
};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use tool_core::{BoxError, Context};

use super::error::RemoteCallError;
use super::remote_tool::{Connection, cancelled, protocol_error, transport_error};

/// How long a cancelled call waits for the server to take its `tasks/cancel`.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

impl Connection {
    /// Whether the session's protocol has these tasks.
    pub(super) fn takes_tasks(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.protocol_version == ProtocolVersion::V_2025_11_25)
    }

    /// Whether `tool` answered a plain call that it runs only as a task.
    pub(super) fn runs_as_task(&self, tool: &str) -> bool {
        let tools = self.task_tools.lock();
        tools
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(tool)
    }

    pub(super) fn remember_task_tool(&self, tool: &str) {
        let tools = self.task_tools.lock();
        let mut tools = tools.unwrap_or_else(std::sync::PoisonError::into_inner);
        if tools.len() < 1024 {
            tools.insert(tool.to_owned());
        }
    }

    /// Calls `tool` as a task, and waits for its result. Cancelling `ctx` cancels the task.
    pub(super) async fn call_as_task(
        &self,
        ctx: &Context,
        tool: &str,
        args: Value,
    ) -> Result<CallToolResult, BoxError> {
        let mut params = json!({"name": tool, "arguments": args, "task": {}});
        if let Some(meta) = super::remote_tool::trace_meta() {
            params["_meta"] = json!(meta);
        }
        let made = tokio::select! {
            biased;
            () = ctx.cancelled() => return Err(cancelled(tool)),
            made = self.request(tool, "tools/call", params) => made?,
        };
        let Some(task_id) = made.pointer("/task/taskId").and_then(Value::as_str) else {
            return Err(RemoteCallError::Unsupported {
                tool: tool.to_owned(),
                what: "an answer to a task-augmented call that is not a task",
            }
            .into());
        };
        let id = json!({ "taskId": task_id });
        let result = tokio::select! {
            biased;
            () = ctx.cancelled() => {
                let cancel = self.request(tool, "tasks/cancel", id);
                if tokio::time::timeout(CANCEL_WAIT, cancel).await.is_err() {
                    tracing::warn!(tool, task_id, "the server did not take a task's cancellation");
                }
                return Err(cancelled(tool));
            }
            result = self.request(tool, "tasks/result", id.clone()) => result?,
        };
        serde_json::from_value(result).map_err(|_| {
            RemoteCallError::Unsupported {
                tool: tool.to_owned(),
                what: "a task result that is not a tool result",
            }
            .into()
        })
    }

    /// One request of the call of `tool`, its answer as JSON.
    async fn request(&self, tool: &str, method: &str, params: Value) -> Result<Value, BoxError> {
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let answer: Result<ServerResult, ServiceError> = self.peer.send_request(request).await;
        match answer {
            Ok(result) => serde_json::to_value(result).map_err(|e| transport_error_json(tool, e)),
            Err(ServiceError::McpError(error)) => Err(protocol_error(tool, error)),
            Err(other) => Err(transport_error(tool, other)),
        }
    }
}

fn transport_error_json(tool: &str, error: serde_json::Error) -> BoxError {
    RemoteCallError::Transport {
        tool: tool.to_owned(),
        source: Box::new(error),
    }
    .into()
}

impl Connection {
    /// Waits for the task of the Tasks extension (2026-07-28, SEP-2663) a call of `tool`
    /// became: polled with `tasks/get` at the interval the server suggests (bounded), its
    /// questions answered with `tasks/update` (M9), its result the call's. Cancelling `ctx`
    /// cancels the task, and so does leaving a task that asks what cannot be answered here
    /// (a pause for approval, sampling, too many questions): it is not left waiting.
    pub(super) async fn await_extension_task(
        &self,
        ctx: &Context,
        (tool, args): (&str, &Value),
        created: &rmcp::model::Task,
    ) -> Result<CallToolResult, BoxError> {
        let interval = Duration::from_millis(
            created
                .poll_interval_ms
                .unwrap_or(250)
                .clamp(MIN_POLL_MS, MAX_POLL_MS),
        );
        let id = created.task_id.as_str();
        let mut answered = HashSet::new();
        loop {
            tokio::select! {
                biased;
                () = ctx.cancelled() => {
                    self.cancel_task(tool, id).await;
                    return Err(cancelled(tool));
                }
                () = tokio::time::sleep(interval) => {}
            }
            let got = self.peer.get_task(GetTaskParams::new(id)).await;
            let task = match got {
                Ok(got) => got.task,
                Err(ServiceError::McpError(error)) => return Err(protocol_error(tool, error)),
                Err(other) => return Err(transport_error(tool, other)),
            };
            let answering = match task.payload {
                TaskPayload::Working => continue,
                TaskPayload::InputRequired { input_requests } => {
                    (self.answer_task(ctx, (tool, args), id, input_requests, &mut answered)).await
                }
                ended @ (TaskPayload::Completed { .. }
                | TaskPayload::Failed { .. }
                | TaskPayload::Cancelled) => return ended_task(tool, ended),
                _ => Err(RemoteCallError::Unsupported {
                    tool: tool.to_owned(),
                    what: "a task in a state this client does not know",
                }
                .into()),
            };
            if let Err(error) = answering {
                self.cancel_task(tool, id).await;
                return Err(error);
            }
        }
    }

    /// Answers the questions `asked` of task `id` that were not answered before (M9), as a
    /// call's are (M3), with `tasks/update`.
    async fn answer_task(
        &self,
        ctx: &Context,
        (tool, args): (&str, &Value),
        id: &str,
        asked: InputRequests,
        answered: &mut HashSet<String>,
    ) -> Result<(), BoxError> {
        let asked = (asked.into_iter())
            .filter(|(key, _)| !answered.contains(key))
            .collect::<InputRequests>();
        if answered.len() + asked.len() > MAX_TASK_QUESTIONS {
            return Err(RemoteCallError::Unsupported {
                tool: tool.to_owned(),
                what: "a task that asks more questions than a call may take",
            }
            .into());
        }
        answered.extend(asked.keys().cloned());
        let input = InputRequiredResult::new(Some(asked), None);
        let responses = self.answering.answers(ctx, tool, args, &input).await?;
        match (self.peer)
            .update_task(UpdateTaskParams::new(id, responses))
            .await
        {
            Ok(()) => Ok(()),
            Err(ServiceError::McpError(error)) => Err(protocol_error(tool, error)),
            Err(other) => Err(transport_error(tool, other)),
        }
    }

    /// Sends `tasks/cancel` for task `id`, waiting a little for the server to take it.
    async fn cancel_task(&self, tool: &str, id: &str) {
        let cancel = self.peer.cancel_task(CancelTaskParams::new(id));
        if tokio::time::timeout(CANCEL_WAIT, cancel).await.is_err() {
            tracing::warn!(tool, task_id = %id, "the server did not take a task's cancellation");
        }
    }
}

/// The call's end, given how its task of the Tasks extension ended (completed, failed or
/// cancelled).
fn ended_task(tool: &str, ended: TaskPayload) -> Result<CallToolResult, BoxError> {
    match ended {
        TaskPayload::Completed { result } => {
            serde_json::from_value(Value::Object(result)).map_err(|_| {
                RemoteCallError::Unsupported {
                    tool: tool.to_owned(),
                    what: "a task result that is not a tool result",
                }
                .into()
            })
        }
        TaskPayload::Failed { error } => {
            let error = serde_json::from_value::<rmcp::ErrorData>(Value::Object(error))
                .unwrap_or_else(|_| rmcp::ErrorData::internal_error("the task failed", None));
            Err(protocol_error(tool, error))
        }
        _ => Err(cancelled(tool)),
    }
}

/// At most this many questions are answered in one task: a server that asks forever is
/// refused.
const MAX_TASK_QUESTIONS: usize = 64;

/// The poll interval of a task, bounded whatever the server suggests.
const MIN_POLL_MS: u64 = 50;
const MAX_POLL_MS: u64 = 5_000;
