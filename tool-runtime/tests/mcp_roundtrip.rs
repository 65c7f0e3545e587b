//! One declaration, two transports: each tool called natively and through MCP (our server,
//! our client, in process) gives the model the same text (E1, E2, A4/A5), and bad arguments
//! break the same rules at the same JSON pointers (S2), the remote side checking them against
//! the published schema before anything is sent. Also what the server refuses to build
//! (D2, N3).
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::sync::{Arc, Mutex};

use support::mcp::{Principal, served};
use tool_runtime::mcp::{Handshake, McpServer, McpToolset};
use tool_runtime::{BuildProblem, Context, DeclarationError, OutcomeKind, Tool};
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
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    McpToolset::builder()
        .handshake(Handshake::Auto)
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects to our server")
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
    let _guard = tracing::subscriber::set_default(events.clone());
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
