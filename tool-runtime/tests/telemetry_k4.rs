//! K4: spans carry the GenAI conventions' attributes in their specified types. A request's
//! span has what the provider answered with (`gen_ai.response.model`, `gen_ai.response.id`,
//! `gen_ai.response.finish_reasons`, a string array once exported) and where a remote provider
//! is (`server.address`, `server.port`); a call's span the tool's description; the library's
//! own attributes live under `tool_runtime.*`; a resumed run's span links to the span of the
//! run that paused.
// An OpenAI-compatible provider answers the requests; the array and the link need the
// OpenTelemetry API.
#![cfg(all(feature = "openai", feature = "opentelemetry"))]

mod support {
    pub mod agent;
    pub mod otel;
    pub mod provider;
    pub mod spans;
    pub mod trace;
}

use opentelemetry::{Array, StringValue, Value};
use support::agent::{Args, tool};
use support::otel::{Otel, attribute, count};
use support::provider::{Reply, Server, chat_answer};
use support::spans::Spans;
use tool_runtime::RunRequest;
use tool_runtime::providers::openai::OpenAiChat;
use tool_runtime::{
    Agent, Context, Decisions, ErrorKind, FinishReason, ModelEvent, ScriptedModel, ScriptedTurn,
    Tool,
};

fn lookup() -> Tool {
    tool("lookup", |_ctx, args: Args| async move {
        Ok::<_, std::io::Error>(format!("found {}", args.len()))
    })
}

fn described(id: &str, model: &str) -> ModelEvent {
    ModelEvent::Response {
        id: id.to_owned(),
        model: model.to_owned(),
    }
}

fn script() -> ScriptedModel {
    ScriptedModel::new([
        ScriptedTurn::new()
            .call("call-1", "lookup", "{}")
            .event(described("resp-1", "scripted-2026-01"))
            .finish(FinishReason::ToolCalls),
        ScriptedTurn::reply("done").finish(FinishReason::Stop),
    ])
}

#[tokio::test]
async fn k4_spans_name_the_response_the_tool_description_and_their_own_attributes() {
    let spans = Spans::default();
    let _guard = spans.install();
    let agent = Agent::builder(script()).tool(lookup()).build().unwrap();
    agent.run(&Context::new(), "go").await.unwrap();

    let run = spans.one("invoke_agent");
    assert_eq!(run.field("tool_runtime.outcome"), "answered");
    assert_eq!(run.field("tool_runtime.turns"), "2");
    assert_eq!(run.field("tool_runtime.tools"), "1");
    assert!(run.get("tool_runtime.max_turns").is_some());
    let chats = spans.named("chat");
    assert_eq!(chats[0].field("gen_ai.response.id"), "resp-1");
    assert_eq!(chats[0].field("gen_ai.response.model"), "scripted-2026-01");
    assert_eq!(chats[0].field("tool_runtime.turn"), "1");
    assert_eq!(chats[0].field("tool_runtime.calls"), "1");
    // Without an OpenTelemetry layer, the reasons are the plain field.
    assert_eq!(
        chats[0].field("gen_ai.response.finish_reasons"),
        "tool_calls"
    );
    // The second reply said neither: nothing is recorded.
    assert_eq!(chats[1].get("gen_ai.response.id"), None);
    // A model in the process has no server.
    assert_eq!(chats[0].get("server.address"), None);
    let call = spans.one("execute_tool");
    assert_eq!(call.field("gen_ai.tool.description"), "The lookup tool.");
    assert_eq!(call.field("tool_runtime.outcome"), "success");
    // No attribute of the library's is left without its namespace.
    for span in spans.all() {
        for key in ["outcome", "turn", "calls", "tools", "max_turns", "turns"] {
            assert_eq!(span.get(key), None, "{span:?}");
        }
    }
}

#[tokio::test]
async fn k4_a_remote_providers_request_names_its_server_and_its_response() {
    let spans = Spans::default();
    let _guard = spans.install();
    let server = Server::start([Reply::sse(chat_answer("Done."))]).await;
    let model = OpenAiChat::compatible(format!("{}/v1", server.url()))
        .model("llama3.2")
        .build()
        .expect("a valid configuration");
    let agent = Agent::builder(model).build().unwrap();
    agent.run(&Context::new(), "hi").await.unwrap();
    let chat = spans.one("chat");
    let port = server.url().rsplit(':').next().unwrap();
    assert_eq!(chat.field("server.address"), "127.0.0.1");
    assert_eq!(chat.field("server.port"), port);
    assert_eq!(chat.field("gen_ai.request.model"), "llama3.2");
    // What the server said: `chat_answer` streams chunks of `chatcmpl-1` by model `m`.
    assert_eq!(chat.field("gen_ai.response.id"), "chatcmpl-1");
    assert_eq!(chat.field("gen_ai.response.model"), "m");
    assert_eq!(chat.field("gen_ai.response.finish_reasons"), "stop");
}

