//! C3: the tools of `examples/from_rmcp.rs`, moved over from rmcp with their input types
//! unchanged, answer over MCP in-process: listed under rmcp's names with schemars' schema,
//! valid arguments reach the handler, invalid ones are refused with violations before it.
#![cfg(all(feature = "mcp", feature = "schemars"))]

use serde_json::json;
use tool_examples::from_rmcp::{Notes, server};
use tool_runtime::mcp::{Handshake, McpToolset};
use tool_runtime::{Context, OutcomeKind, Rule, Tool};

async fn connect(notes: Notes) -> McpToolset {
    let server = server(notes).build().expect("the moved server builds");
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (read, write) = tokio::io::split(client_io);
    McpToolset::builder()
        .handshake(Handshake::Initialize)
        .connect_io(read, write)
        .await
        .expect("the client connects")
}

fn find<'t>(toolset: &'t McpToolset, name: &str) -> &'t Tool {
    toolset
        .tools()
        .iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("`{name}` is listed"))
}

#[tokio::test]
async fn c3_the_moved_rmcp_tools_answer_over_mcp() {
    let notes = Notes::default();
    let toolset = connect(notes.clone()).await;
    let mut names: Vec<&str> = toolset.tools().iter().map(Tool::name).collect();
    names.sort_unstable();
    assert_eq!(names, ["add-note", "sum"]);
    let ctx = Context::new();

    let sum = find(&toolset, "sum");
    assert_eq!(sum.schema()["required"], json!(["a", "b"]));
    let outcome = sum.invoke(&ctx, br#"{"a": 2, "b": 40}"#).await;
    assert_eq!(
        (outcome.kind(), outcome.text()),
        (OutcomeKind::Success, "42")
    );

    let add = find(&toolset, "add-note");
    let outcome = add
        .invoke(&ctx, br#"{"title": "renew certs", "priority": "high"}"#)
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
    assert_eq!(
        outcome.text(),
        r#"kept note 1 of renew certs (urgent), tagged []"#
    );
    assert_eq!(notes.titles(), ["renew certs"]);

    // Refused before the handler, with the violations of a derived input.
    let outcome = add
        .invoke(&ctx, br#"{"title": "", "priority": "soon", "tags": [1]}"#)
        .await;
    assert_eq!(
        outcome.kind(),
        OutcomeKind::InvalidArguments,
        "{}",
        outcome.text()
    );
    let found: Vec<(&str, Rule)> = outcome
        .violations()
        .iter()
        .map(|v| (v.path.as_str(), v.rule))
        .collect();
    assert_eq!(
        found,
        [
            ("/priority", Rule::Enum),
            ("/tags/0", Rule::Type),
            ("/title", Rule::MinLength)
        ]
    );
    assert_eq!(notes.titles(), ["renew certs"]);
}
