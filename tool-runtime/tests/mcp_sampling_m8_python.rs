//! M8 with the official MCP Python SDK's client (`tests/support/mcp/sampling_client.py`): a
//! handler that asks the client's model and reads its roots, served over stdio, on each
//! protocol era: during the call after the initialize handshake, in the call's answer on
//! 2026-07-28 (the SDK answers the input requests and calls again). A client that declared
//! neither capability is asked nothing, and the handler is told so.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use tool_runtime::mcp::McpServer;
use tool_runtime::sampling::SamplingRequest;
use tool_runtime::{Context, Schema, Tool};

/// The empty input.
#[derive(Schema)]
struct NoInput {}

/// Asks the capital of France, then reads the roots; says what it got.
fn capital() -> Tool {
    Tool::builder("capital", "Asks the client's model, then reads its roots.")
        .handler(|ctx: Context, _: NoInput| async move {
            let request = SamplingRequest::new("What is the capital of France?", 100);
            let sampled = match ctx.sample_named("capital", request).await {
                Ok(answer) => format!("{} ({})", answer.text, answer.model),
                Err(error) => format!("sample failed: {error}"),
            };
            let roots = match ctx.roots_named("client_roots").await {
                Ok(roots) => (roots.iter().map(|root| root.uri.as_str()))
                    .collect::<Vec<_>>()
                    .join(","),
                Err(error) => format!("roots failed: {error}"),
            };
            Ok::<_, std::io::Error>(format!("{sampled} | {roots}"))
        })
        .build()
}

/// Runs the SDK's client with `args` against our server; its report when it passed.
async fn run(args: &[&str]) -> String {
    let server = McpServer::builder()
        .name("mcp-sampling-m8")
        .tool(capital())
        .build()
        .expect("built");
    let args: Vec<String> = args.iter().map(|&arg| arg.to_owned()).collect();
    let run = support::mcp::run_python_client(server, "sampling_client.py", &args).await;
    assert!(
        run.success,
        "the Python client's checks failed:\n{}",
        run.report
    );
    assert!(run.report.contains("all checks passed"), "{}", run.report);
    run.report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m8_the_python_sdk_answers_sampling_and_roots_on_each_protocol_era() {
    let legacy = run(&["legacy"]).await;
    assert!(!legacy.contains("protocol 2026-07-28"), "{legacy}");
    let modern = run(&["2026-07-28"]).await;
    assert!(modern.contains("protocol 2026-07-28"), "{modern}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m8_a_python_client_without_the_capabilities_is_asked_nothing() {
    run(&["legacy", "bare"]).await;
    run(&["2026-07-28", "bare"]).await;
}
