//! M7 (resources): an `McpServer` serves resources and resource templates with the tools'
//! guarantees. Listing offers what the caller's policies allow (A2); reading checks the
//! policy again and answers a hidden resource as an unknown URI (A4, A5: `-32602`, the URI
//! in `data`, SEP-2164); a template's variables are parsed as its typed parameters (S2),
//! their violations answered and the reader not run; a reader's failure is redacted (E2);
//! hostile URIs (huge, malformed, badly escaped) are clear protocol errors; subscriptions
//! bring `notifications/resources/updated` while the caller may still read the resource (A4),
//! lists bring list-changed notifications. Raw
//! JSON-RPC over a pipe, as a client sees it.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use raw_pipe::Raw;
use serde_json::{Value, json};
use tool_runtime::agent::BuildProblem;
use tool_runtime::mcp::{CatalogProblem, Contents, Icon, McpResource, McpServer, McpServerBuilder};
use tool_runtime::{Context, Schema, ToolError};

/// JSON-RPC's `Invalid params`.
const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's `Internal error`.
const INTERNAL_ERROR: i64 = -32603;

/// Who asks: an operator sees the maintenance log, a guest does not.
#[derive(Clone, Copy)]
struct Operator(bool);

/// The parameters of `maint://{service}/history/{limit}`.
#[derive(Schema)]
struct History {
    /// The service identifier.
    #[schema(pattern = "^[a-z0-9-]+$")]
    service: String,
    /// How many entries.
    #[schema(range = 1..=50)]
    limit: u32,
}

/// The resources, and how many times the history reader ran.
fn server(operator: bool) -> (McpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let builder =
        McpServer::builder()
            .context(move |_req| async move {
                Ok::<_, ToolError>(Context::new().with(Operator(operator)))
            })
            .resource(
                McpResource::builder("docs://guide", "guide")
                    .description("How windows are planned.")
                    .mime_type("text/markdown")
                    .icon(Icon::new("https://example.test/guide.png").with_mime_type("image/png"))
                    .read(|_ctx: Context| async { Ok::<_, ToolError>(Contents::text("# Windows")) })
                    .build(),
            )
            .resource(
                McpResource::builder("maint://log", "maintenance-log")
                    .available_fn(|ctx: &Context| {
                        Ok::<_, ToolError>(ctx.get::<Operator>().is_some_and(|o| o.0))
                    })
                    .read(|_ctx: Context| async { Ok::<_, ToolError>("restarted db-1") })
                    .build(),
            )
            .resource(
                McpResource::builder("maint://{service}/history/{limit}", "history")
                    .read_typed(move |_ctx: Context, p: History| {
                        counted.fetch_add(1, Ordering::SeqCst);
                        async move {
                            Ok::<_, ToolError>(format!("{} entries of {}", p.limit, p.service))
                        }
                    })
                    .build(),
            )
            .resource(failing("maint://secret-failure", None))
            .resource(failing(
                "maint://polite-failure",
                Some("the log is being rotated"),
            ))
            .resource(
                McpResource::builder("maint://panics", "panics")
                    .read(|_ctx: Context| async {
                        if true {
                            panic!("the reader panicked with the password hunter2");
                        }
                        Ok::<_, ToolError>("")
                    })
                    .build(),
            );
    (builder.build().expect("the server builds"), runs)
}

/// A resource whose reader fails: with a secret, or with a `ToolError` meant for the client.
fn failing(uri: &str, told: Option<&'static str>) -> McpResource {
    McpResource::builder(uri, "failing")
        .read(move |_ctx: Context| async move {
            match told {
                Some(text) => Err::<String, tool_runtime::BoxError>(ToolError::new(text).into()),
                None => Err("database password hunter2 rejected".into()),
            }
        })
        .build()
}

async fn open(operator: bool) -> (Raw, Arc<AtomicUsize>) {
    let (server, runs) = server(operator);
    (Raw::open(server, "2025-11-25").await, runs)
}

async fn read(raw: &mut Raw, uri: &str) -> Value {
    raw.request("resources/read", json!({ "uri": uri })).await.0
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"))
}

