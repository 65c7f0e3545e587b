//! K6: trace context crosses MCP. `McpToolset` puts the W3C `traceparent` (and `tracestate`)
//! of the agent's `execute_tool` span into each request's `params._meta`, and `McpServer`
//! continues that trace: its `tools/call` span is a child of the client's span, in one trace
//! from the agent's run to the remote handler. Also with the official Python SDK's client
//! sending a `traceparent` of its own.
#![cfg(all(feature = "mcp", feature = "opentelemetry"))]

mod support {
    pub mod mcp;
    pub mod otel;
    pub mod trace;
}

use opentelemetry::trace::{SpanId, TraceId};
use support::mcp::{Principal, served};
use support::otel::Otel;
use tool_runtime::mcp::McpServer;
use tool_runtime::{Agent, Context, ScriptedModel, ScriptedTurn};

fn server() -> McpServer {
    McpServer::builder()
        .tools(served().tools)
        .context(|_req| async move { Ok::<_, &str>(Context::new().with(Principal::OPERATOR)) })
        .build()
        .expect("the tools are declared right")
}

#[tokio::test]
async fn k6_a_call_served_by_our_mcp_server_is_one_trace_from_the_run_to_the_handler() {
    let otel = Otel::install();
    let toolset = support::mcp::connect_in_process(server()).await;
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "greet", r#"{"who": "Ada"}"#),
        ScriptedTurn::reply("Greeted."),
    ]);
    let agent = Agent::builder(model)
        .tools(toolset.tools().to_vec())
        .build()
        .expect("built");
    let ctx = Context::new().with(Principal::OPERATOR);
    let out = agent.run(&ctx, "Greet Ada.").await.expect("answers");
    assert_eq!(out.calls[0].text(), "Hello, Ada!");

    let run = otel.one("invoke_agent");
    let call = otel.one("execute_tool");
    let served = otel.one("tools/call");
    let trace = run.span_context.trace_id();
    assert_eq!(call.span_context.trace_id(), trace);
    assert_eq!(call.parent_span_id, run.span_context.span_id());
    assert_eq!(
        served.span_context.trace_id(),
        trace,
        "the server continues the trace"
    );
    assert_eq!(
        served.parent_span_id,
        call.span_context.span_id(),
        "the server's span is a child of the client's execute_tool"
    );
    assert!(
        served.parent_span_is_remote,
        "its parent came over the wire"
    );
}

#[tokio::test]
async fn k6_a_traceparent_from_the_python_sdks_client_is_continued_by_our_server() {
    let otel = Otel::install();
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let args = [traceparent.to_owned(), "vendor=opaque".to_owned()];
    let run = support::mcp::run_python_client(server(), "trace_client.py", &args).await;
    assert!(
        run.success,
        "the Python client's checks failed:\n{}",
        run.report
    );
    let served = otel.one("tools/call");
    assert_eq!(
        served.span_context.trace_id(),
        TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap()
    );
    assert_eq!(
        served.parent_span_id,
        SpanId::from_hex("b7ad6b7169203331").unwrap()
    );
    assert_eq!(served.span_context.trace_state().header(), "vendor=opaque");
}
