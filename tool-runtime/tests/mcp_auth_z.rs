//! Z1–Z3, tested as Z5 says: an HTTP MCP server as an OAuth 2.1 protected resource, over real
//! HTTP on loopback, against an issuer the test runs (its metadata and JWKS, tokens signed
//! with a key the test makes). Its metadata and challenges (Z1); the hostile-token matrix, each
//! answered `401` with nothing run and no token text in any answer or captured log line (Z2);
//! the JWKS fetched a bounded number of times under 10,000 unknown `kid`s, cached keys used
//! while the JWKS is down until they expire (Z2); tools offered and calls authorized by scope,
//! `403 insufficient_scope` naming every scope, step-up listing, the handler seeing the
//! token's subject through `&Claims` (Z3, C1).
#![cfg(feature = "mcp")]

mod support {
    pub mod issuer;
}

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::StreamExt;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use support::issuer::{Issuer, b64, now};
use tool_runtime::mcp::auth::{Authorization, Claims, JwtVerifier};
use tool_runtime::mcp::{HttpOptions, HttpServer, McpRequest, McpServer, McpServerBuilder};
use tool_runtime::{IntoTool, tool};
use tracing::Event;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context as LayerContext, Layer, SubscriberExt};

/// How many times each handler ran, by tool and subject (each test's issuer has its own).
fn runs() -> &'static Mutex<HashMap<(&'static str, String), usize>> {
    static RUNS: OnceLock<Mutex<HashMap<(&'static str, String), usize>>> = OnceLock::new();
    RUNS.get_or_init(Mutex::default)
}

/// Counts a run of `tool` for the token's subject, and says whom it ran for.
fn ran(tool: &'static str, claims: &Claims) -> String {
    let subject = claims.subject.clone().unwrap_or_default();
    *runs()
        .lock()
        .expect("runs")
        .entry((tool, subject.clone()))
        .or_default() += 1;
    subject
}

/// How many times `tool` ran for `issuer`'s subject.
fn runs_of(tool: &'static str, issuer: &Issuer) -> usize {
    let runs = runs().lock().expect("runs");
    runs.get(&(tool, issuer.subject.clone()))
        .copied()
        .unwrap_or(0)
}

/// Says whom the token was issued for.
#[tool]
async fn whoami(claims: &Claims) -> String {
    format!("you are {}", ran("whoami", claims))
}

/// Closes a ticket.
#[tool(name = "close-ticket", scopes = "tickets:read tickets:write")]
async fn close_ticket(claims: &Claims) -> String {
    format!("closed for {}", ran("close-ticket", claims))
}

/// Every event and span field of this test binary (every level), as text.
fn captured() -> &'static Arc<Mutex<String>> {
    static LOGS: OnceLock<Arc<Mutex<String>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(String::new()));
        let subscriber = tracing_subscriber::registry().with(Capture(Arc::clone(&logs)));
        let _ = tracing::subscriber::set_global_default(subscriber);
        logs
    })
}

/// A layer writing every event's and span's fields (and the event's level) into the text.
struct Capture(Arc<Mutex<String>>);

/// Writes fields as `name=value`.
struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push_str(&format!(" {}={value}", field.name()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: LayerContext<'_, S>) {
        let mut line = format!("\nspan {}", attrs.metadata().name());
        attrs.record(&mut Fields(&mut line));
        self.0.lock().expect("the log").push_str(&line);
    }
    fn on_record(&self, _: &Id, values: &Record<'_>, _: LayerContext<'_, S>) {
        let mut line = String::from("\nrecord");
        values.record(&mut Fields(&mut line));
        self.0.lock().expect("the log").push_str(&line);
    }
    fn on_event(&self, event: &Event<'_>, _: LayerContext<'_, S>) {
        let mut line = format!(
            "\n{} {}",
            event.metadata().level(),
            event.metadata().target()
        );
        event.record(&mut Fields(&mut line));
        self.0.lock().expect("the log").push_str(&line);
    }
}

/// Asserts that no captured log line holds `token` (nor its signature, its most secret part).
fn assert_not_logged(token: &str) {
    let logs = captured().lock().expect("the log").clone();
    assert!(logs.contains("refused"), "nothing was captured");
    assert!(!logs.contains(token), "a token reached the logs");
    if let Some(signature) = token.rsplit('.').next().filter(|s| s.len() > 16) {
        assert!(
            !logs.contains(signature),
            "a token's signature reached the logs"
        );
    }
}

