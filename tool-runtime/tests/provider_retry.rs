//! Retries, timeouts and errors of the provider drivers (V2): which failures are retried,
//! how long the driver waits, what a caller gets back, and that the API key never shows.

#![cfg(feature = "openai")]

mod support {
    pub mod provider;
}

use std::time::{Duration, Instant};

use serde_json::json;
use support::provider::{End, Reply, Server, chat_answer};
use tool_runtime::providers::openai::OpenAiChat;
use tool_runtime::providers::{RetryPolicy, TransportError};
use tool_runtime::{Agent, ApiError, Context, ModelError, RunError};

const KEY: &str = "sk-proj-SECRET-4c0ffee";

/// A driver against `server` that retries up to `retries` times with a tiny backoff.
fn openai(server: &Server, retries: u32) -> OpenAiChat {
    OpenAiChat::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1", server.url()))
        .model("gpt-test")
        .retry(
            RetryPolicy::new()
                .max_retries(retries)
                .backoff(Duration::from_millis(1), Duration::from_millis(4)),
        )
        .build()
        .expect("a valid configuration")
}

fn openai_error(status: u16, message: &str, code: &str) -> Reply {
    Reply::json(
        status,
        json!({"error": {"message": message, "type": code, "param": null, "code": code}}),
    )
}

async fn run(model: OpenAiChat) -> Result<String, RunError> {
    let agent = Agent::builder(model).build().expect("builds");
    agent.run(&Context::new(), "hi").await.map(|out| out.text)
}

fn api(err: &RunError) -> &ApiError {
    match err.model_error() {
        Some(ModelError::Api(api)) => api,
        other => panic!("expected an API error, got {other:?}"),
    }
}

// V2: a 429 with `retry-after: 1` is retried once the second has passed.
#[tokio::test]
async fn v2_a_429_with_retry_after_is_retried_after_the_wait() {
    let server = Server::start([
        openai_error(429, "Rate limit reached", "rate_limit_exceeded").header("retry-after", "1"),
        Reply::sse(chat_answer("ok")),
    ])
    .await;
    let started = Instant::now();
    let text = run(openai(&server, 2))
        .await
        .expect("answers after a retry");
    let waited = started.elapsed();
    assert_eq!(text, "ok");
    assert_eq!(server.request_count(), 2);
    assert!(waited >= Duration::from_secs(1), "waited only {waited:?}");
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
}

// V2: `retry-after-ms` is honoured too, and wins over `retry-after`.
#[tokio::test]
async fn v2_retry_after_ms_is_honoured() {
    let server = Server::start([
        openai_error(503, "busy", "server_error")
            .header("retry-after-ms", "150")
            .header("retry-after", "30"),
        Reply::sse(chat_answer("ok")),
    ])
    .await;
    let started = Instant::now();
    run(openai(&server, 1))
        .await
        .expect("answers after a retry");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(150),
        "waited only {waited:?}"
    );
    assert!(waited < Duration::from_secs(10), "waited {waited:?}");
}

// V2: three 500s with two retries: the error carries the last status and message.
#[tokio::test]
async fn v2_persistent_server_errors_end_with_the_last_status() {
    let server = Server::start([
        openai_error(500, "first failure", "server_error"),
        openai_error(502, "second failure", "server_error"),
        openai_error(503, "third failure", "server_error").header("x-request-id", "req_third"),
    ])
    .await;
    let err = run(openai(&server, 2)).await.expect_err("fails");
    let api = api(&err);
    assert_eq!(api.status, Some(503));
    assert_eq!(api.message, "third failure");
    assert_eq!(api.request_id.as_deref(), Some("req_third"));
    assert_eq!(api.attempts, 3);
    assert_eq!(server.request_count(), 3);
}

