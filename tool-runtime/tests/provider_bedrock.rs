//! The Bedrock driver against a local server (V3): whole agent runs over ConverseStream,
//! whose answers are real event stream frames (encoded with AWS's own codec) of the API's
//! real payload shapes, and over Converse; every request's SigV4 signature verified.

#![cfg(feature = "bedrock")]

mod support {
    pub mod bedrock;
    pub mod provider;
}

use serde_json::{Value, json};
use support::bedrock::{
    ACCESS_KEY_ID, MODEL, REGION, SECRET_ACCESS_KEY, converse_answer, converse_tools, stream,
    text_answer, text_frames, tool_answer, verify_sigv4,
};
use support::provider::scenario::assert_golden_run;
use support::provider::scenario::{INSTRUCTIONS, RESULT_7, tag_service, test_agent};
use support::provider::{End, Server, drain_model};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::bedrock::{Bedrock, BedrockBuilder, ToolChoice};
use tool_runtime::{
    Agent, Context, ErrorKind, FinishReason, Model, ModelEvent, ModelRequest, RunOptions,
    RunRequest, UsageLimits,
};

/// The driver, signing with the test keys, at `server`.
pub fn builder(server: &Server) -> BedrockBuilder {
    Bedrock::builder()
        .region(REGION)
        .credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY, None)
        .base_url(server.url())
        .model(MODEL)
        .retry(RetryPolicy::none())
}

fn bedrock(server: &Server) -> Bedrock {
    builder(server).build().expect("a valid configuration")
}

const CALLS: [(&str, &str, &str); 2] = [
    (
        "tooluse_A",
        "lookup-window",
        r#"{"service_id":"svc-42","days":3}"#,
    ),
    ("tooluse_B", "lookup-window", r#"{"service_id":"svc-7"}"#),
];

// V3, E2: a turn of text and two parallel `toolUse` blocks (inputs streamed in fragments),
// then the answer; the second request puts both `toolResult` blocks, the failed one with
// `status: "error"`, first in one user message; system, maxTokens, toolSpec; each request
// signed with SigV4 (the signature verifies) to `/model/{modelId}/converse-stream`.
#[tokio::test]
async fn v3_an_agent_runs_end_to_end_through_converse_stream() {
    let server = Server::start([
        tool_answer("Let me look.", &CALLS),
        text_answer("svc-42 is down on Tuesday."),
    ])
    .await;
    let agent = test_agent(bedrock(&server), []);
    let out = agent
        .run(&Context::new(), "When are svc-42 and svc-7 down next?")
        .await
        .expect("the run answers");
    assert_eq!(out.text, "svc-42 is down on Tuesday.");
    assert_eq!(out.calls.len(), 2, "parallel calls");
    assert_eq!(out.calls[1].arguments, r#"{"service_id":"svc-7"}"#);
    assert_eq!(
        (out.usage[0].input_tokens, out.usage[0].output_tokens),
        (512, 40)
    );

    let requests = server.requests();
    for request in &requests {
        assert_eq!(
            request.path,
            "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
        );
        verify_sigv4(request, None).expect("the SigV4 signature verifies");
        assert_eq!(
            request.header("accept"),
            Some("application/vnd.amazon.eventstream")
        );
    }
    let first = requests[0].json();
    assert_eq!(first["system"], json!([{"text": INSTRUCTIONS}]));
    assert_eq!(first["inferenceConfig"], json!({"maxTokens": 4096}));
    let spec = &first["toolConfig"]["tools"][0]["toolSpec"];
    assert_eq!(spec["name"], "lookup-window");
    assert_eq!(spec["inputSchema"]["json"]["type"], "object");
    assert!(
        first["toolConfig"].get("toolChoice").is_none(),
        "not sent by default"
    );
    let second = requests[1].json();
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(
        messages.len(),
        3,
        "user, assistant, one user message of results"
    );
    assert_eq!(
        messages[1]["content"][1],
        json!({"toolUse": {"toolUseId": "tooluse_A", "name": "lookup-window",
                           "input": {"service_id": "svc-42", "days": 3}}})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": "tooluse_A",
                            "content": [{"text": "Tuesday 02:00-04:00 UTC (within 3 days)"}]}},
            {"toolResult": {"toolUseId": "tooluse_B", "content": [{"text": RESULT_7}],
                            "status": "error"}},
        ]})
    );
}

