//! `McpToolset` drives a server written with the official MCP Python SDK
//! (`tests/support/mcp/python_server.py`, its `MCPServer`, the former FastMCP): names that
//! break N1, an optional field, a tool that raises, a call cancelled mid-flight, a policy on a
//! remote tool, and the remote tools in an agent beside a native one.
//!
//! Each test starts one Python process (a few seconds each on a loaded machine), so each
//! checks several rules on one connection.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::time::Duration;

use serde_json::{Value, json};
use support::mcp::{Args, Principal, python, script};
use tool_runtime::error::find_in_chain;
use tool_runtime::mcp::{
    McpToolset, McpToolsetBuilder, RemoteCallError, ToolsetError, ToolsetProblem,
};
use tool_runtime::name::check_name;
use tool_runtime::{
    Agent, BuildProblem, Context, DeclarationError, OutcomeKind, Rule, ScriptedModel, ScriptedTurn,
    Tool,
};

fn server(extra: &[&str]) -> tokio::process::Command {
    let mut command = python();
    command.arg(script("python_server.py")).args(extra);
    command
}

async fn connect(builder: McpToolsetBuilder) -> McpToolset {
    builder
        .connect_child(server(&[]))
        .await
        .unwrap_or_else(|e| panic!("the Python server's tools are usable: {e}"))
}

fn tool<'a>(toolset: &'a McpToolset, name: &str) -> &'a Tool {
    toolset
        .tools()
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", toolset.tools()))
}

/// The `calls` tool's report: how many calls each remote tool received, which were cancelled.
async fn calls(toolset: &McpToolset) -> Value {
    let calls = toolset.local_name("calls").expect("the calls tool");
    let outcome = tool(toolset, calls).invoke(&Context::new(), b"{}").await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
    serde_json::from_str(outcome.text()).expect("calls answers JSON")
}

