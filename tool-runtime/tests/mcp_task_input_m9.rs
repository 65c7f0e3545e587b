//! M9 (tasks that wait for input, the Tasks extension of 2026-07-28): a task's handler asks its
//! user through its context (`ctx.elicit_named`), and the task shows `input_required` on
//! `tasks/get` with each pending question under its key; `tasks/update` answers them, one at a
//! time if the client likes (only the still-pending keys stay shown), keys of no pending
//! question ignored however many; the task works again and ends with the answers. An unknown
//! task id is `-32602`; a task cancelled while it waits tells its handler so; a client that
//! declared no elicitation is not asked. Raw JSON-RPC over a pipe, as a client sees it.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

use std::time::Duration;

use raw_pipe::{Raw as RawPipe, meta_2026};
use serde_json::{Map, Value, json};
use tool_runtime::elicit::{ElicitError, Elicited};
use tool_runtime::mcp::{McpServer, TaskSupport};
use tool_runtime::sampling::SamplingRequest;
use tool_runtime::{Context, Schema, Tool, ToolError};

/// No arguments.
#[derive(Schema, Debug)]
struct NoArguments {}

/// An answer.
#[derive(Schema, Debug)]
struct Named {
    /// A name.
    name: String,
}

/// `ask-twice` asks two questions at once, as a task, and says what it got.
fn server() -> McpServer {
    let ask_twice = Tool::builder("ask-twice", "Asks two names, then says them.")
        .handler(|ctx: Context, _args: NoArguments| async move {
            let (first, second) = tokio::join!(
                ctx.elicit_named::<Named>("first", "The first name?"),
                ctx.elicit_named::<Named>("second", "The second name?"),
            );
            let said = |answer: Result<Elicited<Named>, ElicitError>| match answer {
                Ok(Elicited::Accepted(named)) => named.name,
                Ok(other) => format!("{other:?}"),
                Err(ElicitError::Unsupported) => "nobody to ask".to_owned(),
                Err(error) => format!("error: {error}"),
            };
            Ok::<_, ToolError>(format!("{} and {}", said(first), said(second)))
        })
        .build();
    // `impatient` waits 50 ms for its answer, then works on without it for a while.
    let impatient = Tool::builder("impatient", "Asks a name, but not for long.")
        .handler(|ctx: Context, _args: NoArguments| async move {
            let asked = ctx.elicit_named::<Named>("name", "A name, quickly?");
            let got = tokio::time::timeout(Duration::from_millis(50), asked).await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            Ok::<_, ToolError>(if got.is_ok() { "answered" } else { "gave up" })
        })
        .build();
    // `guarded` needs its user's approval before it runs (H6).
    let guarded = Tool::builder("guarded", "Runs once approved.")
        .require_approval()
        .handler(|_ctx: Context, _args: NoArguments| async { Ok::<_, ToolError>("guarded ran") })
        .build();
    // `consult` asks the client's model, then reads the client's roots.
    let consult = Tool::builder("consult", "Asks the client's model, then its roots.")
        .handler(|ctx: Context, _args: NoArguments| async move {
            let request = SamplingRequest::new("What is the capital of France?", 100);
            let sampled = match ctx.sample_named("capital", request).await {
                Ok(answer) => answer.text,
                Err(error) => format!("sample failed: {error}"),
            };
            let roots = match ctx.roots_named("client_roots").await {
                Ok(roots) => (roots.iter().map(|root| root.uri.as_str()))
                    .collect::<Vec<_>>()
                    .join(","),
                Err(error) => format!("roots failed: {error}"),
            };
            Ok::<_, ToolError>(format!("{sampled} | {roots}"))
        })
        .build();
    McpServer::builder()
        .tool(ask_twice)
        .tool(impatient)
        .tool(guarded)
        .tool(consult)
        .task_support("consult", TaskSupport::Required)
        .task_support("guarded", TaskSupport::Required)
        .task_support("ask-twice", TaskSupport::Required)
        .task_support("impatient", TaskSupport::Required)
        .build()
        .expect("built")
}

