//! The Gemini driver against a local server (V3, V5): whole agent runs with `functionCall` /
//! `functionResponse` parts, parallel calls, thought signatures sent back, tool choice,
//! typed answers, usage, streams split anywhere, the environment. The server answers with
//! Google's payload shapes (each checked against Google's `GenerateContentResponse`), and
//! every request body it receives is parsed by Google's own `GenerateContentRequest`
//! (google-ai-generativelanguage, unknown fields refused).

#![cfg(feature = "gemini")]

mod support {
    pub mod gemini;
    pub mod provider;
}

use serde_json::{Value, json};
use support::gemini::{Checker, answer, chunk, sse, two_calls, usage};
use support::provider::scenario::{
    INSTRUCTIONS, RESULT_7, RESULT_42, assert_golden_run, tag_service, test_agent,
};
use support::provider::{Reply, Server};
use tool_runtime::providers::gemini::{Gemini, UNSIGNED_CALL};
use tool_runtime::providers::{EnvModel, RequestError, RetryPolicy, from_lookup};
use tool_runtime::{Context, ModelError, RunOptions, RunRequest, Schema, ToolChoice};

const KEY: &str = "AIza-test-key-123";

fn gemini(server: &Server) -> Gemini {
    Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .model("gemini-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

// V3, V5, E2: a turn of two parallel calls (a thought part, text, a signed call with an id and
// an unsigned one without), then the answer. The second request sends the calls back with
// the signature on the call that carried it, and both results in one user content, the
// failed one as `error`; every request is a valid GenerateContentRequest.
#[tokio::test]
async fn v3_an_agent_runs_end_to_end_through_gemini() {
    let mut checker = Checker::start();
    checker.assert_stream(&two_calls());
    checker.assert_stream(&answer("svc-42 is down on Tuesday."));
    let server = Server::start([
        Reply::sse(two_calls()),
        Reply::sse(answer("svc-42 is down on Tuesday.")),
    ])
    .await;
    let agent = test_agent(gemini(&server), []);
    let out = agent
        .run(&Context::new(), "When are svc-42 and svc-7 down next?")
        .await
        .expect("the run answers");
    assert_eq!(out.text, "svc-42 is down on Tuesday.");
    assert_eq!(out.calls.len(), 2, "parallel calls");
    let arguments: Value = serde_json::from_str(&out.calls[0].arguments).expect("JSON");
    assert_eq!(arguments, json!({"service_id": "svc-42", "days": 3}));
    assert_eq!(out.calls[1].arguments, r#"{"service_id":"svc-7"}"#);
    assert_eq!(
        (out.usage[0].input_tokens, out.usage[0].output_tokens),
        (412, 38 + 57),
        "thoughts count as output"
    );

    let requests = server.requests();
    assert_eq!(
        requests[0].path,
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    );
    assert_eq!(requests[0].header("x-goog-api-key"), Some(KEY));
    assert_eq!(requests[0].header("authorization"), None);
    assert!(
        !requests[0].path.contains(KEY),
        "the key is never in the URL"
    );
    let second = requests[1].json();
    assert_eq!(
        second["systemInstruction"],
        json!({"parts": [{"text": INSTRUCTIONS}]})
    );
    let contents = second["contents"].as_array().expect("contents");
    assert_eq!(
        contents.len(),
        3,
        "user, model, one user content of results"
    );
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [
            {"text": "Let me look."},
            {"functionCall": {"id": "fc-1", "name": "lookup-window",
                              "args": {"service_id": "svc-42", "days": 3}},
             "thoughtSignature": "RXFJS0NxWUdBUT09"},
            {"functionCall": {"name": "lookup-window", "args": {"service_id": "svc-7"}}},
        ]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"id": "fc-1", "name": "lookup-window",
                                  "response": {"output": RESULT_42}}},
            {"functionResponse": {"name": "lookup-window", "response": {"error": RESULT_7}}},
        ]})
    );
    checker.assert_requests(&server);
}

