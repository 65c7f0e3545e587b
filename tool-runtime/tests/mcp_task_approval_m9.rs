//! M9, H6 (a task's approval): a tool that needs approval, run as a task of the Tasks
//! extension, asks for it in the task; an approval nobody answers within the server's approval
//! expiry is not given (the task completes `not approved`, nothing runs); and a task that every
//! caller without credentials shares, over HTTP on 2026-07-28, asks no approval at all, since
//! any of them could answer it: the call is denied and nothing runs.
#![cfg(feature = "mcp")]

mod support {
    pub mod raw_http;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::raw_http::RawConnection;
use tool_runtime::mcp::{HttpOptions, McpServer, NO_APPROVAL_ANONYMOUS_TASK, TaskSupport};
use tool_runtime::{Context, Schema, Tool, ToolError};

/// No arguments.
#[derive(Schema, Debug)]
struct NoArguments {}

/// A server whose `wipe` needs approval and runs only as a task, counting its runs.
fn server(runs: &Arc<AtomicUsize>) -> McpServer {
    let counted = Arc::clone(runs);
    let wipe = Tool::builder("wipe", "Wipes, once approved.")
        .require_approval()
        .handler(move |_ctx: Context, _args: NoArguments| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, ToolError>("wiped") }
        })
        .build();
    McpServer::builder()
        .tool(wipe)
        .task_support("wipe", TaskSupport::Required)
        .approval_expiry(Duration::from_secs(1))
        .build()
        .expect("built")
}

/// POSTs `method` with `params` on 2026-07-28 with the Tasks extension and elicitation,
/// with `authorization` when given; the one message answered.
async fn post(
    addr: std::net::SocketAddr,
    (method, name): (&str, Option<&str>),
    mut params: Value,
    authorization: Option<&str>,
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "m9", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    let message = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    headers.extend(name.map(|name| ("Mcp-Name", name)));
    headers.extend(authorization.map(|value| ("Authorization", value)));
    let mut connection = RawConnection::open(addr).await;
    let response = connection.post(&headers, &message).await;
    (response.messages().into_iter().next()).unwrap_or(Value::Null)
}

/// `tasks/get` of `task` until `done` says so (within 5 s).
async fn until(
    addr: std::net::SocketAddr,
    task: &str,
    authorization: Option<&str>,
    done: impl Fn(&Value) -> bool,
) -> Value {
    for _ in 0..250 {
        let got = post(
            addr,
            ("tasks/get", Some(task)),
            json!({"taskId": task}),
            authorization,
        )
        .await;
        if done(&got["result"]) {
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = post(
        addr,
        ("tasks/get", Some(task)),
        json!({"taskId": task}),
        authorization,
    )
    .await;
    panic!("the task never got there: {got}");
}

/// M9, H6: over HTTP on 2026-07-28, a caller with credentials is asked in its task, and an
/// approval not answered within the expiry (a second here) is not given; a caller without
/// them shares its tasks with every such caller, so the call is denied, unasked. Nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m9_h6_a_tasks_approval_expires_and_is_never_asked_of_a_shared_task() {
    let runs = Arc::new(AtomicUsize::new(0));
    let options = HttpOptions::new().stateless().json_answers();
    let http = (server(&runs).bind_http("127.0.0.1:0", options))
        .await
        .expect("binds");
    let addr = http.local_addr();
    let call = json!({"name": "wipe", "arguments": {}});

    let token = Some("Bearer not-checked-here");
    let created = post(addr, ("tools/call", Some("wipe")), call.clone(), token).await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let waiting = until(addr, &task, token, |t| t["status"] == "input_required").await;
    assert!(
        waiting["inputRequests"]["question-0"].is_object(),
        "{waiting}"
    );
    let asked_at = Instant::now();
    let ended = until(addr, &task, token, |t| t["status"] == "completed").await;
    assert!(
        asked_at.elapsed() < Duration::from_secs(4),
        "it expired in time"
    );
    assert_eq!(
        ended["result"]["content"][0]["text"], "the call was not approved",
        "{ended}"
    );

    let created = post(addr, ("tools/call", Some("wipe")), call, None).await;
    let task = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let ended = until(addr, &task, None, |t| t["status"] == "completed").await;
    assert_eq!(
        ended["result"]["content"][0]["text"], NO_APPROVAL_ANONYMOUS_TASK,
        "{ended}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");
    http.shutdown().await.expect("stops");
}
