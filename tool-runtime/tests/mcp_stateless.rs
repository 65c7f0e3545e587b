//! The stateless HTTP mode (`HttpOptions::stateless`, `json_answers`): no session, so that
//! replicas behind an ordinary load balancer can serve one client; each request authenticated
//! from its own headers, every call through the whole pipeline (A4, S2, E2).
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::{Value, json};
use support::mcp::{Principal, served};
use tool_runtime::mcp::{Handshake, HttpOptions, HttpServer, McpRequest, McpServer, McpToolset};
use tool_runtime::{BoxError, Context, OutcomeKind};

async fn authenticate(req: McpRequest) -> Result<Context, BoxError> {
    match req.bearer_token() {
        Some("op-token") => Ok(Context::new().with(Principal::OPERATOR)),
        Some("admin-token") => Ok(Context::new().with(Principal::ADMIN)),
        _ => Err("unknown bearer token".into()),
    }
}

async fn replica() -> HttpServer {
    McpServer::builder()
        .tools(served().tools)
        .context(authenticate)
        .build()
        .expect("the tools are declared right")
        .bind_http("127.0.0.1:0", HttpOptions::new().stateless().json_answers())
        .await
        .expect("a loopback port is free")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_answers_each_request_alone_with_json() {
    let server = replica().await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "lookup-window", "arguments": {"service_id": "svc-42"}}});
    let (status, headers, body) = tokio::task::spawn_blocking({
        let call = call.clone();
        let addr = server.local_addr();
        move || FakeServer(addr).post("op-token", &call)
    })
    .await
    .expect("joins");
    assert!(status.contains("200"), "{status}");
    assert!(
        headers.contains("content-type: application/json"),
        "{headers}"
    );
    assert!(!headers.contains("mcp-session-id"), "{headers}");
    let answer: Value = serde_json::from_str(body.trim()).unwrap_or_else(|_| {
        // A chunked body: the JSON is the chunk between the size lines.
        let inner = body
            .lines()
            .find(|line| line.starts_with('{'))
            .unwrap_or("{}");
        serde_json::from_str(inner).expect("a JSON answer")
    });
    assert_eq!(answer["id"], 7);
    assert_eq!(
        answer["result"]["structuredContent"]["service_id"],
        "svc-42"
    );
    // Every request is authenticated by itself: no token, no answer.
    let (status, _, _) = tokio::task::spawn_blocking({
        let addr = server.local_addr();
        move || FakeServer(addr).post("forged", &call)
    })
    .await
    .expect("joins");
    assert!(status.contains("401"), "{status}");
    server.shutdown().await.expect("shuts down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_serve_one_client_with_policies_and_redaction_intact() {
    let (one, two) = (replica().await, replica().await);
    // Our client, once against each replica: no session ties it to either.
    for (server, token, sees_admin) in [(&one, "op-token", false), (&two, "admin-token", true)] {
        let toolset = McpToolset::builder()
            .bearer_token(token)
            .handshake(Handshake::Initialize)
            .connect_http(server.url())
            .await
            .expect("connects");
        let names: Vec<&str> = toolset.tools().iter().map(|t| t.name()).collect();
        assert_eq!(names.contains(&"admin-reset"), sees_admin, "{names:?}");
        let fail = toolset
            .tools()
            .iter()
            .find(|t| t.name() == "fail")
            .cloned()
            .expect("listed");
        let outcome = fail.invoke(&Context::new(), b"{}").await;
        assert_eq!(
            (outcome.kind(), outcome.text()),
            (OutcomeKind::Failed, "the tool failed")
        );
        let lookup = toolset
            .tools()
            .iter()
            .find(|t| t.name() == "lookup-window")
            .cloned()
            .expect("listed");
        let bad = lookup
            .invoke(&Context::new(), br#"{"service_id": ""}"#)
            .await;
        assert_eq!(bad.kind(), OutcomeKind::InvalidArguments);
        toolset.close().await;
    }
    // One raw client alternating between the replicas, as a round-robin balancer sends it.
    let calls: Vec<(std::net::SocketAddr, Value)> = (0..6)
        .map(|i| {
            let addr = if i % 2 == 0 {
                one.local_addr()
            } else {
                two.local_addr()
            };
            let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "greet", "arguments": {"who": format!("client {i}")}}});
            (addr, call)
        })
        .collect();
    let answers = tokio::task::spawn_blocking(move || {
        calls
            .into_iter()
            .map(|(addr, call)| FakeServer(addr).post("op-token", &call))
            .collect::<Vec<_>>()
    })
    .await
    .expect("joins");
    for (i, (status, _, body)) in answers.iter().enumerate() {
        assert!(status.contains("200"), "{status}");
        assert!(body.contains(&format!("Hello, client {i}!")), "{body}");
    }
    one.shutdown().await.expect("shuts down");
    two.shutdown().await.expect("shuts down");
}

/// A blocking raw HTTP client of one server address.
struct FakeServer(std::net::SocketAddr);

impl FakeServer {
    fn post(&self, token: &str, body: &Value) -> (String, String, String) {
        let mut stream = TcpStream::connect(self.0).expect("connects");
        let body = body.to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("writes");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("reads");
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
        (status.to_owned(), headers.to_lowercase(), body.to_owned())
    }
}
