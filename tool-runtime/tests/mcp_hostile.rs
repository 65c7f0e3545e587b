//! Holding up under hostile input: what a hostile client sends, as raw JSON-RPC bytes
//! over stdio (a duplex pipe) and over streamable HTTP (a bare TCP socket), and what our
//! server answers. A malformed `tools/call` (no `name`, `arguments` that is not an object) is
//! `-32602 Invalid params`, never `-32601 Method not found`, and the session carries on.
//! Params that are not a JSON object at all are refused by rmcp's transport before any
//! handler (`-32600 Invalid Request` over stdio, a 4xx over HTTP); the session carries on too.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::time::Duration;

use serde_json::{Value, json};
use support::mcp::served;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tool_runtime::mcp::{HttpOptions, McpServer};

/// JSON-RPC's `Invalid params`.
const INVALID_PARAMS: i64 = -32602;

/// The `initialize` request of a session-based protocol version.
fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"},
        },
    })
}

/// Malformed `tools/call`s, each with the words its error message must
/// hold: it says what is wrong, not that the method does not exist.
fn malformed() -> Vec<(Value, &'static str)> {
    let call = |params: Value| json!({"jsonrpc": "2.0", "method": "tools/call", "params": params});
    vec![
        (call(json!({"arguments": {"who": "Ada"}})), "`name`"),
        (call(json!({"name": 7, "arguments": {}})), "`name`"),
        (
            call(json!({"name": "greet", "arguments": "{\"who\": \"Ada\"}"})),
            "`arguments` must be an object",
        ),
        (
            call(json!({"name": "greet", "arguments": ["Ada"]})),
            "`arguments` must be an object",
        ),
        (
            call(json!({"name": "greet", "arguments": 3})),
            "`arguments` must be an object",
        ),
        (
            call(json!({"name": "greet", "requestState": 5})),
            "`requestState` must be a string",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "tools/call"}),
            "must be an object",
        ),
    ]
}

/// Requests whose params are not a JSON object, which rmcp cannot read as any request.
fn unstructured() -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": "greet"}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": ["greet", {"who": "Ada"}]}),
    ]
}

/// The request `message` with the id `id`.
fn with_id(mut message: Value, id: i64) -> Value {
    message["id"] = json!(id);
    message
}

/// Checks a JSON-RPC error answer to the malformed request `sent`.
fn assert_invalid_params(answer: &Value, sent: &Value, words: &str) {
    let error = &answer["error"];
    assert_eq!(
        error["code"].as_i64(),
        Some(INVALID_PARAMS),
        "{sent} got {answer}"
    );
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains(words), "{sent} got {answer}");
}

/// The answer to a well-formed call of `greet`, after the malformed ones: the session lives on.
fn assert_greeted(answer: &Value) {
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!("Hello, Ada!"),
        "{answer}"
    );
}

fn greet(id: i64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "greet", "arguments": {"who": "Ada"}},
    })
}

fn server() -> McpServer {
    McpServer::builder()
        .tools(served().tools)
        .build()
        .expect("the tools are declared right")
}

/// A client speaking newline-delimited JSON-RPC over a pipe, byte by byte.
struct RawStdio {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
}

