//! Z5: the official MCP Python SDK's OAuth client (`tests/support/mcp/oauth_client.py`)
//! connects to the project's protected server through the same real authorization server as
//! the Rust client's tests (npm `oidc-provider`, `provider_code.mjs`): it discovers the
//! authorization server from the 401, registers itself, gets a token by the authorization-code
//! flow with PKCE, and its calls reach the handler with the token's subject. Neither the
//! script's report nor anything the server traced holds a JWT.
#![cfg(feature = "mcp")]

mod support {
    pub mod capture;
    pub mod mcp;
    pub mod oidc;
    pub mod trace;
}

use std::process::Stdio;
use std::time::Duration;

use support::capture::Captured;
use support::oidc::OidcProvider;
use tool_runtime::mcp::auth::{Authorization, Claims};
use tool_runtime::mcp::{HttpOptions, McpServer};
use tool_runtime::{IntoTool, tool};

const REDIRECT: &str = "http://127.0.0.1:8765/callback";

/// Says whom the token was issued for.
#[tool]
async fn whoami(claims: &Claims) -> String {
    format!("you are {}", claims.subject.as_deref().unwrap_or("nobody"))
}

/// Closes a ticket.
#[tool(name = "close-ticket", scopes = "tickets:write")]
async fn close_ticket() -> String {
    "closed".to_owned()
}

#[tokio::test]
async fn z5_the_python_sdk_oauth_client_reaches_the_protected_server() {
    let (captured, _guard) = Captured::install();
    let addr = (tokio::net::TcpListener::bind("127.0.0.1:0").await)
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port is free");
    let resource = format!("http://{addr}/mcp");
    let provider = OidcProvider::start_code(&resource, REDIRECT, 600)
        .await
        .unwrap_or_else(|e| panic!("the authorization server cannot start: {e}"));
    let auth = Authorization::jwt(&resource, &provider.issuer)
        .expect("URLs")
        .scopes_supported(["tickets:read", "tickets:write"]);
    let server = McpServer::builder()
        .tools([Whoami.into_tool(), CloseTicket.into_tool()])
        .build()
        .expect("declared right");
    let http = (server.bind_http(addr, HttpOptions::new().authorization(auth)))
        .await
        .expect("serves");

    let child = support::mcp::python()
        .arg(support::mcp::script("oauth_client.py"))
        .args([http.url().as_str(), REDIRECT])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the Python client ends within two minutes")
        .expect("the Python client runs");
    let report = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client's checks failed:\n{report}"
    );
    assert!(report.contains("all checks passed"), "{report}");
    http.shutdown().await.expect("stops");

    // Z2: a JWT's text starts with the base64url of `{"`; none was written or traced.
    assert!(!report.contains("eyJ"), "{report}");
    let traced = captured.text();
    assert!(
        traced.contains("tools/call"),
        "the server's spans were captured"
    );
    assert!(!traced.contains("eyJ"), "a token was traced");
}
