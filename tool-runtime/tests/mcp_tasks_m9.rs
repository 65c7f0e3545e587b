//! M9: the Tasks extension of 2026-07-28 (SEP-2663) to the letter, as the SDK's own client
//! sees it: a cancel after the end is acknowledged, a finished task's inlined result carries
//! no `related-task` metadata, and a tool that runs only as a task, called by a client without
//! the extension, is refused `-32021` naming the extension (nothing runs).
#![cfg(feature = "mcp")]

mod support {
    pub mod raw_http;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, TaskPayload,
    TaskStatus,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::json;
use tool_runtime::mcp::{McpServer, ProtocolError, TaskSupport};
use tool_runtime::{Context, OutcomeKind, Tool, ToolError};

/// The test tools: `echo` may run as a task, `only-task` runs only as one, `hidden-task`
/// runs only as one and is offered to nobody; and how many calls each handler ran.
fn server() -> (McpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = |name: &'static str, runs: &Arc<AtomicUsize>| {
        let runs = Arc::clone(runs);
        Tool::builder(name, "Answers `done`.").handler(move |_ctx: Context, _args: Empty| {
            runs.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::io::Error>("done") }
        })
    };
    let server = McpServer::builder()
        .tool(counted("echo", &runs).build())
        .tool(counted("only-task", &runs).build())
        .tool(
            counted("hidden-task", &runs)
                .available_fn(|_ctx: &Context| Ok::<_, std::io::Error>(false))
                .build(),
        )
        .tool(
            Tool::builder("refuse", "Refuses its call with a protocol error.")
                .handler(|_ctx: Context, _args: Empty| async move {
                    Err::<String, _>(
                        ProtocolError::invalid_params("no region of that name")
                            .with_data(json!({"region": "atlantis"})),
                    )
                })
                .build(),
        )
        .tool(
            Tool::builder("reject", "Fails at its work.")
                .handler(|_ctx: Context, _args: Empty| async move {
                    Err::<String, _>(ToolError::new("the quota is spent"))
                })
                .build(),
        )
        .task_support("echo", TaskSupport::Optional)
        .task_support("refuse", TaskSupport::Optional)
        .task_support("reject", TaskSupport::Optional)
        .task_support("only-task", TaskSupport::Required)
        .task_support("hidden-task", TaskSupport::Required)
        .build()
        .expect("the tools are declared right");
    (server, runs)
}

/// Any arguments.
type Empty = std::collections::BTreeMap<String, serde_json::Value>;

/// The SDK's client on 2026-07-28 over a pipe, declaring the Tasks extension or not.
async fn client(
    server: McpServer,
    tasks: bool,
) -> RunningService<RoleClient, rmcp::model::ClientConfig> {
    use rmcp::ClientServiceExt as _;
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let capabilities = match tasks {
        true => rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build(),
        false => rmcp::model::ClientCapabilities::default(),
    };
    let info = rmcp::model::ClientConfig::new(
        capabilities,
        rmcp::model::Implementation::new("m9-sdk", "0"),
    );
    let lifecycle = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    info.serve_with_lifecycle(tokio::io::split(client_io), lifecycle)
        .await
        .expect("the SDK's client connects")
}