impl RawStdio {
    async fn send(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).expect("JSON");
        bytes.push(b'\n');
        self.writer
            .write_all(&bytes)
            .await
            .expect("the pipe is open");
    }

    /// The answer to the request `id`, skipping anything else the server sends.
    async fn answer(&mut self, id: i64) -> Value {
        self.answer_with(json!(id)).await
    }

    /// The next answer without an id, skipping anything else the server sends.
    async fn answer_without_id(&mut self) -> Value {
        self.answer_with(Value::Null).await
    }

    async fn answer_with(&mut self, id: Value) -> Value {
        let read = async {
            loop {
                let line = self
                    .lines
                    .next_line()
                    .await
                    .expect("the pipe is open")
                    .expect("the server answers before it closes");
                let message: Value = serde_json::from_str(&line).expect("the server sends JSON");
                if message.get("method").is_none() && message["id"] == id {
                    return message;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the server answers within 10 s")
    }
}

#[tokio::test]
async fn a_malformed_tools_call_over_stdio_is_invalid_params() {
    let server = server();
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, writer) = tokio::io::split(client_io);
    let mut raw = RawStdio {
        lines: BufReader::new(client_read).lines(),
        writer,
    };

    raw.send(&initialize()).await;
    assert!(raw.answer(1).await["result"].is_object());
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    for (id, (message, words)) in (2..).zip(malformed()) {
        let sent = with_id(message, id);
        raw.send(&sent).await;
        assert_invalid_params(&raw.answer(id).await, &sent, words);
    }
    for (id, message) in (50..).zip(unstructured()) {
        let sent = with_id(message, id);
        raw.send(&sent).await;
        // rmcp cannot read the request, so its answer carries no id (JSON-RPC: `null`).
        let answer = raw.answer_without_id().await;
        assert_eq!(
            answer["error"]["code"],
            json!(-32600),
            "{sent} got {answer}"
        );
    }
    // A method the server does not serve is still not found, its name quoted short.
    let unknown = json!({"jsonrpc": "2.0", "id": 60, "method": "x".repeat(10_000)});
    raw.send(&unknown).await;
    let answer = raw.answer(60).await;
    assert_eq!(answer["error"]["code"], json!(-32601), "{answer}");
    assert!(answer.to_string().len() < 300, "{answer}");
    raw.send(&greet(100)).await;
    assert_greeted(&raw.answer(100).await);
}

/// One raw HTTP/1.1 POST of `body` to the server at `addr`: the response's status, its
/// `mcp-session-id` header and the JSON-RPC messages of its body (JSON or an event stream).
async fn post(
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, Vec<Value>) {
    let body = serde_json::to_vec(body).expect("JSON");
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n",
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    head.push_str("\r\n");
    let exchange = async {
        let mut socket = TcpStream::connect(addr).await.expect("the server listens");
        socket.write_all(head.as_bytes()).await.expect("sent");
        socket.write_all(&body).await.expect("sent");
        let mut response = Vec::new();
        socket.read_to_end(&mut response).await.expect("received");
        response
    };
    let response = tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .expect("the server answers within 10 s");
    let text = String::from_utf8(response).expect("an HTTP response is text here");
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete response");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        unchunk(body)
    } else {
        body.to_owned()
    };
    let messages = if body.trim_start().starts_with('{') {
        vec![serde_json::from_str(&body).expect("a JSON body")]
    } else {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter(|data| !data.trim().is_empty())
            .map(|data| serde_json::from_str(data.trim()).expect("a JSON event"))
            .collect()
    };
    (status, header("mcp-session-id"), messages)
}

/// The payload of a chunked HTTP/1.1 body.
fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// The message answering the request `id`.
fn answer_to(messages: &[Value], id: i64) -> &Value {
    messages
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no answer to {id} in {messages:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_tools_call_over_http_is_invalid_params() {
    let http = server()
        .bind_http("127.0.0.1:0", HttpOptions::default())
        .await
        .expect("a loopback port is free");
    let addr = http.local_addr();

    let (status, session, messages) = post(addr, None, &initialize()).await;
    assert_eq!(status, 200, "{messages:?}");
    assert!(answer_to(&messages, 1)["result"].is_object());
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = post(addr, Some(&session), &initialized).await;
    assert_eq!(status, 202);

    for (id, (message, words)) in (2..).zip(malformed()) {
        let sent = with_id(message, id);
        let (status, _, messages) = post(addr, Some(&session), &sent).await;
        // Invalid params is an answer in the stream (HTTP 200), not a missing method (404).
        assert_eq!(status, 200, "{sent} got {messages:?}");
        assert_invalid_params(answer_to(&messages, id), &sent, words);
    }
    for (id, message) in (50..).zip(unstructured()) {
        let sent = with_id(message, id);
        let (status, _, messages) = post(addr, Some(&session), &sent).await;
        assert!(
            (400..500).contains(&status),
            "{sent} got {status} {messages:?}"
        );
    }
    let (_, _, messages) = post(addr, Some(&session), &greet(100)).await;
    assert_greeted(answer_to(&messages, 100));
    http.shutdown().await.expect("the server stops cleanly");
}