#[tokio::test]
async fn n1_s2_e2_e3_remote_tools_keep_names_reversibly_validate_locally_and_fail_like_native_ones()
{
    let toolset = connect(McpToolset::builder()).await;

    // N1: names that break the rule are mapped, reversibly; the schema is the server's.
    let names: Vec<(&str, &str)> = toolset.names().collect();
    assert_eq!(
        names,
        [
            ("get-weather", "get_weather"),
            ("ops-restart-service", "Ops.Restart_Service"),
            ("explode", "explode"),
            ("wait-for-cancel", "wait_for_cancel"),
            ("calls", "calls"),
        ]
    );
    for t in toolset.tools() {
        assert_eq!(check_name(t.name()), Ok(()), "N1: {}", t.name());
        assert!(t.declaration_error().is_none());
    }
    assert_eq!(toolset.remote_name("get-weather"), Some("get_weather"));
    assert_eq!(
        toolset.local_name("Ops.Restart_Service"),
        Some("ops-restart-service")
    );
    let weather = tool(&toolset, "get-weather").clone();
    assert_eq!(weather.description(), "Tells the weather of a city.");
    assert_eq!(weather.schema()["required"], json!(["city"]));
    assert_eq!(
        weather.schema()["properties"]["unit"]["anyOf"][1],
        json!({"type": "null"})
    );

    // S2, R5: arguments are checked against the remote schema before anything is sent.
    let ctx = Context::new();
    let wrong_type = weather.invoke(&ctx, br#"{"city": 5}"#).await;
    assert_eq!(wrong_type.kind(), OutcomeKind::InvalidArguments);
    let v = &wrong_type.violations()[0];
    assert_eq!((v.path.as_str(), v.rule), ("/city", Rule::Type));
    let missing = weather.invoke(&ctx, br#"{"unit": "C"}"#).await;
    let v = &missing.violations()[0];
    assert_eq!((v.path.as_str(), v.rule), ("/city", Rule::Required));
    assert!(
        missing.text().starts_with("invalid arguments:"),
        "{}",
        missing.text()
    );
    let not_json = weather.invoke(&ctx, br#"{"city": "Oslo""#).await;
    assert_eq!(not_json.kind(), OutcomeKind::InvalidArguments);
    // Valid calls, with the optional field absent, given, or null.
    for (args, text) in [
        (&br#"{"city": "Oslo"}"#[..], "Sunny in Oslo"),
        (br#"{"city": "Oslo", "unit": "C"}"#, "Sunny in Oslo (in C)"),
        (br#"{"city": "Oslo", "unit": null}"#, "Sunny in Oslo"),
    ] {
        let outcome = weather.invoke(&ctx, args).await;
        assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
        assert_eq!(outcome.text(), text);
    }
    // Only the three valid calls reached the server.
    assert_eq!(calls(&toolset).await["calls"]["get_weather"], 3);

    // E2: a remote `isError` result reaches the model as the remote text.
    let outcome = tool(&toolset, "explode")
        .invoke(&ctx, br#"{"reason": "the fuse blew"}"#)
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::Rejected);
    assert_eq!(
        outcome.text(),
        "Error executing tool explode: boom: the fuse blew"
    );

    // E3: a transport failure is `the tool failed` for the model, and kept for the
    // application.
    toolset.close().await;
    let outcome = weather.invoke(&ctx, br#"{"city": "Oslo"}"#).await;
    assert_eq!(outcome.kind(), OutcomeKind::Failed);
    assert_eq!(outcome.text(), "the tool failed");
    let error = outcome.error().expect("the error is kept (E3)");
    let remote = find_in_chain::<RemoteCallError>(error).expect("a RemoteCallError in the chain");
    assert!(
        matches!(remote, RemoteCallError::Transport { tool, .. } if tool == "get_weather"),
        "{remote}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p4_cancelling_a_call_context_sends_notifications_cancelled_to_the_server() {
    let toolset = connect(McpToolset::builder()).await;
    let wait = tool(&toolset, "wait-for-cancel").clone();
    let ctx = Context::new();
    let call_ctx = ctx.for_call("c1", wait.name());
    let running = tokio::spawn(async move { wait.invoke(&call_ctx, b"{}").await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    ctx.cancellation().cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the call ends once cancelled")
        .expect("the call does not panic");
    // T2, P4: the call is `cancelled`, as a local one would be; the application still finds
    // why in the error (E3).
    assert_eq!(outcome.kind(), OutcomeKind::Cancelled);
    assert_eq!(outcome.text(), tool_runtime::CANCELLED);
    let error = outcome.error().expect("an error");
    assert!(matches!(
        find_in_chain::<RemoteCallError>(error),
        Some(RemoteCallError::Cancelled { .. })
    ));
    // The server saw the cancellation: its handler was cancelled.
    let mut seen = Value::Null;
    for _ in 0..50 {
        seen = calls(&toolset).await;
        if seen["cancelled"] == json!(["wait_for_cancel"]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(seen["cancelled"], json!(["wait_for_cancel"]), "{seen}");
    toolset.close().await;
}

#[tokio::test]
async fn a2_a4_a5_a_policy_on_a_remote_tool_hides_and_guards_it_in_an_agent_beside_a_native_tool() {
    // N1: a prefix namespaces the server (and must itself be valid).
    let error = McpToolset::builder()
        .prefix("Py_")
        .connect_child(server(&[]))
        .await
        .expect_err("an invalid prefix");
    assert!(
        matches!(error, ToolsetError::InvalidPrefix { .. }),
        "{error}"
    );
    let toolset = connect(
        McpToolset::builder()
            .prefix("py")
            .available_fn("Ops.Restart_Service", |ctx: &Context| {
                Ok::<_, std::io::Error>(ctx.get::<Principal>().is_some_and(|p| p.admin))
            }),
    )
    .await;
    assert_eq!(toolset.remote_name("py-get-weather"), Some("get_weather"));

    let native = Tool::builder("note", "Takes a note.")
        .handler(|_ctx: Context, args: Args| async move {
            Ok::<_, std::io::Error>(format!("noted {}", args.len()))
        })
        .build();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "py-get-weather", r#"{"city": "Bergen"}"#)
            .call("c2", "py-ops-restart-service", r#"{"service": "db"}"#)
            .call("c3", "note", r#"{"a": 1}"#)
            .call("c4", "py-explode", r#"{"reason": 7}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(native)
        .tools(&toolset)
        .build()
        .expect("native and remote tools together");

    let operator = Context::new().with(Principal::OPERATOR);
    let out = agent
        .run(&operator, "Restart the db")
        .await
        .expect("the run ends");
    // A2: the remote tool hidden by its policy is not advertised.
    assert!(!out.advertised.iter().any(|n| n == "py-ops-restart-service"));
    assert!(out.advertised.iter().any(|n| n == "py-get-weather"));
    let texts: Vec<&str> = out.calls.iter().map(|c| c.text()).collect();
    assert_eq!(texts[0], "Sunny in Bergen");
    // A4, A5: guessing the hidden name does not bypass the policy.
    assert_eq!(texts[1], "tool unavailable");
    assert_eq!(texts[2], "noted 1");
    // S2: the model's bad arguments never reach the server.
    assert_eq!(out.calls[3].kind(), OutcomeKind::InvalidArguments);
    let report = calls(&toolset).await;
    assert_eq!(report["calls"].get("Ops.Restart_Service"), None);
    assert_eq!(report["calls"].get("explode"), None);

    // The same tool, for an admin.
    let restart = tool(&toolset, "py-ops-restart-service");
    let admin = Context::new().with(Principal::ADMIN);
    let outcome = restart
        .invoke(&admin, br#"{"service": "db", "force": true}"#)
        .await;
    assert_eq!(outcome.text(), "restarted db (forced)");
    toolset.close().await;
}

#[tokio::test]
async fn n3_colliding_remote_names_are_reported_with_both_remote_names() {
    // Every problem is reported at once: the collision, and a rename of a tool the server
    // does not list.
    let error = McpToolset::builder()
        .rename("nope", "nope")
        .connect_child(server(&["--collide"]))
        .await
        .expect_err("two remote names map to get-weather");
    assert_eq!(
        error.problems(),
        [
            ToolsetProblem::NameCollision {
                local: "get-weather".into(),
                first_remote: "get_weather".into(),
                second_remote: "get.weather".into(),
            },
            ToolsetProblem::UnknownTool {
                remote: "nope".into(),
                what: "a rename",
            },
        ]
    );
    let text = error.to_string();
    assert!(
        text.contains("\"get_weather\"") && text.contains("\"get.weather\""),
        "{text}"
    );

    // A rename resolves it.
    let toolset = McpToolset::builder()
        .rename("get.weather", "get-weather-again")
        .connect_child(server(&["--collide"]))
        .await
        .expect("renamed");
    assert_eq!(
        toolset.remote_name("get-weather-again"),
        Some("get.weather")
    );

    // Across toolsets (or with native tools), the agent's build() reports it (N3).
    let agent = Agent::builder(ScriptedModel::new([ScriptedTurn::reply("never")]))
        .tools(&toolset)
        .tools(toolset.tools())
        .build();
    let problems: Vec<BuildProblem> = agent.expect_err("duplicate names").into_iter().collect();
    assert_eq!(problems.len(), toolset.tools().len());
    assert!(problems.iter().all(|p| matches!(
        p,
        BuildProblem::Tool(DeclarationError::DuplicateName { .. })
    )));
    toolset.close().await;
}
