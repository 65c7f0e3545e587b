//! Agents that compose (B1): an agent as a tool of another, with its own model, tools and
//! limits; its answer is the call's result (typed when it has a typed answer); its usage
//! counts as its parent's and its parent's remaining limits bound it (L2); the parent's
//! cancellation reaches it (P4); its run's span nests under the call's (K2); its failures
//! reach the parent's model as `the tool failed` (E2); it is served over MCP like any tool.
mod support {
    pub mod compose;
    #[cfg(feature = "mcp")]
    pub mod mcp;
    pub mod spans;
    pub mod trace;
}

use std::time::Duration;

use support::compose::{Ledger, Lookup, lookup};
use support::spans::Spans;
use tool_runtime::{
    Agent, Context, ErrorKind, Message, OutcomeKind, Permanent, RunEvent, RunOptions, Schema,
    ScriptedModel, ScriptedTurn, Tool, UsageLimits,
};

/// A balance, as the accounts specialist answers it.
#[derive(Schema, Debug, Clone, PartialEq, serde::Serialize)]
struct Balance {
    /// The account.
    account: String,
    /// What it holds, in cents.
    cents: u64,
}

fn specialist(model: ScriptedModel, ledger: &Ledger) -> Agent {
    Agent::builder(model)
        .name("accounts")
        .instructions("Answer questions about accounts.")
        .tool(lookup(ledger))
        .build()
        .expect("the specialist builds")
}

fn orchestrator(model: ScriptedModel, child: &Agent, options: RunOptions) -> Agent {
    Agent::builder(model)
        .name("orchestrator")
        .agent_tool(child.as_tool("accounts", "Answers questions about accounts."))
        .options(options)
        .build()
        .expect("the orchestrator builds")
}

fn ask(id: &str, request: &str) -> ScriptedTurn {
    ScriptedTurn::new().call(
        id,
        "accounts",
        serde_json::json!({ "request": request }).to_string(),
    )
}

