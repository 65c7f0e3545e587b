//! T4: the streamable HTTP transport keeps the MCP specification's MUSTs. A request from a
//! browser origin that is not allowed is answered `403` before its body is read (and before
//! the context function runs); requests without `Origin`, or from a loopback origin by
//! default, are served. Every refusal says `Connection: close`, so that a client pooling its
//! connections opens a new one, and its next request succeeds.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
    pub mod raw_http;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use support::mcp::served;
use support::raw_http::{RawConnection, initialize};
use tool_runtime::mcp::{HttpOptions, HttpServer, McpRequest, McpServer};
use tool_runtime::{BoxError, Context};

const ALICE: (&str, &str) = ("Authorization", "Bearer alice-token");

/// A server whose context function knows `alice-token` and `bob-token`, and counts its calls.
async fn serve(options: HttpOptions) -> (HttpServer, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let server = McpServer::builder()
        .tools(served().tools)
        .context(move |req: McpRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            let known = matches!(req.bearer_token(), Some("alice-token" | "bob-token"));
            async move {
                if known {
                    Ok(Context::new())
                } else {
                    Err::<_, BoxError>("unknown bearer token".into())
                }
            }
        })
        .build()
        .expect("the tools are declared right");
    let http = server
        .bind_http("127.0.0.1:0", options)
        .await
        .expect("a loopback port is free");
    (http, calls)
}

/// T4: a foreign `Origin` (or `Host`) is `403` at once, with the body still unsent: the
/// server reads no body, asks no context function, says `Connection: close` and closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t4_a_foreign_origin_or_host_is_403_before_its_body_is_read() {
    let (http, calls) = serve(HttpOptions::new()).await;
    for origin in [
        "https://evil.example",
        "http://localhost.evil.example:80",
        "null",
    ] {
        let mut raw = RawConnection::open(http.local_addr()).await;
        // The head announces a body that never comes.
        raw.send_head(
            "POST",
            &[
                ALICE,
                ("Origin", origin),
                ("Content-Type", "application/json"),
            ],
            1_000,
        )
        .await;
        let response = raw.response().await;
        assert_eq!(response.status, 403, "{origin}: {response:?}");
        assert!(response.closes(), "{origin}: {response:?}");
        assert_eq!(response.header("content-type"), Some("application/json"));
        assert!(response.body.contains("Origin"), "{response:?}");
        assert!(response.session().is_none());
        assert!(
            raw.closed_by_server().await,
            "{origin}: the connection stays open"
        );
    }
    // A foreign `Host` (DNS rebinding) likewise.
    let mut raw = RawConnection::open(http.local_addr()).await;
    // The head announces a body that never comes.
    raw.send_head(
        "POST",
        &[
            ALICE,
            ("Host", "evil.example"),
            ("Content-Type", "application/json"),
        ],
        1_000,
    )
    .await;
    let response = raw.response().await;
    assert_eq!(
        (response.status, response.closes()),
        (403, true),
        "{response:?}"
    );
    assert!(response.body.contains("Host"), "{response:?}");
    assert!(raw.closed_by_server().await, "the connection stays open");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the context function ran");

    // A complete request from a foreign origin is refused the same way.
    let mut raw = RawConnection::open(http.local_addr()).await;
    let response = raw
        .post(&[ALICE, ("Origin", "https://evil.example")], &initialize())
        .await;
    assert_eq!(
        (response.status, response.closes()),
        (403, true),
        "{response:?}"
    );
    http.shutdown().await.expect("the server stops cleanly");
}

/// T4: no `Origin` (a non-browser client) and loopback origins are served by default; an
/// explicit list replaces the loopback origins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t4_no_origin_and_loopback_origins_are_served_and_a_list_replaces_them() {
    let (http, _) = serve(HttpOptions::new()).await;
    let mut raw = RawConnection::open(http.local_addr()).await;
    for origin in [
        None,
        Some("http://localhost:6274"),
        Some("http://127.0.0.1:5173"),
        Some("https://[::1]:8443"),
    ] {
        let mut headers = vec![ALICE];
        headers.extend(origin.map(|o| ("Origin", o)));
        // Served over one kept-alive connection.
        let response = raw.post(&headers, &initialize()).await;
        assert_eq!(response.status, 200, "{origin:?}: {response:?}");
        assert!(response.session().is_some(), "{origin:?}");
        assert!(!response.closes(), "{origin:?}: {response:?}");
    }
    http.shutdown().await.expect("the server stops cleanly");

    let options = HttpOptions::new().allowed_origins(["https://app.example.com"]);
    let (http, _) = serve(options).await;
    for (origin, status) in [
        ("https://app.example.com", 200),
        ("https://app.example.com:443", 200),
        ("http://app.example.com", 403),
        ("http://localhost:6274", 403),
    ] {
        let mut raw = RawConnection::open(http.local_addr()).await;
        let response = raw.post(&[ALICE, ("Origin", origin)], &initialize()).await;
        assert_eq!(response.status, status, "{origin}: {response:?}");
    }
    http.shutdown().await.expect("the server stops cleanly");
}

