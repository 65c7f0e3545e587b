//! K1 on every transport: one hook, registered on an agent and on an `McpServer`, gives the
//! same answers for the same calls, whether the server is reached through our `McpToolset` or
//! the official MCP Python SDK's client (T1). A hook sees the transport it runs on. A hook that
//! ends the run, or panics, answers `the tool failed` over MCP (a server cannot end its
//! client's run), the application reads why (E3, E4), and the server goes on.
#![cfg(feature = "mcp")]

#[path = "support/raw_pipe.rs"]
mod raw_pipe;

mod support {
    pub mod mcp;
}

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::mcp::{Principal, served};
use tool_runtime::hook::{After, Before, Hook, HookCall, Transport};
use tool_runtime::mcp::{McpServer, McpServerBuilder, McpToolset};
use tool_runtime::{
    Agent, Context, ErrorKind, Outcome, OutcomeKind, ScriptedModel, ScriptedTurn, Tool,
};

/// The guardrail under test: written once, registered on every transport.
#[derive(Default)]
struct Guard {
    /// The transport of each call that reached the hook.
    transports: Mutex<Vec<(String, Transport)>>,
}

impl Hook for Guard {
    async fn before(&self, call: &HookCall<'_>) -> Before {
        self.transports
            .lock()
            .expect("not poisoned")
            .push((call.name().to_owned(), call.transport()));
        match call.arguments().get("who").and_then(Value::as_str) {
            Some("Mallory") => Before::deny("Mallory is not greeted here."),
            Some("stop") => Before::end(std::io::Error::other("the guard ended the run")),
            Some("boom") => panic!("the guard exploded"),
            _ => Before::Allow,
        }
    }

    async fn after(&self, call: &HookCall<'_>, outcome: &Outcome) -> After {
        tokio::task::yield_now().await;
        match (call.name(), outcome.kind()) {
            ("fail", OutcomeKind::Failed) => After::replace("The backend is unavailable."),
            ("lookup-window", OutcomeKind::Success) => {
                After::replace(format!("window: {}", outcome.text()))
            }
            _ => After::Keep,
        }
    }
}

/// The calls both transports answer, in order: (tool, arguments).
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("lookup-window", json!({"service_id": "svc-42"})),
        ("greet", json!({"who": "Ada"})),
        ("greet", json!({"who": "Mallory"})),
        ("fail", json!({})),
        ("reject", json!({})),
    ]
}

/// What the model read of each call: (text, is_error).
type Answers = Vec<(String, bool)>;

/// The answers the agent's model reads for `calls()`, through an agent holding `tools`.
async fn answers(tools: Vec<Tool>, guard: Option<Arc<Guard>>) -> (Answers, Vec<OutcomeKind>) {
    let mut turn = ScriptedTurn::new();
    for (i, (name, args)) in calls().into_iter().enumerate() {
        turn = turn.call(format!("c{i}"), name, args.to_string());
    }
    let model = ScriptedModel::new([turn, ScriptedTurn::reply("done")]);
    let mut builder = Agent::builder(model.clone()).tools(tools);
    if let Some(guard) = guard {
        builder = builder.hook(guard);
    }
    let agent = builder.build().expect("the tools are declared right");
    let out = agent
        .run(&Context::new().with(Principal::OPERATOR), "go")
        .await
        .expect("the run ends with an answer");
    let requests = model.requests();
    let answers = requests[1]
        .tool_results()
        .iter()
        .map(|r| (r.text.clone(), r.is_error))
        .collect();
    (answers, out.calls.iter().map(|c| c.kind()).collect())
}

fn server(guard: Arc<Guard>) -> McpServerBuilder {
    McpServer::builder()
        .name("hooks-test")
        .tools(served().tools)
        .context(|_req| async { Ok::<_, &str>(Context::new().with(Principal::OPERATOR)) })
        .hook(guard)
}

