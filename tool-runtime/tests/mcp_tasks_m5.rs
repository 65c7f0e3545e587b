//! M5: long-running tools as MCP tasks (protocol 2025-11-25), as raw JSON-RPC over a pipe:
//! what a client sees of a task from `tools/call` with `task` to `tasks/result`, who may see
//! a task, how a call made the wrong way is refused, and that nothing about tasks shows on a
//! server whose tools take none.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::time::Duration;

use serde_json::{Value, json};
use support::mcp::served;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::BuildProblem;
use tool_runtime::mcp::{McpServer, TaskSupport};

/// A client speaking newline-delimited JSON-RPC over a pipe.
struct Raw {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    next_id: i64,
}

impl Raw {
    /// A session with `server` at protocol `version`, initialized.
    async fn open(server: &McpServer, version: &str) -> (Self, Value) {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        let server = server.clone();
        tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        let (client_read, writer) = tokio::io::split(client_io);
        let mut raw = Self {
            lines: BufReader::new(client_read).lines(),
            writer,
            next_id: 1,
        };
        let init = raw
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "m5", "version": "0"},
                }),
            )
            .await;
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        (raw, init)
    }

    async fn send(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).expect("JSON");
        bytes.push(b'\n');
        self.writer
            .write_all(&bytes)
            .await
            .expect("the pipe is open");
    }

    /// Sends a request and gives the whole answer to it.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let read = async {
            loop {
                let line = (self.lines.next_line().await)
                    .expect("the pipe is open")
                    .expect("the server answers before it closes");
                let message: Value = serde_json::from_str(&line).expect("the server sends JSON");
                if message.get("method").is_none() && message["id"] == json!(id) {
                    return message;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the server answers within 10 s")
    }

    async fn call(&mut self, tool: &str, task: Option<Value>) -> Value {
        let mut params = json!({"name": tool, "arguments": {"who": "Ada"}});
        if let Some(task) = task {
            params["task"] = task;
        }
        self.request("tools/call", params).await
    }
}

/// The test tools, `slow` and `admin-reset` (hidden from non-admins) only as tasks, `greet`
/// and `fail` either way.
fn server() -> (McpServer, support::mcp::Served) {
    let served = served();
    let server = McpServer::builder()
        .tools(served.tools.clone())
        .task_support("slow", TaskSupport::Required)
        .task_support("admin-reset", TaskSupport::Required)
        .task_support("greet", TaskSupport::Optional)
        .task_support("fail", TaskSupport::Optional)
        .build()
        .expect("the tools are declared right");
    (server, served)
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"))
}

#[tokio::test]
async fn m5_initialize_declares_tasks_and_tools_list_shows_each_tools_support() {
    let (server, _) = server();
    let (mut raw, init) = Raw::open(&server, "2025-11-25").await;
    let tasks = &init["result"]["capabilities"]["tasks"];
    assert_eq!(tasks["requests"]["tools"]["call"], json!({}), "{init}");
    assert_eq!(tasks["cancel"], json!({}), "{init}");
    assert_eq!(tasks["list"], json!({}), "{init}");
    let list = raw.request("tools/list", json!({})).await;
    let support = |name: &str| {
        let tools = list["result"]["tools"].as_array().expect("tools");
        let tool = tools.iter().find(|t| t["name"] == name).expect("listed");
        tool["execution"]["taskSupport"].clone()
    };
    assert_eq!(support("slow"), json!("required"));
    assert_eq!(support("greet"), json!("optional"));
    assert_eq!(
        support("lookup-window"),
        Value::Null,
        "forbidden is the default, not shown"
    );

    // A protocol without tasks is not told of them.
    let (_, older) = Raw::open(&server, "2025-06-18").await;
    assert!(
        older["result"]["capabilities"].get("tasks").is_none(),
        "{older}"
    );
}

