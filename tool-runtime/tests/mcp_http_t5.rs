//! T5: sessions are bounded. A server holds at most a configured number of live sessions per
//! principal and in all; an `initialize` past a bound is answered `429` (the principal's) or
//! `503` (the server's) with `Retry-After` and `Connection: close`, and opens no session. An
//! idle session expires (later requests with its id get `404`) and a session closed by
//! `DELETE` or expiry frees its slot. A stateless server holds no session, and no bound
//! applies to it. The memory these bounds keep flat is measured in
//! `examples/tests/mcp_http_t5_memory.rs`.
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
    pub mod raw_http;
}

use std::time::Duration;

use serde_json::{Value, json};
use support::mcp::served;
use support::raw_http::{RawConnection, RawResponse, initialize};
use tool_runtime::mcp::{Handshake, HttpOptions, HttpServer, McpRequest, McpServer, McpToolset};
use tool_runtime::{BoxError, Context};

/// Who the application says a request is from.
#[derive(Debug, Clone)]
struct Who(&'static str);

/// Knows `alice`, `bob` and `carol`, and `ada` on two devices.
async fn authenticate(req: McpRequest) -> Result<Context, BoxError> {
    let who = match req.bearer_token() {
        Some("alice-token") => "alice",
        Some("bob-token") => "bob",
        Some("carol-token") => "carol",
        Some("ada-laptop" | "ada-phone") => "ada",
        _ => return Err("unknown bearer token".into()),
    };
    Ok(Context::new().with(Who(who)))
}

async fn serve(options: HttpOptions) -> HttpServer {
    McpServer::builder()
        .tools(served().tools)
        .context(authenticate)
        .build()
        .expect("the tools are declared right")
        .bind_http("127.0.0.1:0", options)
        .await
        .expect("a loopback port is free")
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// `initialize` as `token`'s over `raw`.
async fn open(raw: &mut RawConnection, token: &str) -> RawResponse {
    raw.post(&[("Authorization", &bearer(token))], &initialize())
        .await
}

/// A `ping` in the session `session`, as `token`'s.
async fn ping(raw: &mut RawConnection, token: &str, session: &str) -> RawResponse {
    let headers = [
        ("Authorization", bearer(token)),
        ("Mcp-Session-Id", session.to_owned()),
        ("MCP-Protocol-Version", "2025-11-25".to_owned()),
    ];
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    raw.post(
        &headers,
        &json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
    )
    .await
}

/// Checks a refusal by a bound: `status`, `Retry-After` of `retry_after` seconds,
/// `Connection: close`, a JSON-RPC error, and no session.
fn assert_refused(response: &RawResponse, status: u16, retry_after: &str) {
    assert_eq!(response.status, status, "{response:?}");
    assert_eq!(
        response.header("retry-after"),
        Some(retry_after),
        "{response:?}"
    );
    assert!(response.closes(), "{response:?}");
    assert!(response.session().is_none(), "{response:?}");
    let body: Value = serde_json::from_str(&response.body).expect("a JSON body");
    assert!(body["error"]["message"].is_string(), "{body}");
}

/// Opens a session as `token`'s on a connection of its own, which it expects to succeed.
async fn opened(http: &HttpServer, token: &str) -> String {
    let mut raw = RawConnection::open(http.local_addr()).await;
    let response = open(&mut raw, token).await;
    assert_eq!(response.status, 200, "{token}: {response:?}");
    response.session().expect("a session id")
}

/// T5: a principal past its bound gets `429`, the server past its own `503`, both with
/// `Retry-After`; a refused `initialize` opens no session, the live sessions go on, a client
/// that needs no session (protocol 2026-07-28) is still served, and `DELETE` frees a slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_past_its_bound_a_principal_gets_429_and_past_the_servers_503() {
    let http = serve(
        HttpOptions::new()
            .max_sessions(5)
            .max_sessions_per_principal(3),
    )
    .await;
    // Alice's three sessions over one kept-alive connection; the fourth is refused.
    let mut raw = RawConnection::open(http.local_addr()).await;
    let mut alices = Vec::new();
    for _ in 0..3 {
        let response = open(&mut raw, "alice-token").await;
        assert_eq!(response.status, 200, "{response:?}");
        assert!(!response.closes());
        alices.push(response.session().expect("a session id"));
    }
    // The default idle timeout is 5 minutes: clients are told to retry after a minute.
    for _ in 0..3 {
        let mut raw = RawConnection::open(http.local_addr()).await;
        assert_refused(&open(&mut raw, "alice-token").await, 429, "60");
        assert!(raw.closed_by_server().await);
    }
    // Bob takes the last two slots; then the server is full for everyone.
    let bobs = [
        opened(&http, "bob-token").await,
        opened(&http, "bob-token").await,
    ];
    for token in ["bob-token", "carol-token"] {
        let mut raw = RawConnection::open(http.local_addr()).await;
        assert_refused(&open(&mut raw, token).await, 503, "60");
    }
    // A principal at its bound is told so, not that the server is full.
    let mut raw = RawConnection::open(http.local_addr()).await;
    assert_refused(&open(&mut raw, "alice-token").await, 429, "60");

    // The live sessions are served as before.
    let mut raw = RawConnection::open(http.local_addr()).await;
    for (token, session) in [("alice-token", &alices[2]), ("bob-token", &bobs[1])] {
        let response = ping(&mut raw, token, session).await;
        assert_eq!(response.status, 200, "{response:?}");
        assert_eq!(response.messages()[0]["result"], json!({}), "{response:?}");
    }
    // A client that needs no session is served whatever the bounds.
    let discovering = McpToolset::builder()
        .bearer_token("carol-token")
        .handshake(Handshake::Discover)
        .connect_http(http.url())
        .await
        .expect("a client on protocol 2026-07-28 connects");
    assert!(!discovering.tools().is_empty());
    discovering.close().await;

    // DELETE frees a slot, once: alice opens one more session, and no more.
    let delete = [
        ("Authorization", bearer("alice-token")),
        ("Mcp-Session-Id", alices[0].clone()),
        ("MCP-Protocol-Version", "2025-11-25".to_owned()),
    ];
    let delete: Vec<(&str, &str)> = delete.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for _ in 0..2 {
        raw.send("DELETE", &delete, b"").await;
        let response = raw.response().await;
        assert!((200..300).contains(&response.status), "{response:?}");
    }
    assert_eq!(ping(&mut raw, "alice-token", &alices[0]).await.status, 404);
    let mut raw = RawConnection::open(http.local_addr()).await;
    opened(&http, "alice-token").await;
    assert_refused(&open(&mut raw, "alice-token").await, 429, "60");
    http.shutdown().await.expect("the server stops cleanly");
}

/// T5: many `initialize`s of one principal at once, racing for its slots: exactly as many
/// sessions open as its bound allows, and every other request is refused `429`. A slow
/// context function lets them all pass the guard before any session opens, so that the
/// bound is kept where sessions are created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_a_principals_racing_initializes_open_no_more_sessions_than_its_bound() {
    let http = McpServer::builder()
        .tools(served().tools)
        .context(|req: McpRequest| async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            authenticate(req).await
        })
        .build()
        .expect("the tools are declared right")
        .bind_http(
            "127.0.0.1:0",
            HttpOptions::new().max_sessions_per_principal(3),
        )
        .await
        .expect("a loopback port is free");
    let addr = http.local_addr();
    let attempts: Vec<_> = (0..24)
        .map(|_| {
            tokio::spawn(async move {
                let mut raw = RawConnection::open(addr).await;
                let response = open(&mut raw, "alice-token").await;
                (response.status, response.header("retry-after").is_some())
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for attempt in attempts {
        statuses.push(attempt.await.expect("joins"));
    }
    let opened = statuses.iter().filter(|(s, _)| *s == 200).count();
    let refused = statuses.iter().filter(|(s, r)| *s == 429 && *r).count();
    assert_eq!((opened, refused), (3, 21), "{statuses:?}");
    http.shutdown().await.expect("the server stops cleanly");
}

/// T5: an `initialize` that passed the guard while a slot was free, and whose session rmcp
/// creates only once its body has come, after another took the slot, opens no session
/// either: it is refused `429` (not rmcp's `500`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_an_initialize_overtaken_for_the_last_slot_is_429_too() {
    let http = serve(HttpOptions::new().max_sessions_per_principal(1)).await;
    let body = serde_json::to_vec(&initialize()).expect("JSON");
    let mut slow = RawConnection::open(http.local_addr()).await;
    let alice = bearer("alice-token");
    let headers = [
        ("Authorization", alice.as_str()),
        ("Content-Type", "application/json"),
    ];
    slow.send_head("POST", &headers, body.len()).await;
    // The guard let it through (no session yet) and rmcp waits for its body, while another
    // request of alice's takes the slot.
    tokio::time::sleep(Duration::from_millis(200)).await;
    opened(&http, "alice-token").await;
    slow.send_body(&body).await;
    assert_refused(&slow.response().await, 429, "60");
    let mut raw = RawConnection::open(http.local_addr()).await;
    assert_refused(&open(&mut raw, "alice-token").await, 429, "60");
    http.shutdown().await.expect("the server stops cleanly");
}

/// T5: a session idle for the timeout is closed: a request with its id gets `404` (the MCP
/// answer to a session the server no longer knows), and its slot is free again. Activity
/// keeps a session alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_an_idle_session_expires_to_404_and_frees_its_slot() {
    let idle = Duration::from_millis(600);
    let http = serve(
        HttpOptions::new()
            .max_sessions_per_principal(1)
            .session_idle_timeout(idle),
    )
    .await;
    let session = opened(&http, "alice-token").await;
    let mut raw = RawConnection::open(http.local_addr()).await;
    // Under a second of idle time, clients are told to retry after one.
    assert_refused(&open(&mut raw, "alice-token").await, 429, "1");
    // Requests more often than the timeout keep the session.
    let mut raw = RawConnection::open(http.local_addr()).await;
    for _ in 0..4 {
        tokio::time::sleep(idle / 3).await;
        assert_eq!(ping(&mut raw, "alice-token", &session).await.status, 200);
    }
    tokio::time::sleep(idle * 2).await;
    let gone = ping(&mut raw, "alice-token", &session).await;
    assert_eq!(gone.status, 404, "{gone:?}");
    assert!(gone.closes(), "{gone:?}");
    // Its slot is free: alice opens a session again, and the new one expires too.
    let again = opened(&http, "alice-token").await;
    assert_ne!(again, session);
    tokio::time::sleep(idle * 2).await;
    opened(&http, "alice-token").await;
    http.shutdown().await.expect("the server stops cleanly");
}

/// T5: the application may name the principal (two devices of one user share its bound);
/// without a name, each credential is a principal, and clients without one are counted by
/// their address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_the_principal_is_the_applications_key_else_the_credential_else_the_address() {
    let http = serve(
        HttpOptions::new()
            .max_sessions_per_principal(2)
            .principal_key(|ctx| ctx.get::<Who>().map(|who| who.0.to_owned())),
    )
    .await;
    opened(&http, "ada-laptop").await;
    opened(&http, "ada-phone").await;
    let mut raw = RawConnection::open(http.local_addr()).await;
    assert_refused(&open(&mut raw, "ada-laptop").await, 429, "60");
    let mut raw = RawConnection::open(http.local_addr()).await;
    assert_refused(&open(&mut raw, "ada-phone").await, 429, "60");
    opened(&http, "alice-token").await;
    http.shutdown().await.expect("the server stops cleanly");

    // Without a key, each token is its own principal.
    let http = serve(HttpOptions::new().max_sessions_per_principal(1)).await;
    opened(&http, "ada-laptop").await;
    opened(&http, "ada-phone").await;
    let mut raw = RawConnection::open(http.local_addr()).await;
    assert_refused(&open(&mut raw, "ada-phone").await, 429, "60");
    http.shutdown().await.expect("the server stops cleanly");

    // A server that authenticates no one counts clients without credentials by address.
    let http = McpServer::builder()
        .tools(served().tools)
        .build()
        .expect("the tools are declared right")
        .bind_http(
            "127.0.0.1:0",
            HttpOptions::new().max_sessions_per_principal(1),
        )
        .await
        .expect("a loopback port is free");
    let mut raw = RawConnection::open(http.local_addr()).await;
    assert_eq!(raw.post(&[], &initialize()).await.status, 200);
    assert_refused(&raw.post(&[], &initialize()).await, 429, "60");
    let mut raw = RawConnection::open(http.local_addr()).await;
    let anyone = [("Authorization", "Bearer anything")];
    assert_eq!(raw.post(&anyone, &initialize()).await.status, 200);
    http.shutdown().await.expect("the server stops cleanly");
}