/// Our client, connected to `server` in process.
async fn connect(server: McpServer) -> McpToolset {
    support::mcp::connect_in_process(server).await
}

fn expected() -> Answers {
    let window = r#"window: {"service_id":"svc-42","days":7,"starts_at":"2026-01-06T02:00:00Z"}"#;
    [
        (window, false),
        ("Hello, Ada!", false),
        ("Mallory is not greeted here.", true),
        ("The backend is unavailable.", true),
        ("No maintenance window is scheduled.", true),
    ]
    .into_iter()
    .map(|(text, error)| (text.to_owned(), error))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k1_t1_one_hook_gives_the_same_answers_on_the_agent_and_over_mcp() {
    let guard = Arc::new(Guard::default());
    let (here, here_kinds) = answers(served().tools, Some(Arc::clone(&guard))).await;

    let remote = connect(server(Arc::clone(&guard)).build().expect("builds")).await;
    let (there, there_kinds) = answers(remote.tools().to_vec(), None).await;
    remote.close().await;

    assert_eq!(here, expected());
    assert_eq!(there, here, "the same hook, the same answers (T1)");
    assert_eq!(
        here_kinds,
        [
            OutcomeKind::Success,
            OutcomeKind::Success,
            OutcomeKind::Denied,
            OutcomeKind::Rejected,
            OutcomeKind::Rejected,
        ]
    );
    assert_eq!(
        there_kinds, here_kinds,
        "the kinds survive the transport (T2)"
    );
    // The hook ran on each transport, and knew which.
    let transports = guard.transports.lock().expect("not poisoned");
    let count = |t: Transport| transports.iter().filter(|(_, seen)| *seen == t).count();
    assert_eq!((count(Transport::Agent), count(Transport::Mcp)), (5, 5));
}

/// What the server's `on_outcome` saw of each call: the outcome kind, the error's kind and
/// text.
type Seen = Arc<Mutex<Vec<(OutcomeKind, Option<(ErrorKind, String)>)>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k1_e4_ending_the_run_or_panicking_answers_the_tool_failed_and_the_server_goes_on() {
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let server = server(Arc::new(Guard::default()))
        .on_outcome(move |call| {
            let error = call.outcome.error().map(|e| (e.kind(), format!("{e:#}")));
            log.lock()
                .expect("not poisoned")
                .push((call.outcome.kind(), error));
        })
        .build()
        .expect("builds");
    let remote = connect(server).await;
    let greet = remote
        .tools()
        .iter()
        .find(|t| t.name() == "greet")
        .expect("greet is listed");
    let ctx = Context::new();

    for who in ["stop", "boom", "Ada"] {
        let args = json!({ "who": who }).to_string();
        let outcome = greet.invoke(&ctx, args.as_bytes()).await;
        match who {
            "Ada" => assert_eq!(outcome.text(), "Hello, Ada!", "the server went on"),
            _ => {
                // A remote `fatal` is `failed` here: a server cannot end our run.
                assert_eq!(outcome.kind(), OutcomeKind::Failed, "{who}");
                assert_eq!(outcome.text(), "the tool failed", "{who}");
            }
        }
    }
    remote.close().await;

    let seen = seen.lock().expect("not poisoned");
    assert_eq!(seen.len(), 3);
    let (kind, error) = &seen[0];
    let (error_kind, text) = error.as_ref().expect("the application reads why");
    assert_eq!((*kind, *error_kind), (OutcomeKind::Fatal, ErrorKind::Hook));
    assert!(text.contains("the guard ended the run"), "{text}");
    let (kind, error) = &seen[1];
    let (error_kind, text) = error.as_ref().expect("the application reads why");
    assert_eq!((*kind, *error_kind), (OutcomeKind::Fatal, ErrorKind::Panic));
    assert!(text.contains("the guard exploded"), "{text}");
    assert_eq!(seen[2].0, OutcomeKind::Success);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k1_t1_the_python_sdk_client_reads_what_the_agent_reads() {
    let guard = Arc::new(Guard::default());
    let server = server(Arc::clone(&guard)).build().expect("builds");
    let mut calls: Vec<Value> = calls()
        .into_iter()
        .map(|(name, args)| json!([name, args]))
        .collect();
    // Then a call the hook ends, one it panics in, and one more: the server goes on.
    calls.push(json!(["greet", {"who": "stop"}]));
    calls.push(json!(["greet", {"who": "boom"}]));
    calls.push(json!(["greet", {"who": "Grace"}]));

    let run = support::mcp::run_python_client(
        server,
        "hooks_client.py",
        &[Value::Array(calls).to_string()],
    )
    .await;
    let (report, status_ok) = (run.report, run.success);
    run.serving.abort();
    assert!(
        status_ok && report.contains("all calls answered"),
        "the Python client failed:\n{report}"
    );

    let results: Vec<Value> = report
        .lines()
        .filter_map(|line| line.strip_prefix("RESULT "))
        .map(|line| serde_json::from_str(line).expect("a JSON result"))
        .collect();
    let answers: Answers = results
        .iter()
        .map(|r| {
            (
                r["text"].as_str().unwrap_or_default().to_owned(),
                r["is_error"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    let mut expected = expected();
    expected.push(("the tool failed".to_owned(), true));
    expected.push(("the tool failed".to_owned(), true));
    expected.push(("Hello, Grace!".to_owned(), false));
    assert_eq!(answers, expected, "{report}");
    let kinds: Vec<&str> = results
        .iter()
        .map(|r| r["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        [
            "success", "success", "denied", "rejected", "rejected", "fatal", "fatal", "success"
        ]
    );
    let transports = guard.transports.lock().expect("not poisoned");
    assert!(transports.iter().all(|(_, t)| *t == Transport::Mcp));
    assert_eq!(transports.len(), 8);
}

/// Asks its user to confirm each call, and lets a call through when its question was cancelled
/// (carelessly, as a hook may).
struct Confirming;

/// What `Confirming` asks.
#[derive(tool_runtime::Schema)]
struct Confirm {
    /// Whether the user is sure.
    sure: bool,
}

impl Hook for Confirming {
    async fn before(&self, call: &HookCall<'_>) -> Before {
        let asked = call.context().elicit_named::<Confirm>("confirm", "Really?");
        match asked.await {
            Ok(
                tool_runtime::elicit::Elicited::Accepted(Confirm { sure: true })
                | tool_runtime::elicit::Elicited::Cancelled,
            ) => Before::Allow,
            _ => Before::deny("not confirmed"),
        }
    }
}

/// K1, M3: on 2026-07-28 a hook asks in the call's rounds; its question ends the call, and the
/// handler does not run for that answer even when the hook, told its question was cancelled,
/// lets the call through. With the answer, the hook allows and the handler runs once.
#[tokio::test]
async fn k1_m3_a_hooks_question_ends_the_call_before_the_handler_runs() {
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let deploy = Tool::builder("deploy", "Deploys.")
        .handler(move |_ctx: Context, _args: support::mcp::Args| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { Ok::<_, std::io::Error>("deployed") }
        })
        .build();
    let server = McpServer::builder()
        .tool(deploy)
        .hook(Confirming)
        .build()
        .expect("built");
    let mut raw = raw_pipe::Raw::unopened(server);
    let meta = raw_pipe::meta_2026("k1", json!({"elicitation": {}}));
    let params = json!({"name": "deploy", "arguments": {}, "_meta": meta});
    let first = raw.answer("tools/call", params.clone()).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the handler does not run for a call its hook's question ended"
    );
    let mut again = params;
    again["requestState"] = first["result"]["requestState"].clone();
    again["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"sure": true}}});
    let second = raw.answer("tools/call", again).await;
    assert_eq!(
        second["result"]["content"][0]["text"], "deployed",
        "{second}"
    );
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 1);
}