#[tokio::test]
async fn m5_a_task_runs_the_call_and_tasks_result_gives_its_result() {
    let (server, _) = server();
    let (mut raw, _) = Raw::open(&server, "2025-11-25").await;
    let made = raw.call("greet", Some(json!({"ttl": 60_000}))).await;
    let task = &made["result"]["task"];
    let id = task["taskId"].as_str().expect("a task id").to_owned();
    assert!(
        made["result"].get("content").is_none(),
        "the answer is the task: {made}"
    );
    assert_eq!(task["ttl"], json!(60_000), "{made}");
    assert!(
        task["createdAt"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{made}"
    );
    assert!(task["pollInterval"].as_u64().is_some(), "{made}");

    let result = raw.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, Ada!",
        "{result}"
    );
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id),
        "{result}"
    );
    assert!(result["result"].get("resultType").is_none(), "{result}");
    let got = raw.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "completed", "{got}");
    assert_eq!(got["result"]["taskId"], json!(id), "{got}");
    let listed = raw.request("tasks/list", json!({})).await;
    assert_eq!(
        listed["result"]["tasks"][0]["taskId"],
        json!(id),
        "{listed}"
    );

    // The same tool, called plainly, answers as any call.
    let plain = raw.call("greet", None).await;
    assert_eq!(
        plain["result"]["content"][0]["text"], "Hello, Ada!",
        "{plain}"
    );
}

#[tokio::test]
async fn m5_cancelling_a_task_cancels_its_calls_context() {
    let (server, served) = server();
    let (mut raw, _) = Raw::open(&server, "2025-11-25").await;
    let made = raw.call("slow", Some(json!({}))).await;
    let id = made["result"]["task"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let working = raw.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(working["result"]["status"], "working", "{working}");

    let cancelled = served.slow_cancelled.notified();
    let answer = raw.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(answer["result"]["status"], "cancelled", "{answer}");
    tokio::time::timeout(Duration::from_secs(5), cancelled)
        .await
        .expect("the handler's context is cancelled");
    let result = raw.request("tasks/result", json!({"taskId": id})).await;
    assert!(
        error_code(&result) < 0,
        "a cancelled task has no result: {result}"
    );
    let again = raw.request("tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(
        error_code(&again),
        -32602,
        "an ended task cannot be cancelled: {again}"
    );
    let got = raw.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        got["result"]["status"], "cancelled",
        "the handler's end changes nothing: {got}"
    );
}