#[cfg(feature = "opentelemetry")]
#[tokio::test]
async fn k4_exported_finish_reasons_are_a_string_array() {
    let otel = Otel::install();
    let agent = Agent::builder(script()).tool(lookup()).build().unwrap();
    agent.run(&Context::new(), "go").await.unwrap();
    let chats = otel.named("chat");
    assert_eq!(chats.len(), 2);
    let reasons = |span| attribute(span, "gen_ai.response.finish_reasons");
    let array = |reason: &str| {
        Some(Value::Array(Array::String(vec![StringValue::from(
            reason.to_owned(),
        )])))
    };
    let first = chats.iter().find(|c| reasons(c) == array("tool_calls"));
    let first = first.expect("the first request's reasons, as an array");
    assert_eq!(count(first, "gen_ai.response.finish_reasons"), 1);
    assert_eq!(
        attribute(first, "gen_ai.response.id"),
        Some(Value::from("resp-1"))
    );
    assert!(chats.iter().any(|c| reasons(c) == array("stop")));
    let call = otel.one("execute_tool");
    assert_eq!(
        attribute(&call, "gen_ai.tool.description"),
        Some(Value::from("The lookup tool."))
    );
}

#[cfg(feature = "opentelemetry")]
#[tokio::test]
async fn k4_a_resumed_run_links_to_the_span_of_the_run_that_paused() {
    let otel = Otel::install();
    let restart = Tool::builder("restart", "Restarts a service.")
        .handler(|_ctx: Context, _args: Args| async move { Ok::<_, std::io::Error>("restarted") })
        .require_approval()
        .build();
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "restart", "{}"),
        ScriptedTurn::reply("Restarted."),
    ]);
    let agent = Agent::builder(model).tool(restart).build().unwrap();
    let error = agent.run(&Context::new(), "restart").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Paused);
    let paused = error.into_paused().expect("a paused run");
    agent
        .resume(&Context::new(), paused, Decisions::new().approve("c1"))
        .await
        .expect("the resumed run answers");

    let runs = otel.named("invoke_agent");
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let (first, resumed) = match runs[0].links.links.is_empty() {
        true => (&runs[0], &runs[1]),
        false => (&runs[1], &runs[0]),
    };
    assert!(first.links.links.is_empty());
    let link = &resumed.links.links;
    assert_eq!(link.len(), 1, "{resumed:#?}");
    assert_eq!(
        link[0].span_context.trace_id(),
        first.span_context.trace_id()
    );
    assert_eq!(link[0].span_context.span_id(), first.span_context.span_id());
    // Both name the run.
    assert_eq!(
        attribute(first, "gen_ai.conversation.id"),
        attribute(resumed, "gen_ai.conversation.id")
    );
}

#[cfg(feature = "opentelemetry")]
#[tokio::test]
async fn k4_a_durable_runs_replay_links_to_the_span_of_its_first_attempt() {
    use tool_runtime::journal::MemoryJournal;

    let otel = Otel::install();
    let agent = Agent::builder(script()).tool(lookup()).build().unwrap();
    let journal = MemoryJournal::new("run-k4-replay");
    agent
        .execute(&Context::new(), RunRequest::new("go").journal(&journal))
        .await
        .expect("the first attempt answers");
    let ran = journal.ran();
    // Another attempt (another process, as far as the spans can tell: a trace of its own)
    // replays every step from the journal.
    let replay = journal.replay();
    agent
        .execute(&Context::new(), RunRequest::new("go").journal(&replay))
        .await
        .expect("the replay answers");
    assert_eq!(replay.ran(), ran, "a replay takes no step again");

    let runs = otel.named("invoke_agent");
    assert_eq!(runs.len(), 2, "{runs:#?}");
    let (first, again) = match runs[0].links.links.is_empty() {
        true => (&runs[0], &runs[1]),
        false => (&runs[1], &runs[0]),
    };
    assert!(first.links.links.is_empty(), "{first:#?}");
    assert_ne!(
        first.span_context.trace_id(),
        again.span_context.trace_id(),
        "the replay is a trace of its own"
    );
    let link = &again.links.links;
    assert_eq!(link.len(), 1, "{again:#?}");
    assert_eq!(
        link[0].span_context.trace_id(),
        first.span_context.trace_id()
    );
    assert_eq!(link[0].span_context.span_id(), first.span_context.span_id());
}
