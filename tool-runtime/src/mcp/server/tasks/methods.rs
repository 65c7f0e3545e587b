//! The `tasks/*` requests of protocol 2025-11-25 (M5), each on the tasks of the client that
//! asks.

use rmcp::ErrorData;
use rmcp::model::{CustomRequest, DetailedTask, ErrorCode};
use serde_json::{Value, json};
use tool_core::CancellationToken;

use super::store::Status;
use super::{METHOD_PREFIX, Tasks};

/// How many tasks one `tasks/list` page holds.
const PAGE: usize = 50;

/// The answer to `request` if it is a `tasks/*` request (renamed on the way in), for the
/// client `owner`; `None` for any other method. `cancelled` ends a `tasks/result` that waits.
pub(crate) async fn answer(
    tasks: &Tasks,
    owner: &str,
    request: &CustomRequest,
    cancelled: &CancellationToken,
) -> Option<Result<Value, ErrorData>> {
    let method = request.method.strip_prefix(METHOD_PREFIX)?;
    if !tasks.enabled() {
        return None;
    }
    let params = request.params.as_ref();
    Some(match method {
        "tasks/list" => list(tasks, owner, params),
        "tasks/get" | "tasks/result" | "tasks/cancel" => {
            let task = match task_id(params) {
                Ok(id) => tasks.store.get(owner, id),
                Err(error) => return Some(Err(error)),
            };
            let Some(task) = task else {
                return Some(Err(not_found()));
            };
            match method {
                "tasks/get" => Ok(task.to_json()),
                "tasks/cancel" => {
                    if !task.set(
                        Status::Cancelled,
                        Some("cancelled by the client".to_owned()),
                    ) {
                        return Some(Err(ErrorData::invalid_params(
                            "the task has already ended: it cannot be cancelled",
                            None,
                        )));
                    }
                    task.cancel.cancel();
                    Ok(task.to_json())
                }
                _ => tokio::select! {
                    ended = task.ended() => match ended {
                        (_, Some(answer)) => answer,
                        (_, None) => Err(ErrorData::new(
                            ErrorCode::INVALID_REQUEST,
                            "the task was cancelled: it has no result",
                            None,
                        )),
                    },
                    () = cancelled.cancelled() => Err(ErrorData::new(
                        ErrorCode::INVALID_REQUEST,
                        "the request was cancelled",
                        None,
                    )),
                },
            }
        }
        _ => return None,
    })
}

fn task_id(params: Option<&Value>) -> Result<&str, ErrorData> {
    params
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ErrorData::invalid_params("`taskId` is missing: the id the task was given", None)
        })
}

fn list(tasks: &Tasks, owner: &str, params: Option<&Value>) -> Result<Value, ErrorData> {
    let start = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => 0,
        Some(cursor) => cursor
            .as_str()
            .and_then(|c| c.parse::<usize>().ok())
            .ok_or_else(|| {
                ErrorData::invalid_params("`cursor` is not one this server gave", None)
            })?,
    };
    let owned = tasks.store.list(owner);
    let page: Vec<Value> = owned
        .iter()
        .skip(start)
        .take(PAGE)
        .map(|t| t.to_json())
        .collect();
    let mut result = json!({ "tasks": page });
    if start + PAGE < owned.len() {
        result["nextCursor"] = json!((start + PAGE).to_string());
    }
    Ok(result)
}

/// `tasks/get` of the Tasks extension (SEP-2663), on the tasks of `owner`.
pub(crate) fn get(tasks: &Tasks, owner: &str, id: &str) -> Result<DetailedTask, ErrorData> {
    tasks
        .store
        .get(owner, id)
        .map(|task| task.detailed())
        .ok_or_else(not_found)
}

/// `tasks/cancel` of the Tasks extension (SEP-2663): the task cancelled, its call's context
/// with it. Cancelling is idempotent there (M9): a task that has already ended (cancelled
/// before, completed, failed) keeps its end, and the request is acknowledged all the same,
/// unlike 2025-11-25's `tasks/cancel` (in [`answer`]), which refuses it `-32602`.
pub(crate) fn cancel(tasks: &Tasks, owner: &str, id: &str) -> Result<(), ErrorData> {
    let task = tasks.store.get(owner, id).ok_or_else(not_found)?;
    if task.set(
        Status::Cancelled,
        Some("cancelled by the client".to_owned()),
    ) {
        task.cancel.cancel();
    }
    Ok(())
}

/// `tasks/update` of the Tasks extension (M9): the answers `responses` brings go to the
/// task's pending questions under their keys; keys of no pending question are ignored, and
/// the update is acknowledged however many it answered.
pub(crate) fn update(
    tasks: &Tasks,
    owner: &str,
    id: &str,
    responses: &rmcp::model::InputResponses,
) -> Result<(), ErrorData> {
    let task = tasks.store.get(owner, id).ok_or_else(not_found)?;
    task.answer(responses);
    Ok(())
}

fn not_found() -> ErrorData {
    ErrorData::invalid_params(
        "no task of this id: it never was, was let go after its ttl, or is another client's",
        None,
    )
}