/// A protected server and its issuer.
struct Protected {
    http: HttpServer,
    issuer: Issuer,
    resource: String,
    client: reqwest::Client,
}

/// A stateless protected server (JSON answers) trusting a fresh issuer; `tune` sets up its
/// verifier, `configure` its authorization.
async fn protected(
    tune: impl FnOnce(JwtVerifier) -> JwtVerifier,
    configure: impl FnOnce(Authorization) -> Authorization,
) -> Protected {
    let options = HttpOptions::new().stateless().json_answers();
    protected_with(options, |b| b, tune, configure).await
}

/// A protected server with `options`, trusting a fresh issuer.
async fn protected_with(
    options: HttpOptions,
    build: impl FnOnce(McpServerBuilder) -> McpServerBuilder,
    tune: impl FnOnce(JwtVerifier) -> JwtVerifier,
    configure: impl FnOnce(Authorization) -> Authorization,
) -> Protected {
    captured();
    let issuer = Issuer::start().await;
    // The canonical URI names the port: a free one is found first, then bound.
    let addr = (tokio::net::TcpListener::bind("127.0.0.1:0").await)
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port is free");
    let resource = format!("http://{addr}/mcp");
    let verifier = tune(JwtVerifier::new(&issuer.url, &resource));
    let auth = Authorization::new(&resource, verifier)
        .expect("a resource URL")
        .authorization_server(&issuer.url)
        .scopes_supported(["tickets:read", "tickets:write", "offline_access"]);
    let server = build(McpServer::builder().tools([Whoami.into_tool(), CloseTicket.into_tool()]))
        .build()
        .expect("the tools are declared right");
    let options = options.authorization(configure(auth));
    let http = server
        .bind_http(addr, options)
        .await
        .expect("the server starts");
    Protected {
        http,
        issuer,
        resource,
        client: reqwest::Client::new(),
    }
}

/// An answer: status, `WWW-Authenticate`, body.
#[derive(Debug)]
struct Answer {
    status: u16,
    challenge: String,
    body: String,
}

impl Protected {
    /// POSTs the JSON-RPC `message` with `token` as its bearer token (none if `None`), to the
    /// MCP endpoint plus `query`.
    async fn post(&self, message: &Value, token: Option<&str>, query: &str) -> Answer {
        let mut request = (self.client)
            .post(format!("{}{query}", self.http.url()))
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(message.to_string());
        if let Some(token) = token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status().as_u16();
        let challenge = (response.headers().get("www-authenticate"))
            .map(|v| v.to_str().expect("ASCII").to_owned())
            .unwrap_or_default();
        let headers = format!("{:?}", response.headers());
        let body = response.text().await.expect("a body");
        if let Some(token) = token {
            assert!(
                !body.contains(token) && !headers.contains(token),
                "a token was echoed"
            );
        }
        Answer {
            status,
            challenge,
            body,
        }
    }

    /// Calls `tool` with `token`.
    async fn call(&self, tool: &str, token: Option<&str>) -> Answer {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": {}}});
        self.post(&message, token, "").await
    }

    /// The names `tools/list` offers to `token`.
    async fn listed(&self, token: &str) -> Vec<String> {
        let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let answer = self.post(&message, Some(token), "").await;
        assert_eq!(answer.status, 200, "{answer:?}");
        let body: Value = serde_json::from_str(&answer.body).expect("JSON");
        assert_eq!(body["result"]["cacheScope"], "private", "{body}");
        (body["result"]["tools"].as_array().expect("tools").iter())
            .map(|tool| tool["name"].as_str().expect("a name").to_owned())
            .collect()
    }
}

/// Z1: the metadata at the path-inserted and root well-known URIs, without a token;
/// `offline_access` left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z1_the_metadata_is_served_at_both_well_known_uris() {
    let server = protected(|v| v, |a| a).await;
    let base = server.http.url().replace("/mcp", "");
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = (server.client.get(format!("{base}{path}")).send().await).expect("served");
        assert_eq!(response.status(), 200, "{path}");
        let metadata: Value = response.json().await.expect("JSON");
        assert_eq!(metadata["resource"], server.resource.as_str());
        assert_eq!(
            metadata["authorization_servers"],
            json!([server.issuer.url])
        );
        assert_eq!(
            metadata["scopes_supported"],
            json!(["tickets:read", "tickets:write"])
        );
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
    server.http.shutdown().await.expect("stops");
}

