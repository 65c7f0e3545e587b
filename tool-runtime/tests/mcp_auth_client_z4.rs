//! Z4 against a scripted protected resource and authorization server on loopback, each
//! request recorded: discovery asks the URIs MCP specifies, in its order; an authorization
//! server without PKCE S256, or none at all, is refused before the user is asked; the token
//! request carries the RFC 8707 `resource`; step-up stops at its limit.
#![cfg(feature = "mcp")]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use tool_runtime::mcp::McpToolset;
use tool_runtime::mcp::oauth::{
    CredentialStore, InMemoryCredentialStore, OAuthClient, StoredCredentials, browser_fn,
};

const REDIRECT: &str = "http://127.0.0.1:8765/callback";

/// What the scripted servers publish.
#[derive(Clone, Copy, PartialEq)]
enum Script {
    /// The challenge points at `/custom-prm`; the issuer `/as` publishes RFC 8414 metadata
    /// with `code_challenge_methods_supported` as given.
    Pointer(Option<&'static str>),
    /// No pointer: the PRM is at the root well-known URI only; the issuer `/tenant` publishes
    /// OpenID metadata at its path-appended URI only.
    WellKnown,
    /// No metadata anywhere.
    Nothing,
    /// Metadata with S256; every MCP request with a token gets `403 insufficient_scope`.
    Forbidden,
}

#[derive(Clone)]
struct Fake {
    base: String,
    script: Script,
    log: Arc<Mutex<Vec<String>>>,
    /// The `Authorization` header of each MCP request that had one.
    bearers: Arc<Mutex<Vec<String>>>,
}

fn answer(status: StatusCode, body: Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    (response.headers_mut()).insert(
        header::CONTENT_TYPE,
        "application/json".parse().expect("a header"),
    );
    response
}

fn metadata(base: &str, issuer_path: &str, methods: Option<&str>) -> Value {
    let mut doc = json!({
        "issuer": format!("{base}{issuer_path}"),
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "response_types_supported": ["code"],
        "authorization_response_iss_parameter_supported": true,
    });
    if let Some(methods) = methods {
        doc["code_challenge_methods_supported"] = json!([methods]);
    }
    doc
}

async fn serve(State(fake): State<Fake>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let bearer = (request.headers().get(header::AUTHORIZATION))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let authorized = bearer.is_some();
    if let (Some(bearer), "/mcp") = (bearer, path.as_str()) {
        fake.bearers.lock().expect("the log").push(bearer);
    }
    let body = to_bytes(request.into_body(), 1 << 16)
        .await
        .unwrap_or_default();
    let body = String::from_utf8_lossy(&body).into_owned();
    (fake.log.lock().expect("the log")).push(if path == "/token" {
        format!("{path} {body}")
    } else {
        path.clone()
    });
    let base = &fake.base;
    let prm = json!({"resource": format!("{base}/mcp"), "authorization_servers": [format!(
        "{base}{}", if fake.script == Script::WellKnown { "/tenant" } else { "/as" })]});
    let challenge = match fake.script {
        Script::Pointer(_) => format!("Bearer resource_metadata=\"{base}/custom-prm\""),
        _ => "Bearer".to_owned(),
    };
    match (fake.script, path.as_str()) {
        (Script::Forbidden, "/mcp") if authorized => {
            let mut r = answer(StatusCode::FORBIDDEN, json!({}));
            let value = "Bearer error=\"insufficient_scope\", scope=\"tickets:write\"";
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, value.parse().expect("a header"));
            r
        }
        (_, "/mcp") => {
            let mut r = answer(StatusCode::UNAUTHORIZED, json!({}));
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                challenge.parse().expect("a header"),
            );
            r
        }
        (Script::Pointer(_), "/custom-prm") => answer(StatusCode::OK, prm),
        (Script::Pointer(m), "/.well-known/oauth-authorization-server/as") => {
            answer(StatusCode::OK, metadata(base, "/as", m))
        }
        (Script::WellKnown, "/.well-known/oauth-protected-resource") => answer(StatusCode::OK, prm),
        (Script::WellKnown, "/tenant/.well-known/openid-configuration") => {
            answer(StatusCode::OK, metadata(base, "/tenant", Some("S256")))
        }
        (Script::Forbidden, "/.well-known/oauth-protected-resource/mcp") => {
            answer(StatusCode::OK, prm)
        }
        (Script::Forbidden, "/.well-known/oauth-authorization-server/as") => {
            answer(StatusCode::OK, metadata(base, "/as", Some("S256")))
        }
        (Script::Forbidden, "/token") => answer(
            StatusCode::OK,
            json!({"access_token": "opaque-access-token-of-the-scripted-server",
                "token_type": "Bearer", "expires_in": 3600}),
        ),
        _ => answer(StatusCode::NOT_FOUND, json!({})),
    }
}

