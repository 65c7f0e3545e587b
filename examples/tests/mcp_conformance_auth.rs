//! Z4, Z5: the official MCP conformance suite's authorization scenarios for clients (`auth/…`),
//! played by an `McpToolset` with an `OAuthClient`, built only with the public API of
//! `tool_runtime`, each at every protocol version the suite lists for it. The suite is the one
//! `conformance_peer` provisions (its pinned version); `mcp_conformance.rs` plays the other
//! client scenarios.
//!
//! The suite starts this test binary again for each scenario (as
//! `child_plays_the_auth_client`), appending its test server's URL, with the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` and its data (client ID and secret, where it has them) in
//! `MCP_CONFORMANCE_CONTEXT`. The child connects with OAuth: the user's step is a user agent
//! that follows the suite's authorization server to the redirect URI (the suite grants at
//! once). It lists the tools and calls the first one, so that a scenario that needs more
//! scopes for a call (step-up) sees it.
//!
//! Every run must pass, but those of the scenarios in [`NOT_YET`], each with the reason; one
//! of them that passes fails the test, so that its line is deleted. [`OUT_OF_SCOPE`] names the
//! scenarios not played, and why; a name in either list that the suite does not have fails
//! the test too.

use std::fmt::Write as _;

use tool_runtime::mcp::oauth::{OAuthClient, SigningAlgorithm, browser_fn};
use tool_runtime::mcp::{Handshake, McpToolset};
use tool_runtime::{BoxError, Context};

#[allow(dead_code, unreachable_pub)]
mod conformance_peer;

use conformance_peer::{AT_ONCE, Side, concurrently, runs_of, suite};

/// Set for the client the suite starts.
const CHILD: &str = "MCP_CONFORMANCE_AUTH_CHILD";

/// Where the suite's authorization server sends the user back (never listened on).
const REDIRECT: &str = "http://127.0.0.1:8765/callback";

/// The client ID metadata document URL the suite's `auth/basic-cimd` expects.
const CIMD: &str = "https://conformance-test.local/client-metadata.json";

/// Scenarios that do not pass yet, and why. Delete a line when its scenario passes.
const NOT_YET: &[(&str, &str)] = &[];

/// Scenarios left out, and why.
const OUT_OF_SCOPE: &[(&str, &str)] = &[
    (
        "auth/2025-03-26-oauth-metadata-backcompat",
        "authorization of protocol 2025-03-26 (no Protected Resource Metadata): Z4 follows \
         2025-06-18 and later",
    ),
    (
        "auth/2025-03-26-oauth-endpoint-fallback",
        "protocol 2025-03-26's guessed /authorize and /token, which later versions removed: Z4 \
         refuses an authorization server without metadata",
    ),
    (
        "auth/enterprise-managed-authorization",
        "the enterprise-managed authorization extension (token exchange), not adopted",
    ),
    (
        "auth/dpop",
        "the DPoP extension (RFC 9449): not adopted; Z4 binds no token to a key",
    ),
    (
        "auth/dpop-nonce",
        "the DPoP extension (RFC 9449): not adopted; Z4 binds no token to a key",
    ),
    (
        "auth/wif-jwt-bearer",
        "the workload identity federation extension (JWT bearer grant): not adopted",
    ),
];

/// The suite's authorization runs for clients (scenario, protocol version), those out of
/// scope left out.
fn auth_runs() -> Vec<(String, String)> {
    let suite = suite().unwrap_or_else(|message| panic!("{message}"));
    let all = runs_of(suite, Side::Client);
    // A listed name the suite no longer has is stale: delete it.
    for (name, _) in NOT_YET.iter().chain(OUT_OF_SCOPE) {
        assert!(
            all.iter().any(|(scenario, _)| scenario == name),
            "the suite has no scenario {name}"
        );
    }
    all.into_iter()
        .filter(|(scenario, _)| scenario.starts_with("auth/"))
        .filter(|(scenario, _)| !OUT_OF_SCOPE.iter().any(|(name, _)| name == scenario))
        .collect()
}

/// Follows redirects from `url` to [`REDIRECT`], keeping no state: the suite's authorization
/// endpoint answers at once.
async fn user_agent(url: String) -> Result<String, BoxError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let mut url = reqwest::Url::parse(&url)?;
    for _ in 0..10 {
        let response = client.get(url.clone()).send().await?;
        let location = (response.headers().get("location"))
            .and_then(|l| l.to_str().ok())
            .ok_or_else(|| format!("{url} answered {} without a redirect", response.status()))?;
        url = url.join(location)?;
        if url.as_str().starts_with(REDIRECT) {
            return Ok(url.to_string());
        }
    }
    Err("too many redirects".into())
}