/// Z1: no token, or a token in the query string only, is `401` with the challenge naming
/// the metadata and the scopes; nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z1_a_request_without_a_token_is_401_with_the_metadata_url() {
    let server = protected(|v| v, |a| a).await;
    let runs = runs_of("whoami", &server.issuer);
    let metadata = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        server.http.url().replace("/mcp", "")
    );
    let answer = server.call("whoami", None).await;
    assert_eq!(answer.status, 401, "{answer:?}");
    assert_eq!(
        answer.challenge,
        format!("Bearer resource_metadata=\"{metadata}\", scope=\"tickets:read tickets:write\"")
    );
    let token = server.issuer.token(&server.resource, "tickets:read");
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}});
    let query = format!("?access_token={token}");
    let answer = server.post(&message, None, &query).await;
    assert_eq!(
        answer.status, 401,
        "a token in the query string is not read"
    );
    assert!(!answer.body.contains(&token));
    assert_eq!(runs_of("whoami", &server.issuer), runs, "a handler ran");
    // The same token in the header is good: the query string was the only fault.
    assert_eq!(server.call("whoami", Some(&token)).await.status, 200);
    assert_not_logged(&token);
    server.http.shutdown().await.expect("stops");
}

/// A token with `header` (its JSON) and `claims`, signed with `key` under `alg`.
fn forged(header: &Value, claims: &Value, signature: &str) -> String {
    format!(
        "{}.{}.{signature}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    )
}

/// The hostile tokens of Z5 (but the unknown `kid` and the JWKS down, tested on their own),
/// each with what it is.
fn hostile(issuer: &Issuer, resource: &str) -> Vec<(&'static str, String)> {
    let good = issuer.token(resource, "tickets:read tickets:write");
    let mut parts = good.split('.').map(str::to_owned);
    let (head, body, sig) = (
        parts.next().expect("a header"),
        parts.next().expect("a payload"),
        parts.next().expect("a signature"),
    );
    let claims = issuer.claims(resource, "tickets:read tickets:write");
    let with = |key: &str, value: Value| {
        let mut claims = claims.clone();
        claims[key] = value;
        issuer.sign(Issuer::header(), &claims)
    };
    let none = json!({"alg": "none", "typ": "at+jwt", "kid": support::issuer::KID});
    let mut hs256 = Header::new(Algorithm::HS256);
    hs256.typ = Some("at+jwt".to_owned());
    hs256.kid = Some(support::issuer::KID.to_owned());
    let mut plain_jwt = Issuer::header();
    plain_jwt.typ = Some("JWT".to_owned());
    let not_json = b64(b"{not json");
    vec![
        ("alg none", forged(&none, &claims, "")),
        ("alg none, signature kept", forged(&none, &claims, &sig)),
        (
            "HS256 signed with the public key",
            jsonwebtoken::encode(&hs256, &claims, &EncodingKey::from_secret(&issuer.public))
                .expect("signed"),
        ),
        ("wrong aud", with("aud", json!("http://127.0.0.1:1/other"))),
        ("wrong iss", with("iss", json!("http://127.0.0.1:1"))),
        ("expired", with("exp", json!(now() - 3600))),
        ("nbf ahead", with("nbf", json!(now() + 3600))),
        ("no exp", {
            let mut claims = claims.clone();
            claims.as_object_mut().expect("an object").remove("exp");
            issuer.sign(Issuer::header(), &claims)
        }),
        ("typ JWT, not at+jwt", issuer.sign(plain_jwt, &claims)),
        ("64 KB", format!("{head}.{}.{sig}", "A".repeat(64 * 1024))),
        ("header not base64", format!("!!!.{body}.{sig}")),
        ("header not JSON", format!("{not_json}.{body}.{sig}")),
        ("payload not base64", format!("{head}.!!!.{sig}")),
        ("payload not JSON", format!("{head}.{not_json}.{sig}")),
        ("signature not base64", format!("{head}.{body}.!!!")),
        ("signature of another payload", {
            let other = with("sub", json!("user-eve"));
            let other_sig = other.rsplit('.').next().expect("a signature").to_owned();
            format!("{head}.{body}.{other_sig}")
        }),
        ("two parts", format!("{head}.{body}")),
    ]
}

/// Z2: every hostile token is `401 invalid_token` with the metadata URL; no handler runs; no
/// answer and no captured log line holds the token. A good token still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z2_hostile_tokens_are_401_and_nothing_runs_or_leaks() {
    let server = protected(|v| v, |a| a).await;
    let good = server
        .issuer
        .token(&server.resource, "tickets:read tickets:write");
    let answer = server.call("whoami", Some(&good)).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let expected = format!("you are {}", server.issuer.subject);
    assert!(answer.body.contains(&expected), "{answer:?}");
    let whoami = runs_of("whoami", &server.issuer);
    let close = runs_of("close-ticket", &server.issuer);
    for (what, token) in hostile(&server.issuer, &server.resource) {
        for tool in ["whoami", "close-ticket"] {
            let answer = server.call(tool, Some(&token)).await;
            assert_eq!(answer.status, 401, "{what}: {answer:?}");
            assert!(
                answer
                    .challenge
                    .starts_with("Bearer error=\"invalid_token\"")
                    && answer.challenge.contains("resource_metadata=\""),
                "{what}: {answer:?}"
            );
        }
        assert_not_logged(&token);
    }
    assert_eq!(runs_of("whoami", &server.issuer), whoami, "a handler ran");
    assert_eq!(
        runs_of("close-ticket", &server.issuer),
        close,
        "a handler ran"
    );
    assert_not_logged(&good);
    server.http.shutdown().await.expect("stops");
}

