//! Run control: retry budgets (L1), usage limits (L2), tool choice per run (L3), sequential
//! tools (L4) and tools a run stops at (L5), with the scripted model.

mod support {
    pub mod agent;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::agent::{Args, tool};
use tool_runtime::RunRequest;
use tool_runtime::{
    Agent, Context, ErrorKind, OutcomeKind, Rule, RunOptions, Schema, ScriptedModel, ScriptedTurn,
    Tool, ToolChoice, ToolError, UsageLimits,
};

/// Input of `set-window`.
#[derive(Schema, Debug)]
pub struct WindowInput {
    /// Days ahead.
    #[schema(range = 1..=30)]
    pub days: u32,
}

fn set_window() -> Tool {
    Tool::builder("set-window", "Sets a window.")
        .handler(|_ctx: Context, input: WindowInput| async move {
            Ok::<_, std::io::Error>(format!("set for {} days", input.days))
        })
        .build()
}

fn bad(turn: usize) -> ScriptedTurn {
    ScriptedTurn::new().call(format!("c{turn}"), "set-window", r#"{"days": 99}"#)
}

#[tokio::test]
async fn l1_a_tool_past_its_retry_budget_ends_the_run_with_its_last_violations() {
    // The default budget is 3: the fourth invalid call in a row ends the run.
    let model = ScriptedModel::new([bad(1), bad(2), bad(3), bad(4), ScriptedTurn::reply("?")]);
    let agent = Agent::builder(model)
        .tool(set_window())
        .build()
        .expect("builds");
    let error = agent
        .run(&Context::new(), "go")
        .await
        .expect_err("the budget ends the run");
    assert_eq!(error.kind(), ErrorKind::RetriesExhausted);
    assert_eq!(error.tool(), Some("set-window"));
    assert_eq!(error.call_id(), Some("c4"));
    assert_eq!(error.violations().len(), 1);
    assert_eq!(error.violations()[0].rule, Rule::Maximum);
    assert_eq!(error.calls().len(), 4);
    assert_eq!(error.usage().len(), 4, "no fifth request");
}

#[tokio::test]
async fn l1_a_success_resets_the_count_and_budgets_are_per_tool_and_settable() {
    // Two failures, a success, two failures: within a budget of 2 throughout.
    let good = ScriptedTurn::new().call("ok", "set-window", r#"{"days": 3}"#);
    let model = ScriptedModel::new([
        bad(1),
        bad(2),
        good,
        bad(4),
        bad(5),
        ScriptedTurn::reply("done"),
    ]);
    let tool = Tool::builder("set-window", "Sets a window.")
        .retries(2)
        .handler(|_ctx: Context, input: WindowInput| async move {
            Ok::<_, std::io::Error>(format!("set for {} days", input.days))
        })
        .build();
    let agent = Agent::builder(model).tool(tool).build().expect("builds");
    let out = agent.run(&Context::new(), "go").await.expect("an answer");
    assert_eq!(out.text, "done");
    // The agent's budget applies to a tool without its own: 0 ends at the first failure.
    let model = ScriptedModel::new([bad(1), ScriptedTurn::reply("?")]);
    let agent = Agent::builder(model)
        .tool(set_window())
        .retries(0)
        .build()
        .expect("builds");
    let error = agent.run(&Context::new(), "go").await.expect_err("ends");
    assert_eq!(error.kind(), ErrorKind::RetriesExhausted);
}

#[tokio::test]
async fn l1_a_handler_asking_to_retry_counts_and_a_plain_rejection_does_not() {
    let retry = tool("flaky", |_ctx, _args: Args| async move {
        Err::<String, _>(ToolError::retry("ask again with another date"))
    });
    let turns = (0..3).map(|i| ScriptedTurn::new().call(format!("r{i}"), "flaky", "{}"));
    let model = ScriptedModel::new(turns.chain([ScriptedTurn::reply("?")]));
    let agent = Agent::builder(model)
        .tool(retry)
        .retries(1)
        .build()
        .expect("builds");
    let error = agent.run(&Context::new(), "go").await.expect_err("ends");
    assert_eq!(error.kind(), ErrorKind::RetriesExhausted);
    assert_eq!(error.calls().len(), 2);
    assert!(error.violations().is_empty());
    // A plain `ToolError` is an answer, not a request to try again.
    let plain = tool("closed", |_ctx, _args: Args| async move {
        Err::<String, _>(ToolError::new("closed today"))
    });
    let turns = (0..3).map(|i| ScriptedTurn::new().call(format!("p{i}"), "closed", "{}"));
    let model = ScriptedModel::new(turns.chain([ScriptedTurn::reply("ok")]));
    let agent = Agent::builder(model)
        .tool(plain)
        .retries(1)
        .build()
        .expect("builds");
    assert_eq!(
        agent
            .run(&Context::new(), "go")
            .await
            .expect("answers")
            .text,
        "ok"
    );
}

#[tokio::test]
async fn l2_no_request_is_sent_past_a_limit_and_the_usage_so_far_is_kept() {
    let echo = tool("echo", |_ctx, args: Args| async move {
        Ok::<_, std::io::Error>(args)
    });
    let call = |i: usize| {
        ScriptedTurn::new()
            .call(format!("e{i}"), "echo", "{}")
            .usage(100, 10)
    };
    // Requests: 2 allowed; the third is never sent.
    let model = Arc::new(ScriptedModel::new([call(1), call(2), call(3)]));
    let agent = Agent::builder(Arc::clone(&model))
        .tool(echo.clone())
        .build()
        .expect("builds");
    let options = RunOptions::new().limits(UsageLimits::new().requests(2));
    let error = agent
        .execute(&Context::new(), RunRequest::new("go").options(options))
        .await
        .expect_err("the limit ends the run");
    assert_eq!(error.kind(), ErrorKind::UsageLimit);
    assert_eq!(model.request_count(), 2);
    assert_eq!(error.usage().len(), 2);
    // Tokens: 230 in all allowed; after two requests (220) a third may still go, after it
    // (330) none.
    let model = Arc::new(ScriptedModel::new([call(1), call(2), call(3), call(4)]));
    let agent = Agent::builder(Arc::clone(&model))
        .tool(echo.clone())
        .build()
        .expect("builds");
    let options = RunOptions::new().limits(UsageLimits::new().total_tokens(230));
    let error = agent
        .execute(&Context::new(), RunRequest::new("go").options(options))
        .await
        .expect_err("ends");
    assert_eq!(error.kind(), ErrorKind::UsageLimit);
    assert_eq!(model.request_count(), 3);
    // Tool calls: a turn that would cross the limit runs none of its calls.
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let counted = tool("count", move |_ctx, _args: Args| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move { Ok::<_, std::io::Error>("counted") }
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("a", "count", "{}"),
        ScriptedTurn::new()
            .call("b", "count", "{}")
            .call("c", "count", "{}"),
        ScriptedTurn::reply("?"),
    ]);
    let agent = Agent::builder(model).tool(counted).build().expect("builds");
    let options = RunOptions::new().limits(UsageLimits::new().tool_calls(2));
    let error = agent
        .execute(&Context::new(), RunRequest::new("go").options(options))
        .await
        .expect_err("ends");
    assert_eq!(error.kind(), ErrorKind::UsageLimit);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // The transcript stays whole: each call that did not run is answered.
    assert!(support::agent::well_formed(error.transcript()));
}

#[tokio::test]
async fn l3_a_forced_choice_applies_to_the_first_request_unless_asked_otherwise() {
    let echo = tool("echo", |_ctx, args: Args| async move {
        Ok::<_, std::io::Error>(args)
    });
    let script = || {
        [
            ScriptedTurn::new().call("e1", "echo", "{}"),
            ScriptedTurn::reply("done"),
        ]
    };
    let model = Arc::new(ScriptedModel::new(script()));
    let agent = Agent::builder(Arc::clone(&model))
        .tool(echo.clone())
        .build()
        .expect("builds");
    let named = ToolChoice::Tool("echo".into());
    agent
        .execute(
            &Context::new(),
            RunRequest::new("go").options(RunOptions::new().tool_choice(named.clone())),
        )
        .await
        .expect("answers");
    let choices: Vec<_> = model
        .requests()
        .into_iter()
        .map(|r| r.tool_choice)
        .collect();
    assert_eq!(choices, [Some(named.clone()), None]);
    // Every turn, when asked; `auto` and `none` are not forced, so every turn always.
    let model = Arc::new(ScriptedModel::new(script()));
    let agent = Agent::builder(Arc::clone(&model))
        .tool(echo)
        .options(
            RunOptions::new()
                .tool_choice(ToolChoice::Required)
                .every_turn(),
        )
        .build()
        .expect("builds");
    agent.run(&Context::new(), "go").await.expect("answers");
    let choices: Vec<_> = model
        .requests()
        .into_iter()
        .map(|r| r.tool_choice)
        .collect();
    assert_eq!(
        choices,
        [Some(ToolChoice::Required), Some(ToolChoice::Required)]
    );
}

#[tokio::test]
async fn l4_a_sequential_call_runs_alone_and_in_the_models_order() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let alone_seen = Arc::new(AtomicUsize::new(usize::MAX));
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let make = |name: &'static str, sequential: bool| {
        let in_flight = Arc::clone(&in_flight);
        let alone_seen = Arc::clone(&alone_seen);
        let order = Arc::clone(&order);
        let builder = Tool::builder(name, "Works a while.");
        let builder = if sequential {
            builder.sequential()
        } else {
            builder
        };
        builder
            .handler(move |_ctx: Context, args: Args| {
                let in_flight = Arc::clone(&in_flight);
                let alone_seen = Arc::clone(&alone_seen);
                let order = Arc::clone(&order);
                async move {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    if sequential {
                        alone_seen.store(now, Ordering::SeqCst);
                    }
                    order
                        .lock()
                        .expect("not poisoned")
                        .push(args.get("n").map(ToString::to_string).unwrap_or_default());
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, std::io::Error>("done")
                }
            })
            .build()
    };
    let turn = ScriptedTurn::new()
        .call("a", "work", r#"{"n": 1}"#)
        .call("b", "work", r#"{"n": 2}"#)
        .call("c", "migrate", r#"{"n": 3}"#)
        .call("d", "work", r#"{"n": 4}"#);
    let model = ScriptedModel::new([turn, ScriptedTurn::reply("ok")]);
    let agent = Agent::builder(model)
        .tool(make("work", false))
        .tool(make("migrate", true))
        .build()
        .expect("builds");
    let out = agent.run(&Context::new(), "go").await.expect("answers");
    assert_eq!(
        alone_seen.load(Ordering::SeqCst),
        1,
        "the sequential call ran alone"
    );
    let order = order.lock().expect("not poisoned").clone();
    assert_eq!(
        order[2], "3",
        "after the two before it, before the one after: {order:?}"
    );
    assert_eq!(order[3], "4");
    let ids: Vec<&str> = out.calls.iter().map(|c| &*c.id).collect();
    assert_eq!(ids, ["a", "b", "c", "d"], "results in the model's order");
    assert!(out.calls.iter().all(|c| c.kind() == OutcomeKind::Success));
}

#[tokio::test]
async fn l5_a_stopping_tools_success_is_the_runs_output() {
    let finish = tool("file-ticket", |_ctx, _args: Args| async move {
        Ok::<_, std::io::Error>("ticket T-7 filed")
    });
    let model = Arc::new(ScriptedModel::new([
        ScriptedTurn::new().call("t1", "file-ticket", "{}"),
        ScriptedTurn::reply("never asked"),
    ]));
    let agent = Agent::builder(Arc::clone(&model))
        .tool(finish)
        .build()
        .expect("builds");
    let out = agent
        .execute(
            &Context::new(),
            RunRequest::new("go").options(RunOptions::new().stop_at("file-ticket")),
        )
        .await
        .expect("answers");
    assert_eq!(out.text, "ticket T-7 filed");
    assert_eq!(out.stopped_at.as_deref(), Some("file-ticket"));
    assert_eq!(model.request_count(), 1, "no further request");
    // A failed call of a stopping tool does not stop the run.
    let failing = tool("file-ticket", |_ctx, _args: Args| async move {
        Err::<String, _>(ToolError::new("the queue is full"))
    });
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("t1", "file-ticket", "{}"),
        ScriptedTurn::reply("I could not file it."),
    ]);
    let agent = Agent::builder(model)
        .tool(failing)
        .options(RunOptions::new().stop_at("file-ticket"))
        .build()
        .expect("builds");
    let out = agent.run(&Context::new(), "go").await.expect("answers");
    assert_eq!(out.text, "I could not file it.");
    assert_eq!(out.stopped_at, None);
}
