//! Servers that speak OpenAI's APIs their own way (V2): llama.cpp's Responses
//! stream, which correlates function-call events by `item_id` alone, and `tool_choice`,
//! which llama.cpp takes only as a string.

#![cfg(feature = "openai")]

mod support {
    pub mod provider;
}

use serde_json::{Value, json};
use support::provider::scenario::{RESULT_7, RESULT_42, tag_service, test_agent};
use support::provider::{Reply, Server, chat_answer, drain_model, fixture, responses_answer};
use tool_runtime::providers::RequestError;
use tool_runtime::providers::openai::{OpenAiChat, OpenAiResponses, ToolChoice};
use tool_runtime::{Context, ErrorKind, Model, ModelError, ModelEvent, ModelRequest};

// V2: llama.cpp's Responses stream gives a function call no `output_index` (nor
// an item `id`) and sends its argument deltas with `item_id` set to the call's `call_id`:
// the driver correlates them by that id, and both calls run with their whole arguments.
#[tokio::test]
async fn llama_cpp_responses_calls_are_correlated_by_item_id() {
    let server = Server::start([
        Reply::sse(fixture("llamacpp_responses_calls.sse")),
        Reply::sse(responses_answer("svc-42 is down on Tuesday.")),
    ])
    .await;
    let model = OpenAiResponses::compatible(format!("{}/v1", server.url()))
        .model("qwen3-8b")
        .build()
        .expect("a valid configuration");
    let agent = test_agent(model, []);
    let out = agent
        .run(&Context::new(), "When are svc-42 and svc-7 down?")
        .await
        .expect("the run answers");
    assert_eq!(out.text, "svc-42 is down on Tuesday.");
    assert_eq!(out.calls.len(), 2);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("authorization"),
        None,
        "no key, no header"
    );
    let input = requests[1].json()["input"].clone();
    let items = input.as_array().expect("input items");
    let n = items.len();
    assert_eq!(
        items[n - 4],
        json!({"type": "function_call", "call_id": "fc_Hc3VxQ9pL2", "name": "lookup-window",
               "arguments": "{\"service_id\":\"svc-42\",\"days\":3}"})
    );
    assert_eq!(
        items[n - 3],
        json!({"type": "function_call", "call_id": "fc_Wn8sYd1Rb5", "name": "lookup-window",
               "arguments": "{\"service_id\":\"svc-7\"}"})
    );
    assert_eq!(
        items[n - 2],
        json!({"type": "function_call_output", "call_id": "fc_Hc3VxQ9pL2", "output": RESULT_42})
    );
    assert_eq!(
        items[n - 1],
        json!({"type": "function_call_output", "call_id": "fc_Wn8sYd1Rb5", "output": RESULT_7})
    );
}