/// Z2: a token naming an unknown `kid`, sent 10,000 times, makes the JWKS be fetched a
/// bounded number of times (once to learn the keys, at most once more for the unknown
/// `kid` within the refetch interval), and every one is `401`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z2_an_unknown_kid_sent_10000_times_fetches_the_keys_a_bounded_number_of_times() {
    let server = protected(|v| v.refetch_interval(Duration::from_secs(60)), |a| a).await;
    let good = server.issuer.token(&server.resource, "");
    assert_eq!(server.call("whoami", Some(&good)).await.status, 200);
    let mut header = Issuer::header();
    header.kid = Some("key-unknown".to_owned());
    let claims = server.issuer.claims(&server.resource, "");
    let token = server.issuer.sign(header, &claims);
    let runs = runs_of("whoami", &server.issuer);
    let statuses: Vec<u16> = futures_util::stream::iter(0..10_000)
        .map(|_| async { server.call("whoami", Some(&token)).await.status })
        .buffer_unordered(16)
        .collect()
        .await;
    assert!(statuses.iter().all(|&status| status == 401));
    let fetches = server.issuer.jwks_fetches.load(Ordering::SeqCst);
    assert!(
        (1..=2).contains(&fetches),
        "the JWKS was fetched {fetches} times"
    );
    assert_eq!(runs_of("whoami", &server.issuer), runs, "a handler ran");
    assert_not_logged(&token);
    server.http.shutdown().await.expect("stops");
}

/// Z2: with the JWKS endpoint down, keys already cached serve until they expire; then every
/// token is refused (fail closed), until the keys can be fetched again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z2_with_the_jwks_down_cached_keys_serve_until_they_expire_then_tokens_are_refused() {
    let ttl = Duration::from_millis(600);
    let tune = move |v: JwtVerifier| v.keys_ttl(ttl).refetch_interval(Duration::from_millis(50));
    let server = protected(tune, |a| a).await;
    let token = server.issuer.token(&server.resource, "");
    assert_eq!(server.call("whoami", Some(&token)).await.status, 200);
    server.issuer.down.store(true, Ordering::SeqCst);
    assert_eq!(
        server.call("whoami", Some(&token)).await.status,
        200,
        "cached keys"
    );
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    let runs = runs_of("whoami", &server.issuer);
    for _ in 0..3 {
        let answer = server.call("whoami", Some(&token)).await;
        assert_eq!(answer.status, 401, "expired keys served: {answer:?}");
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    assert_eq!(runs_of("whoami", &server.issuer), runs, "a handler ran");
    server.issuer.down.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        server.call("whoami", Some(&token)).await.status,
        200,
        "recovered"
    );
    assert_not_logged(&token);
    server.http.shutdown().await.expect("stops");
}