// V2: 400, 401, 403 and 404 are returned at once, with the provider's message.
#[tokio::test]
async fn v2_client_errors_are_not_retried() {
    for status in [400, 401, 403, 404] {
        let server = Server::start([
            openai_error(status, "Incorrect API key provided", "invalid_api_key")
                .header("x-request-id", "req_401"),
            Reply::sse(chat_answer("never")),
        ])
        .await;
        let err = run(openai(&server, 3)).await.expect_err("fails");
        assert_eq!(server.request_count(), 1, "status {status}");
        let api = api(&err);
        assert_eq!(api.status, Some(status));
        assert_eq!(api.message, "Incorrect API key provided");
        assert_eq!(api.code.as_deref(), Some("invalid_api_key"));
        assert_eq!(api.request_id.as_deref(), Some("req_401"));
        assert_eq!(api.attempts, 1);
    }
}

// V2: a 429 for `insufficient_quota` is not retried: waiting does not buy quota.
#[tokio::test]
async fn v2_insufficient_quota_is_not_retried() {
    let server = Server::start([
        openai_error(429, "You exceeded your current quota", "insufficient_quota"),
        Reply::sse(chat_answer("never")),
    ])
    .await;
    let err = run(openai(&server, 3)).await.expect_err("fails");
    assert_eq!(server.request_count(), 1);
    assert_eq!(api(&err).code.as_deref(), Some("insufficient_quota"));
}

// V2: `x-should-retry: false` forbids a retry of a 503; `true` forces one of a 400.
#[tokio::test]
async fn v2_x_should_retry_is_honoured_both_ways() {
    let server = Server::start([
        openai_error(503, "do not retry", "server_error").header("x-should-retry", "false"),
        Reply::sse(chat_answer("never")),
    ])
    .await;
    let err = run(openai(&server, 3)).await.expect_err("fails");
    assert_eq!((server.request_count(), api(&err).status), (1, Some(503)));

    let server = Server::start([
        openai_error(400, "retry me", "invalid_request_error").header("x-should-retry", "true"),
        Reply::sse(chat_answer("ok")),
    ])
    .await;
    assert_eq!(run(openai(&server, 3)).await.expect("retried"), "ok");
    assert_eq!(server.request_count(), 2);
}

// V2: a provider asking for a wait longer than the policy's maximum gets its error back at
// once, with the wait it asked for.
#[tokio::test]
async fn v2_a_retry_after_beyond_the_maximum_is_not_waited_for() {
    let server = Server::start([
        openai_error(429, "come back in an hour", "rate_limit_exceeded")
            .header("retry-after", "3600"),
        Reply::sse(chat_answer("never")),
    ])
    .await;
    let err = run(openai(&server, 3)).await.expect_err("fails");
    assert_eq!(server.request_count(), 1);
    assert_eq!(api(&err).retry_after, Some(Duration::from_secs(3600)));
}

// V2: no response within the response timeout is a Timeout error, after the retries.
#[tokio::test]
async fn v2_a_response_timeout_is_retried_then_an_error() {
    let server = Server::start([Reply::silence(), Reply::silence()]).await;
    let model = OpenAiChat::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1", server.url()))
        .response_timeout(Duration::from_millis(200))
        .retry(
            RetryPolicy::new()
                .max_retries(1)
                .backoff(Duration::from_millis(1), Duration::from_millis(1)),
        )
        .build()
        .expect("a valid configuration");
    let started = Instant::now();
    let err = run(model).await.expect_err("times out");
    assert!(matches!(
        err.model_error(),
        Some(ModelError::Timeout { after }) if *after == Duration::from_millis(200)
    ));
    assert_eq!(server.request_count(), 2);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The abandoned requests' connections were closed.
    assert!(server.wait_hung_up(2, Duration::from_secs(5)).await);
}