async fn start(script: Script) -> (String, Arc<Mutex<Vec<String>>>) {
    let (base, log, _) = start_with_bearers(script).await;
    (base, log)
}

type Log = Arc<Mutex<Vec<String>>>;

async fn start_with_bearers(script: Script) -> (String, Log, Log) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr: SocketAddr = listener.local_addr().expect("bound");
    let (log, bearers) = (Log::default(), Log::default());
    let fake = Fake {
        base: format!("http://{addr}"),
        script,
        log: Arc::clone(&log),
        bearers: Arc::clone(&bearers),
    };
    let app = Router::new().fallback(serve).with_state(fake);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), log, bearers)
}

/// A user who comes back from `issuer` with a code for the state of the URL; counted.
fn user(issuer: String, steps: &Arc<AtomicUsize>) -> OAuthClient {
    let steps = Arc::clone(steps);
    let browser = browser_fn(move |url: String| {
        steps.fetch_add(1, Ordering::SeqCst);
        let issuer = issuer.clone();
        async move {
            let url = reqwest::Url::parse(&url).map_err(|e| e.to_string())?;
            let state = (url.query_pairs().find(|(k, _)| k == "state"))
                .map(|(_, v)| v.into_owned())
                .ok_or("no state")?;
            let mut back = reqwest::Url::parse(REDIRECT).map_err(|e| e.to_string())?;
            (back.query_pairs_mut())
                .append_pair("code", "the-code")
                .append_pair("state", &state)
                .append_pair("iss", &issuer);
            Ok::<_, String>(back.to_string())
        }
    });
    OAuthClient::authorization_code(REDIRECT, browser).client_id("app")
}

async fn connect(base: &str, client: OAuthClient) -> String {
    let error = McpToolset::builder()
        .oauth(client)
        .connect_http(format!("{base}/mcp"))
        .await
        .expect_err("not authorized");
    format!("{error}")
}

#[tokio::test]
async fn z4_an_authorization_server_without_s256_is_refused_before_the_user_is_asked() {
    for methods in [None, Some("plain")] {
        let (base, log) = start(Script::Pointer(methods)).await;
        let steps = Arc::new(AtomicUsize::new(0));
        let error = connect(&base, user(format!("{base}/as"), &steps)).await;
        assert!(error.contains("does not support PKCE with S256"), "{error}");
        assert_eq!(steps.load(Ordering::SeqCst), 0, "the user was not asked");
        // The challenge's `resource_metadata` is asked first, then the issuer's metadata.
        let log = log.lock().expect("the log").clone();
        assert_eq!(
            log,
            [
                "/mcp",
                "/custom-prm",
                "/.well-known/oauth-authorization-server/as"
            ]
        );
    }
}

#[tokio::test]
async fn z4_discovery_asks_the_well_known_uris_in_the_specified_order() {
    let (base, log) = start(Script::WellKnown).await;
    let steps = Arc::new(AtomicUsize::new(0));
    // The user never finishes; discovery is what is checked.
    let quits = browser_fn(|_url: String| async { Err::<String, _>("closed the window") });
    let client = OAuthClient::authorization_code(REDIRECT, quits).client_id("app");
    let error = connect(&base, client).await;
    assert!(error.contains("closed the window"), "{error}");
    assert_eq!(steps.load(Ordering::SeqCst), 0);
    let log = log.lock().expect("the log").clone();
    assert_eq!(
        log,
        [
            "/mcp",
            // rmcp asks the endpoint again for its challenge when the first named no
            // metadata URL.
            "/mcp",
            // RFC 9728: path-inserted, then root; rmcp also tries the path-appended URI
            // between the two (MCP does not list it; it finds nothing here).
            "/.well-known/oauth-protected-resource/mcp",
            "/mcp/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource",
            // An issuer with a path: RFC 8414, OpenID path-inserted, OpenID path-appended.
            "/.well-known/oauth-authorization-server/tenant",
            "/.well-known/openid-configuration/tenant",
            "/tenant/.well-known/openid-configuration",
        ]
    );
}

