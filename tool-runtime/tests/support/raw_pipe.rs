//! A client speaking raw newline-delimited JSON-RPC to an `McpServer` over an in-process pipe,
//! as a client sees the server: each answer, and the notifications sent before it.
#![allow(dead_code)]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::mcp::McpServer;

/// The pipe's client end.
pub(crate) struct Raw {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    next_id: i64,
}

/// The `_meta` a client of protocol 2026-07-28 sends with each request: its version, its name
/// and its `capabilities`, since no handshake declared them.
pub(crate) fn meta_2026(client: &str, capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

impl Raw {
    /// Serves `server` on a new pipe, with no handshake: as a client of 2026-07-28 speaks,
    /// each request carrying its version and capabilities ([`meta_2026`]).
    pub(crate) fn unopened(server: McpServer) -> Self {
        let (client_io, server_io) = tokio::io::duplex(1 << 22);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        let (client_read, writer) = tokio::io::split(client_io);
        Self {
            lines: BufReader::new(client_read).lines(),
            writer,
            next_id: 1,
        }
    }

    /// Serves `server` on a new pipe, and initializes a session on `version`.
    pub(crate) async fn open(server: McpServer, version: &str) -> Self {
        let mut raw = Self::unopened(server);
        let (init, _) = raw
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                }),
            )
            .await;
        assert!(init.get("result").is_some(), "{init}");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    /// Sends one message.
    pub(crate) async fn send(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).expect("JSON");
        bytes.push(b'\n');
        (self.writer.write_all(&bytes).await).expect("the pipe is open");
    }

    /// Sends a request; its answer only.
    pub(crate) async fn answer(&mut self, method: &str, params: Value) -> Value {
        self.request(method, params).await.0
    }

    /// Sends a request; its answer, and the notifications sent before it (a request the
    /// server sends meanwhile is neither).
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let read = async {
            let mut notified = Vec::new();
            loop {
                let message = self.next().await;
                if message.get("id").is_none() {
                    notified.push(message);
                } else if message.get("method").is_none() && message["id"] == json!(id) {
                    return (message, notified);
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the server answers within 10 s")
    }

    /// The next message the server sends.
    pub(crate) async fn next(&mut self) -> Value {
        let line = (self.lines.next_line().await)
            .expect("the pipe is open")
            .expect("the server sends before it closes");
        serde_json::from_str(&line).expect("the server sends JSON")
    }

    /// The next message within `wait`, if one comes.
    pub(crate) async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.next()).await.ok()
    }
}
