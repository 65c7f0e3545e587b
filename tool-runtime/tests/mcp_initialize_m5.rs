//! M5: `initialize` names the newest protocol version that has it (2025-11-25), as the
//! `Initialize` handshake and as `Auto`'s fallback: a version past it has no `initialize`.
#![cfg(feature = "mcp")]

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::mcp::{Handshake, McpToolset};

/// Plays a server of protocol 2025-11-25 over a byte stream: answers `initialize` with the
/// version the client asked for, lists no tools, and reports the client's `initialize`.
async fn first_initialize(handshake: Handshake) -> Value {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, mut server_write) = tokio::io::split(server_io);
    let server = tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        let mut initialize = Value::Null;
        while let Ok(Some(line)) = lines.next_line().await {
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
            let id = message.get("id").cloned();
            let answer = match message["method"].as_str() {
                // A server that predates discovery.
                Some("server/discover") => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
                }
                Some("initialize") => {
                    initialize = message.clone();
                    json!({"jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "old", "version": "1"}
                    }})
                }
                Some("tools/list") => {
                    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
                    let mut bytes = serde_json::to_vec(&answer).expect("JSON");
                    bytes.push(b'\n');
                    let _ = server_write.write_all(&bytes).await;
                    return initialize;
                }
                _ => continue,
            };
            let mut bytes = serde_json::to_vec(&answer).expect("JSON");
            bytes.push(b'\n');
            server_write.write_all(&bytes).await.expect("written");
        }
        initialize
    });
    let (client_read, client_write) = tokio::io::split(client_io);
    let toolset = McpToolset::builder()
        .handshake(handshake)
        .connect_io(client_read, client_write)
        .await
        .expect("connected");
    assert!(toolset.tools().is_empty());
    server.await.expect("the server's task")
}

#[tokio::test]
async fn m5_initialize_names_2025_11_25() {
    for handshake in [Handshake::Initialize, Handshake::Auto] {
        let initialize = first_initialize(handshake).await;
        assert_eq!(
            initialize["params"]["protocolVersion"], "2025-11-25",
            "{handshake:?}: {initialize}"
        );
    }
}