/// Z3: a tool is listed only to a token granting its scopes; a call without them is `403
/// insufficient_scope` naming every scope it needs and the metadata URL, and does not run;
/// with them (or a scope implying them) it runs, and its handler sees the subject (C1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z3_tools_are_offered_and_calls_authorized_by_scope() {
    let hierarchy =
        |a: Authorization| a.scope_implies("tickets:admin", ["tickets:read", "tickets:write"]);
    let server = protected(|v| v, hierarchy).await;
    let reader = server.issuer.token(&server.resource, "tickets:read");
    assert_eq!(server.listed(&reader).await, ["whoami"]);
    let runs = runs_of("close-ticket", &server.issuer);
    let answer = server.call("close-ticket", Some(&reader)).await;
    assert_eq!(answer.status, 403, "{answer:?}");
    let metadata = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        server.http.url().replace("/mcp", "")
    );
    assert!(
        answer.challenge.starts_with(&format!(
            "Bearer error=\"insufficient_scope\", scope=\"tickets:read tickets:write\", \
             resource_metadata=\"{metadata}\""
        )),
        "{answer:?}"
    );
    assert_eq!(
        runs_of("close-ticket", &server.issuer),
        runs,
        "the handler ran"
    );
    for scope in ["tickets:read tickets:write", "tickets:admin"] {
        let writer = server.issuer.token(&server.resource, scope);
        assert_eq!(
            server.listed(&writer).await,
            ["whoami", "close-ticket"],
            "{scope}"
        );
        let answer = server.call("close-ticket", Some(&writer)).await;
        assert_eq!(answer.status, 200, "{scope}: {answer:?}");
        let expected = format!("closed for {}", server.issuer.subject);
        assert!(answer.body.contains(&expected), "{answer:?}");
    }
    assert_eq!(runs_of("close-ticket", &server.issuer), runs + 2);
    server.http.shutdown().await.expect("stops");
}

/// Z3: a server that lists for step-up lists every tool, and still answers a call its token
/// does not grant `403` without running it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z3_a_server_listing_for_step_up_lists_all_and_still_refuses_the_call() {
    let server = protected(|v| v, Authorization::list_for_step_up).await;
    let reader = server.issuer.token(&server.resource, "tickets:read");
    assert_eq!(server.listed(&reader).await, ["whoami", "close-ticket"]);
    let runs = runs_of("close-ticket", &server.issuer);
    let answer = server.call("close-ticket", Some(&reader)).await;
    assert_eq!(answer.status, 403, "{answer:?}");
    assert!(
        answer
            .challenge
            .contains("scope=\"tickets:read tickets:write\""),
        "{answer:?}"
    );
    assert_eq!(
        runs_of("close-ticket", &server.issuer),
        runs,
        "the handler ran"
    );
    server.http.shutdown().await.expect("stops");
}

/// Z3, T5: on a protected server with sessions, a principal is the token's subject: two
/// tokens of one subject share its session bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z3_sessions_are_counted_against_the_tokens_subject() {
    let options = HttpOptions::new().max_sessions_per_principal(1);
    let server = protected_with(options, |b| b, |v| v, |a| a).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "z3", "version": "1"}}});
    let first = server.issuer.token(&server.resource, "tickets:read");
    assert_eq!(server.post(&initialize, Some(&first), "").await.status, 200);
    // Another token of the same subject (another scope): the same principal, at its bound.
    let second = server.issuer.token(&server.resource, "tickets:write");
    assert_ne!(first, second);
    let answer = server.post(&initialize, Some(&second), "").await;
    assert_eq!(answer.status, 429, "{answer:?}");
    server.http.shutdown().await.expect("stops");
}

/// Z1: on a protected server, a request whose context function fails (after its token was
/// admitted) is `401` with the challenge naming the metadata, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn z1_a_failing_context_function_is_401_with_the_metadata_url_too() {
    let failing = |b: McpServerBuilder| {
        b.context(|_: McpRequest| async { Err::<tool_runtime::Context, _>("no such tenant") })
    };
    let options = HttpOptions::new().stateless().json_answers();
    let server = protected_with(options, failing, |v| v, |a| a).await;
    let token = server.issuer.token(&server.resource, "tickets:read");
    let answer = server.call("whoami", Some(&token)).await;
    assert_eq!(answer.status, 401, "{answer:?}");
    assert!(
        answer.challenge.contains("resource_metadata=\""),
        "{answer:?}"
    );
    assert_eq!(runs_of("whoami", &server.issuer), 0, "a handler ran");
    server.http.shutdown().await.expect("stops");
}
