//! Z4 and Z5 against a real authorization server: npm `oidc-provider` (pinned, installed by the
//! test under `target/peers/`, `provider_code.mjs`) and the project's own protected server.
//! An agent's `McpToolset` gets its token by the authorization-code flow with PKCE (the user's
//! step through the provider's login and consent, followed by a user agent that keeps
//! cookies), by dynamic registration or as a pre-registered client, or by client credentials;
//! the handler sees the token's subject; a tool needing a scope the token lacks is not listed,
//! and a call of it gets 403 and does not run, until step-up; a token about to expire is
//! refreshed without the user. No token text appears in anything the test captures.
#![cfg(feature = "mcp")]

mod support {
    pub mod capture;
    pub mod oidc;
    pub mod trace;
    pub mod user_agent;
}

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::capture::Captured;
use support::oidc::OidcProvider;
use tool_runtime::mcp::auth::{Authorization, Claims};
use tool_runtime::mcp::oauth::{
    Browser, CredentialStore, InMemoryCredentialStore, OAuthClient, browser_fn,
};
use tool_runtime::mcp::{HttpOptions, HttpServer, McpServer, McpToolset};
use tool_runtime::{Agent, Context, IntoTool, OutcomeKind, ScriptedModel, ScriptedTurn, tool};

/// Where the provider's client `app` is sent back to (never listened on: the test's user
/// agent stops at the redirect and hands it over).
const REDIRECT: &str = "http://127.0.0.1:8765/callback";

/// How many times a ticket was closed, by every server of this binary.
static CLOSED: AtomicUsize = AtomicUsize::new(0);

/// Says whom the token was issued for.
#[tool]
async fn whoami(claims: &Claims) -> String {
    format!("you are {}", claims.subject.as_deref().unwrap_or("nobody"))
}

/// Closes a ticket.
#[tool(name = "close-ticket", scopes = "tickets:write")]
async fn close_ticket() -> String {
    CLOSED.fetch_add(1, Ordering::SeqCst);
    "closed".to_owned()
}

/// A loopback address for the protected server, and its canonical URI.
async fn resource() -> (SocketAddr, String) {
    let addr = (tokio::net::TcpListener::bind("127.0.0.1:0").await)
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port is free");
    (addr, format!("http://{addr}/mcp"))
}

/// The project's server at `addr`, protected by `provider`'s tokens; tools a token's scopes
/// do not grant are listed for step-up when `step_up` says so.
async fn protected(addr: SocketAddr, provider: &OidcProvider, step_up: bool) -> HttpServer {
    let resource = format!("http://{addr}/mcp");
    let mut auth = Authorization::jwt(&resource, &provider.issuer)
        .expect("URLs")
        .scopes_supported(["tickets:read", "tickets:write"]);
    if step_up {
        auth = auth.list_for_step_up();
    }
    let server = McpServer::builder()
        .tools([Whoami.into_tool(), CloseTicket.into_tool()])
        .build()
        .expect("declared right");
    let options = HttpOptions::new().authorization(auth);
    server.bind_http(addr, options).await.expect("serves")
}

/// A browser that follows the provider's pages, counting the user's steps and keeping each
/// authorization URL.
fn user(steps: &Arc<AtomicUsize>, urls: &Arc<std::sync::Mutex<Vec<String>>>) -> impl Browser {
    let (steps, urls) = (Arc::clone(steps), Arc::clone(urls));
    browser_fn(move |url: String| {
        steps.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut urls) = urls.lock() {
            urls.push(url.clone());
        }
        async move { support::user_agent::follow(&url, REDIRECT).await }
    })
}

/// The access and refresh tokens in `store`.
async fn tokens(store: &InMemoryCredentialStore) -> Vec<String> {
    let stored = store
        .load()
        .await
        .expect("loads")
        .expect("a token is stored");
    let json = serde_json::to_value(&stored).expect("serializes");
    ["access_token", "refresh_token"]
        .iter()
        .filter_map(|k| json["token_response"][k].as_str().map(str::to_owned))
        .collect()
}

/// One query parameter of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    (url.query_pairs())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// An agent whose model calls `tool` once, then replies.
async fn call_through_agent(toolset: &McpToolset, tool: &str) -> (String, OutcomeKind, String) {
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", tool, "{}"),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tools(toolset)
        .build()
        .expect("builds");
    let out = agent
        .run(&Context::new(), "go")
        .await
        .expect("the run ends");
    let call = &out.calls[0];
    let transcript = serde_json::to_string(&model.requests().last().map(|r| format!("{r:?}")))
        .unwrap_or_default();
    (call.text().to_owned(), call.kind(), transcript)
}