/// M7, A2, A5: the list holds what the caller is offered, with caching hints that keep it
/// private; the capabilities say resources, subscriptions, list changes and completions.
#[tokio::test]
async fn m7_resources_are_listed_as_offered_with_their_metadata() {
    let (server, _) = server(false);
    let mut raw = Raw::open(server, "2025-11-25").await;
    let (listed, _) = raw.request("resources/list", json!({})).await;
    let uris: Vec<&str> = (listed["result"]["resources"].as_array().expect("resources"))
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert_eq!(uris[0], "docs://guide", "{listed}");
    assert!(
        !uris.contains(&"maint://log"),
        "a guest is not offered the log: {listed}"
    );
    assert!(
        !uris.iter().any(|u| u.contains('{')),
        "templates are listed apart: {listed}"
    );
    let guide = &listed["result"]["resources"][0];
    assert_eq!(guide["mimeType"], "text/markdown");
    assert_eq!(guide["icons"][0]["src"], "https://example.test/guide.png");
    assert_eq!(listed["result"]["ttlMs"], 0, "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "private", "{listed}");

    let (templates, _) = raw.request("resources/templates/list", json!({})).await;
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "maint://{service}/history/{limit}",
        "{templates}"
    );

    let (mut operator, _) = open(true).await;
    let (listed, _) = operator.request("resources/list", json!({})).await;
    assert!(listed.to_string().contains("maint://log"), "{listed}");
}

