//! M3, H2: a remote server's approval question, asked in its answer to a call
//! (`input_required`, protocol 2026-07-28), pauses the local run when the toolset says so
//! (`pause_on_approval`): the call waits for approval with the server's question as its
//! reason, the remote handler has not run; approved at resume, the call runs again and the
//! server's question is answered yes; denied, it never runs. Without pausing, the toolset's
//! elicitor answers the question, and the call goes on.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tool_runtime::approval::Approval;
use tool_runtime::mcp::{Handshake, McpServer, McpToolset, McpToolsetBuilder};
use tool_runtime::{
    Agent, Context, Decisions, ElicitAnswer, OutcomeKind, ScriptedModel, ScriptedTurn, Tool,
};

/// A server whose `restart` needs its user's approval, and how often its handler ran.
fn server() -> (McpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let restart = Tool::builder("restart", "Restarts a service.")
        .handler(
            move |_ctx: Context, args: std::collections::BTreeMap<String, Value>| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, std::io::Error>(format!("{} restarted", args["service_id"])) }
            },
        )
        .approval_fn(
            |_ctx: &Context, _args: &std::collections::BTreeMap<String, Value>| {
                Ok::<_, std::io::Error>(Approval::required("it restarts a production service"))
            },
        )
        .build();
    let server = McpServer::builder()
        .tool(restart)
        .build()
        .expect("the tool is declared right");
    (server, runs)
}

/// `builder` connected to `server` over an in-process pipe, on protocol 2026-07-28.
async fn connect(server: McpServer, builder: McpToolsetBuilder) -> McpToolset {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    builder
        .handshake(Handshake::Discover)
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects to our server")
}

fn calling_restart() -> ScriptedTurn {
    ScriptedTurn::new().call("c1", "restart", r#"{"service_id": "prod-db"}"#)
}

#[tokio::test]
async fn m3_h2_a_remote_approval_question_pauses_the_local_run_and_approval_runs_the_call() {
    let (server, runs) = server();
    let toolset = connect(server, McpToolset::builder().pause_on_approval()).await;
    assert!(
        toolset.tools()[0].can_pause(),
        "every remote tool may pause"
    );
    let model = ScriptedModel::new([calling_restart(), ScriptedTurn::reply("Restarted.")]);
    let agent = Agent::builder(model.clone())
        .tools(toolset.into_tools())
        .build()
        .expect("the agent builds");
    let ctx = Context::new();
    let paused = agent
        .run(&ctx, "Restart prod-db.")
        .await
        .expect_err("the run pauses")
        .into_paused()
        .expect("a pause, not a failure");
    let pending = &paused.pending()[0];
    assert_eq!(pending.id(), "c1");
    assert!(
        pending
            .reason()
            .is_some_and(|r| r.contains("it restarts a production service")),
        "the server's question is the reason: {:?}",
        pending.reason()
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        0,
        "the remote handler has not run"
    );

    let out = agent
        .resume(&ctx, paused, Decisions::new().approve("c1"))
        .await
        .expect("the approved call runs and the run ends");
    assert_eq!(out.text, "Restarted.");
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the remote handler ran once"
    );
    assert_eq!(
        out.calls[0].kind(),
        OutcomeKind::Success,
        "{:?}",
        out.calls[0]
    );
    assert_eq!(out.calls[0].outcome.text(), "\"prod-db\" restarted");
}

#[tokio::test]
async fn m3_h2_a_denied_remote_call_never_runs() {
    let (server, runs) = server();
    let toolset = connect(server, McpToolset::builder().pause_on_approval()).await;
    let model = ScriptedModel::new([calling_restart(), ScriptedTurn::reply("Not restarted.")]);
    let agent = Agent::builder(model)
        .tools(toolset.into_tools())
        .build()
        .expect("the agent builds");
    let ctx = Context::new();
    let paused = (agent.run(&ctx, "Restart prod-db.").await)
        .expect_err("the run pauses")
        .into_paused()
        .expect("a pause");
    let out = agent
        .resume(&ctx, paused, Decisions::new().deny("c1"))
        .await
        .expect("the run ends");
    assert_eq!(out.calls[0].kind(), OutcomeKind::Denied);
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn m3_without_pausing_the_elicitor_answers_a_question_asked_in_the_answer() {
    let (server, runs) = server();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let heard = Arc::clone(&asked);
    let builder = McpToolset::builder().elicitor(move |message: String, _schema: Value| {
        let heard = Arc::clone(&heard);
        async move {
            heard.lock().map(|mut h| h.push(message)).ok();
            Ok::<_, tool_runtime::ElicitError>(ElicitAnswer::Accept(Value::Object(
                Default::default(),
            )))
        }
    });
    let toolset = connect(server, builder).await;
    let restart = &toolset.tools()[0];
    let outcome = restart
        .invoke(&Context::new(), br#"{"service_id": "prod-db"}"#)
        .await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{outcome:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let asked = asked.lock().map(|a| a.clone()).unwrap_or_default();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains("it restarts a production service"),
        "{asked:?}"
    );
}