// V3, R5: arguments that break the schema reach the parser, the handler does not run, and
// the violation goes back to the model as an error result.
#[tokio::test]
async fn v3_invalid_arguments_go_back_as_an_error_result() {
    let bad = [("tooluse_X", "lookup-window", r#"{"service_id":"SVC 42!"}"#)];
    let server = Server::start([tool_answer("", &bad), text_answer("Sorry.")]).await;
    let agent = test_agent(bedrock(&server), []);
    let out = agent
        .run(&Context::new(), "svc?")
        .await
        .expect("the run answers");
    assert_eq!(
        out.calls[0].kind(),
        tool_runtime::OutcomeKind::InvalidArguments
    );
    let result = &server.requests()[1].json()["messages"][2]["content"][0]["toolResult"];
    assert_eq!(result["status"], "error");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("/service_id"), "{text}");
    assert!(!text.contains("Tuesday"), "the handler did not run");
}

// V3: the stream's deltas reach the caller as they come: text in pieces, a call's start, its
// input fragments and its end, the stop reason, the usage; split into 1-, 5- and 13-byte
// chunks on the wire, the same events.
#[tokio::test]
async fn v3_streaming_deltas_arrive_in_order_whatever_the_chunks() {
    let mut expected = None;
    for sizes in [&[1usize][..], &[5], &[13, 1, 7]] {
        let server = Server::start([tool_answer("Looking", &CALLS[..1]).split_every(sizes)]).await;
        let model = bedrock(&server);
        let messages = [tool_runtime::Message::user("hi")];
        let request = ModelRequest::new(&messages, &[]);
        let (events, error) = drain_model(model.stream(request)).await;
        assert!(error.is_none(), "{error:?}");
        let texts: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["Loo", "king"]);
        assert!(
            matches!(&events[2], ModelEvent::ToolCallStart { index: 1, id, name }
            if id == "tooluse_A" && name == "lookup-window")
        );
        assert!(events.contains(&ModelEvent::Finish(FinishReason::ToolCalls)));
        let shown = format!("{events:?}");
        if let Some(first) = &expected {
            assert_eq!(first, &shown, "chunks {sizes:?}");
        }
        expected = Some(shown);
    }
}

/// A typed answer.
#[derive(tool_runtime::Schema, Debug)]
pub struct Tagged {
    /// The service tagged.
    pub service_id: String,
    /// How many labels it has now.
    pub labels: u32,
}

// V3, O2: a typed answer through the final-answer tool: it is advertised and required
// (`toolChoice: any`), and the call's input is the answer.
#[tokio::test]
async fn v3_a_typed_answer_comes_through_the_final_answer_tool() {
    let answer = [(
        "tooluse_F",
        "final_answer",
        r#"{"service_id":"svc-42","labels":2}"#,
    )];
    let server = Server::start([tool_answer("", &answer)]).await;
    let agent = test_agent(bedrock(&server), [tag_service()]);
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("Tag svc-42.").typed::<Tagged>(),
        )
        .await
        .expect("a typed answer");
    assert_eq!(typed.value.labels, 2);
    let body = server.requests()[0].json();
    assert_eq!(body["toolConfig"]["toolChoice"], json!({"any": {}}));
    let names: Vec<&str> = body["toolConfig"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t.pointer("/toolSpec/name").and_then(Value::as_str))
        .collect();
    assert!(names.contains(&"final_answer"), "{names:?}");
}

// V3, L3: the run's tool choice in Bedrock's form on the first request (`tool` names the
// tool, `required` is `any`), the driver's own choice otherwise.
#[tokio::test]
async fn v3_tool_choice_is_sent_in_bedrocks_form() {
    let tag = [(
        "tooluse_T",
        "tag-service",
        r#"{"service_id":"svc-42","labels":{"tier":"1"}}"#,
    )];
    for (choice, expected) in [
        (
            tool_runtime::ToolChoice::Tool("tag-service".into()),
            json!({"tool": {"name": "tag-service"}}),
        ),
        (tool_runtime::ToolChoice::Required, json!({"any": {}})),
    ] {
        let server = Server::start([tool_answer("", &tag), text_answer("Tagged.")]).await;
        let agent = test_agent(bedrock(&server), [tag_service()]);
        let request = RunRequest::new("Tag svc-42.").options(RunOptions::new().tool_choice(choice));
        agent
            .execute(&Context::new(), request)
            .await
            .expect("answers");
        let requests = server.requests();
        assert_eq!(requests[0].json()["toolConfig"]["toolChoice"], expected);
        assert!(
            requests[1].json()["toolConfig"].get("toolChoice").is_none(),
            "first request only"
        );
    }
    let server = Server::start([text_answer("ok")]).await;
    let model = builder(&server)
        .tool_choice(ToolChoice::Any)
        .max_tokens(100)
        .build()
        .expect("builds");
    let agent = test_agent(model, []);
    agent.run(&Context::new(), "hi").await.expect("answers");
    let body = server.requests()[0].json();
    assert_eq!(body["toolConfig"]["toolChoice"], json!({"any": {}}));
    assert_eq!(body["inferenceConfig"]["maxTokens"], 100);
}

