//! M9 (a question before the task, the Tasks extension of 2026-07-28): a tool declared with
//! `questions_before_task` asks its first questions in the call's own answer
//! (`input_required`, sealed as any round is, H10), and is answered with its task
//! (`resultType: "task"`, no `requestState`, no `inputRequests`) when its handler calls
//! `Context::continue_as_task`; the handler goes on inside the task, its later questions wait
//! in it (`tasks/update`), and its result carries what was answered before. A handler that
//! ends first is answered plainly; a forged state makes no task; `tasks/cancel` reaches the
//! handler that went on. Raw JSON-RPC over a pipe, as a client sees it; and our own client,
//! which answers both kinds of question.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

mod support {
    pub mod mcp;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use raw_pipe::{Raw as RawPipe, meta_2026};
use serde_json::{Value, json};
use tool_runtime::agent::BuildProblem;
use tool_runtime::elicit::Elicited;
use tool_runtime::mcp::{Handshake, McpServer, McpToolset, TaskSupport};
use tool_runtime::{Context, ElicitAnswer, OutcomeKind, Schema, Tool, ToolError};

/// What `purge` is told.
#[derive(Schema, Debug)]
struct Purge {
    /// Whether the work goes on as a task once the name is known.
    #[schema(default = true)]
    as_task: bool,
}

/// An answer.
#[derive(Schema, Debug)]
struct Named {
    /// A name.
    name: String,
}

/// A question with nothing to fill in: a yes or a no.
#[derive(Schema, Debug)]
struct Nothing {}

/// A yes or no.
#[derive(Schema, Debug)]
struct Confirmed {
    /// Whether it is confirmed.
    ok: bool,
}

/// How many of `purge`'s handlers saw their call cancelled.
type Cancelled = Arc<AtomicUsize>;

/// `purge` asks who is asking, goes on as a task (unless told not to), asks to confirm inside
/// the task, and says who purged. `slow-purge` asks the name, goes on as a task and waits to
/// be cancelled.
fn server(cancelled: &Cancelled) -> McpServer {
    let purge = Tool::builder("purge", "Asks who is asking, then purges.")
        .handler(|ctx: Context, args: Purge| async move {
            let name = match ctx
                .elicit_named::<Named>("user_name", "Who is asking?")
                .await
            {
                Ok(Elicited::Accepted(named)) => named.name,
                other => return Err(ToolError::new(format!("no name: {other:?}"))),
            };
            if !args.as_task {
                return Ok(format!("{name} purged nothing, at once"));
            }
            ctx.continue_as_task();
            ctx.continue_as_task();
            let confirmed = ctx.elicit_named::<Confirmed>("confirm", "Purge everything?");
            match confirmed.await {
                Ok(Elicited::Accepted(Confirmed { ok: true })) => Ok(format!("{name} purged")),
                other => Ok(format!("{name} kept everything: {other:?}")),
            }
        })
        .build();
    let seen = Arc::clone(cancelled);
    let slow = Tool::builder("slow-purge", "Asks who is asking, then takes its time.")
        .handler(move |ctx: Context, _args: Purge| {
            let seen = Arc::clone(&seen);
            async move {
                let asked = ctx.elicit_named::<Named>("user_name", "Who is asking?");
                let Ok(Elicited::Accepted(_)) = asked.await else {
                    // The run its question ended (round 1).
                    return Ok("nobody");
                };
                ctx.continue_as_task();
                tokio::select! {
                    () = ctx.cancelled() => { seen.fetch_add(1, Ordering::SeqCst); }
                    () = tokio::time::sleep(Duration::from_secs(30)) => {}
                }
                Ok::<_, ToolError>("done")
            }
        })
        .build();
    // `careless` goes on as a task whatever its question got, even the cancellation of a
    // run that its question ended.
    let careless = Tool::builder("careless", "Asks, then goes on as a task regardless.")
        .handler(|ctx: Context, _args: Purge| async move {
            let _ = ctx
                .elicit_named::<Named>("user_name", "Who is asking?")
                .await;
            ctx.continue_as_task();
            Ok::<_, ToolError>("done")
        })
        .build();
    McpServer::builder()
        .tool(purge)
        .tool(slow)
        .tool(careless)
        .tool(at_once("asks-then-goes-on", true))
        .tool(at_once("goes-on-then-asks", false))
        .task_support("asks-then-goes-on", TaskSupport::Required)
        .questions_before_task("asks-then-goes-on")
        .task_support("goes-on-then-asks", TaskSupport::Required)
        .questions_before_task("goes-on-then-asks")
        .task_support("careless", TaskSupport::Required)
        .questions_before_task("careless")
        .task_support("purge", TaskSupport::Required)
        .task_support("slow-purge", TaskSupport::Optional)
        .questions_before_task("purge")
        .questions_before_task("slow-purge")
        .build()
        .expect("built")
}

/// A tool that asks `first` and says it goes on as a task in one poll (`join!`), the question
/// first when `ask_first`; then it asks `then` and says what it got.
fn at_once(name: &'static str, ask_first: bool) -> Tool {
    Tool::builder(name, "Asks and goes on as a task at once.")
        .handler(move |ctx: Context, _args: Purge| async move {
            let goes_on = async { ctx.continue_as_task() };
            let asked = ctx.elicit_named::<Named>("first", "The first name?");
            let first = if ask_first {
                tokio::join!(asked, goes_on).0
            } else {
                tokio::join!(goes_on, asked).1
            };
            let Ok(Elicited::Accepted(first)) = first else {
                return Ok::<_, ToolError>(format!("no first: {first:?}"));
            };
            let then = ctx.elicit_named::<Named>("then", "The next name?").await;
            let then = match then {
                Ok(Elicited::Accepted(then)) => then.name,
                other => format!("{other:?}"),
            };
            Ok(format!("{} then {then}", first.name))
        })
        .build()
}

/// A client on 2026-07-28 with the Tasks extension and elicitation.
struct Raw(RawPipe);

impl Raw {
    fn open(cancelled: &Cancelled) -> Self {
        Self(RawPipe::unopened(server(cancelled)))
    }

    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        let capabilities = json!({
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        });
        params["_meta"] = meta_2026("m9", capabilities);
        self.0.answer(method, params).await
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let params = json!({"name": tool, "arguments": arguments});
        self.request("tools/call", params).await
    }