#[tokio::test]
async fn z4_z5_authorization_code_with_pkce_scopes_and_step_up() {
    let (captured, _guard) = Captured::install();
    let (addr, resource) = resource().await;
    let provider = OidcProvider::start_code(&resource, REDIRECT, 600)
        .await
        .unwrap_or_else(|e| panic!("the authorization server cannot start: {e}"));
    let (steps, urls) = (Arc::default(), Arc::default());
    let mut seen = Vec::new();

    // Z3 through Z4: a token for tickets:read is all the user grants; the tool needing
    // tickets:write is not listed.
    let http = protected(addr, &provider, false).await;
    let store = InMemoryCredentialStore::new();
    let reader = McpToolset::builder()
        .oauth(
            OAuthClient::authorization_code(REDIRECT, user(&steps, &urls))
                .client_id("app")
                .scopes(["tickets:read"])
                .store(store.clone()),
        )
        .connect_http(http.url())
        .await
        .expect("authorized by the user's step");
    assert_eq!(steps.load(Ordering::SeqCst), 1, "one user step");
    let names: Vec<&str> = reader.names().map(|(local, _)| local).collect();
    assert_eq!(
        names,
        ["whoami"],
        "close-ticket needs a scope the token lacks"
    );
    let (text, kind, transcript) = call_through_agent(&reader, "whoami").await;
    assert_eq!(
        (text.as_str(), kind),
        ("you are alice", OutcomeKind::Success)
    );
    seen.push(transcript);
    seen.extend(tokens(&store).await);
    let first = urls.lock().expect("urls")[0].clone();
    // PKCE S256 and RFC 8707 in the authorization request.
    assert_eq!(
        param(&first, "code_challenge_method").as_deref(),
        Some("S256")
    );
    assert!(param(&first, "code_challenge").is_some_and(|c| c.len() >= 43));
    assert_eq!(
        param(&first, "resource").as_deref(),
        Some(resource.as_str())
    );
    assert_eq!(param(&first, "client_id").as_deref(), Some("app"));
    reader.close().await;
    http.shutdown().await.expect("stops");

    // Listed for step-up: without step-up the call gets 403 and nothing runs.
    let http = protected(addr, &provider, true).await;
    let no_step_up = McpToolset::builder()
        .oauth(
            OAuthClient::authorization_code(REDIRECT, user(&steps, &urls))
                .client_id("app")
                .scopes(["tickets:read"])
                .step_up_limit(0),
        )
        .connect_http(http.url())
        .await
        .expect("authorized");
    assert!(no_step_up.local_name("close-ticket").is_some());
    let before = CLOSED.load(Ordering::SeqCst);
    let (text, kind, _) = call_through_agent(&no_step_up, "close-ticket").await;
    assert_eq!(kind, OutcomeKind::Failed, "{text}");
    assert_eq!(CLOSED.load(Ordering::SeqCst), before, "nothing ran");
    no_step_up.close().await;

    // With step-up: the user grants tickets:write on a second step, and the call runs once.
    let steps_before = steps.load(Ordering::SeqCst);
    let store = InMemoryCredentialStore::new();
    let writer = McpToolset::builder()
        .oauth(
            OAuthClient::authorization_code(REDIRECT, user(&steps, &urls))
                .client_id("app")
                .scopes(["tickets:read"])
                .store(store.clone()),
        )
        .connect_http(http.url())
        .await
        .expect("authorized");
    let (text, kind, transcript) = call_through_agent(&writer, "close-ticket").await;
    assert_eq!((text.as_str(), kind), ("closed", OutcomeKind::Success));
    assert_eq!(CLOSED.load(Ordering::SeqCst), before + 1, "ran once");
    assert_eq!(
        steps.load(Ordering::SeqCst),
        steps_before + 2,
        "one step-up"
    );
    let upgrade = urls
        .lock()
        .expect("urls")
        .last()
        .cloned()
        .unwrap_or_default();
    let scope = param(&upgrade, "scope").unwrap_or_default();
    assert!(
        scope.contains("tickets:read") && scope.contains("tickets:write"),
        "{scope}"
    );
    seen.push(transcript);
    seen.extend(tokens(&store).await);
    writer.close().await;
    http.shutdown().await.expect("stops");

    // Z2: no token text in any span or event.
    let text = captured.text();
    assert!(text.len() > 1000, "spans and events were captured");
    for token in seen.iter().filter(|t| t.len() > 20) {
        assert!(!text.contains(token.as_str()), "a token was traced");
    }
}