/// A client speaking newline-delimited JSON-RPC over a pipe, on 2026-07-28 with the Tasks
/// extension.
struct Raw {
    pipe: RawPipe,
    capabilities: Value,
}

impl Raw {
    fn open(server: McpServer, elicitation: bool) -> Self {
        let mut capabilities = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        if elicitation {
            capabilities["elicitation"] = json!({});
        }
        Self {
            pipe: RawPipe::unopened(server),
            capabilities,
        }
    }

    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = meta_2026("m9", self.capabilities.clone());
        self.pipe.answer(method, params).await
    }

    /// Calls `ask-twice`; the task's id.
    async fn start(&mut self) -> String {
        let answer = self
            .request("tools/call", json!({"name": "ask-twice", "arguments": {}}))
            .await;
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
        (answer["result"]["taskId"].as_str())
            .expect("a task id")
            .to_owned()
    }

    async fn get(&mut self, task: &str) -> Value {
        let answer = self.request("tasks/get", json!({"taskId": task})).await;
        answer["result"].clone()
    }

    /// `tasks/get` until the task's status is `status` (within 5 s).
    async fn until(&mut self, task: &str, status: &str, pending: usize) -> Value {
        for _ in 0..500 {
            let got = self.get(task).await;
            let shown = got["inputRequests"].as_object().map_or(0, Map::len);
            if got["status"] == status && (status != "input_required" || shown == pending) {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the task never was {status}: {}", self.get(task).await);
    }

    async fn update(&mut self, task: &str, responses: Value) -> Value {
        let params = json!({"taskId": task, "inputResponses": responses});
        self.request("tasks/update", params).await
    }
}

fn accepted(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

/// M9: both questions wait in the task; answered one at a time (beside thousands of keys of
/// no question), only the pending one stays shown; answered both, the task completes with
/// them.
#[tokio::test]
async fn m9_a_tasks_questions_wait_in_it_and_tasks_update_answers_them() {
    let mut raw = Raw::open(server(), true);
    let task = raw.start().await;
    let waiting = raw.until(&task, "input_required", 2).await;
    let requests = waiting["inputRequests"].as_object().expect("a map");
    assert_eq!(
        requests["first"]["method"], "elicitation/create",
        "{waiting}"
    );
    assert_eq!(requests["second"]["params"]["message"], "The second name?");

    let mut responses = Map::new();
    responses.insert("first".to_owned(), accepted("Ada"));
    for i in 0..2_000 {
        responses.insert(format!("unknown-{i}"), json!({"action": "accept"}));
    }
    let ack = raw.update(&task, Value::Object(responses)).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("status").is_none(), "{ack}");
    let still = raw.until(&task, "input_required", 1).await;
    assert!(still["inputRequests"]["second"].is_object(), "{still}");
    assert!(still["inputRequests"].get("first").is_none(), "{still}");

    raw.update(&task, json!({"second": accepted("Grace")}))
        .await;
    let done = raw.until(&task, "completed", 0).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Ada and Grace",
        "{done}"
    );
}

/// M9, hostile updates: an unknown task is `-32602`; a task cancelled while it waits tells its
/// handler, and an update after is acknowledged and changes nothing.
#[tokio::test]
async fn m9_updates_of_unknown_or_cancelled_tasks_are_clear() {
    let mut raw = Raw::open(server(), true);
    let unknown = raw
        .update("no-such-task", json!({"first": accepted("x")}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    let task = raw.start().await;
    raw.until(&task, "input_required", 2).await;
    let cancelled = raw.request("tasks/cancel", json!({"taskId": task})).await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let ack = raw.update(&task, json!({"first": accepted("late")})).await;
    assert!(ack.get("result").is_some(), "{ack}");
    let got = raw.get(&task).await;
    assert_eq!(got["status"], "cancelled", "{got}");
}

/// M9, M3: a client that declared no elicitation is not asked; the handler is told so and
/// the task completes.
#[tokio::test]
async fn m9_a_task_of_a_client_that_cannot_answer_is_not_asked() {
    let mut raw = Raw::open(server(), false);
    let task = raw.start().await;
    let done = raw.until(&task, "completed", 0).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "nobody to ask and nobody to ask",
        "{done}"
    );
}

/// M9: a question its handler gave up on (under a timeout of its own) is no longer shown, and
/// the task works again, rather than waiting on input nobody waits for.
#[tokio::test]
async fn m9_a_question_its_handler_gave_up_on_is_no_longer_shown() {
    let mut raw = Raw::open(server(), true);
    let answer = raw
        .request("tools/call", json!({"name": "impatient", "arguments": {}}))
        .await;
    let task = answer["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {answer}"))
        .to_owned();
    raw.until(&task, "input_required", 1).await;
    let working = raw.until(&task, "working", 0).await;
    assert!(working.get("inputRequests").is_none(), "{working}");
    let done = raw.until(&task, "completed", 0).await;
    assert_eq!(done["result"]["content"][0]["text"], "gave up", "{done}");
}