// V3, V5: the exact request body for a transcript from elsewhere (no signatures kept: the
// documented stand-in on the first call of the turn), the tools as one
// `functionDeclarations` list with `parametersJsonSchema` in Gemini's dialect.
#[tokio::test]
async fn v3_the_request_body_is_exactly_the_golden_one() {
    let mut checker = Checker::start();
    let server = Server::start([Reply::sse(answer("Tagged."))]).await;
    let agent = test_agent(gemini(&server), [tag_service()]);
    assert_golden_run(&agent, &server, "golden_gemini.json").await;
    let body = server.requests()[0].json();
    assert_eq!(
        body.pointer("/contents/1/parts/1/thoughtSignature"),
        Some(&json!(UNSIGNED_CALL))
    );
    let declarations = body["tools"][0]["functionDeclarations"]
        .as_array()
        .expect("declarations");
    assert_eq!(declarations.len(), 2);
    assert!(declarations[0].get("parametersJsonSchema").is_some());
    checker.assert_requests(&server);
}

// R5, V3: arguments that break the schema (a pattern, a bound moved into the description)
// reach the parser: the model gets the violations as the call's `functionResponse` error, and
// the handler does not run.
#[tokio::test]
async fn r5_invalid_arguments_go_back_as_a_function_response_error() {
    let bad = sse(&[chunk(
        json!([{"functionCall": {"id": "fc-9", "name": "lookup-window",
                                 "args": {"service_id": "SVC 42!", "days": 90}}}]),
        Some("STOP"),
        usage(100, 12, 0),
    )]);
    let server = Server::start([Reply::sse(bad), Reply::sse(answer("Sorry."))]).await;
    let out = test_agent(gemini(&server), [])
        .run(&Context::new(), "svc?")
        .await
        .expect("the run answers");
    assert_eq!(
        out.calls[0].kind(),
        tool_runtime::OutcomeKind::InvalidArguments
    );
    let part = &server.requests()[1].json()["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(part["id"], "fc-9");
    let text = part["response"]["error"].as_str().unwrap_or_default();
    assert!(
        text.contains("/service_id") && text.contains("/days"),
        "{text}"
    );
    assert!(!text.contains("Tuesday"), "the handler did not run");
    Checker::start().assert_requests(&server);
}

/// Runs the agent with `choice` and returns the first request's `toolConfig`.
async fn tool_config(choice: ToolChoice, replies: Vec<Reply>) -> Value {
    let server = Server::start(replies).await;
    let agent = test_agent(gemini(&server), [tag_service()]);
    agent
        .execute(
            &Context::new(),
            RunRequest::new("Tag svc-42.").options(RunOptions::new().tool_choice(choice)),
        )
        .await
        .expect("the run answers");
    let mut checker = Checker::start();
    checker.assert_requests(&server);
    server.requests()[0].json()["toolConfig"].clone()
}

fn tag_call() -> String {
    sse(&[chunk(
        json!([{"functionCall": {"name": "tag-service",
            "args": {"service_id": "svc-42", "labels": {"tier": "critical"}}}}]),
        Some("STOP"),
        usage(100, 12, 0),
    )])
}

// L3, V3: a run's tool choice as `toolConfig.functionCallingConfig`: a named tool is `ANY`
// limited to it, `required` is `ANY`, `none` is `NONE`.
#[tokio::test]
async fn l3_the_runs_tool_choice_is_the_function_calling_config() {
    let named = tool_config(
        ToolChoice::Tool("tag-service".into()),
        vec![Reply::sse(tag_call()), Reply::sse(answer("Tagged."))],
    )
    .await;
    assert_eq!(
        named,
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["tag-service"]}})
    );
    let required = tool_config(
        ToolChoice::Required,
        vec![Reply::sse(tag_call()), Reply::sse(answer("Tagged."))],
    )
    .await;
    assert_eq!(required, json!({"functionCallingConfig": {"mode": "ANY"}}));
    let none = tool_config(ToolChoice::None, vec![Reply::sse(answer("No tools."))]).await;
    assert_eq!(none, json!({"functionCallingConfig": {"mode": "NONE"}}));
}

