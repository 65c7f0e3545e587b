//! The HTTP mode of the `mcp_server` example (`-- --http 127.0.0.1:8181`): each request's
//! bearer token names its principal, a request without a known token is refused before any MCP
//! processing, and the maintenance tools answer with their output schema and hints (O1, O4).
#![cfg(feature = "mcp")]

use tool_examples::serve::{self, Tokens};
use tool_runtime::mcp::{Handshake, HttpOptions, McpRequest, McpToolset};
use tool_runtime::{Context, OutcomeKind};

async fn connect(url: &str, token: &str) -> Result<McpToolset, String> {
    McpToolset::builder()
        .bearer_token(token)
        .handshake(Handshake::Initialize)
        .connect_http(url)
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_server_serves_each_token_its_principals_tools() {
    let tokens = Tokens::demo();
    let base = serve::services();
    let server = serve::builder()
        .context(move |request: McpRequest| {
            let ctx = tokens.context(&request, &base);
            async move { ctx }
        })
        .build()
        .expect("the maintenance server builds");
    let http = server
        .bind_http("127.0.0.1:0", HttpOptions::default())
        .await
        .expect("a loopback port is free");
    let url = http.url();

    let names = |toolset: &McpToolset| -> Vec<String> {
        toolset
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    let guest = connect(&url, "guest-token")
        .await
        .expect("a guest connects");
    assert!(names(&guest).is_empty(), "{:?}", names(&guest));
    let operator = connect(&url, "operator-token")
        .await
        .expect("an operator connects");
    assert_eq!(names(&operator), ["lookup-window"]);
    let admin = connect(&url, "admin-token")
        .await
        .expect("an admin connects");
    assert_eq!(names(&admin), ["lookup-window", "restart-service"]);
    assert!(connect(&url, "forged-token").await.is_err());

    let lookup = operator.tools()[0].clone();
    assert!(lookup.output_schema().is_some());
    assert_eq!(lookup.annotations().read_only, Some(true));
    assert_eq!(admin.tools()[1].annotations().destructive, Some(true));
    let outcome = lookup
        .invoke(&Context::new(), br#"{"service_id": "svc-42"}"#)
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
    assert!(outcome.text().contains("2026-12-01T02:00:00Z"));
    for toolset in [guest, operator, admin] {
        toolset.close().await;
    }
    http.shutdown().await.expect("shuts down");
}

#[test]
fn tokens_are_read_from_a_list_and_refuse_malformed_entries() {
    let tokens = Tokens::parse("s3cret=ada:operator, t0p=root:admin").expect("a valid list");
    assert_eq!(tokens.principal("s3cret").map(|p| p.name), Some("ada"));
    assert!(tokens.principal("nope").is_none());
    for bad in ["", "x", "x=ada", "x=ada:king", "=ada:admin"] {
        assert!(Tokens::parse(bad).is_err(), "{bad:?}");
    }
}
