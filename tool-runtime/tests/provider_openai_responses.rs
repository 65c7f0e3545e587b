//! The OpenAI Responses driver against a local server (V1, V2): a whole agent run with
//! `function_call` / `function_call_output` items, the exact request body, error events.

#![cfg(feature = "openai")]

mod support {
    pub mod provider;
}

use serde_json::json;
use support::provider::scenario::{
    RESULT_7, RESULT_42, assert_golden_run, tag_service, test_agent,
};
use support::provider::{Reply, Server, fixture, responses_answer};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::openai::{OpenAiResponses, ToolChoice};
use tool_runtime::{Agent, Context, ErrorKind, FinishReason, ModelError, RunEvent};

fn responses(server: &Server) -> OpenAiResponses {
    OpenAiResponses::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

// V2, E2: a call turn (text, then two function calls, the second one's arguments only in
// its `.done` event), then the answer; the second request carries the calls as
// `function_call` items and the results as `function_call_output` items.
#[tokio::test]
async fn v2_an_agent_runs_end_to_end_through_responses() {
    let server = Server::start([
        Reply::sse(fixture("openai_responses_calls.sse")),
        Reply::sse(responses_answer("svc-42 is down on Tuesday.")),
    ])
    .await;
    let agent = test_agent(responses(&server), []);
    let mut events = Vec::new();
    let mut stream = agent.run_stream(&Context::new(), "When are svc-42 and svc-7 down?");
    while let Some(event) = std::future::poll_fn(|cx| {
        futures_core::Stream::poll_next(std::pin::Pin::new(&mut stream), cx)
    })
    .await
    {
        events.push(event);
    }
    let finishes: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Ok(RunEvent::TurnEnd { finish, .. }) => Some(finish.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        finishes,
        [Some(FinishReason::ToolCalls), Some(FinishReason::Stop)]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/responses");
    let input = requests[1].json()["input"].clone();
    let items = input.as_array().expect("input items");
    let n = items.len();
    assert_eq!(
        items[n - 4],
        json!({"type": "function_call", "call_id": "call_A1", "name": "lookup-window",
               "arguments": "{\"service_id\":\"svc-42\"}"})
    );
    assert_eq!(
        items[n - 2],
        json!({"type": "function_call_output", "call_id": "call_A1",
               "output": RESULT_42.replace("3 days", "7 days")})
    );
    assert_eq!(
        items[n - 1],
        json!({"type": "function_call_output", "call_id": "call_B2", "output": RESULT_7})
    );
}

// V1: the exact request body: instructions, input items, function tools with an explicit
// `strict` (the API's default is strict), `store: false`.
#[tokio::test]
async fn v1_the_responses_request_body_is_exactly_the_golden_one() {
    let server = Server::start([Reply::sse(responses_answer("Done."))]).await;
    let model = OpenAiResponses::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .tool_choice(ToolChoice::Tool("lookup-window".into()))
        .parallel_tool_calls(false)
        .build()
        .expect("a valid configuration");
    let agent = test_agent(model, [tag_service()]);
    assert_golden_run(&agent, &server, "golden_openai_responses.json").await;
}

// V2: `response.failed` is an API error with the provider's code and message.
#[tokio::test]
async fn v2_a_failed_response_is_an_api_error() {
    let failed = "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"The model failed to answer.\"}}}\n\n";
    let server = Server::start([Reply::sse(failed).header("x-request-id", "req_failed")]).await;
    let agent = Agent::builder(responses(&server)).build().expect("builds");
    let err = agent.run(&Context::new(), "hi").await.expect_err("fails");
    assert_eq!(err.kind(), ErrorKind::Model);
    let Some(ModelError::Api(api)) = err.model_error() else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!(api.code.as_deref(), Some("server_error"));
    assert_eq!(api.message, "The model failed to answer.");
    assert_eq!(api.request_id.as_deref(), Some("req_failed"));
}
