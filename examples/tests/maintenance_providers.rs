//! The maintenance agent of `examples/maintenance.rs` (`lookup-window` and `restart-service`
//! over `Windows::demo()`, asked by an operator) run end to end through each provider driver
//! of `tool_runtime::providers` against a local HTTP server on 127.0.0.1 that streams the
//! provider's real payload shapes: OpenAI Chat Completions, OpenAI Responses and Anthropic
//! Messages. Turn 1 streams a call to `lookup-window` with `{"service_id":"svc-42"}`, turn 2
//! the final answer. No test needs the network.
//!
//! Rules: V2 (a whole agent run through each driver, the results sent back in the provider's
//! own shape), R5 (the model's arguments are parsed and validated against the schema, the
//! omitted `days` taking its default, before the handler runs), E1 (the model gets the tool's
//! result as its rendered text: the approved `WindowSummary` fields, nothing else).

// The provider tests' local server and its helpers, shared rather than copied. Its `scenario`
// submodule (the provider tests' own agent) resolves next to it and is unused here.
#[path = "../../tool-runtime/tests/support/provider/mod.rs"]
mod support;

use serde_json::{Value, json};
use support::{Reply, Server, anthropic_answer, chat_answer, responses_answer};
use tool_examples::maintenance::{LookupWindow, RestartService, Role, Windows, principal};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::anthropic::Anthropic;
use tool_runtime::providers::openai::{OpenAiChat, OpenAiResponses};
use tool_runtime::{Agent, Context, Model, OutcomeKind, RunOutput};

const INSTRUCTIONS: &str = "You help operators plan maintenance.";
const QUESTION: &str = "When is svc-42 down next?";
const ANSWER: &str = "svc-42 is down on 2026-12-01 from 02:00 to 04:00 UTC.";
/// The arguments the model streams, in two fragments.
const ARGUMENTS: &str = r#"{"service_id":"svc-42"}"#;
const FRAGMENTS: [&str; 2] = [r#"{"service_id":"#, r#""svc-42"}"#];
/// Small HTTP chunks, so that SSE events and JSON fragments are cut anywhere.
const CHUNKS: &[usize] = &[7, 31, 113];

/// The maintenance agent of `examples/maintenance.rs` on `model`, asked by the operator ada
/// with the demo windows in the context, as that example does.
async fn run_maintenance(model: impl Model + 'static) -> RunOutput {
    let agent = Agent::builder(model)
        .instructions(INSTRUCTIONS)
        .tool(LookupWindow)
        .tool(RestartService)
        .build()
        .expect("the agent builds");
    let ctx = Context::new()
        .with(principal("ada", Role::Operator))
        .with(Windows::demo());
    agent.run(&ctx, QUESTION).await.expect("the run answers")
}

/// What every provider's run must show: the final text, and one successful lookup whose
/// model-facing text is the svc-42 window (R5: `days` took its default of 7, which covers
/// the window in 3 days; E1: the text is the rendered summary).
fn assert_run(out: &RunOutput, call_id: &str) {
    assert_eq!(out.text, ANSWER);
    assert_eq!(out.turns(), 2);
    // Only `lookup-window` is offered to an operator: `restart-service` is for admins.
    assert_eq!(*out.advertised, ["lookup-window"]);
    assert_eq!(out.calls.len(), 1);
    let call = &out.calls[0];
    assert_eq!(&*call.id, call_id);
    assert_eq!(&*call.name, "lookup-window");
    assert_eq!(call.arguments, ARGUMENTS);
    assert_eq!(call.kind(), OutcomeKind::Success, "{:?}", call.error());
    let text = call.text();
    assert!(
        text.contains("2026-12-01T02:00:00Z") && text.contains("2026-12-01T04:00:00Z"),
        "the svc-42 window: {text}"
    );
}

/// The names of the tools a request advertises, wherever the provider puts the name.
fn advertised(body: &Value, name_at: &str) -> Vec<String> {
    body["tools"]
        .as_array()
        .expect("the request advertises tools")
        .iter()
        .map(|tool| {
            tool.pointer(name_at)
                .and_then(Value::as_str)
                .expect("a tool name")
                .to_owned()
        })
        .collect()
}

/// SSE `data:` lines, one per event, without event names (Chat Completions).
fn data_only(events: &[Value]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// SSE events named by their `type` (Responses, Messages).
fn named(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| {
            let name = e["type"].as_str().unwrap_or_default();
            format!("event: {name}\ndata: {e}\n\n")
        })
        .collect()
}

// ─── OpenAI Chat Completions ────────────────────────────────────────────────────────────────

/// A Chat Completions turn streaming one call `call_M1` to `lookup-window`: the id and name
/// first, the arguments in fragments, then `finish_reason: tool_calls` and `[DONE]`.
fn chat_tool_call() -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-M1", "object": "chat.completion.chunk", "created": 1764500000,
               "model": "gpt-test", "choices": [{"index": 0, "delta": delta,
               "logprobs": null, "finish_reason": finish}], "usage": null})
    };
    let events = [
        chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
            "id": "call_M1", "type": "function",
            "function": {"name": "lookup-window", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": FRAGMENTS[0]}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": FRAGMENTS[1]}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
    ];
    data_only(&events) + "data: [DONE]\n\n"
}