/// M9, H6: a task of the Tasks extension whose tool needs approval asks for it in the task
/// (`input_required` on `tasks/get`, the question unnamed), and `tasks/update` answers it: an
/// acceptance runs the tool, a refusal completes the task with `the call was not approved`
/// and nothing runs. (Before, the approval was asked as an input round, which a task cannot
/// carry, and the task failed.)
#[tokio::test]
async fn m9_h6_a_task_asks_for_its_approval_in_the_task() {
    let mut raw = Raw::open(server(), true);
    for (action, text, is_error) in [
        ("accept", "guarded ran", false),
        ("decline", "the call was not approved", true),
    ] {
        let created =
            (raw.request("tools/call", json!({"name": "guarded", "arguments": {}}))).await;
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        let task = created["result"]["taskId"]
            .as_str()
            .expect("a task")
            .to_owned();
        let waiting = raw.until(&task, "input_required", 1).await;
        let question = &waiting["inputRequests"]["question-0"];
        assert_eq!(question["method"], "elicitation/create", "{waiting}");
        assert!(
            (question["params"]["message"].as_str()).is_some_and(|m| m.contains("guarded")),
            "{waiting}"
        );
        let answer = json!({"question-0": {"action": action, "content": {}}});
        raw.update(&task, answer).await;
        let done = raw.until(&task, "completed", 0).await;
        assert_eq!(done["result"]["content"][0]["text"], text, "{done}");
        assert_eq!(done["result"]["isError"], is_error, "{done}");
    }
}

/// M9, M8: a task's handler asks the client's model and reads its roots through the task:
/// each request waits in it (`sampling/createMessage`, `roots/list` under the handler's keys)
/// and `tasks/update` answers it, checked as any answer is (a root with no URI is refused to
/// the handler); a client that declared neither is not asked.
#[tokio::test]
async fn m9_m8_a_task_samples_and_reads_roots_through_the_task() {
    for (declared, answers, said) in [
        (
            true,
            json!({"roots": [{"uri": "file:///work"}]}),
            "Paris | file:///work",
        ),
        (
            true,
            json!({"roots": [{"uri": ""}]}),
            "Paris | roots failed",
        ),
        (false, json!({}), "sample failed"),
    ] {
        let mut raw = Raw::open(server(), false);
        if declared {
            raw.capabilities["sampling"] = json!({});
            raw.capabilities["roots"] = json!({});
        }
        let created =
            (raw.request("tools/call", json!({"name": "consult", "arguments": {}}))).await;
        let task = created["result"]["taskId"]
            .as_str()
            .expect("a task")
            .to_owned();
        if declared {
            let asked = raw.until(&task, "input_required", 1).await;
            let request = &asked["inputRequests"]["capital"];
            assert_eq!(request["method"], "sampling/createMessage", "{asked}");
            let model = json!({"role": "assistant", "model": "m",
                "content": {"type": "text", "text": "Paris"}});
            raw.update(&task, json!({"capital": model})).await;
            let asked = raw.until(&task, "input_required", 1).await;
            let request = &asked["inputRequests"]["client_roots"];
            assert_eq!(request["method"], "roots/list", "{asked}");
            raw.update(&task, json!({"client_roots": answers})).await;
        }
        let done = raw.until(&task, "completed", 0).await;
        let text = done["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with(said), "{done}");
    }
}