// V2: a silent stream ends with a Timeout after the idle timeout, and is not retried once
// part of the answer was handed on.
#[tokio::test]
async fn v2_an_idle_stream_times_out_and_is_not_retried() {
    let answer = chat_answer("partial");
    let head: String = answer.split_inclusive("\n\n").take(1).collect();
    let server = Server::start([
        Reply::sse(head).end(End::Hang),
        Reply::sse(chat_answer("no")),
    ])
    .await;
    let model = OpenAiChat::builder()
        .api_key(KEY)
        .base_url(format!("{}/v1", server.url()))
        .idle_timeout(Duration::from_millis(200))
        .retry(RetryPolicy::new().max_retries(3))
        .build()
        .expect("a valid configuration");
    let err = run(model).await.expect_err("times out");
    assert!(
        matches!(err.model_error(), Some(ModelError::Timeout { .. })),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
}

// V2: a stream that breaks after its first bytes were handed on is not retried.
#[tokio::test]
async fn v2_a_stream_broken_after_its_first_bytes_is_not_retried() {
    let answer = chat_answer("partial");
    let head: String = answer.split_inclusive("\n\n").take(1).collect();
    let server = Server::start([
        Reply::sse(head).end(End::Close),
        Reply::sse(chat_answer("no")),
    ])
    .await;
    let err = run(openai(&server, 3)).await.expect_err("fails");
    assert!(
        matches!(err.model_error(), Some(ModelError::Transport(_))),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 1);
}

// V2: a connection that cannot be made is retried, then a transport error the caller can
// match, with the number of attempts.
#[tokio::test]
async fn v2_a_refused_connection_is_retried_then_a_transport_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let model = OpenAiChat::builder()
        .api_key(KEY)
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .retry(
            RetryPolicy::new()
                .max_retries(2)
                .backoff(Duration::from_millis(1), Duration::from_millis(2)),
        )
        .build()
        .expect("a valid configuration");
    let err = run(model).await.expect_err("no server");
    let Some(ModelError::Transport(source)) = err.model_error() else {
        panic!("expected a transport error, got {err:?}");
    };
    assert!(matches!(
        source.downcast_ref::<TransportError>(),
        Some(TransportError::Send { attempts: 3, .. })
    ));
}

// V2: the API key appears in no error's Display or Debug, even when the provider echoes
// it, and in no driver's Debug.
#[tokio::test]
async fn v2_the_api_key_never_appears_in_an_error() {
    let echo = format!("Incorrect API key provided: {KEY}. You can find your API key at …");
    let mid_stream = format!(
        "data: {}\n\n",
        json!({"error": {"message": format!("bad key {KEY}"), "type": "server_error"}})
    );
    let server = Server::start([
        openai_error(401, &echo, "invalid_api_key"),
        openai_error(500, &echo, "server_error"),
        Reply::json(200, json!({"echo": KEY})),
        Reply::sse(mid_stream),
        Reply::silence(),
    ])
    .await;
    let model = |timeout_ms: u64| {
        OpenAiChat::builder()
            .api_key(KEY)
            .base_url(format!("{}/v1", server.url()))
            .response_timeout(Duration::from_millis(timeout_ms))
            .retry(RetryPolicy::none())
            .build()
            .expect("a valid configuration")
    };
    assert!(!format!("{:?}", model(1000)).contains(KEY));
    let mut texts = Vec::new();
    for _ in 0..5 {
        let err = run(model(300)).await.expect_err("fails");
        texts.push(format!("{err} {err:#} {err:?}"));
        if let Some(model_error) = err.model_error() {
            texts.push(format!("{model_error} {model_error:?}"));
        }
    }
    assert!(texts[0].contains("[redacted]"), "{}", texts[0]);
    for text in &texts {
        assert!(!text.contains(KEY), "the key leaked: {text}");
        assert!(!text.contains("SECRET"), "part of the key leaked: {text}");
    }
    let refused = OpenAiChat::builder()
        .api_key(KEY)
        .base_url("http://127.0.0.1:9/v1")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration");
    let err = run(refused).await.expect_err("fails");
    assert!(!format!("{err} {err:#} {err:?}").contains(KEY));
}