// V2: the same stream through the driver alone: each call starts once, gets its
// fragments in order and ends once, whatever the chunking.
#[tokio::test]
async fn llama_cpp_responses_events_are_whole_in_any_split() {
    let mut seen = Vec::new();
    for sizes in [&[usize::MAX][..], &[1], &[7, 3]] {
        let server =
            Server::start([Reply::sse(fixture("llamacpp_responses_calls.sse")).split_every(sizes)])
                .await;
        let model = OpenAiResponses::compatible(format!("{}/v1", server.url()))
            .model("qwen3-8b")
            .build()
            .expect("a valid configuration");
        let (events, error) = drain_model(model.stream(ModelRequest::new(&[], &[]))).await;
        assert!(error.is_none(), "{error:?}");
        seen.push(events);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]));
    let starts: Vec<(usize, &str)> = seen[0]
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCallStart { index, id, .. } => Some((*index, id.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(starts, [(0, "fc_Hc3VxQ9pL2"), (1, "fc_Wn8sYd1Rb5")]);
    let ends = seen[0]
        .iter()
        .filter(|e| matches!(e, ModelEvent::ToolCallEnd { .. }))
        .count();
    assert_eq!(ends, 2);
}

fn compatible_chat(server: &Server, choice: ToolChoice) -> OpenAiChat {
    OpenAiChat::compatible(format!("{}/v1", server.url()))
        .model("qwen3-8b")
        .tool_choice(choice)
        .build()
        .expect("a valid configuration")
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| {
                    t.pointer("/function/name")
                        .or_else(|| t.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

// V2: llama.cpp reads `tool_choice` only as a string (`auto`, `none`,
// `required`) and takes OpenAI's object form for a named tool as `auto`, silently. On a
// compatible server a named tool choice is therefore sent as `"required"` with only that
// tool advertised, which forces the same call; the string forms go as they are.
#[tokio::test]
async fn a_named_tool_choice_works_on_a_compatible_server() {
    let server = Server::start([
        Reply::sse(chat_answer("a")),
        Reply::sse(chat_answer("b")),
        Reply::sse(responses_answer("c")),
    ])
    .await;
    let agent = test_agent(
        compatible_chat(&server, ToolChoice::Tool("tag-service".into())),
        [tag_service()],
    );
    agent.run(&Context::new(), "hi").await.expect("answers");
    let agent = test_agent(
        compatible_chat(&server, ToolChoice::Required),
        [tag_service()],
    );
    agent.run(&Context::new(), "hi").await.expect("answers");
    let responses = OpenAiResponses::compatible(format!("{}/v1", server.url()))
        .model("qwen3-8b")
        .tool_choice(ToolChoice::Tool("lookup-window".into()))
        .build()
        .expect("a valid configuration");
    test_agent(responses, [tag_service()])
        .run(&Context::new(), "hi")
        .await
        .expect("answers");

    let requests = server.requests();
    let named = requests[0].json();
    assert_eq!(named["tool_choice"], "required");
    assert_eq!(tool_names(&named), ["tag-service"]);
    let required = requests[1].json();
    assert_eq!(required["tool_choice"], "required");
    assert_eq!(tool_names(&required), ["lookup-window", "tag-service"]);
    let named = requests[2].json();
    assert_eq!(named["tool_choice"], "required");
    assert_eq!(tool_names(&named), ["lookup-window"]);
}

// V2: OpenAI itself keeps the object form and every tool.
#[tokio::test]
async fn a_named_tool_choice_keeps_the_object_form_for_openai() {
    let server = Server::start([Reply::sse(chat_answer("a"))]).await;
    let model = OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .tool_choice(ToolChoice::Tool("tag-service".into()))
        .build()
        .expect("a valid configuration");
    test_agent(model, [tag_service()])
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    let body = server.requests()[0].json();
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "tag-service"}})
    );
    assert_eq!(tool_names(&body), ["lookup-window", "tag-service"]);
}

// V2: a tool choice that names a tool the request does not advertise (a typo, or
// a tool unavailable to this context, A2) fails before any I/O with an error naming it,
// rather than being dropped by the server.
#[tokio::test]
async fn a_tool_choice_naming_no_advertised_tool_fails_before_any_io() {
    let server = Server::start([Reply::sse(chat_answer("never"))]).await;
    for model in [
        compatible_chat(&server, ToolChoice::Tool("lookup-windows".into())),
        OpenAiChat::builder()
            .api_key("sk-test-key")
            .base_url(format!("{}/v1", server.url()))
            .tool_choice(ToolChoice::Tool("lookup-windows".into()))
            .build()
            .expect("a valid configuration"),
    ] {
        let err = test_agent(model, [])
            .run(&Context::new(), "hi")
            .await
            .expect_err("refused");
        assert_eq!(err.kind(), ErrorKind::Model);
        let Some(ModelError::Other(source)) = err.model_error() else {
            panic!("expected a request error, got {err:?}");
        };
        assert_eq!(
            source.downcast_ref::<RequestError>(),
            Some(&RequestError::UnknownToolChoice {
                name: "lookup-windows".into()
            })
        );
        assert!(err.to_string().contains("lookup-windows"), "{err}");
    }
    assert_eq!(server.request_count(), 0);
}
