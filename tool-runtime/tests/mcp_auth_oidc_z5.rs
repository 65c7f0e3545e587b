//! Z5 against a real authorization server: npm `oidc-provider` (pinned, installed by the test
//! under `target/peers/`) issues RFC 9068 JWT access tokens by the client credentials grant
//! with the RFC 8707 `resource` of our server; our server finds its keys through its OpenID
//! metadata, admits its tokens, hands the handler the token's subject (C1), offers and refuses
//! tools by the token's scopes (Z3), and refuses a token for another resource (Z2).
#![cfg(feature = "mcp")]

mod support {
    pub mod bearer;
    pub mod oidc;
}

use support::bearer;

use serde_json::{Value, json};
use support::oidc::OidcProvider;
use tool_runtime::mcp::auth::{Authorization, Claims};
use tool_runtime::mcp::{HttpOptions, McpServer};
use tool_runtime::{IntoTool, tool};

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

/// A token from `issuer` by the client credentials grant, for `resource` with `scope`.
async fn token(client: &reqwest::Client, issuer: &str, resource: &str, scope: &str) -> String {
    let body = format!(
        "grant_type=client_credentials&resource={}&scope={}",
        resource.replace(':', "%3A").replace('/', "%2F"),
        scope.replace(':', "%3A").replace(' ', "+")
    );
    let answer: Value = (client.post(format!("{issuer}/token")))
        .basic_auth("svc", Some("svc-secret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .expect("the token endpoint answers")
        .json()
        .await
        .expect("JSON");
    answer["access_token"].as_str().expect("a token").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z5_tokens_of_a_real_authorization_server_are_admitted_by_scope() {
    let addr = (tokio::net::TcpListener::bind("127.0.0.1:0").await)
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port is free");
    let resource = format!("http://{addr}/mcp");
    let provider = OidcProvider::start(&resource)
        .await
        .unwrap_or_else(|e| panic!("the authorization server cannot start: {e}"));
    let auth = Authorization::jwt(&resource, &provider.issuer)
        .expect("URLs")
        .scopes_supported(["tickets:read", "tickets:write"]);
    let server = McpServer::builder()
        .tools([Whoami.into_tool(), CloseTicket.into_tool()])
        .build()
        .expect("declared right");
    let options = HttpOptions::new()
        .stateless()
        .json_answers()
        .authorization(auth);
    let http = server.bind_http(addr, options).await.expect("serves");
    let (client, url) = (reqwest::Client::new(), http.url());
    let call = |name: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": {}}})
    };

    let reader = token(&client, &provider.issuer, &resource, "tickets:read").await;
    let (status, body) = bearer::post(&client, &url, &reader, &call("whoami")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("you are svc"), "{body}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (_, listed) = bearer::post(&client, &url, &reader, &list).await;
    assert!(
        listed.contains("whoami") && !listed.contains("close-ticket"),
        "{listed}"
    );
    assert_eq!(
        bearer::post(&client, &url, &reader, &call("close-ticket"))
            .await
            .0,
        403
    );

    let writer = token(
        &client,
        &provider.issuer,
        &resource,
        "tickets:read tickets:write",
    )
    .await;
    let (status, body) = bearer::post(&client, &url, &writer, &call("close-ticket")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("closed"), "{body}");
    http.shutdown().await.expect("stops");

    // Z2: the same server at another canonical URI refuses the tokens meant for this one.
    let other = format!("http://{addr}/other");
    let auth = Authorization::jwt(&other, &provider.issuer).expect("URLs");
    let options = HttpOptions::new()
        .path("/other")
        .stateless()
        .json_answers()
        .authorization(auth);
    let http = server.bind_http(addr, options).await.expect("serves again");
    let (status, body) = bearer::post(&client, &http.url(), &writer, &call("whoami")).await;
    assert_eq!(status, 401, "{body}");
    http.shutdown().await.expect("stops");
}