/// M7: a plain resource and a template are read; the template's variables arrive typed.
#[tokio::test]
async fn m7_a_template_reads_its_typed_parameters() {
    let (mut raw, runs) = open(false).await;
    let guide = read(&mut raw, "docs://guide").await;
    let contents = &guide["result"]["contents"][0];
    assert_eq!(contents["uri"], "docs://guide", "{guide}");
    assert_eq!(contents["text"], "# Windows");
    assert_eq!(contents["mimeType"], "text/markdown");
    assert_eq!(guide["result"]["cacheScope"], "private");

    let history = read(&mut raw, "maint://db-1/history/3").await;
    assert_eq!(
        history["result"]["contents"][0]["text"], "3 entries of db-1",
        "{history}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// M7, S2: a variable of the wrong type, or out of range, is answered with the violations;
/// the reader does not run.
#[tokio::test]
async fn m7_a_template_parameter_of_the_wrong_type_is_invalid_params() {
    let (mut raw, runs) = open(false).await;
    for (uri, expected) in [
        ("maint://db-1/history/many", "/limit"),
        ("maint://db-1/history/99", "/limit"),
        ("maint://DB_1/history/3", "/service"),
    ] {
        let answer = read(&mut raw, uri).await;
        assert_eq!(code(&answer), INVALID_PARAMS, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{uri}: {answer}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no reader ran");
}

/// M7, A4, A5, SEP-2164: an unknown URI and a hidden resource get the same answer, `-32602`
/// with the URI in `data`; the hidden one's reader never runs.
#[tokio::test]
async fn m7_a_hidden_resource_reads_as_an_unknown_uri() {
    let (mut raw, _) = open(false).await;
    let unknown = read(&mut raw, "maint://nothing-here").await;
    let hidden = read(&mut raw, "maint://log").await;
    assert_eq!(code(&unknown), INVALID_PARAMS, "{unknown}");
    assert_eq!(unknown["error"]["data"]["uri"], "maint://nothing-here");
    assert_eq!(hidden["error"]["message"], unknown["error"]["message"]);
    assert_eq!(hidden["error"]["data"]["uri"], "maint://log");
    let (mut operator, _) = open(true).await;
    let shown = read(&mut operator, "maint://log").await;
    assert_eq!(
        shown["result"]["contents"][0]["text"], "restarted db-1",
        "{shown}"
    );
}

/// M7, E2: a reader's error reaches the client as `the resource failed`, or as its
/// `ToolError`'s text; a panic too, and the session goes on.
#[tokio::test]
async fn m7_a_readers_failure_is_redacted() {
    let (mut raw, _) = open(false).await;
    let secret = read(&mut raw, "maint://secret-failure").await;
    assert_eq!(code(&secret), INTERNAL_ERROR, "{secret}");
    assert_eq!(secret["error"]["message"], "the resource failed");
    assert!(!secret.to_string().contains("hunter2"), "{secret}");
    let polite = read(&mut raw, "maint://polite-failure").await;
    assert_eq!(
        polite["error"]["message"], "the log is being rotated",
        "{polite}"
    );
    let panicked = read(&mut raw, "maint://panics").await;
    assert_eq!(
        panicked["error"]["message"], "the resource failed",
        "{panicked}"
    );
    assert!(!panicked.to_string().contains("hunter2"));
    let after = read(&mut raw, "docs://guide").await;
    assert_eq!(
        after["result"]["contents"][0]["text"], "# Windows",
        "{after}"
    );
}

/// M7: hostile URIs are protocol errors, answered quickly, never echoed whole.
#[tokio::test]
async fn m7_hostile_uris_are_clear_protocol_errors() {
    let (mut raw, runs) = open(false).await;
    let huge = format!("maint://{}/history/3", "a".repeat(512 * 1024));
    let started = Instant::now();
    let answer = read(&mut raw, &huge).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        code(&answer),
        INVALID_PARAMS,
        "{}",
        &answer.to_string()[..200]
    );
    assert!(answer.to_string().len() < 1024, "the URI is not echoed");
    for uri in [
        "",
        "not a uri",
        "maint://db-1/history/%zz",
        "maint://%ff/history/3",
        "maint://a/history/1/extra",
    ] {
        let answer = read(&mut raw, uri).await;
        assert_eq!(code(&answer), INVALID_PARAMS, "{uri}: {answer}");
    }
    let (malformed, _) = raw.request("resources/read", json!({ "uri": 42 })).await;
    assert!(malformed.get("error").is_some(), "{malformed}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    let after = read(&mut raw, "docs://guide").await;
    assert!(
        after.get("result").is_some(),
        "the session goes on: {after}"
    );
}

/// M7: a subscribed session hears of its resource's change, and no more once it
/// unsubscribed; an unknown or hidden URI cannot be subscribed to.
#[tokio::test]
async fn m7_subscriptions_bring_resource_updates() {
    let (server, _) = server(false);
    let mut raw = Raw::open(server.clone(), "2025-11-25").await;
    let (subscribed, _) = raw
        .request("resources/subscribe", json!({"uri": "docs://guide"}))
        .await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    assert_eq!(server.subscribers("docs://guide"), 1);
    assert_eq!(server.resource_updated("docs://guide").await, 1);
    let heard = raw
        .next_within(Duration::from_secs(5))
        .await
        .expect("a notification");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert_eq!(heard["params"]["uri"], "docs://guide");
    assert_eq!(server.resource_updated("maint://log").await, 0);

    let (hidden, _) = raw
        .request("resources/subscribe", json!({"uri": "maint://log"}))
        .await;
    assert_eq!(code(&hidden), INVALID_PARAMS, "{hidden}");
    let (unsubscribed, _) = raw
        .request("resources/unsubscribe", json!({"uri": "docs://guide"}))
        .await;
    assert_eq!(unsubscribed["result"], json!({}), "{unsubscribed}");
    assert_eq!(server.resource_updated("docs://guide").await, 0);
    assert!(raw.next_within(Duration::from_millis(200)).await.is_none());
}

/// M7, A4: a session's subscription is checked again at each update, on the context of the
/// request that subscribed: once the policy no longer lets the caller read the resource (a
/// flag flipped after it subscribed), its updates stop.
#[tokio::test]
async fn m7_a_permission_revoked_after_a_subscription_stops_its_updates() {
    let revoked = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&revoked);
    let server = McpServer::builder()
        .resource(
            McpResource::builder("docs://plan", "plan")
                .available_fn(move |_ctx: &Context| {
                    Ok::<_, ToolError>(!flag.load(Ordering::SeqCst))
                })
                .read(|_ctx: Context| async { Ok::<_, ToolError>("# Plan") })
                .build(),
        )
        .build()
        .expect("the server builds");
    let mut raw = Raw::open(server.clone(), "2025-11-25").await;
    let (subscribed, _) = raw
        .request("resources/subscribe", json!({"uri": "docs://plan"}))
        .await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    assert_eq!(server.resource_updated("docs://plan").await, 1);
    let heard = raw.next_within(Duration::from_secs(5)).await;
    assert_eq!(heard.expect("heard")["params"]["uri"], "docs://plan");

    revoked.store(true, Ordering::SeqCst);
    assert_eq!(server.resource_updated("docs://plan").await, 0);
    assert!(raw.next_within(Duration::from_millis(200)).await.is_none());
}

/// M7: a session that listed resources hears that the list changed.
#[tokio::test]
async fn m7_a_listing_session_hears_list_changes() {
    let (server, _) = server(true);
    let mut raw = Raw::open(server.clone(), "2025-11-25").await;
    let (init_caps, _) = raw.request("resources/list", json!({})).await;
    assert!(init_caps.get("result").is_some());
    assert_eq!(server.resources_changed().await, 1);
    let heard = raw
        .next_within(Duration::from_secs(5))
        .await
        .expect("a notification");
    assert_eq!(
        heard["method"], "notifications/resources/list_changed",
        "{heard}"
    );
}

/// M7: the capabilities say what is served.
#[tokio::test]
async fn m7_the_server_declares_resources_subscriptions_and_completions() {
    let (server, _) = server(false);
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, mut writer) = tokio::io::split(client_io);
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "0"}}});
    writer
        .write_all(format!("{init}\n").as_bytes())
        .await
        .expect("sent");
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let line = lines.next_line().await.expect("read").expect("a line");
    let answer: Value = serde_json::from_str(&line).expect("JSON");
    let capabilities = &answer["result"]["capabilities"];
    assert_eq!(capabilities["resources"]["subscribe"], true, "{answer}");
    assert_eq!(capabilities["resources"]["listChanged"], true, "{answer}");
    assert!(capabilities["completions"].is_object(), "{answer}");
    assert!(
        capabilities.get("prompts").is_none(),
        "no prompt is served: {answer}"
    );
}

