//! The client side of the official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! rule M1): an [`McpToolset`] connecting to the suite's test server, built only with the
//! public API of `tool_runtime`.
//!
//! The suite runs it as `conformance_client <server-url>`, with the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` (and scenario data, for the OAuth scenarios, in
//! `MCP_CONFORMANCE_CONTEXT`), and judges what the test server saw:
//!
//! ```text
//! conformance client --command "target/debug/examples/conformance_client" --scenario initialize
//! ```
//!
//! For every scenario the client connects over streamable HTTP (the `initialize` handshake,
//! then `tools/list`), and then, as the scenario asks:
//!
//! - `tools_call`: calls the server's `add_numbers` (local name `add-numbers`, N1) with
//!   `{"a": 2, "b": 3}`, its arguments validated locally against the server's schema first;
//! - `sse-retry`: calls `test_reconnection`, whose answer comes after the server closed the
//!   call's event stream and the client reconnected;
//! - `elicitation-sep1034-client-defaults`: calls `test_client_elicitation_defaults`, whose
//!   server asks the client's user by elicitation: the client accepts with nothing filled in,
//!   and the schema's defaults fill every field (M3, SEP-1034);
//! - any other: nothing more.
//!
//! It prints what it did on standard error, and exits with `1` when the connection or a call
//! failed.
//!
//! `examples/tests/mcp_conformance.rs` runs the suite with it.

use tool_runtime::mcp::{Handshake, McpToolset};
use tool_runtime::{BoxError, Context, OutcomeKind, elicit::ElicitAnswer};

/// The variable in which the suite names the scenario.
const SCENARIO_VARIABLE: &str = "MCP_CONFORMANCE_SCENARIO";

/// For each scenario that calls a tool: the tool's MCP name and the arguments it is called
/// with.
fn call_of(scenario: &str) -> Option<(&'static str, &'static str)> {
    match scenario {
        "tools_call" => Some(("add_numbers", r#"{"a": 2, "b": 3}"#)),
        "sse-retry" => Some(("test_reconnection", "{}")),
        "elicitation-sep1034-client-defaults" => Some(("test_client_elicitation_defaults", "{}")),
        _ => None,
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url] = args.as_slice() else {
        return Err(
            "usage: conformance_client SERVER_URL   (scenario in MCP_CONFORMANCE_SCENARIO)".into(),
        );
    };
    let scenario = std::env::var(SCENARIO_VARIABLE).unwrap_or_default();
    run(url, &scenario).await
}

/// Plays the client's part of `scenario` against the suite's test server at `url`.
///
/// # Errors
///
/// The connection, the tool list or a call failed.
pub async fn run(url: &str, scenario: &str) -> Result<(), BoxError> {
    eprintln!("conformance_client: scenario {scenario:?}, server {url}");
    // M3: the server's questions are answered by accepting with nothing filled in, so that
    // each field takes the default its schema gives (SEP-1034).
    let toolset = McpToolset::builder()
        .handshake(Handshake::Initialize)
        .elicitor(|message: String, _schema: serde_json::Value| async move {
            eprintln!("conformance_client: asked {message:?}; accepting the defaults");
            Ok(ElicitAnswer::Accept(serde_json::json!({})))
        })
        .connect_http(url)
        .await?;
    let names: Vec<(&str, &str)> = toolset.names().collect();
    eprintln!("conformance_client: tools (local, remote): {names:?}");
    let result = match call_of(scenario) {
        Some((remote, arguments)) => call(&toolset, remote, arguments).await,
        None => Ok(()),
    };
    toolset.close().await;
    result
}

/// Calls the remote tool `remote` with `arguments` (JSON), through its local [`Tool`].
///
/// [`Tool`]: tool_runtime::Tool
async fn call(toolset: &McpToolset, remote: &str, arguments: &str) -> Result<(), BoxError> {
    let local = toolset
        .local_name(remote)
        .ok_or_else(|| format!("the server lists no tool {remote:?}"))?;
    let tool = toolset
        .tools()
        .iter()
        .find(|tool| tool.name() == local)
        .ok_or_else(|| format!("no local tool {local:?}"))?;
    let outcome = tool.invoke(&Context::new(), arguments.as_bytes()).await;
    eprintln!(
        "conformance_client: {remote} ({local}) ended {}: {}",
        outcome.kind(),
        outcome.text()
    );
    if outcome.kind() == OutcomeKind::Success {
        Ok(())
    } else {
        Err(format!("the call of {remote} ended {}", outcome.kind()).into())
    }
}
