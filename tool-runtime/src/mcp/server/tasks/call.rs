//! A `tools/call` and its task (M5): whether it runs plain, as a task, or is refused, and the
//! task that runs it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, ErrorCode, MetaObject, RequestMetaObject,
};
use serde_json::{Map, Value, json};
use tool_core::{CancellationToken, Context, Tool};

use super::store::{Answer, Full, Status, Task};
use super::{CREATED_META_KEY, TASK_META_KEY, TaskSupport, Tasks};

/// The `_meta` key that ties a result to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// How a call goes.
#[derive(Debug, PartialEq)]
pub(crate) enum Route {
    /// As any call: the answer is its result.
    Plain,
    /// As a task, kept this long after it ends (the client's wish, bounded).
    Task(Option<Duration>),
}

/// How the call of `published` (the tool `tool`, if the server holds one by that name) goes,
/// or why it is refused (`-32601`): a task for a tool that takes none, a plain call for one
/// that requires a task from a client on 2025-11-25 (a client on another version cannot make
/// such tasks: its call runs plain). A5: a hidden tool is refused as a name the server does
/// not hold.
pub(crate) async fn route(
    tasks: &Tasks,
    tool: Option<&Tool>,
    published: &str,
    meta: Option<&RequestMetaObject>,
    ctx: &Context,
    has_tasks: bool,
) -> Result<Route, ErrorData> {
    let asked = meta.and_then(|meta| meta.get(TASK_META_KEY));
    let support = match tasks.support(published) {
        TaskSupport::Required if !has_tasks => TaskSupport::Optional,
        support => support,
    };
    // An availability error is the pipeline's to answer; here the tool counts as hidden.
    let visible = match tool {
        Some(tool) if needs_visibility(asked.is_some(), support) => {
            tool.available(ctx).await.unwrap_or(false)
        }
        _ => false,
    };
    match asked {
        None if support == TaskSupport::Required && visible => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "this tool runs only as a task: call it with `task` (protocol 2025-11-25)",
            None,
        )),
        None => Ok(Route::Plain),
        Some(task) if !task.is_object() => Err(ErrorData::invalid_params(
            "`task` must be an object, with `ttl` (milliseconds) optional",
            None,
        )),
        Some(task) if visible => Ok(Route::Task(
            task.get("ttl")
                .and_then(Value::as_u64)
                .map(Duration::from_millis),
        )),
        Some(_) => Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "this tool cannot be called as a task: call it without `task`",
            None,
        )),
    }
}

/// Whether routing a call needs its tool's policy: only to tell a task-capable tool's
/// caller apart from one who may not see it.
fn needs_visibility(task_asked: bool, support: TaskSupport) -> bool {
    match support {
        TaskSupport::Forbidden => false,
        TaskSupport::Optional => task_asked,
        TaskSupport::Required => true,
    }
}

/// Whether a call on 2026-07-28 from a client that declared the Tasks extension (SEP-2663)
/// runs as a task: the server decides, and does for a tool that takes tasks and that the
/// client may see (A5: a hidden one runs plain, to its `tool unavailable`).
pub(crate) async fn as_extension_task(
    tasks: &Tasks,
    tool: Option<&Tool>,
    published: &str,
    ctx: &Context,
) -> bool {
    match tool {
        Some(tool) if tasks.support(published) != TaskSupport::Forbidden => {
            tool.available(ctx).await.unwrap_or(false)
        }
        _ => false,
    }
}

/// Which protocol's tasks a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Protocol 2025-11-25: the answer is rewritten into a `CreateTaskResult` on its way out.
    Augmented,
    /// The Tasks extension of 2026-07-28 (SEP-2663): the SDK sends the task handle.
    Extension,
}

/// A task's call as it runs: what cancels it, and where it says it waits for its user.
pub(crate) struct Running(Arc<Task>);

impl Running {
    /// Cancelled when the task is (`tasks/cancel`).
    pub(crate) fn cancelled(&self) -> &CancellationToken {
        &self.0.cancel
    }

    /// What the task's handler asks its client through (M9): the task, for what the client
    /// `declared` it answers.
    pub(crate) fn questions(
        &self,
        declared: crate::mcp::server::ask::Declared,
    ) -> Arc<super::input::TaskQuestions> {
        super::input::TaskQuestions::new(Arc::clone(&self.0), declared)
    }

