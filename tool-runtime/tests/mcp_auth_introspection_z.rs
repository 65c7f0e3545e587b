//! Z2, opaque tokens: a protected server whose verifier asks the authorization server about
//! each token by RFC 7662 introspection (an endpoint the test runs on loopback). An active
//! token for this resource is served and its answer cached (the endpoint asked once); an
//! inactive one, one for another resource, and any token while the endpoint is down are `401`
//! with nothing run (fail closed); the token is sent in the form body, never logged.
#![cfg(feature = "mcp")]

mod support {
    pub mod bearer;
}

use support::bearer;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use tool_runtime::mcp::auth::{Authorization, Claims, IntrospectionVerifier};
use tool_runtime::mcp::{HttpOptions, McpServer};
use tool_runtime::{IntoTool, tool};

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Says whom the token was issued for.
#[tool]
async fn whoami(claims: &Claims) -> String {
    RUNS.fetch_add(1, Ordering::SeqCst);
    format!("you are {}", claims.subject.as_deref().unwrap_or("nobody"))
}

/// An introspection endpoint that knows `good` (for `resource`) and `elsewhere` (for another
/// resource), requires the client `rs`/`secret`, counts its calls and can be switched off.
async fn introspection(resource: String) -> (String, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let down = Arc::new(AtomicBool::new(false));
    let (counted, off) = (Arc::clone(&calls), Arc::clone(&down));
    let router = Router::new().route(
        "/introspect",
        post(move |headers: HeaderMap, body: String| {
            counted.fetch_add(1, Ordering::SeqCst);
            let basic = headers.get("authorization").and_then(|v| v.to_str().ok());
            // "rs:secret" in base64.
            let answer = if off.load(Ordering::SeqCst) {
                Err(StatusCode::SERVICE_UNAVAILABLE)
            } else if basic != Some("Basic cnM6c2VjcmV0") {
                Err(StatusCode::UNAUTHORIZED)
            } else {
                let exp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs())
                    + 3600;
                let claims = |aud: &str| {
                    json!({"active": true, "sub": "user-ada", "aud": aud, "scope": "tickets:read",
                        "iss": "http://as.test", "exp": exp})
                };
                let answer: Value = match body.as_str() {
                    "token=good&token_type_hint=access_token" => claims(&resource),
                    "token=elsewhere&token_type_hint=access_token" => {
                        claims("http://other.test/mcp")
                    }
                    _ => json!({"active": false}),
                };
                Ok(([("content-type", "application/json")], answer.to_string()))
            };
            std::future::ready(answer)
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let url = format!(
        "http://{}/introspect",
        listener.local_addr().expect("bound")
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, calls, down)
}

/// Calls `whoami` on `url` with `token`: the status and body.
async fn call(client: &reqwest::Client, url: &str, token: &str) -> (u16, String) {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}});
    bearer::post(client, url, token, &message).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z2_opaque_tokens_are_introspected_cached_and_refused_when_the_endpoint_is_down() {
    let addr = (tokio::net::TcpListener::bind("127.0.0.1:0").await)
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port is free");
    let resource = format!("http://{addr}/mcp");
    let (endpoint, calls, down) = introspection(resource.clone()).await;
    let verifier = IntrospectionVerifier::new(&endpoint, "rs", "secret", &resource)
        .expect("a URL")
        .issuer("http://as.test");
    let auth = Authorization::new(&resource, verifier)
        .expect("a URL")
        .authorization_server("http://as.test");
    let server = McpServer::builder()
        .tool(Whoami.into_tool())
        .build()
        .expect("declared right");
    let options = HttpOptions::new()
        .stateless()
        .json_answers()
        .authorization(auth);
    let http = server.bind_http(addr, options).await.expect("serves");
    let client = reqwest::Client::new();
    let url = http.url();

    let (status, body) = call(&client, &url, "good").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("you are user-ada"), "{body}");
    assert_eq!(call(&client, &url, "good").await.0, 200);
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the answer was not cached");
    assert_eq!(RUNS.load(Ordering::SeqCst), 2);

    for token in ["inactive", "elsewhere"] {
        let (status, body) = call(&client, &url, token).await;
        assert_eq!(status, 401, "{token}: {body}");
    }
    down.store(true, Ordering::SeqCst);
    assert_eq!(call(&client, &url, "other").await.0, 401, "fail closed");
    // A token whose answer is cached is still served while its answer holds.
    assert_eq!(call(&client, &url, "good").await.0, 200);
    assert_eq!(
        RUNS.load(Ordering::SeqCst),
        3,
        "a refused token ran a handler"
    );
    http.shutdown().await.expect("stops");
}
