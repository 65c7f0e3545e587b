//! K3 over MCP: a handler's progress reaches the official MCP Python SDK's client as
//! `notifications/progress` when its `tools/call` carried a progress token (the SDK sends one
//! when given a progress callback), over stdio and over streamable HTTP; without a token
//! nobody listens and nothing is sent. A report that does not increase is not sent (the MCP
//! specification wants progress to grow). The script (`tests/support/mcp/progress_client.py`)
//! checks what the client received.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::process::Stdio;
use std::time::Duration;

use support::mcp::{Args, python, script};
use tool_runtime::mcp::{HttpOptions, McpServer};
use tool_runtime::{Context, Tool};

/// `count`: reports `steps` steps of progress (and, after the second, a report that does not
/// increase), or says that nobody listens.
fn counting() -> Tool {
    Tool::builder("count", "Counts, reporting progress.")
        .handler(|ctx: Context, args: Args| async move {
            let steps = args
                .get("steps")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0);
            if !ctx.wants_progress() {
                return Ok::<_, std::io::Error>(format!("counted {steps} (nobody listening)"));
            }
            let total = steps as f64;
            for step in 1..=steps {
                tokio::task::yield_now().await;
                ctx.progress(step as f64, total, format!("step {step}").as_str());
                if step == 2 {
                    ctx.progress(2.0, total, "not an increase");
                }
            }
            // The answer follows the last report at once: the server must still send every
            // report first.
            Ok(format!("counted {steps}"))
        })
        .build()
}

fn server() -> McpServer {
    McpServer::builder()
        .name("mcp-progress-test")
        .tool(counting())
        .build()
        .expect("the tool is declared right")
}

/// Waits for the script and asserts that it passed; its standard error is the report.
async fn passed(mut child: tokio::process::Child) {
    let mut errors = child.stderr.take().expect("piped stderr");
    let report = tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut errors, &mut text).await;
        text
    });
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
    if status.is_err() {
        let _ = child.kill().await;
    }
    let report = report.await.expect("stderr is read");
    let status = status
        .unwrap_or_else(|_| panic!("the Python client hung:\n{report}"))
        .expect("the Python client runs");
    assert!(
        status.success() && report.contains("all checks passed"),
        "the Python client's checks failed:\n{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k3_progress_reaches_the_python_sdk_client_over_stdio() {
    let mut child = python()
        .arg(script("progress_client.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    let to_client = child.stdin.take().expect("piped stdin");
    let from_client = child.stdout.take().expect("piped stdout");
    let serving = tokio::spawn(async move { server().serve_io(from_client, to_client).await });
    passed(child).await;
    serving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k3_progress_reaches_the_python_sdk_client_over_streamable_http() {
    let http = server()
        .bind_http("127.0.0.1:0", HttpOptions::default())
        .await
        .expect("a loopback port is free");
    let child = python()
        .arg(script("progress_client.py"))
        .arg(http.url())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    passed(child).await;
    http.shutdown().await.expect("the server shuts down");
}
