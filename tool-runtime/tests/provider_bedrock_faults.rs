//! The Bedrock driver's fault matrix (V2, V3, V5): throttling and the other exceptions
//! that say to wait are retried, 5xx too; a validation error is not; a guardrail stop, a
//! `max_tokens` cut, a broken stream, garbage frames, a bad CRC, an exception frame and a
//! body that is not an event stream each end in a clear error (never a panic), and no error
//! shows a key.

#![cfg(feature = "bedrock")]

mod support {
    pub mod bedrock;
    pub mod provider;
}

use std::time::Duration;

use serde_json::json;
use support::bedrock::{
    ACCESS_KEY_ID, EVENT_STREAM, MODEL, REGION, SECRET_ACCESS_KEY, error, event, exception, stream,
    text_answer, text_frames, tool_frames, verify_sigv4,
};
use support::provider::{End, Reply, Server, drain_model};
use tool_runtime::providers::bedrock::Bedrock;
use tool_runtime::providers::{RetryPolicy, TransportError};
use tool_runtime::{Agent, Context, FinishReason, Model, ModelError, ModelEvent, ModelRequest};

fn model(server: &Server, retries: u32) -> Bedrock {
    Bedrock::builder()
        .region(REGION)
        .credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY, None)
        .base_url(server.url())
        .model(MODEL)
        .retry(
            RetryPolicy::new()
                .max_retries(retries)
                .backoff(Duration::from_millis(1), Duration::from_millis(2)),
        )
        .build()
        .expect("a valid configuration")
}

/// Runs one request through the driver: its events and the error that ended it.
async fn run(reply: Reply) -> (Vec<ModelEvent>, Option<ModelError>) {
    let server = Server::start([reply]).await;
    let model = model(&server, 0);
    let messages = [tool_runtime::Message::user("hi")];
    drain_model(model.stream(ModelRequest::new(&messages, &[]))).await
}

/// The error of a run that must fail, shown with its causes, checked for secrets.
fn shown(error: &ModelError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        text.push_str(&format!(": {e}"));
        source = e.source();
    }
    assert!(!text.contains(SECRET_ACCESS_KEY), "{text}");
    assert!(!text.contains("Signature="), "{text}");
    text
}

// V2, V3: 429 ThrottlingException, 429 ModelNotReadyException, 503
// ServiceUnavailableException and 500 InternalServerException are retried (each attempt
// signed anew), then the answer comes.
#[tokio::test]
async fn v3_throttling_and_unavailability_are_retried() {
    let server = Server::start([
        error(
            429,
            "ThrottlingException",
            "Too many requests, please wait before trying again.",
        ),
        error(429, "ModelNotReadyException", "Model is not ready."),
        error(503, "ServiceUnavailableException", "Service unavailable."),
        error(500, "InternalServerException", "Internal server error."),
        text_answer("ok"),
    ])
    .await;
    let agent = Agent::builder(model(&server, 4)).build().expect("builds");
    let out = agent
        .run(&Context::new(), "hi")
        .await
        .expect("answers after retries");
    assert_eq!(out.text, "ok");
    assert_eq!(server.request_count(), 5);
    for request in server.requests() {
        verify_sigv4(&request, None).expect("each attempt is signed");
    }
}

// V2, V3: retries exhausted on 5xx: the last status, Bedrock's error type (from
// `x-amzn-ErrorType`), its message, the request id and the attempts; a 400
// ValidationException is returned at once.
#[tokio::test]
async fn v3_exhausted_5xx_and_a_validation_error_are_api_errors() {
    let server = Server::start([
        error(500, "InternalServerException", "boom"),
        error(500, "InternalServerException", "boom again"),
        error(
            400,
            "ValidationException",
            "The model returned the following errors: bad",
        ),
        text_answer("never"),
    ])
    .await;
    let agent = Agent::builder(model(&server, 1)).build().expect("builds");
    let err = agent.run(&Context::new(), "hi").await.expect_err("fails");
    let Some(ModelError::Api(api)) = err.model_error() else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!((api.status, api.attempts), (Some(500), 2));
    assert_eq!(api.error_type.as_deref(), Some("InternalServerException"));
    assert_eq!(api.message, "boom again");
    assert_eq!(api.request_id.as_deref(), Some("req-error-1"));
    let err = agent.run(&Context::new(), "hi").await.expect_err("fails");
    assert_eq!(server.request_count(), 3, "a 400 is not retried");
    let Some(ModelError::Api(api)) = err.model_error() else {
        panic!("expected an API error, got {err:?}");
    };
    assert_eq!(api.error_type.as_deref(), Some("ValidationException"));
    assert!(err.to_string().contains("bad"), "{err}");
}