/// T5: a stateless server holds no session, so no bound applies, even a bound of none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_a_stateless_server_holds_no_sessions_and_no_bound_applies() {
    let http = serve(
        HttpOptions::new()
            .stateless()
            .json_answers()
            .max_sessions(0)
            .max_sessions_per_principal(0),
    )
    .await;
    let mut raw = RawConnection::open(http.local_addr()).await;
    let token = bearer("alice-token");
    for id in 0..20 {
        let response = open(&mut raw, "alice-token").await;
        assert_eq!(response.status, 200, "{response:?}");
        assert!(response.session().is_none(), "{response:?}");
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "greet", "arguments": {"who": "Ada"}}});
        let response = raw
            .post(
                &[
                    ("Authorization", &token),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
                &call,
            )
            .await;
        assert_eq!(response.status, 200, "{response:?}");
        assert_eq!(
            response.messages()[0]["result"]["content"][0]["text"],
            json!("Hello, Ada!"),
            "{response:?}"
        );
    }
    http.shutdown().await.expect("the server stops cleanly");
}

/// T5: with a bound of none, a server with sessions opens none (`503`), and still serves a
/// client that needs none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t5_a_bound_of_no_sessions_refuses_every_initialize() {
    let http = serve(HttpOptions::new().max_sessions(0)).await;
    let mut raw = RawConnection::open(http.local_addr()).await;
    assert_refused(&open(&mut raw, "alice-token").await, 503, "60");
    let discovering = McpToolset::builder()
        .bearer_token("alice-token")
        .handshake(Handshake::Discover)
        .connect_http(http.url())
        .await
        .expect("a client on protocol 2026-07-28 connects");
    discovering.close().await;
    http.shutdown().await.expect("the server stops cleanly");
}
