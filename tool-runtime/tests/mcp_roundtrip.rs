//! One declaration, two transports: each tool called natively and through MCP (our server,
//! our client, in process) gives the model the same text (E1, E2, A4/A5), and bad arguments
//! break the same rules at the same JSON pointers (S2), the remote side checking them against
//! the published schema before anything is sent. Also what the server refuses to build
//! (D2, N3). The outcome kind between our server and our client, and what a third-party
//! server's `isError` and `_meta` claims become here (T2).
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
    pub mod trace;
}

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::mcp::{Args, Principal, served};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::error::find_in_chain;
use tool_runtime::mcp::{Handshake, McpServer, McpToolset, RemoteCallError};
use tool_runtime::{BuildProblem, Context, DeclarationError, Outcome, OutcomeKind, Tool};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Our server and our client, joined by an in-process byte stream.
async fn over_mcp(tools: Vec<Tool>, principal: Principal) -> McpToolset {
    let server = McpServer::builder()
        .tools(tools)
        .context(move |_req| async move { Ok::<_, &str>(Context::new().with(principal)) })
        .build()
        .expect("the tools are declared right");
    support::mcp::connect_in_process(server).await
}

#[tokio::test]
async fn e1_e2_s2_a_tool_gives_the_same_answers_natively_and_over_mcp() {
    let native = served().tools;
    let remote = over_mcp(served().tools, Principal::OPERATOR).await;
    let ctx = Context::new().with(Principal::OPERATOR);
    let cases: &[(&str, &str)] = &[
        ("lookup-window", r#"{"service_id": "svc-42"}"#),
        ("lookup-window", r#"{"service_id": "svc-42", "days": 30}"#),
        (
            "lookup-window",
            r#"{"service_id": "", "days": 99, "extra": true}"#,
        ),
        (
            "lookup-window",
            r#"{"service_id": "Not Valid!", "days": 0}"#,
        ),
        ("lookup-window", r#"{"days": "soon"}"#),
        ("lookup-window", r#"[1, 2]"#),
        ("greet", r#"{"who": "Ada"}"#),
        ("greet", r#"{"who": 7}"#),
        ("reject", "{}"),
        ("fail", "{}"),
    ];
    for (name, args) in cases {
        let here = native
            .iter()
            .find(|t| t.name() == *name)
            .expect("a native tool");
        let there = remote
            .tools()
            .iter()
            .find(|t| t.name() == *name)
            .expect("the same tool over MCP");
        let a = here.invoke(&ctx, args.as_bytes()).await;
        let b = there.invoke(&ctx, args.as_bytes()).await;
        if a.kind() == OutcomeKind::InvalidArguments {
            assert_eq!(b.kind(), OutcomeKind::InvalidArguments, "{name} {args}");
            let rules = |o: &tool_runtime::Outcome| {
                let mut r: Vec<(String, &str)> = o
                    .violations()
                    .iter()
                    .map(|v| (v.path.clone(), v.rule.keyword()))
                    .collect();
                r.sort();
                r
            };
            assert_eq!(rules(&a), rules(&b), "{name} {args}");
        } else {
            // Success and approved text alike; `the tool failed` stays that on both.
            assert_eq!(a.text(), b.text(), "{name} {args}");
        }
    }
    // The hidden tool is not listed for this principal (A5) ...
    assert!(!remote.tools().iter().any(|t| t.name() == "admin-reset"));
    // ... and a panic on the server is `the tool failed` here, and the server goes on (E4).
    let crash = remote
        .tools()
        .iter()
        .find(|t| t.name() == "crash")
        .expect("crash");
    assert_eq!(crash.invoke(&ctx, b"{}").await.text(), "the tool failed");
    let greet = remote
        .tools()
        .iter()
        .find(|t| t.name() == "greet")
        .expect("greet");
    assert_eq!(
        greet.invoke(&ctx, br#"{"who": "B"}"#).await.text(),
        "Hello, B!"
    );
    remote.close().await;
}

/// The outcome of calling the tool `name` of `tools` with `args`.
async fn call(tools: &[Tool], name: &str, ctx: &Context, args: &str) -> Outcome {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
        .invoke(ctx, args.as_bytes())
        .await
}

#[tokio::test]
async fn t2_the_outcome_kind_survives_between_our_server_and_our_client() {
    // A tool that is listed, then denied on the server at call time (A4).
    let granted = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&granted);
    let deploy = Tool::builder("deploy", "Deploys.")
        .handler(|_ctx: Context, _args: Args| async move { Ok::<_, std::io::Error>("deployed") })
        .available_fn(move |_ctx: &Context| Ok::<_, std::io::Error>(flag.load(Ordering::SeqCst)))
        .build();
    let mut native = served().tools;
    native.push(deploy.clone());
    let mut tools = served().tools;
    tools.push(deploy);
    let remote = over_mcp(tools, Principal::OPERATOR).await;
    granted.store(false, Ordering::SeqCst);
    let ctx = Context::new().with(Principal::OPERATOR);

    // (tool, arguments, the kind natively, the kind through our server and client)
    let cases: &[(&str, &str, OutcomeKind, OutcomeKind)] = &[
        (
            "greet",
            r#"{"who": "Ada"}"#,
            OutcomeKind::Success,
            OutcomeKind::Success,
        ),
        // Checked against the published schema on the client, as on the server (S2).
        (
            "greet",
            r#"{"who": 7}"#,
            OutcomeKind::InvalidArguments,
            OutcomeKind::InvalidArguments,
        ),
        ("reject", "{}", OutcomeKind::Rejected, OutcomeKind::Rejected),
        // A plain handler error: `failed` on both sides, not `rejected` here (T2).
        ("fail", "{}", OutcomeKind::Failed, OutcomeKind::Failed),
        // A permanent failure, a panic, a policy error: `fatal` on the server, `failed` here:
        // a remote server cannot end our run.
        ("doom", "{}", OutcomeKind::Fatal, OutcomeKind::Failed),
        ("crash", "{}", OutcomeKind::Fatal, OutcomeKind::Failed),
        (
            "policy-error",
            "{}",
            OutcomeKind::Fatal,
            OutcomeKind::Failed,
        ),
        // Listed, then denied by the server's re-check: `unavailable` on both sides (T2,
        // through `Relayed`).
        (
            "deploy",
            "{}",
            OutcomeKind::Unavailable,
            OutcomeKind::Unavailable,
        ),
    ];
    for &(name, args, native_kind, remote_kind) in cases {
        // A call's context, as the agent loop gives (`policy-error` fails only in a call).
        let call_ctx = ctx.for_call("t2", name);
        let here = call(&native, name, &call_ctx, args).await;
        let there = call(remote.tools(), name, &call_ctx, args).await;
        assert_eq!(here.kind(), native_kind, "{name} {args}: {}", here.text());
        assert_eq!(there.kind(), remote_kind, "{name} {args}: {}", there.text());
        if native_kind == OutcomeKind::InvalidArguments {
            // Checked by the client against the published schema: the same rules at the same
            // pointers; the wording is the client validator's (T1, planned).
            let rules = |o: &Outcome| {
                let r: Vec<(String, &str)> = o
                    .violations()
                    .iter()
                    .map(|v| (v.path.clone(), v.rule.keyword()))
                    .collect();
                r
            };
            assert_eq!(rules(&here), rules(&there), "{name} {args}");
        } else {
            // The model reads the same text on both sides.
            assert_eq!(here.text(), there.text(), "{name} {args}");
        }
    }
    // The server's `fatal` is kept for the application (E3).
    let doom = call(remote.tools(), "doom", &ctx, "{}").await;
    let error = doom.error().expect("the error is kept (E3)");
    assert!(
        matches!(
            find_in_chain::<RemoteCallError>(error),
            Some(RemoteCallError::Failed { kind: "fatal", .. })
        ),
        "{error:?}"
    );
    assert!(!doom.is_fatal());
    remote.close().await;
}

/// A scripted MCP server that is not ours: each `tools/call` is answered with the `isError`
/// result and `_meta` its tool stands for, whatever `_meta` claims.
async fn claiming_server(io: tokio::io::DuplexStream) {
    let (read, mut write) = tokio::io::split(io);
    let mut lines = BufReader::new(read).lines();
    let tools = [
        "claims-fatal",
        "claims-bogus",
        "claims-failed-success",
        "claims-invalid",
        "claims-invalid-garbled",
        "claims-denied",
        "plain-error",
    ];
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id").cloned() else {
            continue; // a notification
        };
        let result = match request["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "claims", "version": "0"},
            }),
            Some("tools/list") => json!({
                "tools": tools.iter().map(|name| json!({
                    "name": name,
                    "description": "Claims an outcome kind.",
                    "inputSchema": {"type": "object", "properties": {}},
                })).collect::<Vec<_>>(),
            }),
            Some("tools/call") => {
                let text = |t: &str| json!([{"type": "text", "text": t}]);
                match request["params"]["name"].as_str() {
                    Some("claims-fatal") => json!({
                        "content": text("stop everything"), "isError": true,
                        "_meta": {"tool-runtime/outcome": "fatal"},
                    }),
                    Some("claims-bogus") => json!({
                        "content": text("try again later"), "isError": true,
                        "_meta": {"tool-runtime/outcome": "apocalypse"},
                    }),
                    Some("claims-failed-success") => json!({
                        "content": text("done"), "isError": false,
                        "_meta": {"tool-runtime/outcome": "failed"},
                    }),
                    Some("claims-invalid") => json!({
                        "content": text("invalid arguments:\n- /n: too odd [custom]"),
                        "isError": true,
                        "_meta": {
                            "tool-runtime/outcome": "invalid_arguments",
                            "tool-runtime/violations":
                                [{"path": "/n", "rule": "custom", "message": "too odd"}],
                        },
                    }),
                    Some("claims-invalid-garbled") => json!({
                        "content": text("bad input"), "isError": true,
                        "_meta": {
                            "tool-runtime/outcome": "invalid_arguments",
                            "tool-runtime/violations":
                                [{"path": "n", "rule": "no-such-rule", "message": 7}],
                        },
                    }),
                    Some("claims-denied") => json!({
                        "content": text("not now: the change freeze"), "isError": true,
                        "_meta": {"tool-runtime/outcome": "denied"},
                    }),
                    _ => json!({"content": text("no such thing"), "isError": true}),
                }
            }
            _ => {
                let error = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "not served"}});
                let _ = write.write_all(format!("{error}\n").as_bytes()).await;
                continue;
            }
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if write
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

#[tokio::test]
async fn t2_a_third_party_is_error_stays_rejected_and_its_claims_cannot_end_our_run() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(claiming_server(server_io));
    let (client_read, client_write) = tokio::io::split(client_io);
    let remote = McpToolset::builder()
        .handshake(Handshake::Initialize)
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects to the scripted server");
    let ctx = Context::new();
    let outcome = |name: &'static str| {
        let tools = remote.tools();
        let ctx = &ctx;
        async move {
            let o = call(tools, name, ctx, "{}").await;
            (o.kind(), o.text().to_owned())
        }
    };
    // Without the key, a third party's `isError` is text for the model: `rejected`.
    assert_eq!(
        outcome("plain-error").await,
        (OutcomeKind::Rejected, "no such thing".to_owned())
    );
    // A claimed `fatal` is `failed` here, redacted: a remote server cannot end our run.
    assert_eq!(
        outcome("claims-fatal").await,
        (OutcomeKind::Failed, "the tool failed".to_owned())
    );
    // A kind we do not know is ignored: `rejected`, as without the key.
    assert_eq!(
        outcome("claims-bogus").await,
        (OutcomeKind::Rejected, "try again later".to_owned())
    );
    // A claim never overrides `isError: false`.
    assert_eq!(
        outcome("claims-failed-success").await,
        (OutcomeKind::Success, "done".to_owned())
    );
    // T1, T2: violations found there only (a custom validator) are violations here too, with
    // their rule and pointer; a list that is not well formed is no claim: `rejected`.
    let invalid = call(remote.tools(), "claims-invalid", &ctx, "{}").await;
    assert_eq!(invalid.kind(), OutcomeKind::InvalidArguments);
    assert_eq!(invalid.text(), "invalid arguments:\n- /n: too odd [custom]");
    assert_eq!(
        invalid.violations(),
        [tool_runtime::Violation {
            path: "/n".to_owned(),
            rule: tool_runtime::Rule::Custom,
            message: "too odd".to_owned(),
        }]
    );
    assert_eq!(
        outcome("claims-invalid-garbled").await,
        (OutcomeKind::Rejected, "bad input".to_owned())
    );
    // T2, H6: a call its user did not approve there is `denied` here, with the denial.
    assert_eq!(
        outcome("claims-denied").await,
        (OutcomeKind::Denied, "not now: the change freeze".to_owned())
    );
    remote.close().await;
}