#[tokio::test]
async fn z4_dynamic_registration_and_refresh_before_expiry() {
    let (captured, _guard) = Captured::install();
    let (addr, resource) = resource().await;
    // Tokens live 4 s: refreshed once less than 2 s (half their life) remain.
    let provider = OidcProvider::start_code(&resource, REDIRECT, 4)
        .await
        .unwrap_or_else(|e| panic!("the authorization server cannot start: {e}"));
    let http = protected(addr, &provider, false).await;
    let (steps, urls) = (Arc::default(), Arc::default());
    let store = InMemoryCredentialStore::new();
    let toolset = McpToolset::builder()
        .oauth(
            OAuthClient::authorization_code(REDIRECT, user(&steps, &urls))
                .scopes(["tickets:read"])
                .store(store.clone()),
        )
        .connect_http(http.url())
        .await
        .expect("registered and authorized");
    let first = urls.lock().expect("urls")[0].clone();
    let client_id = param(&first, "client_id").unwrap_or_default();
    assert!(
        !client_id.is_empty() && client_id != "app",
        "registered dynamically: {client_id}"
    );
    let before = tokens(&store).await;
    assert_eq!(before.len(), 2, "an access and a refresh token");

    // Ages are counted in whole seconds: after 3.2 s one of 3 or 4 has passed, so at most
    // one second remains, and the token is refreshed before it is sent (it is still valid).
    tokio::time::sleep(Duration::from_millis(3_200)).await;
    let (text, kind, _) = call_through_agent(&toolset, "whoami").await;
    assert_eq!(
        (text.as_str(), kind),
        ("you are alice", OutcomeKind::Success)
    );
    let after = tokens(&store).await;
    assert_ne!(before[0], after[0], "a new access token");
    assert_eq!(
        steps.load(Ordering::SeqCst),
        1,
        "refreshed without the user"
    );
    toolset.close().await;
    http.shutdown().await.expect("stops");

    let text = captured.text();
    for token in before.iter().chain(&after) {
        assert!(!text.contains(token.as_str()), "a token was traced");
    }
}

#[tokio::test]
async fn z4_client_credentials_with_step_up() {
    let (addr, resource) = resource().await;
    let provider = OidcProvider::start_code(&resource, REDIRECT, 600)
        .await
        .unwrap_or_else(|e| panic!("the authorization server cannot start: {e}"));
    let http = protected(addr, &provider, true).await;
    let toolset = McpToolset::builder()
        .oauth(OAuthClient::client_credentials("svc", "svc-secret").scopes(["tickets:read"]))
        .connect_http(http.url())
        .await
        .expect("authorized by client credentials");
    let (text, kind, _) = call_through_agent(&toolset, "whoami").await;
    assert_eq!((text.as_str(), kind), ("you are svc", OutcomeKind::Success));
    let before = CLOSED.load(Ordering::SeqCst);
    let (text, kind, _) = call_through_agent(&toolset, "close-ticket").await;
    assert_eq!((text.as_str(), kind), ("closed", OutcomeKind::Success));
    assert!(CLOSED.load(Ordering::SeqCst) > before);
    toolset.close().await;
    http.shutdown().await.expect("stops");
}

#[tokio::test]
async fn z4_a_redirect_from_another_issuer_is_refused() {
    let (addr, resource) = resource().await;
    let provider = OidcProvider::start_code(&resource, REDIRECT, 600)
        .await
        .unwrap_or_else(|e| panic!("the authorization server cannot start: {e}"));
    let http = protected(addr, &provider, false).await;
    // A mix-up: the redirect says it comes from another authorization server (RFC 9207).
    let forged = browser_fn(|url: String| async move {
        let back = support::user_agent::follow(&url, REDIRECT).await?;
        let mut back = reqwest::Url::parse(&back).map_err(|e| e.to_string())?;
        let pairs: Vec<(String, String)> = (back.query_pairs())
            .map(|(k, v)| {
                let v = if k == "iss" {
                    "http://127.0.0.1:1".into()
                } else {
                    v
                };
                (k.into_owned(), v.into_owned())
            })
            .collect();
        back.query_pairs_mut().clear().extend_pairs(pairs);
        Ok::<_, String>(back.to_string())
    });
    let error = McpToolset::builder()
        .oauth(OAuthClient::authorization_code(REDIRECT, forged).client_id("app"))
        .connect_http(http.url())
        .await
        .expect_err("another issuer's redirect");
    let text = format!("{error:#}");
    assert!(text.contains("issuer mismatch"), "{text}");
    http.shutdown().await.expect("stops");
}
