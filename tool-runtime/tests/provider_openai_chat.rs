//! The OpenAI Chat Completions driver against a local server (V1, V2): a whole agent run,
//! the exact request bodies (strict and not), streams split anywhere over real HTTP, errors
//! mid-stream, streams cut short, and cancellation by drop (P4).

#![cfg(feature = "openai")]

mod support {
    pub mod provider;
}

use std::future::poll_fn;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{Value, json};
use support::provider::scenario::{
    LookupWindow, RESULT_7, RESULT_42, assert_golden_run, tag_service, test_agent,
};
use support::provider::{End, Reply, Server, chat_answer, drain_model, fixture};
use tool_runtime::providers::openai::{OpenAiChat, StrictMode, ToolChoice};
use tool_runtime::providers::{RetryPolicy, TransportError};
use tool_runtime::{
    Agent, BuildProblem, Context, ErrorKind, Message, Model, ModelError, ModelEvent, ModelRequest,
};

fn openai(server: &Server) -> OpenAiChat {
    OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

// V2, R5, E2: a tool-call turn (two parallel calls, interleaved in the stream), then the
// final answer; the second request carries both results as `role: tool` messages, the failed
// one with the ToolError's own text.
#[tokio::test]
async fn v2_an_agent_runs_end_to_end_through_chat_completions() {
    let server = Server::start([
        Reply::sse(fixture("openai_chat_parallel_calls.sse")),
        Reply::sse(fixture("openai_chat_answer.sse")),
    ])
    .await;
    let agent = test_agent(openai(&server), [tag_service()]);
    let out = agent
        .run(&Context::new(), "When are svc-42 and svc-7 down next?")
        .await
        .expect("the run answers");
    assert_eq!(out.text, "svc-42 is down on Tuesday, 02:00–04:00 UTC.");
    assert_eq!(out.calls.len(), 2);
    assert_eq!(out.usage[0].input_tokens, 182);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-test-key")
    );
    let second = requests[1].json();
    let messages = second["messages"].as_array().expect("messages");
    let assistant = &messages[messages.len() - 3];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_Wx1");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        r#"{"service_id":"svc-42","days":3}"#
    );
    assert_eq!(
        messages[messages.len() - 2],
        json!({"role": "tool", "tool_call_id": "call_Wx1", "content": RESULT_42})
    );
    assert_eq!(
        messages[messages.len() - 1],
        json!({"role": "tool", "tool_call_id": "call_Yz2", "content": RESULT_7})
    );
}

// R5: strict mode does not replace validation: arguments that break the schema's pattern
// reach the parser, and the model gets the violation, not a handler run.
#[tokio::test]
async fn r5_arguments_are_validated_even_with_strict_mode() {
    let bad = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"lookup-window\",\"arguments\":\"{\\\"service_id\\\":\\\"SVC 42!\\\",\\\"days\\\":null,\\\"region\\\":null,\\\"priority\\\":null,\\\"contact\\\":null}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let server = Server::start([Reply::sse(bad), Reply::sse(chat_answer("Sorry."))]).await;
    let agent = Agent::builder(openai(&server))
        .tool(LookupWindow)
        .build()
        .expect("the agent builds");
    assert!(agent.tool_specs()[0].is_strict());
    let out = agent
        .run(&Context::new(), "svc?")
        .await
        .expect("the run answers");
    let result = &server.requests()[1].json()["messages"][2];
    assert_eq!(result["role"], "tool");
    let text = result["content"].as_str().unwrap_or_default();
    assert!(text.contains("/service_id"), "{text}");
    assert!(!text.contains("Tuesday"), "the handler did not run");
    assert_eq!(
        out.calls[0].kind(),
        tool_runtime::OutcomeKind::InvalidArguments
    );
}

// V1: the exact request body, strict: `lookup-window` adapted (every property required, the
// optional ones nullable, unsupported keywords removed, `"strict": true`), `tag-service` (a
// map) sent as it is without strict mode; the transcript as messages, tool results as
// `role: tool` messages.
#[tokio::test]
async fn v1_the_chat_request_body_is_exactly_the_golden_one_strict() {
    let server = Server::start([Reply::sse(chat_answer("Done."))]).await;
    let model = OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .parallel_tool_calls(true)
        .tool_choice(ToolChoice::Auto)
        .max_output_tokens(1000)
        .build()
        .expect("a valid configuration");
    let agent = test_agent(model, [tag_service()]);
    let specs = agent.tool_specs();
    assert!(specs[0].is_strict() && !specs[1].is_strict());
    assert_golden_run(&agent, &server, "golden_openai_chat_strict.json").await;
}

