//! K2: a run's spans follow the OpenTelemetry GenAI semantic conventions. `invoke_agent
//! {agent}` for the run, `chat {model}` for each request and `execute_tool {tool}` for each
//! call (both children of the run), with their kinds, the `gen_ai.*` attributes, and on
//! failure `error.type` (a kind, never a message) and the error status. Arguments and results
//! are recorded only when the application opts in, and then the result is the model's
//! (redacted) text.

mod support {
    pub mod agent;
    pub mod spans;
    pub mod trace;
}

use support::agent::{Args, tool};
use support::spans::Spans;
use tool_runtime::{
    Agent, Context, ErrorKind, FinishReason, Model, ModelError, OfflineModel, ScriptedModel,
    ScriptedTurn, Tool,
};

fn lookup() -> Tool {
    tool("lookup", |_ctx, args: Args| async move {
        Ok::<_, std::io::Error>(format!("found {}", args.len()))
    })
}

fn failing() -> Tool {
    tool("failing", |_ctx, _args: Args| async move {
        Err::<(), _>(std::io::Error::other("SECRET db password rejected"))
    })
}

#[tokio::test]
async fn k2_run_request_and_call_spans_follow_the_genai_conventions() {
    let spans = Spans::default();
    let _guard = spans.install();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("call-1", "lookup", r#"{"service": "ARG-VALUE-1"}"#)
            .usage(100, 10)
            .finish(FinishReason::ToolCalls),
        ScriptedTurn::reply("done")
            .usage(150, 20)
            .finish(FinishReason::Stop),
    ]);
    let agent = Agent::builder(model)
        .name("maintenance")
        .tool(lookup())
        .build()
        .unwrap();
    agent.run(&Context::new(), "go").await.unwrap();

    let run = spans.one("invoke_agent");
    assert_eq!(run.field("otel.name"), "invoke_agent maintenance");
    assert_eq!(run.field("otel.kind"), "internal");
    assert_eq!(run.field("gen_ai.operation.name"), "invoke_agent");
    assert_eq!(run.field("gen_ai.agent.name"), "maintenance");
    assert_eq!(run.field("gen_ai.provider.name"), "scripted");
    assert_eq!(run.field("gen_ai.request.model"), "scripted");
    assert_eq!(run.field("gen_ai.usage.input_tokens"), "250");
    assert_eq!(run.field("gen_ai.usage.output_tokens"), "30");
    assert_eq!(run.field("tool_runtime.outcome"), "answered");
    assert_eq!(run.get("error.type"), None);
    assert_eq!(run.get("otel.status_code"), None);

    let chats = spans.named("chat");
    assert_eq!(chats.len(), 2);
    for (chat, (input, output, finish)) in chats
        .iter()
        .zip([("100", "10", "tool_calls"), ("150", "20", "stop")])
    {
        assert_eq!(chat.field("otel.name"), "chat scripted");
        assert_eq!(chat.field("otel.kind"), "client");
        assert_eq!(chat.field("gen_ai.operation.name"), "chat");
        assert_eq!(chat.field("gen_ai.provider.name"), "scripted");
        assert_eq!(chat.field("gen_ai.request.model"), "scripted");
        assert_eq!(chat.field("gen_ai.usage.input_tokens"), input);
        assert_eq!(chat.field("gen_ai.usage.output_tokens"), output);
        assert_eq!(chat.field("gen_ai.response.finish_reasons"), finish);
        assert_eq!(chat.parent, Some(run.id), "a request is a child of its run");
    }

    let call = spans.one("execute_tool");
    assert_eq!(call.field("otel.name"), "execute_tool lookup");
    assert_eq!(call.field("otel.kind"), "internal");
    assert_eq!(call.field("gen_ai.operation.name"), "execute_tool");
    assert_eq!(call.field("gen_ai.tool.name"), "lookup");
    assert_eq!(call.field("gen_ai.tool.call.id"), "call-1");
    assert_eq!(call.field("gen_ai.tool.type"), "function");
    assert_eq!(call.field("tool_runtime.outcome"), "success");
    assert_eq!(call.get("error.type"), None);
    assert_eq!(call.parent, Some(run.id), "a call is a child of its run");
    // Not opted in: neither the arguments nor the result are recorded.
    assert_eq!(call.get("gen_ai.tool.call.arguments"), None);
    assert_eq!(call.get("gen_ai.tool.call.result"), None);
    assert!(!spans.mention("ARG-VALUE-1"));
    assert!(!spans.in_span_fields("found 1"));
}

#[tokio::test]
async fn k2_an_agent_without_a_name_runs_in_a_span_named_invoke_agent() {
    let spans = Spans::default();
    let _guard = spans.install();
    let agent = Agent::builder(OfflineModel::new()).build().unwrap();
    agent.run(&Context::new(), "hi").await.unwrap();
    let run = spans.one("invoke_agent");
    assert_eq!(run.field("otel.name"), "invoke_agent");
    assert_eq!(run.get("gen_ai.agent.name"), None);
    assert_eq!(run.field("gen_ai.provider.name"), "offline");
    assert_eq!(spans.one("chat").field("otel.name"), "chat offline");
}

