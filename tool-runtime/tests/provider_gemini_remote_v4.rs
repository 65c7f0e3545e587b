//! V4: a remote MCP tool goes through the same dialect as a local one. An `McpToolset`'s tool
//! given to an agent on the Gemini driver is rewritten into Gemini's dialect at `build()`
//! (`const` as a one-value `enum`, `exclusiveMinimum` moved into the description), its
//! declaration parsed by Google's own types (V5); a remote schema the dialect cannot express
//! fails `build()` naming the tool and the keyword, before any model I/O.

#![cfg(all(feature = "gemini", feature = "mcp"))]

mod support {
    pub mod gemini;
    pub mod provider;
}

use serde_json::{Value, json};
use support::gemini::{Checker, answer};
use support::provider::{Reply, Server};
use tool_runtime::mcp::{Handshake, McpServer, McpToolset};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::gemini::Gemini;
use tool_runtime::violation::ParseCx;
use tool_runtime::{Agent, BoxError, Context, Tool};

/// A tool of the remote server with the schema `schema`.
fn remote_tool(name: &str, schema: Value) -> Tool {
    Tool::builder(name, "A remote tool.")
        .dynamic_handler(
            schema,
            |_: &Value, _: &mut ParseCx| {},
            |_ctx: Context, _args: Value| async move { Ok::<_, BoxError>("ok") },
        )
        .build()
}

/// Our client connected to `server` in this process.
async fn connect(server: McpServer) -> McpToolset {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    McpToolset::builder()
        .handshake(Handshake::Auto)
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects to our server")
}

fn gemini(url: &str) -> Gemini {
    Gemini::builder()
        .api_key("AIza-remote-key")
        .base_url(url)
        .model("gemini-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

#[tokio::test]
async fn v4_remote_tools_are_published_in_geminis_dialect() {
    let schema = json!({
        "type": "object",
        "properties": {
            "kind": {"const": "window"},
            "days": {"type": "integer", "exclusiveMinimum": 0}
        },
        "required": ["kind"]
    });
    let server = McpServer::builder()
        .tool(remote_tool("plan", schema))
        .build()
        .expect("the remote server builds");
    let remote = connect(server).await;
    let model = Server::start([Reply::sse(answer("Nothing to plan."))]).await;
    let agent = Agent::builder(gemini(model.url()))
        .tools(remote.into_tools())
        .build()
        .expect("the remote tool fits Gemini's dialect");
    agent
        .run(&Context::new(), "Plan.")
        .await
        .expect("the run answers");
    let body = model.requests()[0].json();
    let declared = &body["tools"][0]["functionDeclarations"][0];
    assert_eq!(declared["name"], "plan", "{body}");
    let parameters = &declared["parametersJsonSchema"];
    assert_eq!(
        parameters["properties"]["kind"]["enum"],
        json!(["window"]),
        "{parameters}"
    );
    assert!(parameters["properties"]["kind"].get("const").is_none());
    let days = &parameters["properties"]["days"];
    assert!(days.get("exclusiveMinimum").is_none(), "{days}");
    assert!(
        days["description"]
            .as_str()
            .is_some_and(|d| d.contains("exclusiveMinimum: 0")),
        "{days}"
    );
    Checker::start().assert_requests(&model);
}

#[tokio::test]
async fn v4_a_remote_schema_the_dialect_cannot_express_fails_build() {
    let schema = json!({
        "type": "object",
        "properties": {"when": {"allOf": [{"type": "string"}, {"minLength": 1}]}}
    });
    let server = McpServer::builder()
        .tool(remote_tool("odd", schema))
        .build()
        .expect("the remote server builds");
    let remote = connect(server).await;
    let model = Server::start([]).await;
    let error = Agent::builder(gemini(model.url()))
        .tools(remote.into_tools())
        .build()
        .expect_err("Gemini's dialect has no allOf");
    let text = error.to_string();
    assert!(text.contains("odd") && text.contains("allOf"), "{text}");
    assert_eq!(model.request_count(), 0, "no model I/O");
}
