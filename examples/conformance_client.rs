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
//! or `server/discover` when `MCP_CONFORMANCE_PROTOCOL_VERSION` names 2026-07-28 or later,
//! then `tools/list`), and then, as the scenario asks:
//!
//! - `http-invalid-tool-headers`: calls `valid_tool`, the one tool of the list that keeps
//!   the `x-mcp-header` rules; `sep-2322-client-request-state`: calls the tools that ask in
//!   their answer (`test_mrtr_*`), the client echoing each `requestState` it was given;
//! - `json-schema-2020-12-preservation`: sends `json_schema_2020_12_tool`'s input schema, as
//!   the client holds it, to `json_schema_echo` (`{"schema": …}`);
//! - `tools_call`: calls the server's `add_numbers` (local name `add-numbers`, N1) with
//!   `{"a": 2, "b": 3}`, its arguments validated locally against the server's schema first;
//! - `sse-retry`: calls `test_reconnection`, whose answer comes after the server closed the
//!   call's event stream and the client reconnected;
//! - `elicitation-sep1034-client-defaults`: calls `test_client_elicitation_defaults`, whose
//!   server asks the client's user by elicitation: the client accepts with nothing filled in,
//!   and the schema's defaults fill every field (M3, SEP-1034);
//! - one whose context (`MCP_CONFORMANCE_CONTEXT`) lists `toolCalls`: calls each named tool
//!   with its arguments, in order (`http-custom-headers`: the arguments of a tool whose
//!   parameters go in `Mcp-Param-*` headers, one of them `null`);
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

/// The variable in which the suite names the protocol version the scenario runs at.
const VERSION_VARIABLE: &str = "MCP_CONFORMANCE_PROTOCOL_VERSION";

/// The variable in which the suite gives the scenario's data (JSON).
const CONTEXT_VARIABLE: &str = "MCP_CONFORMANCE_CONTEXT";

/// The first protocol version without `initialize`: from it on, `server/discover`.
const DISCOVERY_SINCE: &str = "2026-07-28";

/// How the client opens its session for the version the suite names (dates compare as text).
fn handshake() -> Handshake {
    match std::env::var(VERSION_VARIABLE) {
        Ok(version) if version.as_str() >= DISCOVERY_SINCE => Handshake::Discover,
        _ => Handshake::Initialize,
    }
}

/// The calls the scenario's context lists (`toolCalls`: each a `name` and its `arguments`).
fn context_calls() -> Vec<(String, String)> {
    let Some(context) = std::env::var(CONTEXT_VARIABLE)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
    else {
        return Vec::new();
    };
    let calls = context.get("toolCalls").and_then(|calls| calls.as_array());
    calls
        .into_iter()
        .flatten()
        .filter_map(|call| {
            let name = call.get("name")?.as_str()?.to_owned();
            let arguments = call.get("arguments").cloned().unwrap_or_default();
            Some((name, arguments.to_string()))
        })
        .collect()
}

/// For each scenario that calls tools: each tool's MCP name and the arguments it is called
/// with, in order.
fn calls_of(scenario: &str) -> &'static [(&'static str, &'static str)] {
    match scenario {
        "tools_call" => &[("add_numbers", r#"{"a": 2, "b": 3}"#)],
        "sse-retry" => &[("test_reconnection", "{}")],
        "elicitation-sep1034-client-defaults" => &[("test_client_elicitation_defaults", "{}")],
        // The one tool left of a list whose other tools break the header rules (M10).
        "http-invalid-tool-headers" => &[("valid_tool", r#"{"region": "us-east1"}"#)],
        // Questions in the answer (2026-07-28): the state echoed, or none sent.
        "sep-2322-client-request-state" => &[
            ("test_mrtr_echo_state", "{}"),
            ("test_mrtr_no_state", "{}"),
            ("test_mrtr_unrelated", "{}"),
            ("test_mrtr_no_result_type", "{}"),
        ],
        _ => &[],
    }
}

/// In `json-schema-2020-12-preservation`: the tool whose input schema the client sends back,
/// and the tool it sends it to (as `schema`).
const SCHEMA_ECHO: (&str, &str) = ("json_schema_2020_12_tool", "json_schema_echo");

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
        .handshake(handshake())
        .elicitor(|message: String, _schema: serde_json::Value| async move {
            eprintln!("conformance_client: asked {message:?}; accepting the defaults");
            Ok(ElicitAnswer::Accept(serde_json::json!({})))
        })
        .connect_http(url)
        .await?;
    let names: Vec<(&str, &str)> = toolset.names().collect();
    eprintln!("conformance_client: tools (local, remote): {names:?}");
    let mut calls: Vec<(String, String)> = (calls_of(scenario).iter())
        .map(|(remote, arguments)| ((*remote).to_owned(), (*arguments).to_owned()))
        .collect();
    calls.extend(context_calls());
    if scenario == "json-schema-2020-12-preservation" {
        calls.push(schema_echo(&toolset)?);
    }
    let mut result = Ok(());
    for (remote, arguments) in calls {
        if result.is_ok() {
            result = call(&toolset, &remote, &arguments).await;
        }
    }
    toolset.close().await;
    result
}

/// The call that sends the [`SCHEMA_ECHO`] tool's input schema, as the client holds it, back.
fn schema_echo(toolset: &McpToolset) -> Result<(String, String), BoxError> {
    let (focal, echo) = SCHEMA_ECHO;
    let local = (toolset.local_name(focal)).ok_or_else(|| format!("no tool {focal:?}"))?;
    let tool = (toolset.tools().iter())
        .find(|tool| tool.name() == local)
        .ok_or_else(|| format!("no local tool {local:?}"))?;
    let arguments = serde_json::json!({ "schema": tool.schema() });
    Ok((echo.to_owned(), arguments.to_string()))
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