#[tokio::test]
async fn z4_no_metadata_anywhere_is_refused_without_guessing_endpoints() {
    let (base, log) = start(Script::Nothing).await;
    let steps = Arc::new(AtomicUsize::new(0));
    let error = connect(&base, user(base.clone(), &steps)).await;
    assert!(error.contains("names no authorization server"), "{error}");
    assert_eq!(steps.load(Ordering::SeqCst), 0);
    let log = log.lock().expect("the log").clone();
    assert!(
        !log.iter()
            .any(|p| p.starts_with("/authorize") || p.starts_with("/token")),
        "{log:?}"
    );
}

#[tokio::test]
async fn z4_step_up_stops_at_its_limit_and_the_token_request_names_the_resource() {
    for limit in [0, 2] {
        let (base, log) = start(Script::Forbidden).await;
        let steps = Arc::new(AtomicUsize::new(0));
        let client = user(format!("{base}/as"), &steps).step_up_limit(limit);
        let error = connect(&base, client).await;
        assert!(error.contains("Insufficient scope"), "{error}");
        // The first grant, then one user step per step-up.
        assert_eq!(steps.load(Ordering::SeqCst), 1 + limit as usize);
        let log = log.lock().expect("the log").clone();
        let tokens: Vec<&String> = log.iter().filter(|p| p.starts_with("/token")).collect();
        assert_eq!(tokens.len(), 1 + limit as usize, "{log:?}");
        let resource = format!(
            "resource={}",
            format!("{base}/mcp")
                .replace(':', "%3A")
                .replace('/', "%2F")
        );
        assert!(
            tokens
                .iter()
                .all(|t| t.contains(&resource) && t.contains("code_verifier=")),
            "{tokens:?}"
        );
    }
}

/// A store holding a token of the client `app`, granted by `issuer`.
async fn stored(issuer: &str) -> InMemoryCredentialStore {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let credentials: StoredCredentials = serde_json::from_value(json!({
        "client_id": "app",
        "token_response": {"access_token": "stored-token", "token_type": "bearer",
            "expires_in": 3600},
        "granted_scopes": ["tickets:read"],
        "token_received_at": now,
        "issuer": issuer,
    }))
    .expect("stored credentials");
    let store = InMemoryCredentialStore::new();
    store.save(credentials).await.expect("saved");
    store
}

#[tokio::test]
async fn z4_stored_credentials_are_bound_to_their_issuer() {
    // The issuer that granted the stored token: it is used, without asking the user.
    let (base, _, bearers) = start_with_bearers(Script::Forbidden).await;
    let steps = Arc::new(AtomicUsize::new(0));
    let client = (user(format!("{base}/as"), &steps))
        .store(stored(&format!("{base}/as")).await)
        .step_up_limit(0);
    connect(&base, client).await;
    assert_eq!(steps.load(Ordering::SeqCst), 0, "the user was not asked");
    assert_eq!(*bearers.lock().expect("the log"), ["Bearer stored-token"]);

    // Another issuer's token is discarded, never sent: the user is asked.
    let (base, _, bearers) = start_with_bearers(Script::Forbidden).await;
    let store = stored("http://127.0.0.1:1/elsewhere").await;
    let client = (user(format!("{base}/as"), &steps))
        .store(store.clone())
        .step_up_limit(0);
    connect(&base, client).await;
    assert_eq!(steps.load(Ordering::SeqCst), 1, "the user was asked");
    assert_eq!(
        *bearers.lock().expect("the log"),
        ["Bearer opaque-access-token-of-the-scripted-server"]
    );
    let now = store.load().await.expect("loads").expect("a token");
    assert_eq!(now.issuer, Some(format!("{base}/as")));
}
