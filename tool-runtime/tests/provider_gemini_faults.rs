//! The Gemini driver's fault matrix (V2, V3, V5): Google's error bodies (`google.rpc.Status`
//! with `RetryInfo` and `QuotaFailure` details), 429 and 503 retried, a quota exhaustion
//! returned with the wait it asks for, safety and recitation stops and malformed calls named,
//! a cut-off answer, a wrong content type, a stream broken mid-way, garbage: each a clear
//! error or a retry, never a panic, and never the key.

#![cfg(feature = "gemini")]

mod support {
    pub mod gemini;
    pub mod provider;
}

use std::time::{Duration, Instant};

use serde_json::json;
use support::gemini::{Checker, answer, chunk, error_body, sse, usage};
use support::provider::{End, Reply, Server};
use tool_runtime::providers::gemini::Gemini;
use tool_runtime::providers::{RetryPolicy, TransportError};
use tool_runtime::{Agent, ApiError, Context, ErrorKind, ModelError, RunError};

const KEY: &str = "AIza-fault-key-987";

fn gemini(server: &Server, retries: u32) -> Gemini {
    Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .model("gemini-test")
        .retry(
            RetryPolicy::new()
                .max_retries(retries)
                .backoff(Duration::from_millis(10), Duration::from_millis(40))
                .max_retry_after(Duration::from_secs(5)),
        )
        .build()
        .expect("a valid configuration")
}

async fn run(model: Gemini) -> Result<String, RunError> {
    let agent = Agent::builder(model).build().expect("builds");
    agent.run(&Context::new(), "hi").await.map(|out| out.text)
}

fn api(err: &RunError) -> &ApiError {
    match err.model_error() {
        Some(ModelError::Api(api)) => api,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn retry_info(delay: &str) -> serde_json::Value {
    json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay})
}

fn quota_failure(id: &str) -> serde_json::Value {
    json!({"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
        "quotaId": id,
        "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
        "quotaValue": "10"}]})
}

// V3: a 429 RESOURCE_EXHAUSTED whose RetryInfo asks for 0.3 s is retried after that wait.
#[tokio::test]
async fn v3_a_429_with_retry_info_is_retried_after_its_delay() {
    let limited = error_body(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
        json!([
            quota_failure("GenerateRequestsPerMinutePerProjectPerModel-FreeTier"),
            retry_info("0.3s")
        ]),
    );
    let server = Server::start([Reply::json(429, limited), Reply::sse(answer("ok"))]).await;
    let started = Instant::now();
    assert_eq!(run(gemini(&server, 2)).await.expect("answers"), "ok");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the delay was honoured"
    );
    assert_eq!(server.request_count(), 2);
}

// V3: a quota whose RetryInfo asks for longer than the policy's maximum (a daily quota) is
// returned at once, with Google's status, the wait it asked for and its message.
#[tokio::test]
async fn v3_an_exhausted_daily_quota_is_returned_with_its_wait() {
    let exhausted = error_body(
        429,
        "RESOURCE_EXHAUSTED",
        "Quota exceeded for metric: generate_content_free_tier_requests, limit: 250",
        json!([
            quota_failure("GenerateRequestsPerDayPerProjectPerModel-FreeTier"),
            retry_info("43200s")
        ]),
    );
    let server = Server::start([Reply::json(429, exhausted), Reply::sse(answer("no"))]).await;
    let err = run(gemini(&server, 3)).await.expect_err("fails");
    let api = api(&err);
    assert_eq!(api.status, Some(429));
    assert_eq!(api.error_type.as_deref(), Some("RESOURCE_EXHAUSTED"));
    assert_eq!(api.retry_after, Some(Duration::from_secs(43_200)));
    assert!(api.message.contains("limit: 250"), "{}", api.message);
    assert_eq!(server.request_count(), 1);
}

// V2: 503 UNAVAILABLE is retried; 400 INVALID_ARGUMENT is returned at once, without the key
// even when Google echoes it.
#[tokio::test]
async fn v3_unavailable_is_retried_and_invalid_argument_is_not() {
    let unavailable = error_body(
        503,
        "UNAVAILABLE",
        "The model is overloaded. Please try again later.",
        json!([]),
    );
    let server = Server::start([
        Reply::json(503, unavailable.clone()),
        Reply::json(503, unavailable),
        Reply::sse(answer("ok")),
    ])
    .await;
    assert_eq!(run(gemini(&server, 2)).await.expect("answers"), "ok");
    assert_eq!(server.request_count(), 3);

    let invalid = error_body(
        400,
        "INVALID_ARGUMENT",
        &format!("API key not valid: {KEY}. Please pass a valid API key."),
        json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                "domain": "googleapis.com"}]),
    );
    let server = Server::start([Reply::json(400, invalid), Reply::sse(answer("no"))]).await;
    let err = run(gemini(&server, 3)).await.expect_err("fails");
    let api = api(&err);
    assert_eq!(
        (api.status, api.error_type.as_deref()),
        (Some(400), Some("INVALID_ARGUMENT"))
    );
    assert_eq!(server.request_count(), 1);
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(KEY), "the key never shows: {shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
}