// V3, L3: Bedrock has no tool choice `none`: the tools are not advertised while the
// conversation holds no tool blocks, and sent without a choice once it does (the API
// requires `toolConfig` then), whatever the driver's own choice.
#[tokio::test]
async fn v3_tool_choice_none_withholds_the_tools() {
    let server = Server::start([text_answer("No tools."), text_answer("Still none.")]).await;
    let model = builder(&server)
        .tool_choice(ToolChoice::Any)
        .build()
        .expect("builds");
    let agent = test_agent(model, []);
    let none = || RunOptions::new().tool_choice(tool_runtime::ToolChoice::None);
    let request = RunRequest::new("svc-42?").options(none());
    agent
        .execute(&Context::new(), request)
        .await
        .expect("answers");
    assert!(server.requests()[0].json().get("toolConfig").is_none());
    let input = support::provider::scenario::transcript();
    let request = RunRequest::new(input).options(none());
    agent
        .execute(&Context::new(), request)
        .await
        .expect("answers");
    let config = &server.requests()[1].json()["toolConfig"];
    assert!(config["tools"].is_array(), "{config}");
    assert!(config.get("toolChoice").is_none(), "{config}");
}

// V3, L5: a stopping tool's success ends the run without another request.
#[tokio::test]
async fn v3_stop_at_ends_the_run_after_the_tool() {
    let server = Server::start([tool_answer("", &CALLS[..1]), text_answer("never")]).await;
    let agent = test_agent(bedrock(&server), []);
    let request = RunRequest::new("svc-42?").options(RunOptions::new().stop_at("lookup-window"));
    let out = agent
        .execute(&Context::new(), request)
        .await
        .expect("answers");
    assert_eq!(out.stopped_at.as_deref(), Some("lookup-window"));
    assert_eq!(server.request_count(), 1);
}

// V3, L2: the usage Bedrock reports (`metadata.usage`) counts against the run's limits.
#[tokio::test]
async fn v3_usage_counts_against_the_limits() {
    let server = Server::start([tool_answer("", &CALLS[..1]), text_answer("never")]).await;
    let agent = test_agent(bedrock(&server), []);
    let limits = UsageLimits::new().input_tokens(100);
    let request = RunRequest::new("svc-42?").options(RunOptions::new().limits(limits));
    let err = agent
        .execute(&Context::new(), request)
        .await
        .expect_err("over the limit");
    assert_eq!(err.kind(), ErrorKind::UsageLimit, "{err}");
}

// V3, R rules: `stopReason: max_tokens` on a final answer is a cut-off answer (kind
// Truncated, the partial text kept), never a complete one.
#[tokio::test]
async fn v3_max_tokens_is_a_cut_off_answer() {
    let server =
        Server::start([stream(&text_frames("svc-42 is down on Tues", "max_tokens"))]).await;
    let agent = Agent::builder(bedrock(&server)).build().expect("builds");
    let err = agent.run(&Context::new(), "hi").await.expect_err("cut off");
    assert_eq!(err.kind(), ErrorKind::Truncated);
    assert_eq!(err.partial_text(), Some("svc-42 is down on Tues"));
}

// V3: Converse (not streamed) runs the same agent: calls, then the answer, at
// `/model/{modelId}/converse`, signed.
#[tokio::test]
async fn v3_converse_without_streaming_runs_the_same_agent() {
    let server = Server::start([
        converse_tools(&[(
            "tooluse_A",
            "lookup-window",
            json!({"service_id": "svc-42"}),
        )]),
        converse_answer("Tuesday.", "end_turn"),
    ])
    .await;
    let agent = test_agent(
        builder(&server).streaming(false).build().expect("builds"),
        [],
    );
    let out = agent
        .run(&Context::new(), "svc-42?")
        .await
        .expect("answers");
    assert_eq!(out.text, "Tuesday.");
    assert_eq!(out.calls[0].arguments, r#"{"service_id":"svc-42"}"#);
    let requests = server.requests();
    assert!(
        requests[0].path.ends_with("%3A0/converse"),
        "{}",
        requests[0].path
    );
    verify_sigv4(&requests[1], None).expect("signed");
    let result = &requests[1].json()["messages"][2]["content"][0]["toolResult"];
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Tuesday")
    );
}

