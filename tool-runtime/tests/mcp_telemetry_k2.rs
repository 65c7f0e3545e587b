//! K2 on the MCP server: each `tools/call` has a span named and filled as the OpenTelemetry
//! semantic conventions for MCP servers say (`tools/call {tool}`, kind server,
//! `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, `network.transport`), a
//! result with `isError` gives `error.type = tool_error` and the error status, and arguments
//! and results are recorded only when the application opts in, never an unredacted error.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
    pub mod spans;
    pub mod trace;
}

use support::mcp::{Principal, served};
use support::spans::{SpanRecord, Spans};
use tool_runtime::mcp::{McpServer, McpToolset};
use tool_runtime::{Context, OutcomeKind};

/// Our server (recording tool content or not) and our client, joined in process. On a
/// current-thread runtime every task runs here, so the spans are recorded.
async fn connect(record_tool_content: bool) -> McpToolset {
    let server = McpServer::builder()
        .tools(served().tools)
        .context(|_req| async move { Ok::<_, &str>(Context::new().with(Principal::OPERATOR)) })
        .record_tool_content(record_tool_content)
        .build()
        .expect("the tools are declared right");
    support::mcp::connect_in_process(server).await
}

async fn call(toolset: &McpToolset, name: &str, args: &str) -> OutcomeKind {
    let tool = toolset
        .tools()
        .iter()
        .find(|t| t.name() == name)
        .expect("the tool is listed");
    let ctx = Context::new().with(Principal::OPERATOR);
    tool.invoke(&ctx, args.as_bytes()).await.kind()
}

fn server_span(spans: &Spans, tool: &str) -> SpanRecord {
    spans
        .named("tools/call")
        .into_iter()
        .find(|s| s.get("gen_ai.tool.name") == Some(tool))
        .unwrap_or_else(|| panic!("no tools/call span for {tool}: {:?}", spans.all()))
}

#[tokio::test]
async fn k2_each_tools_call_has_a_server_span_as_the_mcp_conventions_say() {
    let spans = Spans::default();
    let _guard = spans.install();
    let toolset = connect(false).await;
    assert_eq!(
        call(&toolset, "greet", r#"{"who": "ARG-VALUE-7"}"#).await,
        OutcomeKind::Success
    );
    assert_eq!(call(&toolset, "fail", "{}").await, OutcomeKind::Failed);

    let greet = server_span(&spans, "greet");
    assert_eq!(greet.field("otel.name"), "tools/call greet");
    assert_eq!(greet.field("otel.kind"), "server");
    assert_eq!(greet.field("mcp.method.name"), "tools/call");
    assert_eq!(greet.field("gen_ai.operation.name"), "execute_tool");
    assert_eq!(greet.field("network.transport"), "pipe");
    assert!(
        greet.field("jsonrpc.request.id").parse::<i64>().is_ok(),
        "{greet:?}"
    );
    assert!(greet.get("mcp.protocol.version").is_some(), "{greet:?}");
    assert_eq!(greet.field("tool_runtime.outcome"), "success");
    assert_eq!(greet.get("error.type"), None);
    assert_eq!(greet.get("otel.status_code"), None);
    // Not opted in: no arguments, no result.
    assert_eq!(greet.get("gen_ai.tool.call.arguments"), None);
    assert_eq!(greet.get("gen_ai.tool.call.result"), None);
    assert!(!spans.in_span_fields("ARG-VALUE-7"));

    let fail = server_span(&spans, "fail");
    assert_eq!(fail.field("error.type"), "tool_error");
    assert_eq!(fail.field("otel.status_code"), "ERROR");
    assert_eq!(fail.field("tool_runtime.outcome"), "failed");
    assert!(!spans.in_span_fields("hunter2"));
}

#[tokio::test]
async fn k2_the_server_records_arguments_and_the_clients_text_only_when_opted_in() {
    let spans = Spans::default();
    let _guard = spans.install();
    let toolset = connect(true).await;
    call(&toolset, "greet", r#"{"who": "Ada"}"#).await;
    call(&toolset, "fail", "{}").await;

    let greet = server_span(&spans, "greet");
    assert_eq!(
        greet.field("gen_ai.tool.call.arguments"),
        r#"{"who":"Ada"}"#
    );
    assert_eq!(greet.field("gen_ai.tool.call.result"), "Hello, Ada!");
    let fail = server_span(&spans, "fail");
    // What the client read (E2), not the error behind it.
    assert_eq!(fail.field("gen_ai.tool.call.result"), "the tool failed");
    assert!(!spans.in_span_fields("hunter2"));
}