// V3: a guardrail's stop is named: `guardrail_intervened` and `content_filtered` are the
// provider's filtering, not a normal stop; `max_tokens` is a cut (Length).
#[tokio::test]
async fn v3_guardrail_and_max_tokens_stops_are_named() {
    for (reason, expected) in [
        ("guardrail_intervened", FinishReason::ContentFilter),
        ("content_filtered", FinishReason::ContentFilter),
        ("max_tokens", FinishReason::Length),
        ("end_turn", FinishReason::Stop),
    ] {
        let (events, error) = run(stream(&text_frames("Sorry, I cannot help.", reason))).await;
        assert!(error.is_none(), "{reason}: {error:?}");
        assert!(
            events.contains(&ModelEvent::Finish(expected)),
            "{reason}: {events:?}"
        );
    }
}

// V3: a `max_tokens` cut inside a call's input: the call's arguments are only what came
// (not valid JSON, for the parser to refuse), and the finish says the reply was cut.
#[tokio::test]
async fn v3_max_tokens_inside_a_call_cuts_its_arguments() {
    let mut frames = tool_frames(
        "",
        &[("tooluse_A", "lookup-window", r#"{"service_id":"sv"#)],
    );
    let at = frames.len() - 2;
    frames[at] = event("messageStop", json!({"stopReason": "max_tokens"}));
    let (events, error) = run(stream(&frames)).await;
    assert!(error.is_none(), "{error:?}");
    assert!(events.contains(&ModelEvent::Finish(FinishReason::Length)));
    let arguments: String = events
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolCallArguments { fragment, .. } => Some(fragment.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(arguments, r#"{"service_id":"sv"#);
}

// V2, V3: a stream that ends before `messageStop`, between frames or mid-frame, cleanly or
// with the connection broken, is an error that says so, never a partial answer.
#[tokio::test]
async fn v3_a_broken_stream_is_an_error() {
    let frames = text_frames("partial answer", "end_turn");
    let before_stop = frames[..frames.len() - 2].concat();
    let (_, error) = run(Reply::bytes(EVENT_STREAM, before_stop.clone())).await;
    let error = error.expect("an error");
    assert!(
        matches!(
            error,
            ModelError::Transport(ref source) if matches!(
                source.downcast_ref::<TransportError>(),
                Some(TransportError::Truncated { expected: "messageStop" })
            )
        ),
        "{error:?}"
    );
    assert!(shown(&error).contains("ended before it was complete"));
    let mid_frame = before_stop[..before_stop.len() - 7].to_vec();
    for end in [End::Complete, End::Close] {
        let (_, error) = run(Reply::bytes(EVENT_STREAM, mid_frame.clone()).end(end)).await;
        let error = error.expect("an error");
        assert!(
            shown(&error).contains("ended before it was complete"),
            "{error:?}"
        );
    }
}

// V3: garbage, a frame whose CRC does not match, and a frame that declares 4 GiB are
// protocol errors, at once (nothing is buffered waiting for 4 GiB).
#[tokio::test]
async fn v3_garbage_frames_and_bad_crcs_are_protocol_errors() {
    let mut bad_crc = text_frames("hello", "end_turn").concat();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 0x55;
    let mut flipped_payload = event("messageStart", json!({"role": "assistant"}));
    flipped_payload[30] ^= 0x01;
    let cases = [
        b"<html>not a stream, though it says so</html>".to_vec(),
        bad_crc,
        flipped_payload,
        vec![0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0],
        vec![0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    ];
    for body in cases {
        let (_, error) = tokio::time::timeout(
            Duration::from_secs(5),
            run(Reply::bytes(EVENT_STREAM, body)),
        )
        .await
        .expect("no hang");
        let error = error.expect("an error");
        assert!(matches!(error, ModelError::Protocol(_)), "{error:?}");
        assert!(shown(&error).contains("ConverseStream frame"), "{error:?}");
    }
}

// V3: an exception frame mid-stream (throttling, a model stream error) is an API error with
// its type, its message and the request id; the text before it is not an answer.
#[tokio::test]
async fn v3_an_exception_frame_is_an_api_error() {
    for (kind, name) in [
        ("throttlingException", "ThrottlingException"),
        ("modelStreamErrorException", "ModelStreamErrorException"),
    ] {
        let mut frames = text_frames("partial", "end_turn");
        frames.truncate(2);
        frames.push(exception(kind, "Something went wrong."));
        let (events, error) = run(stream(&frames)).await;
        assert!(events.iter().any(|e| matches!(e, ModelEvent::TextDelta(_))));
        let Some(ModelError::Api(api)) = error else {
            panic!("expected an API error, got {error:?}");
        };
        assert_eq!(api.error_type.as_deref(), Some(name));
        assert_eq!(api.message, "Something went wrong.");
        assert_eq!(api.request_id.as_deref(), Some("req-bedrock-1"));
    }
}

// V2, V3: a success whose body is not an event stream (a proxy's HTML page) names its
// content type and is not retried.
#[tokio::test]
async fn v3_a_body_that_is_not_an_event_stream_names_its_type() {
    let server = Server::start([
        Reply::bytes("text/html", b"<html>proxy says hi</html>".to_vec()),
        text_answer("never"),
    ])
    .await;
    let model = model(&server, 2);
    let messages = [tool_runtime::Message::user("hi")];
    let (_, error) = drain_model(model.stream(ModelRequest::new(&messages, &[]))).await;
    let error = error.expect("an error");
    let text = shown(&error);
    assert!(
        text.contains("`text/html`") && text.contains("proxy says hi"),
        "{text}"
    );
    assert_eq!(server.request_count(), 1);
}

// V2: an empty 200, and a 200 whose body stays silent past the idle timeout before its
// first byte, have handed nothing on: they are retried (the silent connection closed);
// without retries, the error says the body was empty.
#[tokio::test]
async fn v3_an_empty_or_silent_200_is_retried_as_before_the_answer() {
    let silent = Reply::bytes(EVENT_STREAM, Vec::new()).end(End::Hang);
    let server = Server::start([
        Reply::bytes(EVENT_STREAM, Vec::new()),
        silent,
        text_answer("ok"),
    ])
    .await;
    let model = Bedrock::builder()
        .region(REGION)
        .credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY, None)
        .base_url(server.url())
        .idle_timeout(Duration::from_millis(200))
        .retry(
            RetryPolicy::new()
                .max_retries(2)
                .backoff(Duration::from_millis(1), Duration::from_millis(2)),
        )
        .build()
        .expect("builds");
    let agent = Agent::builder(model).build().expect("builds");
    let out = agent.run(&Context::new(), "hi").await.expect("answers");
    assert_eq!(out.text, "ok");
    assert_eq!(server.request_count(), 3);
    assert!(server.wait_hung_up(1, Duration::from_secs(5)).await);
    let (_, error) = run(Reply::bytes(EVENT_STREAM, Vec::new())).await;
    let error = error.expect("an error");
    assert!(
        matches!(
            error,
            ModelError::Transport(ref source) if matches!(
                source.downcast_ref::<TransportError>(),
                Some(TransportError::Empty { attempts: 1, .. })
            )
        ),
        "{error:?}"
    );
}