// V3: temporary credentials send their session token (signed); a Bedrock API key is sent as
// `Authorization: Bearer`, and no SigV4 header goes with it; neither shows in `Debug`.
#[tokio::test]
async fn v3_session_tokens_and_api_keys_authenticate() {
    let server = Server::start([text_answer("one"), text_answer("two")]).await;
    let signed = builder(&server)
        .credentials(
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
            Some("session-token-xyz".into()),
        )
        .build()
        .expect("builds");
    let shown = format!("{signed:?}");
    assert!(
        !shown.contains(SECRET_ACCESS_KEY) && !shown.contains("session-token-xyz"),
        "{shown}"
    );
    Agent::builder(signed)
        .build()
        .expect("builds")
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    let keyed = Bedrock::builder()
        .region(REGION)
        .api_key("bedrock-api-key-123")
        .base_url(server.url())
        .build()
        .expect("builds");
    assert!(!format!("{keyed:?}").contains("bedrock-api-key-123"));
    Agent::builder(keyed)
        .build()
        .expect("builds")
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    let requests = server.requests();
    verify_sigv4(&requests[0], Some("session-token-xyz")).expect("the signature verifies");
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer bedrock-api-key-123")
    );
    assert_eq!(requests[1].header("x-amz-date"), None);
}

// V3: a signature made with another secret does not verify: the check can fail.
#[tokio::test]
async fn v3_a_wrong_secret_fails_the_signature_check() {
    let server = Server::start([text_answer("one")]).await;
    let model = builder(&server)
        .credentials(ACCESS_KEY_ID, "not-the-secret", None)
        .build()
        .expect("builds");
    Agent::builder(model)
        .build()
        .expect("builds")
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    assert!(verify_sigv4(&server.requests()[0], None).is_err());
}

// V3, K2: the provider's name is the conventions' `aws.bedrock`; the environment picks
// Bedrock from its variables.
#[tokio::test]
async fn v3_provider_name_and_environment() {
    let server = Server::start([]).await;
    assert_eq!(bedrock(&server).provider_name(), "aws.bedrock");
    let url = server.url().to_owned();
    let vars = |name: &str| match name {
        "AWS_ACCESS_KEY_ID" => Some(ACCESS_KEY_ID.to_owned()),
        "AWS_SECRET_ACCESS_KEY" => Some(SECRET_ACCESS_KEY.to_owned()),
        "AWS_REGION" => Some(REGION.to_owned()),
        "BEDROCK_MODEL" => Some(MODEL.to_owned()),
        "BEDROCK_BASE_URL" => Some(url.clone()),
        _ => None,
    };
    let model = tool_runtime::providers::from_lookup(vars)
        .expect("valid")
        .expect("a provider");
    assert_eq!((model.provider(), model.model_name()), ("bedrock", MODEL));
    let token = |name: &str| (name == "AWS_BEARER_TOKEN_BEDROCK").then(|| "k".to_owned());
    assert!(
        tool_runtime::providers::from_lookup(token).is_err(),
        "an API key needs a region"
    );
    let keys_only = |name: &str| name.starts_with("AWS_ACCESS").then(|| "k".to_owned());
    assert!(
        tool_runtime::providers::from_lookup(keys_only)
            .expect("valid")
            .is_none()
    );
}

// V3, P4: dropping the stream mid-answer (as the agent does to cancel) closes the
// connection.
#[tokio::test]
async fn v3_dropping_the_stream_closes_the_connection() {
    let server = Server::start([text_answer("never finished").end(End::Hang)]).await;
    let model = bedrock(&server);
    let messages = [tool_runtime::Message::user("hi")];
    let mut stream = model.stream(ModelRequest::new(&messages, &[]));
    let first = std::future::poll_fn(|cx| std::pin::Pin::as_mut(&mut stream).poll_next(cx)).await;
    assert!(matches!(first, Some(Ok(_))), "{first:?}");
    drop(stream);
    assert!(
        server
            .wait_hung_up(1, std::time::Duration::from_secs(5))
            .await
    );
}

// V3: the exact ConverseStream body of the transcript (calls, a failed result, a result
// with an image, audio and resources, a later question): the driver's tool choice and
// max tokens, `toolSpec`s with their schemas, results leading one user message.
#[tokio::test]
async fn v3_the_converse_request_body_is_exactly_the_golden_one() {
    let server = Server::start([text_answer("Done.")]).await;
    let model = builder(&server)
        .tool_choice(ToolChoice::Tool("tag-service".into()))
        .max_tokens(1000)
        .build()
        .expect("builds");
    let agent = test_agent(model, [tag_service()]);
    assert_golden_run(&agent, &server, "golden_bedrock_converse.json").await;
}
