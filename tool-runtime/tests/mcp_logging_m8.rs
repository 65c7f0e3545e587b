//! M8 (logging): a handler logs to its client (`ctx.log(level, data)`), and the client gets
//! each message as `notifications/message`, before the call's answer, at the level it asked
//! for: `logging/setLevel` for its session before 2026-07-28 (`info` until it asks), the
//! request's own `_meta` level on 2026-07-28 (none when the request names no level). Raw
//! JSON-RPC over a pipe, as a client sees it.
#![cfg(feature = "mcp")]

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::mcp::McpServer;
use tool_runtime::{Context, LogLevel, LogMessage, Tool};

/// Any arguments.
type Args = std::collections::BTreeMap<String, Value>;

/// `chatty` logs a debug, an info and an error message, then answers.
fn server() -> McpServer {
    let chatty = Tool::builder("chatty", "Logs as it works.")
        .handler(|ctx: Context, _args: Args| async move {
            ctx.log(LogLevel::Debug, "looking around");
            ctx.log(LogLevel::Info, "working");
            ctx.log_message(
                LogMessage::new(LogLevel::Error, json!({"failed": "one step"}))
                    .with_logger("steps"),
            );
            Ok::<_, std::io::Error>("done")
        })
        .build();
    McpServer::builder().tool(chatty).build().expect("built")
}

/// A client speaking newline-delimited JSON-RPC over a pipe.
struct Raw {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    next_id: i64,
}

impl Raw {
    fn open(server: McpServer) -> Self {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        let (client_read, writer) = tokio::io::split(client_io);
        Self {
            lines: BufReader::new(client_read).lines(),
            writer,
            next_id: 1,
        }
    }

    async fn send(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).expect("JSON");
        bytes.push(b'\n');
        self.writer
            .write_all(&bytes)
            .await
            .expect("the pipe is open");
    }

    /// Sends a request; its answer, and the `notifications/message` params sent before it.
    async fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let read = async {
            let mut logged = Vec::new();
            loop {
                let line = (self.lines.next_line().await)
                    .expect("the pipe is open")
                    .expect("the server answers before it closes");
                let message: Value = serde_json::from_str(&line).expect("the server sends JSON");
                if message["method"] == "notifications/message" {
                    logged.push(message["params"].clone());
                } else if message.get("method").is_none() && message["id"] == json!(id) {
                    return (message, logged);
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the server answers within 10 s")
    }
}

fn levels(logged: &[Value]) -> Vec<&str> {
    logged.iter().filter_map(|p| p["level"].as_str()).collect()
}

/// M8 before 2026-07-28: the server declares `logging`; the messages come before the answer,
/// at `info` and above until the client sets a level, then at the level it set.
#[tokio::test]
async fn m8_a_handler_logs_to_its_client_at_the_level_it_set() {
    let mut raw = Raw::open(server());
    let (init, _) = raw
        .request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "m8", "version": "0"},
            }),
        )
        .await;
    assert!(
        init["result"]["capabilities"]["logging"].is_object(),
        "{init}"
    );
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let call = json!({"name": "chatty", "arguments": {}});

    let (answer, logged) = raw.request("tools/call", call.clone()).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(levels(&logged), ["info", "error"], "{logged:?}");
    assert_eq!(logged[0]["data"], "working");
    assert_eq!(logged[1]["data"], json!({"failed": "one step"}));
    assert_eq!(logged[1]["logger"], "steps");

    for (level, expected) in [
        ("error", vec!["error"]),
        ("debug", vec!["debug", "info", "error"]),
    ] {
        let (set, _) = raw
            .request("logging/setLevel", json!({"level": level}))
            .await;
        assert_eq!(set["result"], json!({}), "{set}");
        let (_, logged) = raw.request("tools/call", call.clone()).await;
        assert_eq!(levels(&logged), expected, "at {level}: {logged:?}");
    }
}

/// M8 on 2026-07-28: a request names its own level in `_meta`; one that names none gets no
/// messages.
#[tokio::test]
async fn m8_on_2026_07_28_each_request_names_its_level() {
    let mut raw = Raw::open(server());
    let meta = |level: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "m8", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        meta
    };
    for (level, expected) in [
        (None, vec![]),
        (Some("warning"), vec!["error"]),
        (Some("debug"), vec!["debug", "info", "error"]),
    ] {
        let call = json!({"name": "chatty", "arguments": {}, "_meta": meta(level)});
        let (answer, logged) = raw.request("tools/call", call).await;
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        assert_eq!(levels(&logged), expected, "at {level:?}: {logged:?}");
    }
}

/// M8: outside a served call nobody listens, and logging costs nothing.
#[test]
fn m8_without_a_listener_a_message_goes_nowhere() {
    let ctx = Context::new().for_call("c1", "chatty");
    assert!(!ctx.wants_log());
    ctx.log(LogLevel::Emergency, "nobody hears this");
}