// L3: a choice naming a tool the request does not declare fails before any I/O.
#[tokio::test]
async fn l3_an_unknown_tool_choice_fails_before_any_io() {
    let server = Server::start([Reply::sse(answer("never"))]).await;
    let agent = test_agent(gemini(&server), []);
    let error = agent
        .execute(
            &Context::new(),
            RunRequest::new("Tag svc-42.")
                .options(RunOptions::new().tool_choice(ToolChoice::Tool("nope".into()))),
        )
        .await
        .expect_err("refused");
    let Some(ModelError::Other(inner)) = error.model_error() else {
        panic!("a model error: {error}");
    };
    assert!(matches!(
        inner.downcast_ref::<RequestError>(),
        Some(RequestError::UnknownToolChoice { name }) if name == "nope"
    ));
    assert_eq!(server.request_count(), 0);
}

/// The answer: when a service is down.
#[derive(Schema, Debug, PartialEq)]
pub struct Downtime {
    /// The service.
    #[schema(pattern = "^svc-[0-9a-z-]+$")]
    pub service_id: String,
    /// How long, in minutes.
    #[schema(range = 1..=600)]
    pub minutes: u32,
}

// O2, V3: a typed answer is asked for natively (`responseMimeType: application/json` with
// `responseJsonSchema`) on a model that takes it, and parsed from the answer's text; on a
// 2.x model it comes through the final-answer tool instead.
#[tokio::test]
async fn o2_a_typed_answer_is_gemini_json_output() {
    let mut checker = Checker::start();
    let server = Server::start([Reply::sse(answer(
        r#"{"service_id": "svc-42", "minutes": 120}"#,
    ))])
    .await;
    let model = Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .model("gemini-3-flash-preview")
        .build()
        .expect("valid");
    let agent = test_agent(model, []);
    let typed = agent
        .execute(
            &Context::new(),
            RunRequest::new("When is svc-42 down?").typed::<Downtime>(),
        )
        .await
        .expect("a typed answer");
    assert_eq!(
        typed.value,
        Downtime {
            service_id: "svc-42".into(),
            minutes: 120
        }
    );
    let body = server.requests()[0].json();
    let config = &body["generationConfig"];
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(config["responseJsonSchema"]["type"], "object");
    assert_eq!(
        config["responseJsonSchema"]["required"],
        json!(["service_id", "minutes"])
    );
    checker.assert_requests(&server);
    let old = Gemini::builder()
        .api_key(KEY)
        .model("gemini-2.5-pro")
        .build();
    assert!(!tool_runtime::Model::native_answers(&old.expect("valid")));
}

// V2, V3: the stream split into 1-, 3- and 17-byte chunks on the wire gives the same run.
#[tokio::test]
async fn v3_a_stream_split_anywhere_gives_the_same_run() {
    for sizes in [&[1usize][..], &[3], &[17, 1]] {
        let server = Server::start([
            Reply::sse(two_calls()).split_every(sizes),
            Reply::sse(answer("Done: ünïcode ✓")).split_every(sizes),
        ])
        .await;
        let agent = test_agent(gemini(&server), []);
        let out = agent
            .run(&Context::new(), "When?")
            .await
            .expect("the run answers");
        assert_eq!(out.text, "Done: ünïcode ✓", "split {sizes:?}");
        assert_eq!(out.calls.len(), 2);
    }
}

// V3: the driver's own settings reach the request: `maxOutputTokens`, and a body field
// merged into `generationConfig` rather than replacing it.
#[tokio::test]
async fn v3_generation_settings_are_merged() {
    let mut checker = Checker::start();
    let server = Server::start([Reply::sse(answer("ok"))]).await;
    let model = Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .max_output_tokens(256)
        .body_field("generationConfig", json!({"temperature": 0.2}))
        .build()
        .expect("valid");
    test_agent(model, [])
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    let body = server.requests()[0].json();
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 256, "temperature": 0.2})
    );
    assert_eq!(
        server.requests()[0].path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    checker.assert_requests(&server);
}