// V1: an OpenAI-compatible server: no key, strict mode off, the neutral schemas as they
// are, `max_tokens` rather than `max_completion_tokens`.
#[tokio::test]
async fn v1_the_chat_request_body_is_exactly_the_golden_one_for_a_compatible_server() {
    let server = Server::start([Reply::sse(chat_answer("Done."))]).await;
    let model = OpenAiChat::compatible(format!("{}/v1", server.url()))
        .model("llama3.2")
        .max_output_tokens(1000)
        .build()
        .expect("a valid configuration");
    let agent = test_agent(model, [tag_service()]);
    assert!(agent.tool_specs().iter().all(|s| !s.is_strict()));
    assert_golden_run(&agent, &server, "golden_openai_chat_compatible.json").await;
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), None, "no key, no header");
}

// V1: a schema strict mode cannot express fails `build()` under StrictMode::Require, naming
// the tool and the keyword's JSON pointer, before any I/O.
#[tokio::test]
async fn v1_a_schema_strict_mode_cannot_express_fails_build_when_strict_is_required() {
    let model = OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url("http://127.0.0.1:9/v1")
        .strict(StrictMode::Require)
        .build()
        .expect("a valid configuration");
    let err = Agent::builder(model)
        .tool(LookupWindow)
        .tool(tag_service())
        .build()
        .expect_err("the map cannot be strict");
    assert_eq!(err.problems().len(), 1);
    let BuildProblem::SchemaUnsupported { name, source, .. } = &err.problems()[0] else {
        panic!("expected SchemaUnsupported, got {err}");
    };
    assert_eq!(name, "tag-service");
    assert_eq!(
        source.path(),
        Some("/properties/labels/additionalProperties")
    );
    assert!(err.to_string().contains("open map"), "{err}");
    // The same tool may be let off strict mode alone.
    let model = OpenAiChat::builder()
        .api_key("sk-test-key")
        .strict(StrictMode::Require)
        .tool_strict("tag-service", StrictMode::Off)
        .build()
        .expect("a valid configuration");
    let agent = Agent::builder(model)
        .tool(LookupWindow)
        .tool(tag_service())
        .build()
        .expect("builds");
    assert!(agent.tool_specs()[0].is_strict() && !agent.tool_specs()[1].is_strict());
}

// V2: the recorded stream, split into 1-, 3- and 17-byte chunks on the wire, gives the
// same turn.
#[tokio::test]
async fn v2_a_stream_split_anywhere_over_http_gives_the_same_reply() {
    let mut seen = Vec::new();
    for sizes in [&[1usize][..], &[3, 1, 7], &[17, 2]] {
        let server = Server::start([
            Reply::sse(fixture("openai_chat_parallel_calls.sse")).split_every(sizes)
        ])
        .await;
        let model = openai(&server);
        let (events, error) = drain_model(model.stream(ModelRequest::new(&[], &[]))).await;
        assert!(error.is_none(), "{error:?}");
        seen.push(events);
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]));
    assert!(seen[0].contains(&ModelEvent::ToolCallStart {
        index: 1,
        id: "call_Yz2".into(),
        name: "lookup-window".into()
    }));
}

// V2: an error event in the stream is an error the caller can match on, with the
// provider's words and the request id; the deltas before it are not an answer.
#[tokio::test]
async fn v2_an_error_mid_stream_is_an_api_error_with_the_request_id() {
    let partial = chat_answer("partial ");
    let first = &partial[..partial.find("\n\n").unwrap_or(0) + 2];
    let body = format!(
        "{first}data: {}\n\n",
        json!({"error": {"message": "The server had an error while processing your request.",
                         "type": "server_error", "param": null, "code": null}})
    );
    let server = Server::start([Reply::sse(body).header("x-request-id", "req_mid")]).await;
    let agent = Agent::builder(openai(&server)).build().expect("builds");
    let err = agent.run(&Context::new(), "hi").await.expect_err("fails");
    assert_eq!(err.kind(), ErrorKind::Model);
    let Some(ModelError::Api(api)) = err.model_error() else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!(api.status, None);
    assert_eq!(api.error_type.as_deref(), Some("server_error"));
    assert_eq!(api.request_id.as_deref(), Some("req_mid"));
    assert_eq!(err.transcript(), [Message::user("hi")], "no partial answer");
}

// V2: a connection closed before `[DONE]` is an error, not a silent partial answer.
#[tokio::test]
async fn v2_a_connection_closed_before_done_is_an_error() {
    let cut = fixture("openai_chat_answer.sse").replace("data: [DONE]\n\n", "");
    for end in [End::Complete, End::Close] {
        let server = Server::start([Reply::sse(cut.clone()).end(end)]).await;
        let (events, error) =
            drain_model(openai(&server).stream(ModelRequest::new(&[], &[]))).await;
        assert!(!events.is_empty());
        let Some(ModelError::Transport(source)) = error else {
            panic!("expected a transport error, got {error:?}");
        };
        match source.downcast_ref::<TransportError>() {
            Some(TransportError::Truncated { expected }) => assert_eq!(*expected, "[DONE]"),
            Some(TransportError::Read { .. }) => assert_eq!(end, End::Close),
            other => panic!("unexpected {other:?}"),
        }
    }
}