    /// The first round's answer (`input_required`, asking `user_name`), checked.
    async fn asked_name(&mut self, tool: &str, arguments: &Value) -> Value {
        let asked = self.call(tool, arguments.clone()).await;
        let result = &asked["result"];
        assert_eq!(result["resultType"], "input_required", "{asked}");
        assert!(result.get("taskId").is_none(), "no task yet: {asked}");
        assert_eq!(
            result["inputRequests"]["user_name"]["method"], "elicitation/create",
            "{asked}"
        );
        result.clone()
    }

    /// The call again, with `name` as the answer to the round `asked`.
    async fn answer_name(&mut self, tool: &str, arguments: &Value, asked: &Value) -> Value {
        let params = json!({
            "name": tool,
            "arguments": arguments,
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
            "requestState": asked["requestState"],
        });
        self.request("tools/call", params).await
    }

    /// `tasks/get` until `done` says the task is as wanted (within 5 s).
    async fn until(&mut self, task: &str, done: impl Fn(&Value) -> bool) -> Value {
        for _ in 0..500 {
            let got = self.request("tasks/get", json!({"taskId": task})).await;
            if done(&got["result"]) {
                return got["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the task never got there");
    }
}

/// M9, M3: round 1 asks in the call's answer; round 2, answered, is the task (without the
/// round's state); the task asks its own question, `tasks/update` answers it, and the result
/// carries the answer of round 1.
#[tokio::test]
async fn m9_a_question_before_the_task_is_asked_in_the_calls_answer_then_the_task_goes_on() {
    let mut raw = Raw::open(&Cancelled::default());
    let arguments = json!({});
    let asked = raw.asked_name("purge", &arguments).await;
    let answered = raw.answer_name("purge", &arguments, &asked).await;
    let created = &answered["result"];
    assert_eq!(created["resultType"], "task", "{answered}");
    assert!(created.get("requestState").is_none(), "{answered}");
    assert!(created.get("inputRequests").is_none(), "{answered}");
    let task = created["taskId"].as_str().expect("a task id").to_owned();
    let waiting = raw.until(&task, |t| t["status"] == "input_required").await;
    assert_eq!(
        waiting["inputRequests"]["confirm"]["method"], "elicitation/create",
        "the question asked after the task began waits in it: {waiting}"
    );
    let update = json!({"taskId": task, "inputResponses": {
        "confirm": {"action": "accept", "content": {"ok": true}},
    }});
    let acknowledged = raw.request("tasks/update", update).await;
    assert!(acknowledged.get("error").is_none(), "{acknowledged}");
    let ended = raw.until(&task, |t| t["status"] == "completed").await;
    assert_eq!(
        ended["result"]["content"][0]["text"], "Alice purged",
        "{ended}"
    );
}

/// M9: a handler that ends before it says it goes on as a task is answered with its result,
/// as a plain call; M9, H10: a forged round's state makes no task, and nothing runs; a run
/// that its question ended makes none as it winds down.
#[tokio::test]
async fn m9_a_call_that_ends_first_is_answered_plainly_and_a_forged_state_makes_no_task() {
    let mut raw = Raw::open(&Cancelled::default());
    let at_once = json!({"as_task": false});
    let asked = raw.asked_name("purge", &at_once).await;
    let answered = raw.answer_name("purge", &at_once, &asked).await;
    assert_eq!(answered["result"]["resultType"], "complete", "{answered}");
    assert_eq!(
        answered["result"]["content"][0]["text"], "Alice purged nothing, at once",
        "{answered}"
    );
    let arguments = json!({});
    let mut asked = raw.asked_name("purge", &arguments).await;
    let state = asked["requestState"].as_str().expect("a state").to_owned();
    asked["requestState"] = json!(format!("{state}x"));
    let forged = raw.answer_name("purge", &arguments, &asked).await;
    assert_eq!(forged["error"]["code"], -32602, "{forged}");
    // The state of another call's arguments is refused as well.
    let asked = raw.asked_name("purge", &arguments).await;
    let misapplied = raw.answer_name("purge", &at_once, &asked).await;
    assert_eq!(misapplied["error"]["code"], -32602, "{misapplied}");
    // A run its question ended winds down: what it says then makes no task.
    for _ in 0..20 {
        raw.asked_name("careless", &arguments).await;
    }
    let listed = raw.request("tasks/list", json!({})).await;
    let tasks = listed["result"]["tasks"].as_array().map_or(0, Vec::len);
    assert_eq!(tasks, 0, "no task was made: {listed}");
}

/// M9: `tasks/cancel` of a call that went on as a task cancels its handler's context.
#[tokio::test]
async fn m9_cancelling_the_task_a_call_became_reaches_its_handler() {
    let cancelled = Cancelled::default();
    let mut raw = Raw::open(&cancelled);
    let arguments = json!({});
    let asked = raw.asked_name("slow-purge", &arguments).await;
    let answered = raw.answer_name("slow-purge", &arguments, &asked).await;
    let task = answered["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    raw.request("tasks/cancel", json!({"taskId": task})).await;
    raw.until(&task, |t| t["status"] == "cancelled").await;
    for _ in 0..500 {
        if cancelled.load(Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the handler was never cancelled");
}

/// M9: a tool declared to ask before its task that runs as no task is refused at build.
#[test]
fn m9_asking_before_a_task_needs_a_task_support() {
    let plain = Tool::builder("plain", "Runs at once.")
        .handler(|_ctx: Context, _args: Purge| async { Ok::<_, ToolError>("done") })
        .build();
    let refused = McpServer::builder()
        .tool(plain)
        .questions_before_task("plain")
        .questions_before_task("absent")
        .build()
        .expect_err("refused");
    let problems: Vec<_> = refused.problems().iter().collect();
    assert_eq!(problems.len(), 2, "{refused}");
    assert!(
        problems.iter().all(|problem| matches!(
            problem,
            BuildProblem::QuestionsBeforeTaskWithoutTasks { .. }
        )),
        "{refused}"
    );
}

/// M9, M3 (our client): an `McpToolset` on 2026-07-28 answers the question before the task in
/// the call's rounds and the one inside the task with `tasks/update`, both through its
/// elicitor, and gets the task's result.
#[tokio::test]
async fn m9_our_client_answers_the_questions_before_and_inside_the_task() {
    let builder = McpToolset::builder()
        .handshake(Handshake::Discover)
        .elicitor(|message: String, _schema: Value| async move {
            Ok(match message.as_str() {
                "Who is asking?" => ElicitAnswer::Accept(json!({"name": "Ada"})),
                "Purge everything?" => ElicitAnswer::Accept(json!({"ok": true})),
                _ => ElicitAnswer::Decline,
            })
        });
    let remote =
        support::mcp::connect_in_process_with(server(&Cancelled::default()), builder).await;
    let purge = (remote.tools().iter())
        .find(|tool| tool.name() == "purge")
        .cloned()
        .expect("listed");
    let outcome = purge.invoke(&Context::new(), b"{}").await;
    remote.close().await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{outcome:?}");
    assert_eq!(outcome.text(), "Ada purged");
}

/// M9: a question and `continue_as_task` in one poll. Asked first, the question is the call's
/// answer (`input_required`, no task); answered, the call is the task, and the question after
/// waits in it. Said first, the call is the task, and the question waits in it. Either way the
/// task completes with both answers (a task that fails on a question the round asked would
/// be lost).
#[tokio::test]
async fn m9_a_question_asked_as_the_call_goes_on_as_a_task_is_asked_once_and_answered() {
    let mut raw = Raw::open(&Cancelled::default());
    let arguments = json!({});
    let asked = raw.call("asks-then-goes-on", arguments.clone()).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let params = json!({
        "name": "asks-then-goes-on",
        "arguments": arguments,
        "inputResponses": {"first": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": asked["result"]["requestState"],
    });
    let created = raw.request("tools/call", params).await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    raw.until(&task, |t| t["inputRequests"]["then"].is_object())
        .await;
    let update = json!({"taskId": task, "inputResponses": {
        "then": {"action": "accept", "content": {"name": "Bo"}}}});
    raw.request("tasks/update", update).await;
    let ended = raw.until(&task, |t| t["status"] == "completed").await;
    assert_eq!(
        ended["result"]["content"][0]["text"], "Ada then Bo",
        "{ended}"
    );

    let created = raw.call("goes-on-then-asks", json!({})).await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    for (key, name) in [("first", "Cy"), ("then", "Di")] {
        raw.until(&task, |t| t["inputRequests"][key].is_object())
            .await;
        let update = json!({"taskId": task, "inputResponses": {
            key: {"action": "accept", "content": {"name": name}}}});
        raw.request("tasks/update", update).await;
    }
    let ended = raw.until(&task, |t| t["status"] == "completed").await;
    assert_eq!(
        ended["result"]["content"][0]["text"], "Cy then Di",
        "{ended}"
    );
}

/// M9, M5: a call whose handler goes on as a task when its client holds as many tasks as it
/// may is refused as a task that cannot be made is, and its handler is cancelled; nothing
/// goes on unseen.
#[tokio::test]
async fn m9_a_call_that_cannot_become_a_task_is_refused_and_cancelled() {
    let cancelled = Cancelled::default();
    let mut raw = Raw::open(&cancelled);
    for _ in 0..100 {
        let held = raw.call("goes-on-then-asks", json!({})).await;
        assert_eq!(held["result"]["resultType"], "task", "{held}");
    }
    let arguments = json!({});
    let asked = raw.asked_name("slow-purge", &arguments).await;
    let refused = raw.answer_name("slow-purge", &arguments, &asked).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        (refused["error"]["message"].as_str()).is_some_and(|m| m.contains("as many tasks")),
        "{refused}"
    );
    for _ in 0..500 {
        if cancelled.load(Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the handler was never cancelled");
}

/// M9 (our client): a task's question it cannot answer here (an approval, which pauses the
/// local run) makes it cancel the task, not leave it waiting for an answer that will not come.
#[tokio::test]
async fn m9_our_client_cancels_a_task_it_leaves_for_an_approval() {
    let cancelled = Cancelled::default();
    let seen = Arc::clone(&cancelled);
    let approve = Tool::builder("wipe", "Asks for a yes in its task, then wipes.")
        .handler(move |ctx: Context, _args: Purge| {
            let seen = Arc::clone(&seen);
            async move {
                let asked = ctx
                    .elicit_named::<Nothing>("approve", "Wipe everything?")
                    .await;
                // Nobody answers here: the question ends only when its task is cancelled.
                if matches!(asked, Ok(Elicited::Cancelled)) {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
                Ok::<_, ToolError>("asked")
            }
        })
        .build();
    let server = McpServer::builder()
        .tool(approve)
        .task_support("wipe", TaskSupport::Required)
        .build()
        .expect("built");
    let builder = McpToolset::builder()
        .handshake(Handshake::Discover)
        .pause_on_approval();
    let remote = support::mcp::connect_in_process_with(server, builder).await;
    let wipe = (remote.tools().iter())
        .find(|tool| tool.name() == "wipe")
        .cloned()
        .expect("listed");
    let outcome = wipe.invoke(&Context::new(), b"{}").await;
    assert!(
        outcome.is_pending(),
        "the local run waits for approval: {outcome:?}"
    );
    for _ in 0..500 {
        if cancelled.load(Ordering::SeqCst) == 1 {
            remote.close().await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task was left waiting");
}
