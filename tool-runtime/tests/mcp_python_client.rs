//! The official MCP Python SDK's client drives our server over stdio
//! (`tests/support/mcp/stdio_client.py`): listing (A2, A5), good and bad arguments (E1, S2), a
//! hidden tool and an unknown name (A4, A5), approved and redacted failures (E2, E4, A6, P1)
//! and a cancelled call. The script checks the answers; this test checks the server's side
//! (E3, A4, cancellation).
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::mcp::{Principal, served};
use tool_runtime::mcp::{McpRequest, McpServer, McpTransport};
use tool_runtime::{BoxError, Context, ErrorKind, OutcomeKind};

/// What the server recorded of a call: the name asked for, how it ended, its unredacted error.
type Record = (String, OutcomeKind, Option<(ErrorKind, String)>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_client_drives_the_stdio_server_a4_a5_s2_e1_e2_e3_e4() {
    let served = served();
    let records: Arc<Mutex<Vec<Record>>> = Arc::default();
    let log = Arc::clone(&records);
    let server = McpServer::builder()
        .name("mcp-python-client-test")
        .tools(served.tools.clone())
        // Over stdio the peer is whoever started the process: the principal comes from the
        // application (here, fixed), never from the client's arguments.
        .context(|req: McpRequest| async move {
            if req.transport() != McpTransport::Stdio {
                return Err("not over stdio");
            }
            Ok::<_, &str>(Context::new().with(Principal::OPERATOR))
        })
        .on_outcome(move |call| {
            let error = call.outcome.error().map(|e| (e.kind(), format!("{e:#}")));
            log.lock().expect("not poisoned").push((
                call.tool.to_owned(),
                call.outcome.kind(),
                error,
            ));
        })
        .build()
        .expect("the tools are declared right");

    let run = support::mcp::run_python_client(server, "stdio_client.py", &[]).await;
    let (report, serving) = (run.report, run.serving);
    assert!(run.success, "the Python client's checks failed:\n{report}");
    assert!(report.contains("all checks passed"), "{report}");

    // notifications/cancelled cancelled the call's context: the handler saw it.
    tokio::time::timeout(Duration::from_secs(10), served.slow_cancelled.notified())
        .await
        .expect("the slow call's context was cancelled");
    // A4: the hidden tool's handler never ran, though the client called it by name.
    assert_eq!(served.admin_runs.load(Ordering::SeqCst), 0);

    let served_ok = tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("serving ends when the client closes the stream")
        .expect("the serving task does not panic");
    if let Err(e) = served_ok {
        panic!("serving failed: {e}");
    }

    let records = records.lock().expect("not poisoned").clone();
    let find = |tool: &str| -> Record {
        records
            .iter()
            .find(|(t, _, _)| t == tool)
            .cloned()
            .unwrap_or_else(|| panic!("no record of {tool}: {records:?}"))
    };
    // A5: the hidden tool and the unknown name are recorded alike.
    assert_eq!(find("admin-reset").1, OutcomeKind::Unavailable);
    assert_eq!(find("no-such-tool").1, OutcomeKind::Unavailable);
    // E3: what was redacted from the client is kept for the application.
    let (_, kind, error) = find("fail");
    assert_eq!(kind, OutcomeKind::Failed);
    assert!(error.expect("an error").1.contains("hunter2"));
    let (_, kind, error) = find("crash");
    assert_eq!(kind, OutcomeKind::Fatal);
    let (error_kind, text) = error.expect("an error");
    assert_eq!(error_kind, ErrorKind::Panic);
    assert!(text.contains("the handler exploded"), "{text}");
    let (_, kind, error) = find("doom");
    assert_eq!(
        (kind, error.map(|e| e.0)),
        (OutcomeKind::Fatal, Some(ErrorKind::Permanent))
    );
    let (_, kind, error) = find("policy-error");
    let (error_kind, text) = error.expect("an error");
    assert_eq!(
        (kind, error_kind),
        (OutcomeKind::Fatal, ErrorKind::Availability)
    );
    assert!(text.contains("the policy backend is down"), "{text}");
    let (_, kind, _) = find("lookup-window");
    assert_eq!(kind, OutcomeKind::Success);
    assert!(
        records
            .iter()
            .any(|(t, k, _)| t == "lookup-window" && *k == OutcomeKind::InvalidArguments)
    );
}

#[tokio::test]
async fn a_context_function_error_rejects_the_stdio_request_without_running_anything() {
    let served = served();
    let server = McpServer::builder()
        .tools(served.tools)
        .context(|_req: McpRequest| async move { Err::<Context, BoxError>("no principal".into()) })
        .build()
        .expect("the tools are declared right");
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let serving = tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    // Our own client: listing the tools fails, so the toolset cannot be built.
    let error = tool_runtime::mcp::McpToolset::builder()
        .connect_io(client_read, client_write)
        .await
        .expect_err("listing is refused");
    assert!(
        matches!(error, tool_runtime::mcp::ToolsetError::List { .. }),
        "{error}"
    );
    assert!(!error.to_string().contains("no principal"), "{error}");
    serving.abort();
}