// V2: a body that is not an event stream (garbage) is a protocol error, not a panic.
#[tokio::test]
async fn v2_garbage_in_the_stream_is_a_protocol_error() {
    let server = Server::start([Reply::sse("data: <html>Bad gateway</html>\n\n")]).await;
    let (_, error) = drain_model(openai(&server).stream(ModelRequest::new(&[], &[]))).await;
    assert!(matches!(error, Some(ModelError::Protocol(_))), "{error:?}");
    let server = Server::start([Reply::json(200, json!({"choices": []}))]).await;
    let (_, error) = drain_model(openai(&server).stream(ModelRequest::new(&[], &[]))).await;
    assert!(matches!(error, Some(ModelError::Protocol(_))), "{error:?}");
}

// P4: dropping the stream (as the agent does to cancel) closes the connection; and a run
// whose context is cancelled mid-stream ends with kind Cancelled and hangs up.
#[tokio::test]
async fn p4_dropping_the_stream_closes_the_connection() {
    // The role chunk and the first piece of text, then silence.
    let answer = fixture("openai_chat_answer.sse");
    let head: String = answer.split_inclusive("\n\n").take(2).collect();
    let server = Server::start([
        Reply::sse(head.clone()).end(End::Hang),
        Reply::sse(head).end(End::Hang),
    ])
    .await;
    let model = OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .idle_timeout(Duration::from_secs(20))
        .build()
        .expect("a valid configuration");
    let mut stream = model.stream(ModelRequest::new(&[], &[]));
    // The first chunk names the response (K4), then its text arrives.
    let mut first_event = poll_fn(|cx| Pin::as_mut(&mut stream).poll_next(cx)).await;
    if let Some(Ok(ModelEvent::Response { .. })) = first_event {
        first_event = poll_fn(|cx| Pin::as_mut(&mut stream).poll_next(cx)).await;
    }
    assert!(
        matches!(first_event, Some(Ok(ModelEvent::TextDelta(_)))),
        "{first_event:?}"
    );
    drop(stream);
    assert!(server.wait_hung_up(1, Duration::from_secs(5)).await);

    let agent = Agent::builder(model).build().expect("builds");
    let ctx = Context::new();
    let run = agent.run(&ctx, "hi");
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        ctx.cancellation().cancel();
    };
    let (out, ()) = tokio::join!(run, cancel);
    assert_eq!(out.expect_err("cancelled").kind(), ErrorKind::Cancelled);
    assert!(server.wait_hung_up(2, Duration::from_secs(5)).await);
}

// V1: tools are rendered once at build: each request reuses the rendering, and a spec made
// elsewhere (no rendering for this driver) is rendered on the fly.
#[tokio::test]
async fn v1_requests_reuse_the_tools_rendered_at_build() {
    let server = Server::start([Reply::sse(chat_answer("a")), Reply::sse(chat_answer("b"))]).await;
    let model = openai(&server);
    let spec = model
        .tool_spec(&tool_runtime::IntoTool::into_tool(LookupWindow))
        .expect("strict-capable");
    let wire: Value =
        serde_json::from_str(spec.wire("openai.chat").expect("rendered")).expect("JSON");
    assert_eq!(wire["function"]["strict"], true);
    let (_, error) =
        drain_model(model.stream(ModelRequest::new(&[], std::slice::from_ref(&spec)))).await;
    assert!(error.is_none());
    let neutral = tool_runtime::ToolSpec::new(
        "plain",
        "A plain tool.",
        json!({"type": "object", "properties": {}}),
    );
    let (_, error) =
        drain_model(model.stream(ModelRequest::new(&[], std::slice::from_ref(&neutral)))).await;
    assert!(error.is_none());
    let requests = server.requests();
    assert_eq!(requests[0].json()["tools"][0], wire);
    assert_eq!(
        requests[1].json()["tools"][0],
        json!({"type": "function", "function": {"name": "plain", "description": "A plain tool.",
               "parameters": {"type": "object", "properties": {}}}})
    );
}

// V1: OpenAI takes at most 128 tools in one request: a request with more fails before any
// I/O, with an error the caller can match on.
#[tokio::test]
async fn v1_more_tools_than_openai_takes_fail_before_any_io() {
    let server = Server::start([Reply::sse(chat_answer("never"))]).await;
    let specs: Vec<_> = (0..=tool_runtime::providers::openai::MAX_TOOLS)
        .map(|i| {
            tool_runtime::ToolSpec::new(
                format!("t{i}"),
                "",
                json!({"type": "object", "properties": {}}),
            )
        })
        .collect();
    let (_, error) = drain_model(openai(&server).stream(ModelRequest::new(&[], &specs))).await;
    let Some(ModelError::Other(source)) = error else {
        panic!("expected a request error, got {error:?}");
    };
    assert_eq!(
        source.downcast_ref::<tool_runtime::providers::RequestError>(),
        Some(&tool_runtime::providers::RequestError::TooManyTools {
            count: 129,
            limit: 128
        })
    );
    assert_eq!(server.request_count(), 0);
}
