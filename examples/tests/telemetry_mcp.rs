//! K5, K6 end to end: the `telemetry` example's MCP server mode and its agent on the server's
//! tools, in one process exporting over real OTLP/HTTP to a receiver on 127.0.0.1. Each call
//! is one trace from the agent's run to the server's handler (the server's `tools/call` span a
//! child of the agent's `execute_tool`), and both sides' MCP metrics arrive.
#![cfg(feature = "mcp")]

#[allow(dead_code, unreachable_pub)]
#[path = "../telemetry.rs"]
mod example;
#[path = "support/otlp.rs"]
mod otlp;

use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use otlp::{Receiver, text};
use tool_runtime::{Arguments, OfflineModel};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k5_k6_a_call_through_the_examples_mcp_server_is_one_trace_with_mcp_metrics() {
    let receiver = Receiver::start().await;
    let telemetry = example::install(&receiver.endpoint()).expect("the exporters install");
    let http = example::serve("127.0.0.1:0".parse().unwrap())
        .await
        .expect("the server binds");
    let model = Box::new(OfflineModel::new().arguments(Arguments::Valid));
    let answer = example::ask(model, Some(&http.url()), "When is svc-42 down next?")
        .await
        .expect("the run answers");
    http.shutdown().await.expect("the server stops");
    example::shutdown(telemetry)
        .await
        .expect("every span and metric is sent before the exporters stop");
    let received = receiver.stop();
    assert!(answer.starts_with("Offline model"), "{answer}");

    let run = received.named("invoke_agent");
    assert_eq!(run.len(), 1);
    let calls = received.named("execute_tool");
    let served = received.named("tools/call");
    assert!(!served.is_empty(), "{:#?}", received.spans());
    for server in &served {
        assert_eq!(server.kind, SpanKind::Server as i32);
        assert_eq!(
            server.trace_id, run[0].trace_id,
            "one trace, run to handler"
        );
        let parent = calls
            .iter()
            .find(|call| call.span_id == server.parent_span_id)
            .expect("the server's span is a child of an execute_tool span");
        assert_eq!(parent.trace_id, run[0].trace_id);
    }

    let bounds = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    for name in [
        "mcp.client.operation.duration",
        "mcp.server.operation.duration",
    ] {
        let points = received.histogram(name);
        let count: u64 = points.iter().map(|p| p.count).sum();
        assert_eq!(count, served.len() as u64, "{name}");
        for point in points {
            assert_eq!(point.explicit_bounds, bounds, "{name}");
            assert_eq!(text(&point.attributes, "mcp.method.name"), "tools/call");
            assert_eq!(text(&point.attributes, "gen_ai.tool.name"), "lookup-window");
        }
        assert_eq!(received.metrics(name)[0].unit, "s");
    }
    let server = received.histogram("mcp.server.operation.duration");
    assert_eq!(text(&server[0].attributes, "network.transport"), "tcp");
}