#[tokio::test]
async fn m5_a_call_made_the_wrong_way_is_refused_and_a_hidden_tool_like_an_unknown_one() {
    let (server, served) = server();
    let (mut raw, _) = Raw::open(&server, "2025-11-25").await;
    let plain = raw.call("slow", None).await;
    assert_eq!(
        error_code(&plain),
        -32601,
        "a required task called plainly: {plain}"
    );
    let forbidden = raw.call("lookup-window", Some(json!({}))).await;
    assert_eq!(error_code(&forbidden), -32601, "{forbidden}");
    let unknown = raw.call("no-such-tool", Some(json!({}))).await;
    // A5: `admin-reset` is hidden from this client; as a task it is refused as a name the
    // server does not hold, and plainly it is unavailable as such a name is.
    let hidden = raw.call("admin-reset", Some(json!({}))).await;
    assert_eq!(hidden["error"], unknown["error"], "{hidden} vs {unknown}");
    assert_eq!(
        forbidden["error"], unknown["error"],
        "{forbidden} vs {unknown}"
    );
    let hidden_plain = raw.call("admin-reset", None).await;
    let unknown_plain = raw.call("no-such-tool", None).await;
    assert_eq!(
        hidden_plain["result"], unknown_plain["result"],
        "{hidden_plain}"
    );
    assert_eq!(
        served.admin_runs.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    let shapeless = raw.call("greet", Some(json!("soon"))).await;
    assert_eq!(error_code(&shapeless), -32602, "{shapeless}");
}

#[tokio::test]
async fn m5_a_failed_call_fails_its_task_with_the_redacted_text() {
    let (server, _) = server();
    let (mut raw, _) = Raw::open(&server, "2025-11-25").await;
    let made = raw.call("fail", Some(json!({}))).await;
    let id = made["result"]["task"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    let result = raw.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(result["result"]["isError"], json!(true), "{result}");
    let got = raw.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "failed", "{got}");
    let message = got["result"]["statusMessage"].as_str().unwrap_or_default();
    assert_eq!(
        message, "the tool failed",
        "E2: no secret in the status: {got}"
    );
}

#[tokio::test]
async fn m5_another_session_sees_none_of_a_sessions_tasks() {
    let (server, _) = server();
    let (mut mine, _) = Raw::open(&server, "2025-11-25").await;
    let (mut theirs, _) = Raw::open(&server, "2025-11-25").await;
    let made = mine.call("slow", Some(json!({}))).await;
    let id = made["result"]["task"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned();
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let answer = theirs.request(method, json!({"taskId": id})).await;
        assert_eq!(error_code(&answer), -32602, "{method}: {answer}");
    }
    let listed = theirs.request("tasks/list", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    let got = mine.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(
        got["result"]["status"], "working",
        "still mine, still running: {got}"
    );
    mine.request("tasks/cancel", json!({"taskId": id})).await;
}

#[tokio::test]
async fn m5_a_server_whose_tools_take_no_task_shows_nothing_of_tasks() {
    let served = served();
    let server = McpServer::builder()
        .tools(served.tools)
        .build()
        .expect("the tools are declared right");
    let (mut raw, init) = Raw::open(&server, "2025-11-25").await;
    assert!(
        init["result"]["capabilities"].get("tasks").is_none(),
        "{init}"
    );
    let list = raw.request("tools/list", json!({})).await;
    assert!(!list.to_string().contains("taskSupport"), "{list}");
    let get = raw.request("tasks/get", json!({"taskId": "task-1"})).await;
    assert_eq!(error_code(&get), -32601, "{get}");
    let inside = raw.request("tool-runtime/tasks/list", json!({})).await;
    assert_eq!(error_code(&inside), -32601, "{inside}");
}

#[test]
fn m5_a_task_support_for_a_tool_the_server_does_not_hold_is_a_build_problem() {
    let error = McpServer::builder()
        .tools(served().tools)
        .task_support("no-such-tool", TaskSupport::Optional)
        .build()
        .expect_err("the name is checked");
    assert!(
        error.problems().iter().any(|p| matches!(
            p,
            BuildProblem::TaskSupportForUnknownTool { declared } if declared == "no-such-tool"
        )),
        "{error}"
    );
}

/// Our client on `server` over an in-process pipe, with `handshake`.
async fn toolset(
    server: McpServer,
    handshake: tool_runtime::mcp::Handshake,
) -> tool_runtime::mcp::McpToolset {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    tool_runtime::mcp::McpToolset::builder()
        .handshake(handshake)
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects to our server")
}

fn remote<'a>(toolset: &'a tool_runtime::mcp::McpToolset, name: &str) -> &'a tool_runtime::Tool {
    let local = toolset.local_name(name).expect("listed");
    let tools = toolset.tools();
    tools.iter().find(|t| t.name() == local).expect("a tool")
}