// V3: the environment selects Gemini by GEMINI_API_KEY (or GOOGLE_API_KEY), at
// GEMINI_BASE_URL, with GEMINI_MODEL; the provider is named `gcp.gemini` for telemetry.
#[tokio::test]
async fn v3_the_environment_selects_gemini() {
    let server = Server::start([Reply::sse(answer("From the environment."))]).await;
    let url = server.url().to_owned();
    let vars = |name: &str| match name {
        "GOOGLE_API_KEY" => Some(KEY.to_owned()),
        "GEMINI_BASE_URL" => Some(url.clone()),
        "GEMINI_MODEL" => Some("gemini-env".to_owned()),
        _ => None,
    };
    let model = from_lookup(vars).expect("valid").expect("a provider");
    assert!(matches!(model, EnvModel::Gemini(_)));
    assert_eq!(model.provider(), "gemini");
    assert_eq!(tool_runtime::Model::provider_name(&model), "gcp.gemini");
    let out = test_agent(model, [])
        .run(&Context::new(), "hi")
        .await
        .expect("answers");
    assert_eq!(out.text, "From the environment.");
    let request = &server.requests()[0];
    assert_eq!(request.header("x-goog-api-key"), Some(KEY));
    assert!(request.path.starts_with("/v1beta/models/gemini-env:"));
    let preferred = |name: &str| match name {
        "GEMINI_API_KEY" => Some("gemini-key".to_owned()),
        "GOOGLE_API_KEY" => Some("google-key".to_owned()),
        _ => None,
    };
    let model = from_lookup(preferred).expect("valid").expect("a provider");
    assert_eq!(model.model_name(), "gemini-2.5-flash");
    assert!(
        !format!("{model:?}").contains("gemini-key"),
        "no key in Debug"
    );
    // Gemini comes after OpenAI and Anthropic.
    let both = |name: &str| match name {
        "GEMINI_API_KEY" | "ANTHROPIC_API_KEY" => Some("k".to_owned()),
        _ => None,
    };
    let model = from_lookup(both).expect("valid").expect("a provider");
    assert_eq!(model.provider(), "anthropic");
}

/// A conversation whose last result carries a PNG, a WAV clip and a PDF (O3, M4).
fn media_transcript() -> Vec<tool_runtime::Message> {
    use tool_runtime::{Image, Message, ToolCall, ToolResult};
    vec![
        Message::user("Show me svc-42's load."),
        Message::assistant_with_calls(
            "",
            vec![ToolCall::new(
                "fc-1",
                "lookup-window",
                r#"{"service_id":"svc-42"}"#,
            )],
        ),
        Message::Tool(
            ToolResult::new("fc-1", "lookup-window", "The load chart.", false).with_images(vec![
                Image::png(vec![0x89, b'P', b'N', b'G']),
                Image::wav(vec![b'R', b'I', b'F', b'F']),
                Image::new("application/pdf", b"%PDF".to_vec()),
            ]),
        ),
    ]
}

/// The `functionResponse` the first request sent for the media transcript, to `model`.
async fn media_response(builder: tool_runtime::providers::gemini::GeminiBuilder) -> Value {
    let server = Server::start([Reply::sse(answer("It peaks at noon."))]).await;
    let model = builder
        .api_key(KEY)
        .base_url(server.url())
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration");
    test_agent(model, [])
        .run(&Context::new(), media_transcript())
        .await
        .expect("the run answers");
    Checker::start().assert_requests(&server);
    server.requests()[0].json()["contents"][2]["parts"][0]["functionResponse"].clone()
}

// O3, V3, V5: a result's image and PDF go to Gemini as the function response's `inlineData`
// parts (base64, in order), which Google's own `GenerateContentRequest` parses; the audio clip
// stays a line of the text (Gemini takes no audio there). The declared fallback, for the
// models before Gemini 3 (or `media_in_results(false)`), sends every piece as a line of text.
#[tokio::test]
async fn o3_images_go_to_gemini_as_function_response_parts() {
    let response = media_response(Gemini::builder().model("gemini-3-pro-preview")).await;
    assert_eq!(
        response["parts"],
        json!([
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw=="}},
            {"inlineData": {"mimeType": "application/pdf", "data": "JVBERg=="}},
        ])
    );
    assert_eq!(
        response["response"],
        json!({"output": "The load chart.\n[audio: audio/wav, 4 bytes]"})
    );
    for fallback in [
        Gemini::builder().model("gemini-2.5-flash"),
        Gemini::builder()
            .model("gemini-3-pro-preview")
            .media_in_results(false),
    ] {
        let response = media_response(fallback).await;
        assert_eq!(response.get("parts"), None);
        assert_eq!(
            response["response"],
            json!({"output": "The load chart.\n[image: image/png, 4 bytes]\n\
                              [audio: audio/wav, 4 bytes]\n[file: application/pdf, 4 bytes]"})
        );
    }
}