// V3: a reply stopped by a filter, or a function call the API could not read, is an error
// naming the reason (and Google's finishMessage), not an empty answer.
#[tokio::test]
async fn v3_safety_recitation_and_malformed_calls_are_named_errors() {
    let mut checker = Checker::start();
    for (reason, words) in [
        ("SAFETY", "safety filters"),
        ("RECITATION", "recited"),
        ("MALFORMED_FUNCTION_CALL", "could not read"),
    ] {
        let mut last = chunk(json!([]), Some(reason), usage(20, 0, 0));
        last["candidates"][0]["finishMessage"] = "Malformed function call: print(".into();
        last["candidates"][0]["safetyRatings"] = json!([
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH",
             "blocked": true}]);
        let stream = sse(&[
            chunk(json!([{"text": "Partial"}]), None, usage(20, 1, 0)),
            last,
        ]);
        checker.assert_stream(&stream);
        let server = Server::start([Reply::sse(stream)]).await;
        let err = run(gemini(&server, 0)).await.expect_err("fails");
        let api = api(&err);
        assert_eq!(api.code.as_deref(), Some(reason));
        assert!(api.message.contains(reason), "{}", api.message);
        assert!(api.message.contains(words), "{}", api.message);
    }
    let blocked = sse(&[json!({
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-2.5-flash", "responseId": "x1"})]);
    checker.assert_stream(&blocked);
    let server = Server::start([Reply::sse(blocked)]).await;
    let err = run(gemini(&server, 0)).await.expect_err("fails");
    assert!(api(&err).message.contains("blocked the prompt"), "{err}");
}

// R3 (truncated replies), V3: MAX_TOKENS is a cut-off answer: the run ends with kind Truncated and
// keeps the partial text.
#[tokio::test]
async fn v3_max_tokens_is_a_cut_off_answer() {
    let stream = sse(&[
        chunk(
            json!([{"text": "The window is on Tues"}]),
            None,
            usage(20, 5, 0),
        ),
        chunk(
            json!([{"text": "day at"}]),
            Some("MAX_TOKENS"),
            usage(20, 8, 0),
        ),
    ]);
    Checker::start().assert_stream(&stream);
    let server = Server::start([Reply::sse(stream)]).await;
    let err = run(gemini(&server, 0)).await.expect_err("cut off");
    assert_eq!(err.kind(), ErrorKind::Truncated);
    assert_eq!(err.partial_text(), Some("The window is on Tuesday at"));
}

// V2: a success whose body is JSON (the non-streaming answer, or a proxy's page) is a protocol
// error naming the content type, not retried.
#[tokio::test]
async fn v3_a_wrong_content_type_is_a_protocol_error() {
    let server = Server::start([
        Reply::json(200, json!({"candidates": []})),
        Reply::sse(answer("no")),
    ])
    .await;
    let err = run(gemini(&server, 3)).await.expect_err("fails");
    let Some(ModelError::Protocol(text)) = err.model_error() else {
        panic!("a protocol error: {err:?}");
    };
    assert!(text.contains("application/json"), "{text}");
    assert_eq!(server.request_count(), 1);
}

// V2: a stream broken mid-way (before any finishReason), cleanly or not, is an error saying
// the answer was incomplete, never a silent partial answer, and is not retried.
#[tokio::test]
async fn v3_a_stream_broken_mid_way_is_an_error() {
    let head = sse(&[chunk(json!([{"text": "Part"}]), None, usage(20, 1, 0))]);
    for end in [End::Close, End::Complete] {
        let server =
            Server::start([Reply::sse(head.clone()).end(end), Reply::sse(answer("no"))]).await;
        let err = run(gemini(&server, 3)).await.expect_err("fails");
        let Some(ModelError::Transport(inner)) = err.model_error() else {
            panic!("a transport error: {err:?}");
        };
        assert!(
            inner.to_string().contains("ended before it was complete"),
            "{inner}"
        );
        if end == End::Complete {
            assert!(matches!(
                inner.downcast_ref::<TransportError>(),
                Some(TransportError::Truncated {
                    expected: "finishReason"
                })
            ));
        }
        assert_eq!(server.request_count(), 1);
    }
}

// V2: garbage (not JSON, JSON that is not an object, an error event mid-stream) is an error,
// never a panic.
#[tokio::test]
async fn v3_garbage_and_error_events_are_errors() {
    for body in [
        "data: <html>oops</html>\r\n\r\n",
        "data: [1,2,3]\r\n\r\n",
        "data: \"x\"\r\n\r\n",
    ] {
        let server = Server::start([Reply::sse(body)]).await;
        let err = run(gemini(&server, 0)).await.expect_err("fails");
        assert!(
            matches!(err.model_error(), Some(ModelError::Protocol(_))),
            "{body}: {err:?}"
        );
    }
    let mid = format!(
        "{}data: {}\r\n\r\n",
        sse(&[chunk(json!([{"text": "Part"}]), None, usage(20, 1, 0))]),
        error_body(
            500,
            "INTERNAL",
            "An internal error has occurred.",
            json!([])
        )
    );
    let server = Server::start([Reply::sse(mid)]).await;
    let err = run(gemini(&server, 0)).await.expect_err("fails");
    let api = api(&err);
    assert_eq!((api.status, api.code.as_deref()), (None, Some("500")));
    assert_eq!(api.error_type.as_deref(), Some("INTERNAL"));
    // Odd shapes are read, not a panic: a candidate without content, a part that is not an
    // object (skipped), a call with no name (the model is told no such tool exists).
    let odd = sse(&[
        json!({"candidates": [{"index": 0}]}),
        json!({"candidates": [{"content": {"parts": [7, {"functionCall": {}}]}, "finishReason": "STOP"}]}),
    ]);
    let server = Server::start([Reply::sse(odd), Reply::sse(answer("fine"))]).await;
    let agent = Agent::builder(gemini(&server, 0)).build().expect("builds");
    let out = agent.run(&Context::new(), "hi").await.expect("answers");
    assert_eq!(out.text, "fine");
    assert_eq!(out.calls.len(), 1);
    assert_eq!(out.calls[0].name, "");
    assert_eq!(out.calls[0].arguments, "{}");
}
