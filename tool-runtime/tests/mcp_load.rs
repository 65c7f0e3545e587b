//! Load on MCP over streamable HTTP on 127.0.0.1. In the test suite it is a small
//! run (4 clients for 1 second each way) that checks every call under concurrent load is
//! answered right; with `MCP_LOAD_SECS` set it is the measurement, and prints calls per second
//! and latencies. Nothing here asserts a time.
//!
//! `MCP_LOAD_CLIENTS` clients (default 64, at most 256) call `greet` for `MCP_LOAD_SECS`
//! seconds (at most 30) each way:
//! - `toolset`: sessions of our [`McpToolset`] (rmcp's HTTP client opens a connection per
//!   request);
//! - `keep-alive`: raw HTTP/1.1 clients that keep one connection each and read every answer to
//!   its end, as pooled clients (the Python SDK's, say) do.
//!
//! ```text
//! MCP_LOAD_SECS=5 cargo test -p tool-runtime --features mcp --test mcp_load -- --nocapture
//! ```
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mcp::served;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tool_runtime::mcp::{Handshake, HttpOptions, McpServer, McpToolset};
use tool_runtime::{Context, OutcomeKind};

fn setting(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_over_http_are_all_answered_and_measured() {
    let (secs, clients) = match setting("MCP_LOAD_SECS") {
        Some(secs) => (
            secs.clamp(1, 30),
            setting("MCP_LOAD_CLIENTS").unwrap_or(64).clamp(1, 256),
        ),
        None => (1, 4),
    };
    let http = McpServer::builder()
        .tools(served().tools)
        .build()
        .expect("the tools are declared right")
        // Every client is one anonymous principal (127.0.0.1): up to 256 sessions for it (T5).
        .bind_http(
            "127.0.0.1:0",
            HttpOptions::default().max_sessions_per_principal(256),
        )
        .await
        .expect("a loopback port is free");
    let run_for = Duration::from_secs(secs);

    let mut toolsets = Vec::new();
    for _ in 0..clients {
        let toolset = McpToolset::builder()
            .handshake(Handshake::Initialize)
            .connect_http(http.url())
            .await
            .expect("our client connects");
        toolsets.push(toolset);
    }
    let deadline = Instant::now() + run_for;
    let tasks: Vec<_> = toolsets
        .into_iter()
        .map(|toolset| {
            tokio::spawn(async move {
                let greet = toolset
                    .tools()
                    .iter()
                    .find(|t| t.name() == "greet")
                    .expect("greet is served")
                    .clone();
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let began = Instant::now();
                    let outcome = greet.invoke(&Context::new(), br#"{"who": "Ada"}"#).await;
                    latencies.push((began.elapsed(), outcome.kind() == OutcomeKind::Success));
                }
                toolset.close().await;
                latencies
            })
        })
        .collect();
    report("toolset", clients, run_for, tasks).await;

    let addr = http.local_addr();
    let mut raw = Vec::new();
    for _ in 0..clients {
        raw.push(KeepAlive::open(addr).await);
    }
    let deadline = Instant::now() + run_for;
    let tasks: Vec<_> = raw
        .into_iter()
        .map(|mut client| {
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                for id in 2.. {
                    if Instant::now() >= deadline {
                        break;
                    }
                    let call = json!({
                        "jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": "greet", "arguments": {"who": "Ada"}},
                    });
                    let began = Instant::now();
                    let (status, body) = client.post(&call).await;
                    latencies.push((
                        began.elapsed(),
                        status == 200 && body.contains("Hello, Ada!"),
                    ));
                }
                latencies
            })
        })
        .collect();
    report("keep-alive", clients, run_for, tasks).await;
    http.shutdown().await.expect("the server stops cleanly");
}

/// Prints the calls per second and latency percentiles of the finished `tasks`.
async fn report(
    what: &str,
    clients: u64,
    run_for: Duration,
    tasks: Vec<tokio::task::JoinHandle<Vec<(Duration, bool)>>>,
) {
    let mut latencies = Vec::new();
    let mut failed = 0;
    for task in tasks {
        for (latency, ok) in task.await.expect("a load client does not panic") {
            latencies.push(latency);
            failed += usize::from(!ok);
        }
    }
    assert_eq!(failed, 0, "{what}: every call under load is answered right");
    assert!(!latencies.is_empty(), "{what}: calls were made");
    latencies.sort();
    let at = |q: f64| {
        let last = latencies.len().saturating_sub(1);
        let i = ((latencies.len() as f64 * q) as usize).min(last);
        latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{what}: {clients} clients, {} s: {} calls ({failed} failed), {:.0} calls/s, \
         p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
        run_for.as_secs(),
        latencies.len(),
        latencies.len() as f64 / run_for.as_secs_f64(),
        at(0.5),
        at(0.9),
        at(0.99),
    );
}

/// An MCP session over one kept-alive HTTP/1.1 connection, every answer read to its end.
struct KeepAlive {
    stream: BufReader<TcpStream>,
    host: SocketAddr,
    session: Option<String>,
}

impl KeepAlive {
    /// Connects and opens a session (`initialize`, then `notifications/initialized`).
    async fn open(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).await.expect("the server listens");
        // As asyncio (the Python SDK's) does: only the server's side is measured.
        stream.set_nodelay(true).expect("a connected socket");
        let mut client = KeepAlive {
            stream: BufReader::new(stream),
            host: addr,
            session: None,
        };
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "load", "version": "0"},
            },
        });
        let (status, _) = client.post(&initialize).await;
        assert_eq!(status, 200);
        assert!(client.session.is_some(), "a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _) = client.post(&initialized).await;
        assert_eq!(status, 202);
        client
    }

    /// Posts `message` and reads the whole answer: its status and body.
    async fn post(&mut self, message: &Value) -> (u16, String) {
        let body = serde_json::to_vec(message).expect("JSON");
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if let Some(session) = &self.session {
            request.push_str(&format!(
                "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
            ));
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(&body);
        let stream = self.stream.get_mut();
        stream.write_all(&bytes).await.expect("sent");

        let status_line = self.line().await;
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status line");
        let (mut length, mut chunked) = (0, false);
        loop {
            let line = self.line().await;
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().expect("a length"),
                "transfer-encoding" => chunked = value.contains("chunked"),
                "mcp-session-id" => self.session = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let size = usize::from_str_radix(self.line().await.trim(), 16).expect("a size");
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await.expect("a chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            self.stream.read_exact(&mut body).await.expect("a body");
        }
        (status, String::from_utf8(body).expect("a text body"))
    }

    /// One line of the answer's head, without its line end.
    async fn line(&mut self) -> String {
        let mut line = String::new();
        self.stream.read_line(&mut line).await.expect("an answer");
        line.trim_end_matches(['\r', '\n']).to_owned()
    }
}
