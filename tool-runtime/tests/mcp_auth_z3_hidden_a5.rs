//! Z3 against A5, over real HTTP on loopback against an issuer the test runs (Z5): a
//! `tools/call` whose token lacks a scope of a tool the caller may see is answered `403
//! insufficient_scope` (step-up), but one of a tool the caller may not see (its policy hides
//! it, a policy reading the token's scopes among them, or it is deferred and no search of the
//! caller's loaded it, Q1) is answered exactly as a name the server does not hold, and nothing
//! runs: a `403` would tell that the tool exists and what it needs. A deferred tool a search
//! loaded is challenged for its owner only: the holder of one token on a server without
//! sessions, one session on a server with them.
#![cfg(feature = "mcp")]

mod support {
    // Its outage switch and encoding helper serve the other Z tests.
    #[allow(dead_code)]
    pub mod issuer;
    pub mod raw_http;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use support::issuer::Issuer;
use support::raw_http::{RawConnection, RawResponse, initialize};
use tool_runtime::mcp::auth::{Authorization, Claims, JwtVerifier};
use tool_runtime::mcp::{HttpOptions, HttpServer, McpServer};
use tool_runtime::{Context, Tool};

/// Any arguments, as an object.
type Args = std::collections::BTreeMap<String, Value>;

/// The scope that only administrators' tokens hold.
const ADMIN: &str = "tickets:admin";

/// A tool named `name` needing `scopes`, counting its runs in `runs`, shown only where
/// `visible` says so.
fn tool(
    name: &str,
    scopes: &str,
    runs: &Arc<AtomicUsize>,
    visible: fn(&Context) -> bool,
) -> tool_runtime::ToolBuilder {
    let counter = Arc::clone(runs);
    Tool::builder(name, format!("Does {name} to tickets."))
        .scopes(scopes.split(' '))
        .available_fn(move |ctx: &Context| Ok::<_, std::convert::Infallible>(visible(ctx)))
        .handler(move |_ctx: Context, _args: Args| {
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, std::convert::Infallible>("done") }
        })
}

/// How often the policy of `audit-tickets` ran.
static AUDIT_CHECKS: AtomicUsize = AtomicUsize::new(0);

/// The policy of `audit-tickets`: counted, and hiding it from everyone.
fn audited(_ctx: &Context) -> bool {
    AUDIT_CHECKS.fetch_add(1, Ordering::SeqCst);
    false
}

/// Whether the token behind `ctx` holds the administrators' scope: a policy that reads it.
fn is_admin(ctx: &Context) -> bool {
    ctx.get::<Claims>()
        .is_some_and(|claims| claims.scopes.iter().any(|scope| scope == ADMIN))
}

/// A protected server and its issuer, with the runs of all its tools.
struct Protected {
    http: HttpServer,
    issuer: Issuer,
    resource: String,
    runs: Arc<AtomicUsize>,
}

/// A protected server with `options` and these tools: `close-ticket` (`tickets:write`, shown
/// to all), `purge-tickets` (`tickets:admin`, hidden from all), `escalate` (`tickets:admin`,
/// shown by its policy to administrators only) and the deferred `archive-tickets`
/// (`tickets:write`); `step_up`: whether tools are listed, and searched, for step-up.
async fn protected(options: HttpOptions, step_up: bool) -> Protected {
    let issuer = Issuer::start().await;
    let addr = (tokio::net::TcpListener::bind("127.0.0.1:0").await)
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port is free");
    let resource = format!("http://{addr}/mcp");
    let auth = Authorization::new(&resource, JwtVerifier::new(&issuer.url, &resource))
        .expect("a resource URL")
        .authorization_server(&issuer.url)
        .scopes_supported(["tickets:read", "tickets:write", ADMIN]);
    let auth = if step_up {
        auth.list_for_step_up()
    } else {
        auth
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let server = McpServer::builder()
        .tool(tool("close-ticket", "tickets:write", &runs, |_| true).build())
        .tool(tool("purge-tickets", ADMIN, &runs, |_| false).build())
        .tool(tool("escalate", ADMIN, &runs, is_admin).build())
        .tool(tool("audit-tickets", ADMIN, &runs, audited).build())
        .tool(
            (tool("archive-tickets", "tickets:write", &runs, |_| true).deferred_loading()).build(),
        )
        .build()
        .expect("the tools are declared right");
    let http = (server.bind_http(addr, options.authorization(auth)))
        .await
        .expect("the server starts");
    Protected {
        http,
        issuer,
        resource,
        runs,
    }
}

impl Protected {
    /// A token with `scope`, told apart from every other by `jti`.
    fn token(&self, scope: &str, jti: &str) -> String {
        let mut claims = self.issuer.claims(&self.resource, scope);
        claims["jti"] = json!(jti);
        self.issuer.sign(Issuer::header(), &claims)
    }

    /// POSTs `message` as the holder of `token`, in `session` when given.
    async fn post(&self, token: &str, session: Option<&str>, message: &Value) -> RawResponse {
        let bearer = format!("Bearer {token}");
        let mut headers = vec![
            ("Authorization", bearer.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        headers.extend(session.map(|session| ("Mcp-Session-Id", session)));
        let mut connection = RawConnection::open(self.http.local_addr()).await;
        connection.post(&headers, message).await
    }

    /// Calls `name` as the holder of `token`, in `session` when given.
    async fn call(&self, token: &str, session: Option<&str>, name: &str) -> RawResponse {
        let arguments = if name == "search-tools" {
            json!({"query": "archive tickets"})
        } else {
            json!({})
        };
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        self.post(token, session, &call).await
    }

    /// Opens a session (2025-11-25) as the holder of `token`.
    async fn open(&self, token: &str) -> String {
        let opened = self.post(token, None, &initialize()).await;
        assert_eq!(opened.status, 200, "{opened:?}");
        let session = opened.session().expect("a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let told = self.post(token, Some(&session), &initialized).await;
        assert_eq!(told.status, 202, "{told:?}");
        session
    }
}

/// The one JSON-RPC message of a `200` answer.
fn answer(response: &RawResponse) -> Value {
    assert_eq!(response.status, 200, "{response:?}");
    assert!(
        response.header("www-authenticate").is_none(),
        "{response:?}"
    );
    let mut messages = response.messages();
    assert_eq!(messages.len(), 1, "{response:?}");
    messages.remove(0)
}

/// Checks that `response` is the step-up challenge naming `scopes`.
fn assert_challenged(response: &RawResponse, scopes: &str) {
    assert_eq!(response.status, 403, "{response:?}");
    let challenge = response.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.starts_with(&format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scopes}\""
        )),
        "{response:?}"
    );
}

/// A5 over Z3: to a token without `tickets:admin`, a tool its policy hides (whatever the
/// policy reads, the token's scopes included) and a deferred tool no search loaded are
/// answered exactly as an unknown name, not `403`; a tool the caller may see still gets the
/// step-up challenge. Nothing runs. An administrator's token runs the tool its policy shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a5_z3_a_hidden_or_unloaded_tool_is_answered_as_an_unknown_name_not_403() {
    let server = protected(HttpOptions::new().stateless().json_answers(), false).await;
    let reader = server.token("tickets:read", "reader");
    let unknown = answer(&server.call(&reader, None, "no-such-tool").await);
    assert_eq!(unknown["result"]["isError"], true, "{unknown}");
    for hidden in ["purge-tickets", "escalate", "archive-tickets"] {
        let answered = answer(&server.call(&reader, None, hidden).await);
        assert_eq!(answered, unknown, "{hidden}");
    }
    assert_challenged(
        &server.call(&reader, None, "close-ticket").await,
        "tickets:write",
    );
    assert_eq!(server.runs.load(Ordering::SeqCst), 0, "nothing ran");

    let admin = server.token(&format!("tickets:read {ADMIN}"), "admin");
    let escalated = answer(&server.call(&admin, None, "escalate").await);
    assert_eq!(escalated["result"]["isError"], false, "{escalated}");
    assert_eq!(server.runs.load(Ordering::SeqCst), 1);
    server.http.shutdown().await.expect("stops");
}