/// The OAuth client for `scenario`, with the suite's `context`.
fn client_for(scenario: &str, context: &serde_json::Value) -> OAuthClient {
    let field = |name: &str| context[name].as_str().unwrap_or_default().to_owned();
    if let Some(pem) = context["private_key_pem"].as_str() {
        let algorithm = match context["signing_algorithm"].as_str() {
            Some("RS256") => SigningAlgorithm::RS256,
            Some("ES384") => SigningAlgorithm::ES384,
            _ => SigningAlgorithm::ES256,
        };
        return OAuthClient::client_credentials_private_key_jwt(field("client_id"), pem, algorithm);
    }
    if scenario.starts_with("auth/client-credentials") {
        return OAuthClient::client_credentials(field("client_id"), field("client_secret"));
    }
    let mut client =
        OAuthClient::authorization_code(REDIRECT, browser_fn(user_agent)).client_metadata_url(CIMD);
    if context.get("client_id").is_some() {
        client = client.client_id(field("client_id"));
    }
    if context.get("client_secret").is_some() {
        client = client.client_secret(field("client_secret"));
    }
    client
}

/// The handshake for the protocol version the suite plays (`MCP_CONFORMANCE_PROTOCOL_VERSION`):
/// `server/discover` from 2026-07-28 on, `initialize` before.
fn handshake() -> Handshake {
    match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(version) if version.as_str() >= "2026-07-28" => Handshake::Discover,
        _ => Handshake::Initialize,
    }
}

/// Plays the client's part of `scenario` against the server at `url`.
async fn play(url: &str, scenario: &str) -> Result<(), BoxError> {
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT").unwrap_or_default();
    let context: serde_json::Value = serde_json::from_str(&context).unwrap_or_default();
    let toolset = McpToolset::builder()
        .handshake(handshake())
        .oauth(client_for(scenario, &context))
        .connect_http(url)
        .await?;
    let names: Vec<(&str, &str)> = toolset.names().collect();
    eprintln!("auth client: tools {names:?}");
    if let Some(tool) = toolset.tools().first() {
        let outcome = tool.invoke(&Context::new(), b"{}").await;
        eprintln!("auth client: {} -> {:?}", tool.name(), outcome.kind());
    }
    toolset.close().await;
    Ok(())
}

#[test]
fn child_plays_the_auth_client() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let url = std::env::args()
        .next_back()
        .filter(|url| url.starts_with("http"))
        .expect("the suite appends the server's URL to the command line");
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let code = match runtime.block_on(play(&url, &scenario)) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("auth client: {error}");
            1
        }
    };
    std::process::exit(code);
}

#[test]
fn the_client_passes_the_suites_auth_scenarios() {
    let suite = suite().unwrap_or_else(|message| panic!("{message}"));
    let exe = std::env::current_exe().expect("the test binary");
    let exe = exe.to_str().expect("the test binary's path is UTF-8");
    assert!(
        !exe.contains(char::is_whitespace),
        "a path with spaces: `{exe}`"
    );
    let command = format!("{exe} child_plays_the_auth_client --exact --nocapture");
    let runs = auth_runs();
    assert!(
        !runs.is_empty(),
        "the suite lists no authorization scenario"
    );
    let ran = concurrently(&runs, |scenario, version| {
        (suite.run_client_scenario(&command, (scenario, version), &[(CHILD, "1")]))
            .unwrap_or_else(|message| panic!("{message}"))
    });
    let (mut report, mut wrong) = (String::new(), Vec::new());
    for run in &ran {
        let (scenario, version) = (&run.scenario, &run.version);
        let waits = NOT_YET.iter().find(|(name, _)| name == scenario);
        let _ = writeln!(
            report,
            "{scenario} @ {version}: {}",
            if run.passed() { "passes" } else { "fails" }
        );
        match (run.passed(), waits) {
            (true, Some(_)) => wrong.push(format!("{scenario} passes: delete its NOT_YET line")),
            (false, None) => wrong.push(format!(
                "{scenario} @ {version} fails:\n{}\nclient stderr:\n{}",
                run.failure_report(),
                run.client_stderr.as_deref().unwrap_or("(none)")
            )),
            _ => {}
        }
    }
    let _ = writeln!(report, "({} runs, {AT_ONCE} at once)", runs.len());
    eprintln!("{report}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