#[tokio::test]
async fn m5_our_client_calls_a_remote_tool_that_runs_only_as_a_task() {
    let (server, _) = server();
    let toolset = toolset(server, tool_runtime::mcp::Handshake::Initialize).await;
    let ctx = tool_runtime::Context::new();
    let greet = remote(&toolset, "greet");
    // `greet` takes a task or not: a plain call answers.
    let outcome = greet.invoke(&ctx, br#"{"who": "Ada"}"#).await;
    assert_eq!(outcome.text(), "Hello, Ada!", "{outcome:?}");
    let fail = remote(&toolset, "fail");
    assert_eq!(fail.invoke(&ctx, b"{}").await.text(), "the tool failed");

    // A server that requires a task of `greet`: the plain call is refused, the task answers.
    let served = served();
    let strict = McpServer::builder()
        .tools(served.tools)
        .task_support("greet", TaskSupport::Required)
        .task_support("slow", TaskSupport::Required)
        .build()
        .expect("the tools are declared right");
    let toolset = toolset_of(strict).await;
    let greet = remote(&toolset, "greet");
    for _ in 0..2 {
        let outcome = greet.invoke(&ctx, br#"{"who": "Ada"}"#).await;
        assert_eq!(outcome.text(), "Hello, Ada!", "{outcome:?}");
    }

    // Cancelling the call cancels the task, and the remote handler's context with it.
    let slow = remote(&toolset, "slow");
    let call_ctx = ctx.for_call("c1", slow.name());
    let cancel = call_ctx.cancellation().clone();
    let remote_cancelled = served.slow_cancelled.notified();
    let call = slow.invoke(&call_ctx, b"{}");
    let cancelling = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(call, cancelling);
    assert_eq!(
        outcome.kind(),
        tool_runtime::OutcomeKind::Cancelled,
        "{outcome:?}"
    );
    tokio::time::timeout(Duration::from_secs(5), remote_cancelled)
        .await
        .expect("the remote handler's context is cancelled through tasks/cancel");
}

async fn toolset_of(server: McpServer) -> tool_runtime::mcp::McpToolset {
    toolset(server, tool_runtime::mcp::Handshake::Initialize).await
}

#[tokio::test]
async fn m5_a_client_without_2025_11_25_tasks_still_reaches_a_required_tool() {
    let strict = || {
        McpServer::builder()
            .tools(served().tools)
            .task_support("greet", TaskSupport::Required)
            .build()
            .expect("the tools are declared right")
    };
    let toolset = toolset(strict(), tool_runtime::mcp::Handshake::Discover).await;
    let ctx = tool_runtime::Context::new();
    let greet = remote(&toolset, "greet");
    assert_eq!(
        greet.invoke(&ctx, br#"{"who": "Ada"}"#).await.text(),
        "Hello, Ada!"
    );
    let (mut raw, _) = Raw::open(&strict(), "2025-06-18").await;
    let plain = raw.call("greet", None).await;
    assert_eq!(
        plain["result"]["content"][0]["text"], "Hello, Ada!",
        "2025-06-18 has no tasks: {plain}"
    );
    let (mut raw, _) = Raw::open(&strict(), "2025-11-25").await;
    let refused = raw.call("greet", None).await;
    assert_eq!(error_code(&refused), -32601, "{refused}");
}

/// One raw HTTP POST of `body` to the server at `addr` with the bearer `token`: the answer's
/// JSON (a stateless server answers with one JSON body).
fn post(addr: std::net::SocketAddr, token: &str, body: &Value) -> Value {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connects");
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("writes");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("reads");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let json = body
        .lines()
        .find(|line| line.starts_with('{'))
        .unwrap_or(body);
    serde_json::from_str(json.trim()).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

/// M5 on a stateless HTTP server answering JSON: the task is the answer's body, and a task is
/// the holder's of the same `Authorization`, no one else's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m5_on_a_stateless_server_a_task_is_its_authorizations_own() {
    let (server, _) = server();
    let http = server
        .bind_http(
            "127.0.0.1:0",
            tool_runtime::mcp::HttpOptions::new()
                .stateless()
                .json_answers(),
        )
        .await
        .expect("a loopback port is free");
    let addr = http.local_addr();
    let request = |id: i64, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let call = request(
        1,
        "tools/call",
        json!({"name": "greet", "arguments": {"who": "Ada"}, "task": {}}),
    );
    let made = tokio::task::spawn_blocking(move || post(addr, "alice", &call))
        .await
        .expect("joins");
    let id = made["result"]["task"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let asks = move |token: &'static str, method: &'static str, id: String| {
        tokio::task::spawn_blocking(move || {
            post(addr, token, &request(2, method, json!({"taskId": id})))
        })
    };
    let theirs = asks("mallory", "tasks/get", id.clone())
        .await
        .expect("joins");
    assert_eq!(
        error_code(&theirs),
        -32602,
        "another Authorization sees nothing: {theirs}"
    );
    let result = asks("alice", "tasks/result", id.clone())
        .await
        .expect("joins");
    assert_eq!(
        result["result"]["content"][0]["text"], "Hello, Ada!",
        "{result}"
    );
    let got = asks("alice", "tasks/get", id).await.expect("joins");
    assert_eq!(got["result"]["status"], "completed", "{got}");
    http.shutdown().await.expect("shuts down");
}

/// The SDK's own client on 2026-07-28, declaring the Tasks extension (SEP-2663) or not.
async fn sdk_client(
    server: McpServer,
    tasks: bool,
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    use rmcp::ClientServiceExt as _;
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let capabilities = if tasks {
        rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .build()
    } else {
        rmcp::model::ClientCapabilities::default()
    };
    let info = rmcp::model::ClientConfig::new(
        capabilities,
        rmcp::model::Implementation::new("m5-sdk", "0"),
    );
    let lifecycle = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::LATEST],
    };
    info.serve_with_lifecycle(tokio::io::split(client_io), lifecycle)
        .await
        .expect("the SDK's client connects")
}

/// M5 on 2026-07-28 (the Tasks extension, SEP-2663): the server makes a task of a call of a
/// tool that takes tasks when the client declared the extension, and the client polls it to
/// its result; without the extension the call runs plain. Our toolset declares it and awaits
/// such a task; cancelling its call cancels the task.
#[tokio::test]
async fn m5_on_2026_07_28_the_server_makes_tasks_for_clients_of_the_tasks_extension() {
    use rmcp::model::{CallToolRequestParams, CallToolResponse, GetTaskParams, TaskPayload};
    let args = json!({"who": "Ada"})
        .as_object()
        .cloned()
        .expect("an object");
    let call = CallToolRequestParams::new("greet").with_arguments(args);

    let (plain_server, _) = server();
    let plain = sdk_client(plain_server, false).await;
    let answer = plain
        .peer()
        .call_tool_once(call.clone())
        .await
        .expect("answers");
    assert!(
        matches!(answer, CallToolResponse::Complete(_)),
        "{answer:?}"
    );

    let (task_server, _) = server();
    let client = sdk_client(task_server, true).await;
    let answer = client.peer().call_tool_once(call).await.expect("answers");
    let CallToolResponse::Task(created) = answer else {
        panic!("a task: {answer:?}");
    };
    let id = created.task.task_id.clone();
    let result = loop {
        let got = (client.peer().get_task(GetTaskParams::new(id.clone())).await).expect("got");
        match got.task.payload {
            TaskPayload::Working => tokio::time::sleep(Duration::from_millis(20)).await,
            TaskPayload::Completed { result } => break result,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(result["content"][0]["text"], "Hello, Ada!", "{result:?}");

    // Our toolset, on the same protocol, runs the call through such a task.
    let (server, served) = server();
    let toolset = toolset(server, tool_runtime::mcp::Handshake::Discover).await;
    let greet = remote(&toolset, "greet");
    let ctx = tool_runtime::Context::new();
    assert_eq!(
        greet.invoke(&ctx, br#"{"who": "Ada"}"#).await.text(),
        "Hello, Ada!"
    );
    let slow = remote(&toolset, "slow");
    let call_ctx = ctx.for_call("c1", slow.name());
    let cancel = call_ctx.cancellation().clone();
    let remote_cancelled = served.slow_cancelled.notified();
    let cancelling = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(slow.invoke(&call_ctx, b"{}"), cancelling);
    assert_eq!(
        outcome.kind(),
        tool_runtime::OutcomeKind::Cancelled,
        "{outcome:?}"
    );
    tokio::time::timeout(Duration::from_secs(5), remote_cancelled)
        .await
        .expect("the remote handler's context is cancelled");
}

#[tokio::test]
async fn m5_b1_a_sub_agent_declared_a_task_runs_to_its_answer_as_one() {
    use tool_runtime::{Agent, ScriptedModel, ScriptedTurn};
    let model = ScriptedModel::new([ScriptedTurn::reply("acme holds 1200 cents")]);
    let accounts = Agent::builder(model.clone()).build().expect("builds");
    let server = McpServer::builder()
        .tool(accounts.as_tool("accounts", "Answers questions about accounts."))
        .task_support("accounts", TaskSupport::Required)
        .build()
        .expect("the tools are declared right");
    let (mut raw, _) = Raw::open(&server, "2025-11-25").await;
    let arguments = json!({"request": "How much does acme hold?"});
    // Declared a task, it is refused as a plain call.
    let plain = raw
        .request(
            "tools/call",
            json!({"name": "accounts", "arguments": arguments}),
        )
        .await;
    assert!(plain.get("error").is_some(), "{plain}");
    assert!(model.requests().is_empty(), "nothing ran");
    let made = raw
        .request(
            "tools/call",
            json!({"name": "accounts", "arguments": arguments, "task": {"ttl": 60_000}}),
        )
        .await;
    let id = made["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {made}"))
        .to_owned();
    let result = raw.request("tasks/result", json!({"taskId": id})).await;
    assert_eq!(
        result["result"]["content"][0]["text"], "acme holds 1200 cents",
        "{result}"
    );
    assert_eq!(model.requests().len(), 1);
}