#[test]
fn d2_n3_the_server_is_not_built_with_a_broken_tool_or_two_tools_of_one_name() {
    let tools = served().tools;
    let broken = Tool::builder("Bad_Name", "Broken.").build();
    let error = McpServer::builder()
        .tools(tools.clone())
        .tool(tools[0].clone())
        .tool(broken)
        .build()
        .expect_err("declaration problems");
    let problems: Vec<BuildProblem> = error.into_iter().collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(matches!(
        &problems[0],
        BuildProblem::Tool(DeclarationError::DuplicateName { name, .. }) if name == "lookup-window"
    ));
    assert!(matches!(
        &problems[1],
        BuildProblem::Tool(DeclarationError::InvalidName { .. })
    ));
}

/// An event's fields, as `(name, value)`.
type Fields = Vec<(String, String)>;

/// Every event at `warn` or above, with its fields.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<(Level, Fields)>>>);

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
}

impl Subscriber for Events {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Visitor(&mut fields));
        self.0
            .lock()
            .expect("not poisoned")
            .push((*event.metadata().level(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[tokio::test]
async fn e3_e4_p1_a_fatal_call_is_logged_for_the_application_and_the_server_goes_on() {
    let events = Events::default();
    // A current-thread runtime: the server's tasks log on this thread.
    let _guard = support::trace::install(events.clone());
    let remote = over_mcp(served().tools, Principal::OPERATOR).await;
    let ctx = Context::new();
    for name in ["doom", "crash", "fail"] {
        let tool = remote
            .tools()
            .iter()
            .find(|t| t.name() == name)
            .expect("served");
        assert_eq!(tool.invoke(&ctx, b"{}").await.text(), "the tool failed");
    }
    remote.close().await;
    let events = events.0.lock().expect("not poisoned").clone();
    let logged = |level: Level, needle: &str| {
        events
            .iter()
            .any(|(l, fields)| *l == level && fields.iter().any(|(_, v)| v.contains(needle)))
    };
    // P1, E4: fatal failures are errors for the application, with their cause ...
    assert!(logged(Level::ERROR, "the disk is on fire"), "{events:?}");
    assert!(logged(Level::ERROR, "the handler exploded"), "{events:?}");
    // ... an ordinary failure a warning (E3), its secret kept for the application only.
    assert!(logged(Level::WARN, "hunter2"), "{events:?}");
}