/// M7: declaration problems are found at `build()`, all of them, each saying what to do.
#[test]
fn m7_resources_declared_wrong_are_refused_at_build() {
    let read = |_ctx: Context| async { Ok::<_, ToolError>("x") };
    let problems = McpServerBuilder::resource(
        McpServer::builder(),
        McpResource::builder("relative/path", "a")
            .read(read)
            .build(),
    )
    .resource(McpResource::builder("t://{a}{b}", "b").read(read).build())
    .resource(
        McpResource::builder("t://c", "has space")
            .read(read)
            .build(),
    )
    .resource(McpResource::builder("t://d", "d").build())
    .resource(McpResource::builder("t://e", "e").read(read).build())
    .resource(McpResource::builder("t://e", "e2").read(read).build())
    .resource(
        McpResource::builder("t://{svc}/history/{limit}", "f")
            .read_typed(|_ctx: Context, p: History| async move { Ok::<_, ToolError>(p.service) })
            .build(),
    )
    .resource(
        McpResource::builder("t://{service}", "g")
            .read_typed(|_ctx: Context, p: History| async move { Ok::<_, ToolError>(p.service) })
            .build(),
    )
    .resource(McpResource::builder("t://{h}", "h").read(read).build())
    .build()
    .expect_err("refused")
    .problems()
    .to_vec();
    let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(problems.len(), 8, "{text:#?}");
    assert!(
        problems
            .iter()
            .all(|p| matches!(p, BuildProblem::McpCatalog(_))),
        "{text:#?}"
    );
    assert!(text[0].contains("has no scheme"), "{}", text[0]);
    assert!(
        text[1].contains("followed by another variable"),
        "{}",
        text[1]
    );
    assert!(text[2].contains("not an MCP name"), "{}", text[2]);
    assert!(text[3].contains("no reader"), "{}", text[3]);
    assert!(
        matches!(&problems[4], BuildProblem::McpCatalog(CatalogProblem::DuplicateUri { uri }) if uri == "t://e")
    );
    assert!(text[5].contains("`svc` is no field"), "{}", text[5]);
    assert!(text[6].contains("require `limit`"), "{}", text[6]);
    assert!(text[7].contains("read_typed"), "{}", text[7]);
}