    /// While the client's user is asked for approval (`true`), the task waits on input.
    pub(crate) fn asking(&self, asking: bool) {
        let (status, message) = if asking {
            (
                Status::InputRequired,
                Some("waiting for approval".to_owned()),
            )
        } else {
            (Status::Working, None)
        };
        self.0.set(status, message);
    }
}

/// Makes a call a task of `owner`'s, runs `call` (given the task's [`Running`]) on in a task
/// of the runtime, and answers with the task.
pub(crate) fn start<C, F>(
    tasks: &Tasks,
    owner: &str,
    ttl: Option<Duration>,
    flavor: Flavor,
    call: C,
) -> Result<CallToolResponse, ErrorData>
where
    C: FnOnce(Running) -> F,
    F: Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'static,
{
    let task = tasks.store.create(owner, ttl).map_err(refused)?;
    let created = match flavor {
        Flavor::Augmented => task.to_json(),
        Flavor::Extension => Value::Null,
    };
    let handle = task.handle();
    let answering = call(Running(Arc::clone(&task)));
    tokio::spawn(async move {
        let (status, message, answer) = ended(answering.await, &task.id, flavor);
        task.finish(status, message, answer);
    });
    if flavor == Flavor::Extension {
        return Ok(CallToolResponse::Task(CreateTaskResult::new(handle)));
    }
    let mut result = CallToolResult::success(Vec::new());
    result.meta = Some(MetaObject(Map::from_iter([(
        CREATED_META_KEY.to_owned(),
        created,
    )])));
    Ok(CallToolResponse::Complete(result))
}

/// The refusal of a task the store has no room for.
pub(super) fn refused(full: Full) -> ErrorData {
    let whose = match full {
        Full::Owner => "this client holds",
        Full::Server => "the server holds",
    };
    ErrorData::internal_error(
        format!("{whose} as many tasks as it may: wait for one to end, or cancel one"),
        None,
    )
}

/// How a task ends, given its call's answer. A 2025-11-25 result names its task in `_meta`
/// (`related-task`, as `tasks/result` must); the Tasks extension's `tasks/get` inlines the
/// result beside the task's id, where that key is forbidden (M9).
pub(super) fn ended(
    answered: Result<CallToolResponse, ErrorData>,
    task_id: &str,
    flavor: Flavor,
) -> (Status, Option<String>, Answer) {
    let result = match answered {
        Ok(CallToolResponse::Complete(result)) => result,
        Ok(_) => {
            // An `input_required` answer belongs to protocol 2026-07-28, which has no tasks
            // of this kind; a task cannot carry it.
            let error =
                ErrorData::internal_error("the call asked for input a task cannot carry", None);
            return (Status::Failed, Some(error.message.to_string()), Err(error));
        }
        Err(error) => return (Status::Failed, Some(error.message.to_string()), Err(error)),
    };
    // On 2025-11-25 a tool's `isError` result fails its task, its text (redacted, E2) saying
    // why; the Tasks extension completes it with that result (M9): only a protocol error
    // fails a task there.
    let failed = result.is_error == Some(true) && flavor == Flavor::Augmented;
    let message = failed.then(|| first_text(&result)).flatten();
    let mut value = serde_json::to_value(&result).unwrap_or_else(|_| json!({"content": []}));
    if let Value::Object(object) = &mut value {
        // The discriminator of 2026-07-28 results, which 2025-11-25 has not.
        object.remove("resultType");
        let meta = (flavor == Flavor::Augmented).then(|| {
            object
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()))
        });
        if let Some(Value::Object(meta)) = meta {
            meta.insert(RELATED_TASK.to_owned(), json!({ "taskId": task_id }));
        }
    }
    (status_of(failed), message, Ok(value))
}

/// The end of a task whose call answered a result: `failed` when the result is an `isError`.
fn status_of(failed: bool) -> Status {
    if failed {
        Status::Failed
    } else {
        Status::Completed
    }
}

/// The refusal of a call on 2026-07-28 of a tool that runs only as a task, from a client
/// that did not declare the Tasks extension (for the session or in the request's `_meta`):
/// `-32021`, naming the extension the call needs (M9). Nothing runs.
pub(crate) fn extension_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build(),
    )
}

fn first_text(result: &CallToolResult) -> Option<String> {
    result
        .content
        .iter()
        .find_map(|content| content.as_text().map(|text| text.text.clone()))
}