// V2, R5, E1: the maintenance agent through Chat Completions; the second request carries the
// assistant's call and its result as a `role: tool` message with the call's `tool_call_id`.
#[tokio::test]
async fn v2_the_maintenance_agent_runs_through_chat_completions() {
    let server = Server::start([
        Reply::sse(chat_tool_call()).split_every(CHUNKS),
        Reply::sse(chat_answer(ANSWER)).split_every(CHUNKS),
    ])
    .await;
    let model = OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration");
    let out = run_maintenance(model).await;
    assert_run(&out, "call_M1");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.path == "/v1/chat/completions"));
    let second = requests[1].json();
    assert_eq!(advertised(&second, "/function/name"), ["lookup-window"]);
    let messages = second["messages"].as_array().expect("messages");
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert_eq!(messages[n - 2]["tool_calls"][0]["id"], "call_M1");
    assert_eq!(
        messages[n - 2]["tool_calls"][0]["function"]["arguments"],
        ARGUMENTS
    );
    assert_eq!(
        messages[n - 1],
        json!({"role": "tool", "tool_call_id": "call_M1", "content": out.calls[0].text()})
    );
}

// ─── OpenAI Responses ───────────────────────────────────────────────────────────────────────

/// A Responses turn streaming one `function_call` item (`call_id` `call_M1`): added, its
/// arguments in deltas, done, then `response.completed`.
fn responses_tool_call() -> String {
    let item = |status: &str, arguments: &str| {
        json!({"id": "fc_M1", "type": "function_call", "status": status,
               "arguments": arguments, "call_id": "call_M1", "name": "lookup-window"})
    };
    let events = [
        json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_M1",
            "object": "response", "status": "in_progress", "model": "gpt-test", "output": [],
            "usage": null}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": item("in_progress", "")}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 2,
            "item_id": "fc_M1", "output_index": 0, "delta": FRAGMENTS[0]}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 3,
            "item_id": "fc_M1", "output_index": 0, "delta": FRAGMENTS[1]}),
        json!({"type": "response.function_call_arguments.done", "sequence_number": 4,
            "item_id": "fc_M1", "output_index": 0, "arguments": ARGUMENTS}),
        json!({"type": "response.output_item.done", "sequence_number": 5, "output_index": 0,
            "item": item("completed", ARGUMENTS)}),
        json!({"type": "response.completed", "sequence_number": 6, "response": {
            "id": "resp_M1", "object": "response", "status": "completed", "model": "gpt-test",
            "output": [item("completed", ARGUMENTS)],
            "usage": {"input_tokens": 120, "output_tokens": 18, "total_tokens": 138}}}),
    ];
    named(&events)
}

// V2, R5, E1: the maintenance agent through Responses; the second request carries the call
// as a `function_call` item and its result as a `function_call_output` item with `call_id`.
#[tokio::test]
async fn v2_the_maintenance_agent_runs_through_responses() {
    let server = Server::start([
        Reply::sse(responses_tool_call()).split_every(CHUNKS),
        Reply::sse(responses_answer(ANSWER)).split_every(CHUNKS),
    ])
    .await;
    let model = OpenAiResponses::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration");
    let out = run_maintenance(model).await;
    assert_run(&out, "call_M1");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.path == "/v1/responses"));
    let second = requests[1].json();
    assert_eq!(advertised(&second, "/name"), ["lookup-window"]);
    let items = second["input"].as_array().expect("input items");
    let n = items.len();
    assert_eq!(
        items[n - 2],
        json!({"type": "function_call", "call_id": "call_M1", "name": "lookup-window",
               "arguments": ARGUMENTS})
    );
    assert_eq!(
        items[n - 1],
        json!({"type": "function_call_output", "call_id": "call_M1",
               "output": out.calls[0].text()})
    );
}

// ─── Anthropic Messages ─────────────────────────────────────────────────────────────────────

/// A Messages turn streaming one `tool_use` block (`toolu_M1`): its input as
/// `input_json_delta` fragments, then `stop_reason: tool_use`.
fn anthropic_tool_use() -> String {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_M1", "type": "message",
            "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": 120, "output_tokens": 2}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use",
            "id": "toolu_M1", "name": "lookup-window", "input": {}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": FRAGMENTS[0]}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": FRAGMENTS[1]}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use",
            "stop_sequence": null}, "usage": {"output_tokens": 18}}),
        json!({"type": "message_stop"}),
    ];
    named(&events)
}

// V2, R5, E1: the maintenance agent through Messages; the second request carries the
// `tool_use` block and, first in the next user message, a `tool_result` with `tool_use_id`.
#[tokio::test]
async fn v2_the_maintenance_agent_runs_through_anthropic_messages() {
    let server = Server::start([
        Reply::sse(anthropic_tool_use()).split_every(CHUNKS),
        Reply::sse(anthropic_answer(ANSWER)).split_every(CHUNKS),
    ])
    .await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test-key")
        .base_url(server.url())
        .model("claude-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration");
    let out = run_maintenance(model).await;
    assert_run(&out, "toolu_M1");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.path == "/v1/messages"));
    let second = requests[1].json();
    assert_eq!(second["system"], INSTRUCTIONS);
    assert_eq!(advertised(&second, "/name"), ["lookup-window"]);
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(
        messages.len(),
        3,
        "user, assistant, the user message of results"
    );
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(
        messages[1]["content"][0],
        json!({"type": "tool_use", "id": "toolu_M1", "name": "lookup-window",
               "input": {"service_id": "svc-42"}})
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_M1",
               "content": out.calls[0].text()})
    );
}