/// T4: a `401` sent before the body was read closes the connection cleanly: it says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t4_a_401_before_the_body_says_connection_close_and_closes() {
    let (http, _) = serve(HttpOptions::new()).await;
    let mut raw = RawConnection::open(http.local_addr()).await;
    // The head announces a body that never comes.
    raw.send_head(
        "POST",
        &[
            ("Authorization", "Bearer forged"),
            ("Content-Type", "application/json"),
        ],
        1_000,
    )
    .await;
    let response = raw.response().await;
    assert_eq!(
        (response.status, response.closes()),
        (401, true),
        "{response:?}"
    );
    assert!(raw.closed_by_server().await);
    http.shutdown().await.expect("the server stops cleanly");
}

/// T4: after each kind of refusal, a pooled client's next request succeeds: every refusal
/// says `Connection: close`, so the client does not reuse the connection the server closes.
/// Each refused request is followed at once by a good one, several times, as a client
/// retrying with other credentials, or carrying on in a session, would.
#[cfg(any(feature = "openai", feature = "anthropic"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t4_a_pooled_clients_next_request_succeeds_after_each_refusal() {
    use reqwest::header::{CONTENT_TYPE, HOST, ORIGIN};

    // One live session in all, one per principal: alice's is the one, bob gets `503`.
    let options = HttpOptions::new()
        .max_sessions(1)
        .max_sessions_per_principal(1);
    let (http, _) = serve(options).await;
    let url = http.url();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(4)
        .build()
        .expect("a client");
    let mcp = |request: reqwest::RequestBuilder, token: &str| {
        request
            .bearer_auth(token)
            .header(CONTENT_TYPE, "application/json")
            .header("Accept", "application/json, text/event-stream")
    };
    let opened = mcp(client.post(&url), "alice-token")
        .body(initialize().to_string())
        .send()
        .await
        .expect("alice initializes");
    assert_eq!(opened.status(), 200);
    let session = opened
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    opened.text().await.expect("the answer");

    let other_path = url.replace("/mcp", "/other");
    let refusals: Vec<(&str, u16, reqwest::RequestBuilder)> = vec![
        ("no credential", 401, client.post(&url).body("{}")),
        (
            "a foreign Origin",
            403,
            mcp(client.post(&url), "alice-token")
                .header(ORIGIN, "https://evil.example")
                .body(initialize().to_string()),
        ),
        (
            "a foreign Host",
            403,
            mcp(client.post(&url), "alice-token")
                .header(HOST, "evil.example")
                .body(initialize().to_string()),
        ),
        (
            "another path",
            404,
            mcp(client.post(&other_path), "alice-token").body("{}"),
        ),
        (
            "an unknown session",
            404,
            mcp(client.post(&url), "alice-token")
                .header("Mcp-Session-Id", "no-such-session")
                .body(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}).to_string()),
        ),
        (
            "a method not served",
            405,
            mcp(client.put(&url), "alice-token").body("{}"),
        ),
        (
            "alice's second session",
            429,
            mcp(client.post(&url), "alice-token").body(initialize().to_string()),
        ),
        (
            "bob's first session",
            503,
            mcp(client.post(&url), "bob-token").body(initialize().to_string()),
        ),
    ];
    let good = |id: u64| {
        mcp(client.post(&url), "alice-token")
            .header("Mcp-Session-Id", &session)
            .header("MCP-Protocol-Version", "2025-11-25")
            .body(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string())
    };
    let mut id = 100;
    for _ in 0..5 {
        for (what, status, refused) in &refusals {
            let refused = refused.try_clone().expect("a body in memory");
            let response = refused.send().await.expect("the refusal arrives");
            assert_eq!(response.status(), *status, "{what}");
            let connection = response.headers().get("connection");
            assert_eq!(
                connection.and_then(|v| v.to_str().ok()),
                Some("close"),
                "{what}"
            );
            response.text().await.expect("the refusal's body");
            id += 1;
            let answer = good(id)
                .send()
                .await
                .unwrap_or_else(|e| panic!("the request after {what} failed: {e:?}"));
            assert_eq!(answer.status(), 200, "after {what}");
            let text = answer.text().await.expect("the answer");
            assert!(
                text.contains(&format!("\"id\":{id}")),
                "after {what}: {text}"
            );
        }
    }

    // A body too large is refused (`413`) while it is still being sent: the client may see the
    // refusal or a reset, and its next request succeeds all the same.
    let huge = "x".repeat(5 << 20);
    for _ in 0..3 {
        let sent = mcp(client.post(&url), "alice-token")
            .body(huge.clone())
            .send()
            .await;
        if let Ok(response) = sent {
            assert_eq!(response.status(), 413);
            assert_eq!(
                response
                    .headers()
                    .get("connection")
                    .and_then(|v| v.to_str().ok()),
                Some("close")
            );
        }
        id += 1;
        let answer = good(id).send().await.expect("the request after 413");
        assert_eq!(answer.status(), 200);
        answer.text().await.expect("the answer");
    }
    http.shutdown().await.expect("the server stops cleanly");
}
