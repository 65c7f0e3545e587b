//! Context parameters (C1): a `#[tool]` handler that takes `&T` (or `#[context] T`) gets the
//! value the run's context holds, and a tool whose context lacks it is unavailable on every
//! transport: not advertised by the agent's discovery nor by MCP `tools/list`, and refused with
//! `tool unavailable` by the re-check of a call (A4), the agent's and MCP `tools/call`'s alike.
//! An explicit policy runs only once the values are present, and both must allow the call.

mod support {
    pub mod agent;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::agent::texts;
use tool_runtime::{
    Agent, BoxError, Context, IntoTool, OutcomeKind, Schema, ScriptedModel, ScriptedTurn, tool,
};

/// Who is asking: put in the context by the application, never by the model.
struct Operator {
    name: String,
}

/// The explicit policy of `c1-guarded` allows the call when the context holds this.
struct Allowed;

/// A pool handle: cloned per call, sharing its counter.
#[derive(Clone)]
struct Pool(Arc<AtomicUsize>);

/// Input of a restart.
#[derive(Schema)]
struct RestartInput {
    /// The service to restart.
    service_id: String,
}

/// The address of the `Operator` each run of `c1-restart` was given.
static RESTART_SAW: AtomicUsize = AtomicUsize::new(0);
/// Runs of `c1-restart`.
static RESTART_RUNS: AtomicUsize = AtomicUsize::new(0);
/// Held by each test that runs these tools: the counters are shared by the tests of this file,
/// which run at once.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Restart a service, for the operator who asks.
#[tool(name = "c1-restart")]
async fn restart(op: &Operator, input: RestartInput) -> String {
    RESTART_RUNS.fetch_add(1, Ordering::SeqCst);
    RESTART_SAW.store(std::ptr::from_ref(op) as usize, Ordering::SeqCst);
    format!("{} restarts {}", op.name, input.service_id)
}

/// Calls of the explicit policy of `c1-guarded`.
static GUARD_CHECKS: AtomicUsize = AtomicUsize::new(0);

/// Say who is asking, where the application allows it.
#[tool(name = "c1-guarded", available = allowed)]
fn guarded(op: &Operator) -> String {
    op.name.clone()
}

fn allowed(ctx: &Context) -> Result<bool, BoxError> {
    // The context parameter is checked first: this policy never sees a context without it.
    assert!(ctx.get::<Operator>().is_some());
    GUARD_CHECKS.fetch_add(1, Ordering::SeqCst);
    Ok(ctx.get::<Allowed>().is_some())
}

/// Ping the database through a clone of the pool.
#[tool(name = "c1-ping")]
async fn ping(#[context] pool: Pool) -> usize {
    pool.0.fetch_add(1, Ordering::SeqCst) + 1
}

fn operator() -> Operator {
    Operator {
        name: "ada".to_owned(),
    }
}

#[test]
fn c1_context_parameters_are_not_in_the_schema() {
    let restart = C1Restart.into_tool();
    assert_eq!(
        restart.schema()["properties"]
            .as_object()
            .map(|properties| properties.keys().collect::<Vec<_>>()),
        Some(vec![&"service_id".to_owned()])
    );
    assert_eq!(
        restart.required_context().collect::<Vec<_>>(),
        [std::any::type_name::<Operator>()]
    );
    let ping = C1Ping.into_tool();
    assert_eq!(ping.schema()["properties"], serde_json::json!({}));
}

#[tokio::test]
async fn c1_a4_a_tool_whose_context_lacks_a_value_is_not_advertised_and_refused_if_called() {
    let _serial = SERIAL.lock().await;
    let runs_before = RESTART_RUNS.load(Ordering::SeqCst);
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "c1-restart", r#"{"service_id": "svc-42"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(C1Restart)
        .tool(C1Ping)
        .build()
        .expect("the tools are declared right");

    // Neither `Operator` nor `Pool`: nothing is advertised, and the model's guess is refused.
    let out = agent.run(&Context::new(), "restart svc-42").await.unwrap();

    assert!(model.requests()[0].tool_names().is_empty());
    assert_eq!(
        texts(&model.requests()[1].tool_results()),
        [("c1".to_owned(), "tool unavailable".to_owned())]
    );
    assert_eq!(out.calls[0].kind(), OutcomeKind::Unavailable);
    assert_eq!(RESTART_RUNS.load(Ordering::SeqCst), runs_before);

    // The re-check of a call (A4), the pipeline every transport runs, refuses it too.
    let refused = C1Restart
        .into_tool()
        .invoke(&Context::new(), br#"{"service_id": "svc-42"}"#)
        .await;
    assert_eq!(refused.kind(), OutcomeKind::Unavailable);
    assert_eq!(refused.text(), "tool unavailable");
    assert_eq!(RESTART_RUNS.load(Ordering::SeqCst), runs_before);
}

#[tokio::test]
async fn c1_the_handler_gets_the_very_value_the_context_holds() {
    let _serial = SERIAL.lock().await;
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "c1-restart", r#"{"service_id": "svc-42"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(C1Restart)
        .tool(C1Ping)
        .build()
        .unwrap();
    let ctx = Context::new().with(operator());
    let held = std::ptr::from_ref(ctx.get::<Operator>().unwrap()) as usize;

    let out = agent.run(&ctx, "restart svc-42").await.unwrap();

    // Advertised without the pool's tool, whose value is absent.
    assert_eq!(model.requests()[0].tool_names(), ["c1-restart"]);
    assert_eq!(out.calls[0].outcome.text(), "ada restarts svc-42");
    assert_eq!(RESTART_SAW.load(Ordering::SeqCst), held);
}

#[tokio::test]
async fn c1_a_by_value_context_parameter_is_a_clone_of_the_value() {
    let _serial = SERIAL.lock().await;
    let pool = Pool(Arc::new(AtomicUsize::new(0)));
    let ctx = Context::new().with(pool.clone());
    let tool = C1Ping.into_tool();
    assert!(tool.available(&ctx).await.unwrap());

    let first = tool.invoke(&ctx, b"{}").await;
    let second = tool.invoke(&ctx, b"{}").await;

    // Each call got a clone sharing the application's counter, which it left in place.
    assert_eq!((first.text(), second.text()), ("1", "2"));
    assert_eq!(pool.0.load(Ordering::SeqCst), 2);
    assert!(ctx.get::<Pool>().is_some());
}

#[tokio::test]
async fn c1_a1_context_parameters_and_an_explicit_policy_must_both_allow() {
    let _serial = SERIAL.lock().await;
    let tool = C1Guarded.into_tool();
    let checks = || GUARD_CHECKS.load(Ordering::SeqCst);
    let before = checks();

    // Without the value the policy is not asked at all.
    assert!(!tool.available(&Context::new()).await.unwrap());
    assert!(!tool.available(&Context::new().with(Allowed)).await.unwrap());
    let refused = tool.invoke(&Context::new().with(Allowed), b"{}").await;
    assert_eq!(refused.kind(), OutcomeKind::Unavailable);
    assert_eq!(checks(), before);

    // With it, the policy decides.
    let operator_only = Context::new().with(operator());
    assert!(!tool.available(&operator_only).await.unwrap());
    assert_eq!(
        tool.invoke(&operator_only, b"{}").await.kind(),
        OutcomeKind::Unavailable
    );
    assert_eq!(checks(), before + 2);
    let both = Context::new().with(operator()).with(Allowed);
    assert!(tool.available(&both).await.unwrap());
    assert_eq!(tool.invoke(&both, b"{}").await.text(), "ada");
}

/// Over MCP: `tools/list` leaves out the tools whose context lacks a value, and `tools/call`
/// of one is refused like the agent refuses it, through the same availability check.
#[cfg(feature = "mcp")]
mod mcp {
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tool_runtime::mcp::McpServer;
    use tool_runtime::{Context, IntoTool};

    use super::{C1Guarded, C1Restart, RESTART_RUNS, operator};

    /// A server of `c1-restart` and `c1-guarded` whose context function gives `ctx`, asked
    /// `tools/list` and then `tools/call` of `c1-restart`, over raw JSON-RPC.
    async fn list_then_call(ctx: fn() -> Context) -> (Vec<String>, Value) {
        let server = McpServer::builder()
            .tools([C1Restart.into_tool(), C1Guarded.into_tool()])
            .context(move |_req| async move { Ok::<_, &str>(ctx()) })
            .build()
            .expect("the tools are declared right");
        let (client, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        let (read, mut write) = tokio::io::split(client);
        let mut lines = BufReader::new(read).lines();
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "c1-test", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "c1-restart", "arguments": {"service_id": "svc-42"}}}),
        ];
        let mut answers = Vec::new();
        for request in requests {
            let mut line = request.to_string();
            line.push('\n');
            write
                .write_all(line.as_bytes())
                .await
                .expect("the server reads");
            if request.get("id").is_none() {
                continue;
            }
            loop {
                let text = lines
                    .next_line()
                    .await
                    .expect("the server writes")
                    .expect("an answer");
                let answer: Value = serde_json::from_str(&text).expect("JSON-RPC");
                if answer.get("id") == request.get("id") {
                    answers.push(answer);
                    break;
                }
            }
        }
        let listed = answers[1]["result"]["tools"]
            .as_array()
            .expect("a tool list")
            .iter()
            .map(|tool| tool["name"].as_str().expect("a name").to_owned())
            .collect();
        (listed, answers[2]["result"].clone())
    }

    #[tokio::test]
    async fn c1_a4_mcp_omits_a_tool_whose_context_lacks_a_value_and_refuses_its_call() {
        let _serial = super::SERIAL.lock().await;
        let runs_before = RESTART_RUNS.load(std::sync::atomic::Ordering::SeqCst);

        let (listed, called) = list_then_call(Context::new).await;

        assert!(listed.is_empty(), "{listed:?}");
        assert_eq!(called["isError"], true, "{called}");
        assert_eq!(called["content"][0]["text"], "tool unavailable", "{called}");
        assert_eq!(
            RESTART_RUNS.load(std::sync::atomic::Ordering::SeqCst),
            runs_before
        );
    }

    #[tokio::test]
    async fn c1_mcp_lists_and_runs_a_tool_whose_context_holds_its_values() {
        let _serial = super::SERIAL.lock().await;
        let (listed, called) = list_then_call(|| Context::new().with(operator())).await;

        // `c1-guarded` has the value, but its explicit policy says no.
        assert_eq!(listed, ["c1-restart"]);
        assert_eq!(
            called["content"][0]["text"], "ada restarts svc-42",
            "{called}"
        );
    }
}