/// A model that names neither its provider nor its model (the trait's defaults).
struct Anonymous(ScriptedModel);

impl Model for Anonymous {
    fn stream<'a>(
        &'a self,
        request: tool_runtime::ModelRequest<'a>,
    ) -> tool_runtime::ModelStream<'a> {
        self.0.stream(request)
    }
}

#[tokio::test]
async fn k2_a_model_that_names_nothing_gets_a_chat_span_and_an_unknown_provider() {
    let spans = Spans::default();
    let _guard = spans.install();
    let model = Anonymous(ScriptedModel::new([ScriptedTurn::reply("hi")]));
    let agent = Agent::builder(model).build().unwrap();
    agent.run(&Context::new(), "hi").await.unwrap();
    let chat = spans.one("chat");
    assert_eq!(chat.field("otel.name"), "chat");
    assert_eq!(
        chat.field("gen_ai.provider.name"),
        tool_runtime::UNKNOWN_PROVIDER
    );
    assert_eq!(chat.get("gen_ai.request.model"), None);
    // No usage reported: none recorded (rather than zeros).
    assert_eq!(chat.get("gen_ai.usage.input_tokens"), None);
}

#[tokio::test]
async fn k2_failures_carry_their_kind_as_error_type_and_never_the_message() {
    let spans = Spans::default();
    let _guard = spans.install();
    // A failing call, then the model's script runs out: the request fails, and so does the
    // run.
    let model = ScriptedModel::new([ScriptedTurn::new().call("c1", "failing", "{}")]);
    let agent = Agent::builder(model).tool(failing()).build().unwrap();
    let error = agent.run(&Context::new(), "go").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Model);

    let call = spans.one("execute_tool");
    assert_eq!(call.field("tool_runtime.outcome"), "failed");
    assert_eq!(call.field("error.type"), "failed");
    assert_eq!(call.field("otel.status_code"), "ERROR");
    let chats = spans.named("chat");
    assert_eq!(chats[0].get("error.type"), None);
    assert_eq!(chats[1].field("error.type"), "script_exhausted");
    assert_eq!(chats[1].field("otel.status_code"), "ERROR");
    let run = spans.one("invoke_agent");
    assert_eq!(run.field("error.type"), "model");
    assert_eq!(run.field("otel.status_code"), "ERROR");
    // The cause is logged for the application (E3), never put in a span's fields.
    assert!(spans.mention("SECRET db password rejected"));
    assert!(!spans.in_span_fields("SECRET"));

    // A run cut at its turn limit: a kind of two words, snake-cased.
    let spans = Spans::default();
    let _guard = spans.install();
    let model = ScriptedModel::new([ScriptedTurn::new().call("c1", "lookup", "{}")]);
    let agent = Agent::builder(model)
        .tool(lookup())
        .max_turns(1)
        .build()
        .unwrap();
    let error = agent.run(&Context::new(), "go").await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::MaxTurns);
    assert_eq!(spans.one("invoke_agent").field("error.type"), "max_turns");
}

#[tokio::test]
async fn k2_arguments_and_results_are_recorded_only_when_opted_in_and_redacted() {
    let spans = Spans::default();
    let _guard = spans.install();
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "lookup", r#"{"service":"svc-42"}"#)
            .call("c2", "failing", r#"{"token":"T"}"#),
        ScriptedTurn::reply("done"),
    ]);
    let agent = Agent::builder(model)
        .tool(lookup())
        .tool(failing())
        .record_tool_content(true)
        .build()
        .unwrap();
    agent.run(&Context::new(), "go").await.unwrap();

    let calls = spans.named("execute_tool");
    let ok = calls
        .iter()
        .find(|s| s.field("gen_ai.tool.name") == "lookup")
        .unwrap();
    assert_eq!(
        ok.field("gen_ai.tool.call.arguments"),
        r#"{"service":"svc-42"}"#
    );
    assert_eq!(ok.field("gen_ai.tool.call.result"), "found 1");
    let failed = calls
        .iter()
        .find(|s| s.field("gen_ai.tool.name") == "failing")
        .unwrap();
    assert_eq!(
        failed.field("gen_ai.tool.call.arguments"),
        r#"{"token":"T"}"#
    );
    // The result is what the model read (E2): the cause stays out of the span.
    assert_eq!(failed.field("gen_ai.tool.call.result"), "the tool failed");
    assert!(!spans.in_span_fields("SECRET"));
}

#[tokio::test]
async fn k2_a_model_error_names_its_kind_not_the_providers_message() {
    let spans = Spans::default();
    let _guard = spans.install();
    let model = ScriptedModel::new([ScriptedTurn::new().fail(ModelError::Provider {
        status: 400,
        message: "SECRET-ish provider text".to_owned(),
    })]);
    let agent = Agent::builder(model).build().unwrap();
    agent.run(&Context::new(), "go").await.unwrap_err();
    assert_eq!(spans.one("chat").field("error.type"), "provider_error");
    assert!(!spans.in_span_fields("provider text"));
}
