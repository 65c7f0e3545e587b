//! The Anthropic Messages driver against a local server (V1, V2): a whole agent run with
//! `tool_use` / `tool_result` blocks, the exact request body, headers, error events.

#![cfg(feature = "anthropic")]

mod support {
    pub mod provider;
}

use serde_json::json;
use support::provider::scenario::{
    INSTRUCTIONS, RESULT_7, assert_golden_run, tag_service, test_agent,
};
use support::provider::{End, Reply, Server, anthropic_answer, fixture};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::TransportError;
use tool_runtime::providers::anthropic::{Anthropic, ToolChoice};
use tool_runtime::{Agent, Context, ErrorKind, ModelError};

fn claude(server: &Server) -> Anthropic {
    Anthropic::builder()
        .api_key("sk-ant-test-key")
        .base_url(server.url())
        .model("claude-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

// V2, E2: a tool-use turn (text, a tool_use streamed as input_json_delta fragments, and one
// whose input came whole in content_block_start), then the answer; the second request puts
// both tool_result blocks, the failed one with `is_error`, first in one user message.
#[tokio::test]
async fn v2_an_agent_runs_end_to_end_through_messages() {
    let server = Server::start([
        Reply::sse(fixture("anthropic_tool_use.sse")).header("request-id", "req_011"),
        Reply::sse(anthropic_answer("svc-42 is down on Tuesday.")),
    ])
    .await;
    let agent = test_agent(claude(&server), []);
    let out = agent
        .run(&Context::new(), "When are svc-42 and svc-7 down next?")
        .await
        .expect("the run answers");
    assert_eq!(out.text, "svc-42 is down on Tuesday.");
    assert_eq!(out.calls[1].arguments, r#"{"service_id":"svc-7"}"#);
    assert_eq!(out.usage[0].input_tokens, 512);

    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(requests[0].header("authorization"), None);
    let second = requests[1].json();
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(
        messages.len(),
        3,
        "user, assistant, one user message of results"
    );
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(
        messages[1]["content"][1]["input"],
        json!({"service_id": "svc-42", "days": 3})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A",
             "content": "Tuesday 02:00-04:00 UTC (within 3 days)"},
            {"type": "tool_result", "tool_use_id": "toolu_01B", "content": RESULT_7,
             "is_error": true},
        ]})
    );
    assert_eq!(second["system"], INSTRUCTIONS);
}

// V1: the exact request body: system, max_tokens, messages of blocks (results first in the
// user message, consecutive results merged), tools with `input_schema` as the neutral schema.
#[tokio::test]
async fn v1_the_messages_request_body_is_exactly_the_golden_one() {
    let server = Server::start([Reply::sse(anthropic_answer("Done."))]).await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test-key")
        .base_url(server.url())
        .model("claude-test")
        .max_tokens(1000)
        .tool_choice(ToolChoice::Auto)
        .parallel_tool_calls(false)
        .build()
        .expect("a valid configuration");
    let agent = test_agent(model, [tag_service()]);
    assert_golden_run(&agent, &server, "golden_anthropic_messages.json").await;
}

// V2: an `error` event mid-stream (overloaded) is an API error with the provider's type and
// message and the request id.
#[tokio::test]
async fn v2_an_overloaded_error_mid_stream_is_an_api_error() {
    let answer = anthropic_answer("partial");
    let start: String = answer.split_inclusive("\n\n").take(3).collect();
    let body = format!(
        "{start}event: error\ndata: {}\n\n",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    let server = Server::start([Reply::sse(body).header("request-id", "req_ovl")]).await;
    let agent = Agent::builder(claude(&server)).build().expect("builds");
    let err = agent.run(&Context::new(), "hi").await.expect_err("fails");
    assert_eq!(err.kind(), ErrorKind::Model);
    let Some(ModelError::Api(api)) = err.model_error() else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!(
        (api.status, api.error_type.as_deref(), api.message.as_str()),
        (None, Some("overloaded_error"), "Overloaded")
    );
    assert_eq!(api.request_id.as_deref(), Some("req_ovl"));
}

// V2: a connection closed before `message_stop` is an error, not a partial answer.
#[tokio::test]
async fn v2_a_stream_without_message_stop_is_an_error() {
    let answer = anthropic_answer("partial");
    let cut = answer.replace(
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        "",
    );
    let server = Server::start([Reply::sse(cut).end(End::Complete)]).await;
    let agent = Agent::builder(claude(&server)).build().expect("builds");
    let err = agent.run(&Context::new(), "hi").await.expect_err("fails");
    let Some(ModelError::Transport(source)) = err.model_error() else {
        panic!("expected a transport error, got {err:?}");
    };
    assert!(matches!(
        source.downcast_ref::<TransportError>(),
        Some(TransportError::Truncated {
            expected: "message_stop"
        })
    ));
}

// V2: Anthropic's statuses: a 529 (overloaded) is retried; a 400 is not, and comes back
// with the error's type, message and the `request-id` header.
#[tokio::test]
async fn v2_overloaded_is_retried_and_a_bad_request_is_not() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let invalid = json!({"type": "error", "error": {"type": "invalid_request_error",
        "message": "max_tokens: Field required"}, "request_id": "req_body"});
    let server = Server::start([
        Reply::json(529, overloaded),
        Reply::sse(anthropic_answer("ok")),
        Reply::json(400, invalid).header("request-id", "req_header"),
        Reply::sse(anthropic_answer("never")),
    ])
    .await;
    let model = Anthropic::builder()
        .api_key("sk-ant-test-key")
        .base_url(server.url())
        .retry(RetryPolicy::new().max_retries(2).backoff(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_millis(2),
        ))
        .build()
        .expect("a valid configuration");
    let agent = Agent::builder(model).build().expect("builds");
    let out = agent
        .run(&Context::new(), "hi")
        .await
        .expect("answers after a retry");
    assert_eq!(out.text, "ok");
    assert_eq!(server.request_count(), 2);
    let err = agent
        .run(&Context::new(), "hi")
        .await
        .expect_err("a bad request");
    assert_eq!(server.request_count(), 3, "a 400 is not retried");
    let Some(ModelError::Api(api)) = err.model_error() else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!(api.status, Some(400));
    assert_eq!(api.error_type.as_deref(), Some("invalid_request_error"));
    assert_eq!(api.message, "max_tokens: Field required");
    assert_eq!(api.request_id.as_deref(), Some("req_header"));
    assert!(
        err.to_string().contains("max_tokens: Field required"),
        "{err}"
    );
}
