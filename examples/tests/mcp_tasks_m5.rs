//! M5 with a real client: the official TypeScript SDK (the one the conformance suite is built
//! on, provisioned with it) calls a tool that runs only as a task on our server over
//! streamable HTTP: it sees the tasks capability and the tool's `taskSupport`, makes the
//! task, polls it to its result, cancels another, lists both; a plain tool still answers
//! through the same rewriting.

#[allow(dead_code, unreachable_pub)]
mod conformance_peer;
#[path = "../conformance_server.rs"]
#[allow(dead_code, unreachable_pub)]
mod conformance_server;

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::mcp::{HttpOptions, TaskSupport};
use tool_runtime::{Context, Schema, Tool, ToolError};

/// The input of the report tool.
#[derive(Schema)]
struct Report {
    /// How long the report takes, in milliseconds.
    #[schema(range = 0..=120_000)]
    delay_ms: u64,
}

/// A report that takes its time, or stops when its call is cancelled.
fn task_report() -> Tool {
    Tool::builder("test-task-report", "Writes a report; it takes a while.")
        .handler(|ctx: Context, report: Report| async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(report.delay_ms)) => {
                    Ok::<_, ToolError>("the report is ready")
                }
                () = ctx.cancelled() => Err(ToolError::new("the report was cancelled")),
            }
        })
        .build()
}

#[test]
fn m5_the_official_typescript_client_runs_a_tool_as_a_task() {
    let suite = conformance_peer::suite().unwrap_or_else(|e| panic!("{e}"));
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let http = runtime
        .block_on(async {
            let mut names = conformance_server::mcp_names();
            names.push(("test-task-report", "test_task_report"));
            let server = conformance_server::builder()?
                .tool(task_report())
                .naming(tool_runtime::mcp::McpNaming::map(names))
                .task_support("test-task-report", TaskSupport::Required)
                .build()?;
            Ok::<_, tool_runtime::BoxError>(
                server.bind_http("127.0.0.1:0", HttpOptions::new()).await?,
            )
        })
        .expect("the server starts");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance_peer/tasks_client.mjs");
    let output = Command::new(suite.node())
        .arg(&script)
        .arg(suite.typescript_sdk())
        .arg(http.url())
        .output()
        .expect("node runs");
    runtime.block_on(http.shutdown()).expect("the server stops");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the client failed:\n{stdout}\n{stderr}"
    );
    let seen: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("the client printed no JSON ({e}):\n{stdout}\n{stderr}"));
    assert_eq!(
        seen["tasksCapability"]["requests"]["tools"]["call"],
        json!({}),
        "{seen}"
    );
    // The conformance server's own task fixtures (the Tasks extension's, M9) show too.
    assert_eq!(
        seen["support"],
        json!({
            "test_task_report": "required",
            "slow_compute": "optional",
            "failing_job": "required",
            "protocol_error_job": "optional",
            "confirm_delete": "optional",
            "multi_input": "optional",
            "test_tool_with_task": "required",
        }),
        "{seen}"
    );
    let stream = seen["stream"].as_array().expect("the stream's messages");
    assert_eq!(
        stream.first(),
        Some(&json!({"type": "taskCreated", "status": "working"})),
        "{seen}"
    );
    assert_eq!(
        stream.last(),
        Some(&json!({"type": "result", "text": "the report is ready"})),
        "{seen}"
    );
    assert_eq!(seen["cancelled"], "cancelled", "{seen}");
    assert_eq!(seen["afterCancel"], "cancelled", "{seen}");
    assert_eq!(seen["listed"], json!(["cancelled", "completed"]), "{seen}");
    assert_eq!(
        seen["plain"], "This is a simple text response for testing.",
        "{seen}"
    );
}

#[test]
fn m5_our_client_calls_the_official_typescript_servers_task_only_tool() {
    let suite = conformance_peer::suite().unwrap_or_else(|e| panic!("{e}"));
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance_peer/tasks_server.mjs");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let mut command = tokio::process::Command::new(suite.node());
        command.arg(&script).arg(suite.typescript_sdk());
        let toolset = tool_runtime::mcp::McpToolset::builder()
            .connect_child(command)
            .await
            .expect("our client connects to the TypeScript server");
        let local = toolset
            .local_name("slow_report")
            .expect("the task tool is listed");
        let tool = (toolset.tools().iter())
            .find(|t| t.name() == local)
            .expect("a tool");
        let ctx = Context::new();
        for _ in 0..2 {
            let outcome = tool.invoke(&ctx, b"{}").await;
            assert_eq!(outcome.text(), "the report is ready", "{outcome:?}");
        }
    });
}