/// Calls `tool` as a task and polls it until it ends: its id and its `tasks/get` at the end.
async fn finished_task(
    client: &RunningService<RoleClient, rmcp::model::ClientConfig>,
    tool: &str,
) -> (String, rmcp::model::GetTaskResult) {
    let answer = (client
        .peer()
        .call_tool_once(CallToolRequestParams::new(tool.to_owned())))
    .await
    .expect("answers");
    let CallToolResponse::Task(created) = answer else {
        panic!("a task: {answer:?}");
    };
    let id = created.task.task_id.clone();
    for _ in 0..500 {
        let got = (client.peer().get_task(GetTaskParams::new(id.clone())).await).expect("got");
        if !matches!(got.task.payload, TaskPayload::Working) {
            return (id, got);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task did not end within 5 s");
}

/// M9: `tasks/cancel` of a task that has ended is acknowledged (the empty result), not
/// refused, and the task keeps its end; cancelling it again is acknowledged too.
#[tokio::test]
async fn m9_cancelling_an_ended_task_is_acknowledged_and_keeps_its_end() {
    let (server, _) = server();
    let client = client(server, true).await;
    let (id, ended) = finished_task(&client, "echo").await;
    assert_eq!(ended.task.task.status, TaskStatus::Completed, "{ended:?}");
    for _ in 0..2 {
        (client
            .peer()
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await)
            .expect("a cancel after the end is acknowledged");
    }
    let after = (client.peer().get_task(GetTaskParams::new(id.clone())).await).expect("got");
    assert_eq!(after.task.task.status, TaskStatus::Completed, "{after:?}");

    // A task id nobody was given is still refused.
    let unknown = client
        .peer()
        .cancel_task(CancelTaskParams::new("no-such-task".to_owned()))
        .await;
    assert!(
        matches!(unknown, Err(ServiceError::McpError(_))),
        "{unknown:?}"
    );
}

/// M9: the result `tasks/get` inlines beside the task's id carries no
/// `io.modelcontextprotocol/related-task` in its `_meta` (the 2025-11-25 `tasks/result` keeps
/// it: `mcp_tasks_m5`).
#[tokio::test]
async fn m9_an_inlined_result_carries_no_related_task_meta() {
    let (server, _) = server();
    let client = client(server, true).await;
    let (_, ended) = finished_task(&client, "echo").await;
    let TaskPayload::Completed { result } = &ended.task.payload else {
        panic!("completed: {ended:?}");
    };
    assert_eq!(result["content"][0]["text"], "done", "{result:?}");
    let related =
        (result.get("_meta")).and_then(|meta| meta.get("io.modelcontextprotocol/related-task"));
    assert!(related.is_none(), "{result:?}");
}

/// M9: a client without the extension calling a tool that runs only as a task gets `-32021`
/// with `requiredCapabilities.extensions` naming the Tasks extension, and nothing runs; a
/// tool that may run either way runs plain for it; a hidden tool is refused as one the
/// server does not hold (A5), not with the capability it would need.
#[tokio::test]
async fn m9_a_task_only_tool_called_without_the_extension_is_refused_32021() {
    let (server, runs) = server();
    let client = client(server, false).await;
    let refused = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("only-task"))
        .await;
    let Err(ServiceError::McpError(error)) = refused else {
        panic!("refused: {refused:?}");
    };
    assert_eq!(error.code.0, -32021, "{error:?}");
    let data = error.data.expect("the error names what the call needs");
    assert!(
        data["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{data}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");

    let plain = (client
        .peer()
        .call_tool_once(CallToolRequestParams::new("echo"))
        .await)
        .expect("answers");
    assert!(matches!(plain, CallToolResponse::Complete(_)), "{plain:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "echo ran plain");

    let hidden = (client
        .peer()
        .call_tool_once(CallToolRequestParams::new("hidden-task"))
        .await)
        .expect("a hidden tool's call is answered as an unknown one's");
    let CallToolResponse::Complete(result) = hidden else {
        panic!("a result: {hidden:?}");
    };
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the hidden tool did not run"
    );
}

/// M9: a handler ends its call with a protocol error ([`ProtocolError`]): a plain call is
/// answered with that JSON-RPC error (code, message, data), a task ends `failed` with it
/// inlined and no result. A tool that fails at its work (`isError`) completes its task with
/// that result instead. In an agent run the same handler is an ordinary, redacted failure.
#[tokio::test]
async fn m9_a_handler_ends_its_call_with_a_protocol_error() {
    let (server, _) = server();
    let plain = client(server.clone(), false).await;
    let refused = (plain.peer())
        .call_tool_once(CallToolRequestParams::new("refuse"))
        .await;
    let Err(ServiceError::McpError(error)) = refused else {
        panic!("a JSON-RPC error: {refused:?}");
    };
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert_eq!(error.message, "no region of that name");
    assert_eq!(error.data, Some(json!({"region": "atlantis"})));

    let tasks = client(server.clone(), true).await;
    let (_, ended) = finished_task(&tasks, "refuse").await;
    assert_eq!(ended.task.task.status, TaskStatus::Failed, "{ended:?}");
    let TaskPayload::Failed { error } = &ended.task.payload else {
        panic!("failed with the error inlined: {ended:?}");
    };
    assert_eq!(error["code"], -32602, "{error:?}");
    assert_eq!(error["message"], "no region of that name", "{error:?}");

    let (_, ended) = finished_task(&tasks, "reject").await;
    assert_eq!(ended.task.task.status, TaskStatus::Completed, "{ended:?}");
    let TaskPayload::Completed { result } = &ended.task.payload else {
        panic!("completed with the tool's error: {ended:?}");
    };
    assert_eq!(result["isError"], true, "{result:?}");

    let refuse = (server.tools().iter())
        .find(|tool| tool.name() == "refuse")
        .expect("served");
    let outcome = refuse.invoke(&Context::new(), b"{}").await;
    assert_eq!(outcome.kind(), OutcomeKind::Failed, "{outcome:?}");
    assert!(!outcome.text().contains("region"), "{}", outcome.text());
}

/// M9 over streamable HTTP: the `-32021` refusal of a task-only tool's call is a `400`, as
/// the protocol wants for a missing client capability, and nothing runs.
#[tokio::test]
async fn m9_over_http_the_refusal_is_a_400() {
    let (server, runs) = server();
    let http = server
        .bind_http(
            "127.0.0.1:0",
            tool_runtime::mcp::HttpOptions::new().stateless(),
        )
        .await
        .expect("binds");
    let mut connection = support::raw_http::RawConnection::open(http.local_addr()).await;
    let call = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "only-task",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "m9", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "only-task"),
    ];
    let response = connection.post(&headers, &call).await;
    assert_eq!(response.status, 400, "{}", response.body);
    let answer = response
        .messages()
        .into_iter()
        .next()
        .expect("a JSON-RPC answer");
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");
    http.shutdown().await.expect("shuts down");
}
