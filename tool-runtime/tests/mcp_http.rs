//! Our client against our server over streamable HTTP on 127.0.0.1: the context of each
//! request comes from its bearer token, so two principals see different tool lists and calls
//! run as their principal (A1, A2, A5); a request without a known token is refused before any
//! MCP processing; a capability revoked after listing blocks later calls (A4, A8).
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use support::mcp::{Args, Principal, served};
use tool_runtime::mcp::{
    Handshake, HttpOptions, HttpServer, McpRequest, McpServer, McpToolset, McpTransport,
    ToolsetError,
};
use tool_runtime::{BoxError, Context, OutcomeKind, Tool};

const ALICE: Principal = Principal {
    name: "alice",
    admin: true,
};
const BOB: Principal = Principal {
    name: "bob",
    admin: false,
};

/// The application's authentication: a bearer token it knows, or a refusal. Arguments never
/// reach it; only what the transport carried.
async fn authenticate(req: McpRequest) -> Result<Context, BoxError> {
    assert_eq!(req.transport(), McpTransport::Http);
    match req.bearer_token() {
        Some("alice-token") => Ok(Context::new().with(ALICE)),
        Some("bob-token") => Ok(Context::new().with(BOB)),
        Some(_) => Err("unknown bearer token".into()),
        None => Err("no bearer token".into()),
    }
}

fn whoami() -> Tool {
    Tool::builder("whoami", "Tells who the caller is.")
        .handler(|ctx: Context, _args: Args| async move {
            let principal = ctx.require::<Principal>()?;
            Ok::<_, BoxError>(principal.name)
        })
        .build()
}

async fn serve(extra: Vec<Tool>) -> HttpServer {
    let server = McpServer::builder()
        .name("mcp-http-test")
        .tool(whoami())
        .tools(served().tools)
        .tools(extra)
        .context(authenticate)
        .build()
        .expect("the tools are declared right");
    server
        .bind_http("127.0.0.1:0", HttpOptions::default())
        .await
        .expect("a loopback port is free")
}

async fn connect(http: &HttpServer, token: &str, handshake: Handshake) -> McpToolset {
    McpToolset::builder()
        .bearer_token(token)
        .handshake(handshake)
        .connect_http(http.url())
        .await
        .unwrap_or_else(|e| panic!("{token} connects: {e}"))
}

async fn invoke(toolset: &McpToolset, name: &str, args: &str) -> (OutcomeKind, String) {
    let tool = toolset
        .tools()
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    let outcome = tool.invoke(&Context::new(), args.as_bytes()).await;
    (outcome.kind(), outcome.text().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2_a5_two_principals_see_different_tool_lists_and_calls_run_as_their_principal() {
    let http = serve(Vec::new()).await;
    assert!(http.url().starts_with("http://127.0.0.1:"));
    // One client discovers the server (protocol 2026-07-28), the other uses `initialize`.
    let alice = connect(&http, "alice-token", Handshake::Discover).await;
    let bob = connect(&http, "bob-token", Handshake::Initialize).await;

    let listed = |t: &McpToolset| {
        t.tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>()
    };
    let (alice_tools, bob_tools) = (listed(&alice), listed(&bob));
    assert!(
        alice_tools.contains(&"admin-reset".to_owned()),
        "{alice_tools:?}"
    );
    assert!(
        !bob_tools.contains(&"admin-reset".to_owned()),
        "{bob_tools:?}"
    );
    assert_eq!(alice_tools.len(), bob_tools.len() + 1);

    // Each call's context comes from its own request's token.
    assert_eq!(
        invoke(&alice, "whoami", "{}").await,
        (OutcomeKind::Success, "alice".to_owned())
    );
    assert_eq!(
        invoke(&bob, "whoami", "{}").await,
        (OutcomeKind::Success, "bob".to_owned())
    );
    assert_eq!(invoke(&alice, "admin-reset", "{}").await.1, "reset");
    // E1 over HTTP: a JSON object result comes back as its JSON text.
    let (kind, text) = invoke(&bob, "lookup-window", r#"{"service_id": "svc-1"}"#).await;
    assert_eq!(kind, OutcomeKind::Success);
    assert_eq!(
        text,
        r#"{"service_id":"svc-1","days":7,"starts_at":"2026-01-06T02:00:00Z"}"#
    );
    // E2 over HTTP: the server's `isError` text reaches our model unchanged.
    assert_eq!(
        invoke(&bob, "reject", "{}").await,
        (
            OutcomeKind::Rejected,
            "No maintenance window is scheduled.".to_owned()
        )
    );
    // T2 over HTTP: a failure on our server is `failed` here too, not `rejected`.
    assert_eq!(
        invoke(&bob, "fail", "{}").await,
        (OutcomeKind::Failed, "the tool failed".to_owned())
    );

    // Without a known token, the server refuses before any MCP processing (401).
    for token in [None, Some("mallory-token")] {
        let mut builder = McpToolset::builder();
        if let Some(token) = token {
            builder = builder.bearer_token(token);
        }
        let error = builder.connect_http(http.url()).await.expect_err("refused");
        assert!(matches!(error, ToolsetError::Connect { .. }), "{error}");
        assert!(
            !format!("{error:?}").contains("unknown bearer token"),
            "{error:?}"
        );
    }

    alice.close().await;
    bob.close().await;
    http.shutdown().await.expect("the server stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a4_a8_a_capability_revoked_after_listing_blocks_later_calls() {
    let granted = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&granted);
    let deploy = Tool::builder("deploy", "Deploys.")
        .handler(|_ctx: Context, _args: Args| async move { Ok::<_, std::io::Error>("deployed") })
        .available_fn(move |_ctx: &Context| Ok::<_, std::io::Error>(flag.load(Ordering::SeqCst)))
        .build();
    let http = serve(vec![deploy]).await;
    let bob = connect(&http, "bob-token", Handshake::Auto).await;
    assert_eq!(invoke(&bob, "deploy", "{}").await.1, "deployed");

    granted.store(false, Ordering::SeqCst);
    // A4: the server re-checks the policy on every call; the model reads only this, and the
    // kind is `unavailable` here as it is on the server (T2).
    assert_eq!(
        invoke(&bob, "deploy", "{}").await,
        (OutcomeKind::Unavailable, "tool unavailable".to_owned())
    );
    bob.close().await;
    // A8: a new listing no longer offers it.
    let again = connect(&http, "bob-token", Handshake::Initialize).await;
    assert!(!again.tools().iter().any(|t| t.name() == "deploy"));
    again.close().await;
    http.shutdown().await.expect("the server stops cleanly");
}
