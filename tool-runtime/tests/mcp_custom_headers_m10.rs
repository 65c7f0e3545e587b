//! M10, the client's side: `McpToolset` calls a remote tool whose parameters are mirrored into
//! `Mcp-Param-*` headers (`x-mcp-header`) on 2026-07-28, and leaves a header out for a null
//! parameter. A null parameter the schema does not require is that parameter left out (S2):
//! the call is sent, not refused locally; a null parameter the schema requires is refused
//! locally as missing. The server is the project's own over streamable HTTP, which checks
//! every header against the body (`mcp_param_headers_m10`), and records the headers it saw.
#![cfg(feature = "mcp")]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_runtime::mcp::{
    Handshake, HttpOptions, JsonSchemaValidator, McpRequest, McpServer, McpToolset,
};
use tool_runtime::{Context, OutcomeKind, Tool};

/// The `Mcp-Param-*` headers of each request the server saw, lowercase.
type Seen = Arc<Mutex<Vec<Vec<(String, String)>>>>;

/// A server of `query`, whose `region` and `verbose` are mirrored into headers, over HTTP.
async fn serve() -> (tool_runtime::mcp::HttpServer, Seen) {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"},
        },
        "required": ["region", "query"],
    });
    let validator = JsonSchemaValidator::new(&schema).expect("a valid schema");
    let tool = Tool::builder("query", "Runs a query in a region.")
        .dynamic_handler(schema, validator, |_ctx: Context, args: Value| async move {
            Ok::<_, std::convert::Infallible>(format!("ran in {}", args["region"]))
        })
        .build();
    let seen: Seen = Arc::default();
    let recorded = Arc::clone(&seen);
    let server = McpServer::builder()
        .tool(tool)
        .context(move |request: McpRequest| {
            let params = (request.headers().iter())
                .filter(|(name, _)| name.as_str().starts_with("mcp-param-"))
                .map(|(name, value)| {
                    let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                    (name.as_str().to_owned(), value)
                })
                .collect();
            recorded.lock().expect("not poisoned").push(params);
            async { Ok::<_, std::convert::Infallible>(Context::new()) }
        })
        .build()
        .expect("the tool is declared right");
    let http = server
        .bind_http("127.0.0.1:0", HttpOptions::new().stateless())
        .await
        .expect("binds");
    (http, seen)
}

/// M10: the call with `verbose: null` is sent, with `Mcp-Param-Region` and without
/// `Mcp-Param-Verbose`, and answered; `verbose: true` is mirrored as `true`; a null
/// `query` (required) is refused before anything is sent, as a missing member.
#[tokio::test]
async fn m10_a_null_parameter_is_sent_without_its_header() {
    let (http, seen) = serve().await;
    let toolset = McpToolset::builder()
        .handshake(Handshake::Discover)
        .connect_http(format!("http://{}/mcp", http.local_addr()))
        .await
        .expect("our client connects to our server");
    let tool = (toolset.tools().iter())
        .find(|tool| tool.name() == "query")
        .expect("the remote tool is offered");
    let ctx = Context::new();

    seen.lock().expect("not poisoned").clear();
    let outcome = tool
        .invoke(
            &ctx,
            br#"{"region": "us-east1", "verbose": null, "query": "SELECT 1"}"#,
        )
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{outcome:?}");
    assert_eq!(outcome.text(), "ran in \"us-east1\"");
    let headers = seen.lock().expect("not poisoned").clone();
    let call = headers.last().expect("the call reached the server");
    assert!(
        call.contains(&("mcp-param-region".to_owned(), "us-east1".to_owned())),
        "{call:?}"
    );
    assert!(
        !call.iter().any(|(name, _)| name == "mcp-param-verbose"),
        "no header for a null value: {call:?}"
    );

    let outcome = tool
        .invoke(
            &ctx,
            br#"{"region": "us-east1", "verbose": true, "query": "SELECT 1"}"#,
        )
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{outcome:?}");
    let headers = seen.lock().expect("not poisoned").clone();
    let call = headers.last().expect("the call reached the server");
    assert!(
        call.contains(&("mcp-param-verbose".to_owned(), "true".to_owned())),
        "{call:?}"
    );

    let sent_before = seen.lock().expect("not poisoned").len();
    let outcome = tool
        .invoke(&ctx, br#"{"region": "us-east1", "query": null}"#)
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::InvalidArguments, "{outcome:?}");
    assert!(
        outcome.text().contains("/query: is required"),
        "{}",
        outcome.text()
    );
    assert!(!outcome.text().contains("verbose"), "{}", outcome.text());
    assert_eq!(
        seen.lock().expect("not poisoned").len(),
        sent_before,
        "nothing was sent"
    );
    http.shutdown().await.expect("shuts down");
}