/// Q1, Z3 without sessions: a search (listing for step-up) loads a deferred tool for the
/// holder of its token, whose call then gets the step-up challenge; to another token's
/// holder, which did not search, the tool is still an unknown name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q1_z3_a_loaded_deferred_tool_is_challenged_for_its_owner_only() {
    let server = protected(HttpOptions::new().stateless().json_answers(), true).await;
    let (searcher, other) = (
        server.token("tickets:read", "searcher"),
        server.token("tickets:read", "other"),
    );
    let unknown = answer(&server.call(&other, None, "no-such-tool").await);
    let found = answer(&server.call(&searcher, None, "search-tools").await);
    let text = found["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("archive-tickets"), "{found}");
    assert_challenged(
        &server.call(&searcher, None, "archive-tickets").await,
        "tickets:write",
    );
    let answered = answer(&server.call(&other, None, "archive-tickets").await);
    assert_eq!(answered, unknown);
    assert_eq!(server.runs.load(Ordering::SeqCst), 0, "nothing ran");
    server.http.shutdown().await.expect("stops");
}

/// Q1, Z3 with sessions (before 2026-07-28): what a search loaded is its session's; the
/// HTTP layer, which answers before the session reads the call, names the same owner. The
/// session that searched gets the step-up challenge; another session of the same token gets
/// the unknown-name answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q1_z3_with_sessions_a_loaded_deferred_tool_is_challenged_in_its_session_only() {
    let server = protected(HttpOptions::new(), true).await;
    let reader = server.token("tickets:read", "reader");
    let (searched, other) = (server.open(&reader).await, server.open(&reader).await);
    let unknown = answer(&server.call(&reader, Some(&other), "no-such-tool").await);
    let found = answer(&server.call(&reader, Some(&searched), "search-tools").await);
    assert_eq!(found["result"]["isError"], false, "{found}");
    assert_challenged(
        &server
            .call(&reader, Some(&searched), "archive-tickets")
            .await,
        "tickets:write",
    );
    let answered = answer(&server.call(&reader, Some(&other), "archive-tickets").await);
    assert_eq!(answered, unknown);
    assert_eq!(server.runs.load(Ordering::SeqCst), 0, "nothing ran");
    server.http.shutdown().await.expect("stops");
}

/// Z3, A5: a batch that calls one scoped tool thousands of times runs its policy once in the
/// HTTP layer, not once a call: a request cannot make the server pay for a policy more often
/// than it names tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z3_a_batch_naming_one_tool_many_times_runs_its_policy_once() {
    let server = protected(HttpOptions::new().stateless().json_answers(), false).await;
    let reader = server.token("tickets:read", "batcher");
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "audit-tickets", "arguments": {}}});
    let batch = Value::Array(vec![call; 5_000]);
    let before = AUDIT_CHECKS.load(Ordering::SeqCst);
    let answered = server.post(&reader, None, &batch).await;
    assert_ne!(answered.status, 403, "{answered:?}");
    let checks = AUDIT_CHECKS.load(Ordering::SeqCst) - before;
    assert!(checks <= 1, "the policy ran {checks} times for one request");
    assert_eq!(server.runs.load(Ordering::SeqCst), 0, "nothing ran");
    server.http.shutdown().await.expect("stops");
}