fn user_text(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::User { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn b1_an_agent_is_a_tool_of_another_and_its_answer_is_the_calls_result() {
    let ledger = Ledger::new();
    let child_model = ScriptedModel::new([
        ScriptedTurn::new().call("k1", "lookup", r#"{"account":"acme"}"#),
        ScriptedTurn::reply("acme holds 1200 cents"),
    ]);
    let parent_model = ScriptedModel::new([
        ask("p1", "How much does acme hold?"),
        ScriptedTurn::reply("Acme holds $12."),
    ]);
    let child = specialist(child_model.clone(), &ledger);
    let parent = orchestrator(parent_model.clone(), &child, RunOptions::new());
    let out = parent.run(&Context::new(), "Check acme").await.unwrap();
    assert_eq!(out.text, "Acme holds $12.");
    assert_eq!(
        ledger.entries(),
        ["lookup:acme"],
        "the specialist's own tool ran"
    );
    assert_eq!(
        parent_model.requests()[1].tool_results()[0].text,
        "acme holds 1200 cents"
    );
    // The specialist got the request as its user message, with its own instructions.
    let asked = &child_model.requests()[0];
    assert_eq!(user_text(&asked.messages), ["How much does acme hold?"]);
    assert_eq!(
        asked.instructions.as_deref(),
        Some("Answer questions about accounts.")
    );
    // The parent's model sees a tool with a `request` string.
    let spec = &parent_model.requests()[0].tools[0];
    assert_eq!(spec.name(), "accounts");
    assert_eq!(spec.parameters()["properties"]["request"]["type"], "string");
}

#[tokio::test]
async fn b1_a_sub_agent_that_would_exceed_the_parents_request_limit_stops_at_it() {
    let ledger = Ledger::new();
    // The specialist would look up five times before answering.
    let child_model = ScriptedModel::new(
        (0..5)
            .map(|i| ScriptedTurn::new().call(format!("k{i}"), "lookup", r#"{"account":"acme"}"#))
            .chain([ScriptedTurn::reply("done")]),
    );
    let parent_model = ScriptedModel::new([ask("p1", "Audit acme"), ScriptedTurn::reply("never")]);
    let child = specialist(child_model.clone(), &ledger);
    let limits = UsageLimits::new().requests(3);
    let parent = orchestrator(
        parent_model.clone(),
        &child,
        RunOptions::new().limits(limits),
    );
    let error = parent.run(&Context::new(), "Audit").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::UsageLimit, "{error:#}");
    // One request of the parent's, two of the specialist's: three in all, the limit.
    assert_eq!(parent_model.request_count(), 1);
    assert_eq!(child_model.request_count(), 2);
    assert_eq!(ledger.entries().len(), 2);
    let call = &error.calls()[0];
    assert_eq!(call.kind(), OutcomeKind::Failed);
    assert!(
        format!("{:#}", call.error().unwrap()).contains("limit of 2 requests"),
        "the specialist stopped at what its parent had left: {:#}",
        call.error().unwrap()
    );
}

#[tokio::test]
async fn b1_a_sub_agents_tokens_count_toward_its_parents_limits() {
    let ledger = Ledger::new();
    let child_model = ScriptedModel::new(
        (0..4)
            .map(|i| {
                ScriptedTurn::new()
                    .call(format!("k{i}"), "lookup", r#"{"account":"acme"}"#)
                    .usage(30, 30)
            })
            .chain([ScriptedTurn::reply("done")]),
    );
    let parent_model = ScriptedModel::new([
        ask("p1", "Audit acme").usage(5, 5),
        ScriptedTurn::reply("never"),
    ]);
    let child = specialist(child_model.clone(), &ledger);
    let limits = UsageLimits::new().total_tokens(100);
    let parent = orchestrator(
        parent_model.clone(),
        &child,
        RunOptions::new().limits(limits),
    );
    let error = parent.run(&Context::new(), "Audit").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::UsageLimit, "{error:#}");
    assert!(format!("{error}").contains("tokens"), "{error}");
    // 10 of the parent's, then 60 and 60 of the specialist's: it stopped once past the 90
    // its parent had left, and the parent sent nothing more.
    assert_eq!(child_model.request_count(), 2);
    assert_eq!(parent_model.request_count(), 1);
}

#[tokio::test]
async fn b1_a_sub_agents_failure_reaches_the_parents_model_as_the_tool_failed() {
    let broken = Tool::builder("lookup", "Reads an account's balance.")
        .handler(|_ctx: Context, _input: Lookup| async move {
            Err::<String, _>(Permanent::new(std::io::Error::other(
                "SECRET-DSN postgres://admin:hunter2@db",
            )))
        })
        .build();
    let child_model =
        ScriptedModel::new([ScriptedTurn::new().call("k1", "lookup", r#"{"account":"acme"}"#)]);
    let child = Agent::builder(child_model).tool(broken).build().unwrap();
    let parent_model = ScriptedModel::new([
        ask("p1", "How much does acme hold?"),
        ScriptedTurn::reply("I could not find out."),
    ]);
    let parent = orchestrator(parent_model.clone(), &child, RunOptions::new());
    // The specialist's permanent failure ends its run, not its parent's.
    let out = parent.run(&Context::new(), "Check acme").await.unwrap();
    assert_eq!(out.text, "I could not find out.");
    let requests = parent_model.requests();
    let result = &requests[1].tool_results()[0];
    assert_eq!(result.text, "the tool failed");
    assert!(result.is_error);
    for request in parent_model.requests() {
        assert!(!format!("{:?}", request.messages).contains("SECRET"));
    }
    // The application keeps the reason (E3).
    let error = out.calls[0].error().unwrap();
    let sub = std::error::Error::source(error)
        .and_then(|e| e.downcast_ref::<tool_runtime::agent::SubAgentError>())
        .expect("the sub-agent's failure is the cause");
    assert_eq!(sub.kind(), ErrorKind::Permanent);
    assert!(sub.message().contains("SECRET-DSN"));
}

#[tokio::test]
async fn b1_cancelling_the_parent_cancels_the_sub_agents_calls() {
    let ledger = Ledger::new();
    let seen = ledger.clone();
    let waits = Tool::builder("lookup", "Reads an account's balance.")
        .handler(move |ctx: Context, _input: Lookup| {
            let seen = seen.clone();
            async move {
                ctx.cancelled().await;
                seen.push("lookup saw the cancellation".to_owned());
                Ok::<_, std::convert::Infallible>("late")
            }
        })
        .build();
    let child_model = ScriptedModel::new([
        ScriptedTurn::new().call("k1", "lookup", r#"{"account":"acme"}"#),
        ScriptedTurn::reply("never"),
    ]);
    let child = Agent::builder(child_model).tool(waits).build().unwrap();
    let parent_model = ScriptedModel::new([ask("p1", "Wait"), ScriptedTurn::reply("never")]);
    let parent = orchestrator(parent_model.clone(), &child, RunOptions::new());
    let ctx = Context::new();
    let cancel = ctx.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let error = tokio::time::timeout(Duration::from_secs(10), parent.run(&ctx, "Go"))
        .await
        .expect("the run ends")
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Cancelled, "{error:#}");
    assert_eq!(parent_model.request_count(), 1);
    assert_eq!(ledger.entries(), ["lookup saw the cancellation"]);
}

#[tokio::test]
async fn b1_a_typed_sub_agent_takes_a_typed_request_and_gives_its_typed_answer() {
    let child_model =
        ScriptedModel::new([ScriptedTurn::reply(r#"{"account":"acme","cents":1200}"#)])
            .with_native_answers();
    let child = Agent::builder(child_model.clone()).build().unwrap();
    let tool = child.as_typed_tool::<Lookup, Balance>("balance", "The balance of an account.");
    assert!(
        tool.tool().output_schema().is_some(),
        "O1: the answer's schema"
    );
    let parent_model = ScriptedModel::new([
        ScriptedTurn::new().call("p1", "balance", r#"{"account":"acme"}"#),
        ScriptedTurn::reply("Acme holds $12."),
    ]);
    let parent = Agent::builder(parent_model.clone())
        .agent_tool(tool)
        .build()
        .unwrap();
    let out = parent.run(&Context::new(), "Check acme").await.unwrap();
    assert_eq!(out.text, "Acme holds $12.");
    let result: serde_json::Value =
        serde_json::from_str(&parent_model.requests()[1].tool_results()[0].text).unwrap();
    assert_eq!(
        result,
        serde_json::json!({"account": "acme", "cents": 1200})
    );
    let asked = &child_model.requests()[0];
    assert_eq!(user_text(&asked.messages), [r#"{"account":"acme"}"#]);
    assert!(
        asked.answer.is_some(),
        "the specialist was asked for a typed answer"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn b1_k2_the_sub_agents_run_span_nests_under_the_parents_call_span() {
    let spans = Spans::default();
    let _guard = spans.install();
    let ledger = Ledger::new();
    let child_model = ScriptedModel::new([ScriptedTurn::reply("acme holds 1200 cents")]);
    let parent_model = ScriptedModel::new([ask("p1", "How much?"), ScriptedTurn::reply("$12.")]);
    let child = specialist(child_model, &ledger);
    let parent = orchestrator(parent_model, &child, RunOptions::new());
    parent.run(&Context::new(), "Check acme").await.unwrap();
    let runs = spans.named("invoke_agent");
    assert_eq!(runs.len(), 2);
    let top = runs
        .iter()
        .find(|run| run.field("otel.name") == "invoke_agent orchestrator")
        .unwrap();
    let inner = runs
        .iter()
        .find(|run| run.field("otel.name") == "invoke_agent accounts")
        .unwrap();
    let call = spans
        .named("execute_tool")
        .into_iter()
        .find(|span| Some(span.id) == inner.parent)
        .expect("the specialist's run is a child of a call span");
    assert_eq!(call.field("otel.name"), "execute_tool accounts");
    assert_eq!(call.parent, Some(top.id), "that call is the orchestrator's");
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn b1_a_sub_agent_is_served_over_mcp_like_any_tool() {
    use tool_runtime::mcp::McpServer;
    let ledger = Ledger::new();
    let child_model = ScriptedModel::new([ScriptedTurn::reply("acme holds 1200 cents")]);
    let child = specialist(child_model.clone(), &ledger);
    let server = McpServer::builder()
        .tool(
            child
                .as_tool("accounts", "Answers questions about accounts.")
                .into_tool(),
        )
        .build()
        .unwrap();
    let remote = support::mcp::connect_in_process(server).await;
    let tool = remote
        .tools()
        .iter()
        .find(|t| t.name() == "accounts")
        .unwrap();
    let outcome = tool
        .invoke(
            &Context::new(),
            br#"{"request":"How much does acme hold?"}"#,
        )
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::Success);
    assert_eq!(outcome.text(), "acme holds 1200 cents");
    assert_eq!(
        user_text(&child_model.requests()[0].messages),
        ["How much does acme hold?"]
    );
}

#[tokio::test]
async fn b1_r4_a_streamed_run_shows_the_sub_agents_events_under_the_call_that_started_it() {
    let ledger = Ledger::new();
    let payer_model = ScriptedModel::new([
        ScriptedTurn::new().call("i1", "lookup", r#"{"account":"acme"}"#),
        ScriptedTurn::reply("acme holds 1200 cents"),
    ]);
    let payer = specialist(payer_model, &ledger);
    let manager = Agent::builder(ScriptedModel::new([
        ScriptedTurn::new().call("m1", "payer", r#"{"request":"check acme"}"#),
        ScriptedTurn::reply("manager: acme is fine"),
    ]))
    .agent_tool(payer.as_tool("payer", "Checks accounts."))
    .build()
    .unwrap();
    let top = Agent::builder(ScriptedModel::new([
        ScriptedTurn::new().call("t1", "manager", r#"{"request":"check"}"#),
        ScriptedTurn::reply("all fine"),
    ]))
    .agent_tool(manager.as_tool("manager", "Manages."))
    .build()
    .unwrap();
    let mut stream = top.run_stream(&Context::new(), "Check");
    let mut seen = Vec::new();
    while let Some(event) = stream.next().await {
        seen.push(event.unwrap());
    }
    // Each event with the path of calls it came under.
    fn flat(event: &RunEvent, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        match event {
            RunEvent::SubAgent { call_id, event } => {
                path.push(call_id.to_string());
                flat(event, path, out);
                path.pop();
            }
            RunEvent::ToolCall { call, .. } => {
                out.push((path.clone(), format!("call {}", call.id)))
            }
            RunEvent::CallFinished(record) => {
                out.push((path.clone(), format!("finished {}", record.id)));
            }
            RunEvent::Finished(output) => {
                out.push((path.clone(), format!("answer {}", output.text)))
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for event in &seen {
        flat(event, &mut Vec::new(), &mut out);
    }
    let at = |path: &[&str], what: &str| {
        out.iter()
            .position(|(p, w)| p == path && w == what)
            .unwrap_or_else(|| {
                panic!("no `{what}` under {path:?}: {out:#?}");
            })
    };
    assert!(at(&[], "call t1") < at(&["t1"], "call m1"));
    assert!(at(&["t1"], "call m1") < at(&["t1", "m1"], "call i1"));
    assert!(at(&["t1", "m1"], "finished i1") < at(&["t1"], "finished m1"));
    assert!(at(&["t1"], "finished m1") < at(&[], "finished t1"));
    assert!(at(&[], "finished t1") < at(&[], "answer all fine"));
    // A sub-agent's run is no answer of the stream's: only the top-level run finishes it.
    let answers = out.iter().filter(|(_, w)| w.starts_with("answer")).count();
    assert_eq!(answers, 1);
}
