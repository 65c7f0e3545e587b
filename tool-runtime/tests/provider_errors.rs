//! What the drivers say when a provider misbehaves (V2): a stream cut short names
//! the truncation, a body that is not an event stream names its content type, no error in a
//! cause chain repeats its cause, and an empty or silent 200 counts as "before the answer".

#![cfg(all(feature = "openai", feature = "anthropic"))]

mod support {
    pub mod provider;
}

use std::error::Error as StdError;
use std::time::Duration;

use serde_json::json;
use support::provider::{
    End, Reply, Server, anthropic_answer, chat_answer, fixture, responses_answer,
};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::TransportError;
use tool_runtime::providers::anthropic::Anthropic;
use tool_runtime::providers::openai::{OpenAiChat, OpenAiResponses};
use tool_runtime::{Agent, Context, ErrorKind, Model, ModelError, RunError};

fn retry(retries: u32) -> RetryPolicy {
    RetryPolicy::new()
        .max_retries(retries)
        .backoff(Duration::from_millis(1), Duration::from_millis(2))
}

fn chat(url: &str, retries: u32) -> OpenAiChat {
    OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url(format!("{url}/v1"))
        .model("gpt-test")
        .retry(retry(retries))
        .build()
        .expect("a valid configuration")
}

fn responses(url: &str) -> OpenAiResponses {
    OpenAiResponses::builder()
        .api_key("sk-test-key")
        .base_url(format!("{url}/v1"))
        .model("gpt-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

fn claude(url: &str) -> Anthropic {
    Anthropic::builder()
        .api_key("sk-ant-test-key")
        .base_url(url)
        .model("claude-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

async fn run(model: impl Model) -> Result<String, RunError> {
    let agent = Agent::builder(model).build().expect("builds");
    agent.run(&Context::new(), "hi").await.map(|out| out.text)
}

/// The Display of `error` and of each error in its `source()` chain, as anyhow's `{:#}`
/// joins them.
fn chain(error: &(dyn StdError + 'static)) -> Vec<String> {
    let mut out = vec![error.to_string()];
    let mut next = error.source();
    while let Some(e) = next {
        out.push(e.to_string());
        next = e.source();
    }
    out
}

/// No error of a chain shows what a later one shows (`{:#}` would print it twice).
fn assert_no_repeats(segments: &[String]) {
    for (i, earlier) in segments.iter().enumerate() {
        for later in &segments[i + 1..] {
            assert!(
                !earlier.contains(later.as_str()),
                "`{later}` is shown twice in: {}",
                segments.join(": ")
            );
        }
    }
}

const TRUNCATED: &str = "the provider's answer stream ended before it was complete";

/// The three streams, each cut before its terminal event.
fn cut_streams() -> [(&'static str, String); 3] {
    let chat = chat_answer("partial").replace("data: [DONE]\n\n", "");
    let responses = responses_answer("partial");
    let responses =
        responses[..responses.find("event: response.completed").unwrap_or(0)].to_owned();
    let anthropic = anthropic_answer("partial").replace(
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        "",
    );
    [
        ("chat", chat),
        ("responses", responses),
        ("anthropic", anthropic),
    ]
}

async fn run_on(driver: &str, server: &Server) -> Result<String, RunError> {
    match driver {
        "chat" => run(chat(server.url(), 0)).await,
        "responses" => run(responses(server.url())).await,
        _ => run(claude(server.url())).await,
    }
}

// V2: a stream that ends without its terminal event, cleanly or by a connection
// closed mid-body, says so at the top of the error, for every driver; it is not "could not
// reach the model provider".
#[tokio::test]
async fn a_stream_cut_mid_answer_names_the_truncation() {
    for (driver, cut) in cut_streams() {
        for end in [End::Complete, End::Close] {
            let server = Server::start([Reply::sse(cut.clone()).end(end)]).await;
            let err = run_on(driver, &server)
                .await
                .expect_err("a cut stream fails");
            assert_eq!(err.kind(), ErrorKind::Model, "{driver} {end:?}");
            assert!(
                err.to_string().contains(TRUNCATED),
                "{driver} {end:?}: {err}"
            );
            let Some(ModelError::Transport(source)) = err.model_error() else {
                panic!("{driver} {end:?}: expected a transport error, got {err:?}");
            };
            match (end, source.downcast_ref::<TransportError>()) {
                (_, Some(TransportError::Truncated { .. })) => {}
                (End::Close, Some(TransportError::Read { .. })) => {}
                (_, other) => panic!("{driver} {end:?}: unexpected {other:?}"),
            }
            assert_eq!(server.request_count(), 1, "a started answer is not retried");
        }
    }
}

// V2: a 200 whose body is not an event stream (a proxy's HTML page, plain text)
// is refused at once with the content type it had, not read as a stream that then seems
// truncated; it is not retried.
#[tokio::test]
async fn a_body_that_is_not_an_event_stream_names_its_content_type() {
    for content_type in ["text/html; charset=utf-8", "text/plain"] {
        let page = "<html><body>Please log in to the proxy</body></html>";
        let server = Server::start([
            Reply::sse(page).content_type(Some(content_type)),
            Reply::sse(chat_answer("never")),
        ])
        .await;
        let err = run(chat(server.url(), 2)).await.expect_err("refused");
        let text = err.to_string();
        assert!(text.contains(content_type), "{text}");
        assert!(text.contains("text/event-stream"), "{text}");
        assert!(
            text.contains("Please log in"),
            "the body's start is shown: {text}"
        );
        assert!(!text.contains(TRUNCATED), "{text}");
        assert!(matches!(err.model_error(), Some(ModelError::Protocol(_))));
        assert_eq!(server.request_count(), 1, "not retried");
    }
    // Anthropic's driver reads its answer through the same check.
    let server = Server::start([Reply::sse("<html></html>").content_type(Some("text/html"))]).await;
    let err = run(claude(server.url())).await.expect_err("refused");
    assert!(err.to_string().contains("text/html"), "{err}");
    // A stream with a `charset` parameter, or in another case, is a stream; so is a body a
    // server sent without any content type.
    for content_type in [
        Some("text/event-stream; charset=utf-8"),
        Some("Text/Event-Stream"),
        None,
    ] {
        let server =
            Server::start([Reply::sse(chat_answer("ok")).content_type(content_type)]).await;
        let text = run(chat(server.url(), 0)).await.expect("a stream");
        assert_eq!(text, "ok", "{content_type:?}");
    }
}

/// Runs that ended with a model error, for failures of every layer of a driver.
async fn model_failures() -> Vec<(&'static str, RunError)> {
    let mut out = Vec::new();
    for (driver, cut) in cut_streams() {
        let server = Server::start([Reply::sse(cut.clone())]).await;
        out.push((
            driver,
            run_on(driver, &server).await.expect_err("truncated"),
        ));
        let server = Server::start([Reply::sse(cut).end(End::Close)]).await;
        out.push((driver, run_on(driver, &server).await.expect_err("closed")));
    }
    let server = Server::start([Reply::sse("<p>hi</p>").content_type(Some("text/html"))]).await;
    out.push(("html", run(chat(server.url(), 0)).await.expect_err("html")));
    let server = Server::start([Reply::json(
        400,
        json!({"error": {"message": "bad request", "type": "invalid_request_error"}}),
    )])
    .await;
    out.push(("api", run(chat(server.url(), 0)).await.expect_err("400")));
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| format!("http://{a}"))
        .expect("a free port");
    out.push(("refused", run(chat(&closed, 1)).await.expect_err("refused")));
    out
}

// V2: walked like anyhow's `{:#}`, the chain below a run's model error never
// shows a message twice (each error either shows its cause or returns it from `source()`,
// not both), and its first message says what happened.
#[tokio::test]
async fn no_model_error_repeats_its_cause_and_the_first_says_what_happened() {
    for (what, err) in model_failures().await {
        let Some(error) = err.model_error() else {
            panic!("{what}: expected a model error, got {err:?}");
        };
        let segments = chain(error);
        assert_no_repeats(&segments);
        let first = &segments[0];
        let expected = match what {
            "chat" | "responses" | "anthropic" => TRUNCATED,
            "html" => "text/html",
            "api" => "the provider answered 400: bad request",
            _ => "could not send the request",
        };
        assert!(first.contains(expected), "{what}: {}", segments.join(": "));
    }
}

// V2: the same, from the run's error down. The run's own message names the model's
// failure, so the chain must not then repeat it.
#[tokio::test]
async fn no_run_error_of_kind_model_repeats_its_cause() {
    for (driver, cut) in cut_streams() {
        let server = Server::start([Reply::sse(cut)]).await;
        let err = run_on(driver, &server).await.expect_err("truncated");
        let segments = chain(&err);
        assert_no_repeats(&segments);
        assert!(segments[0].contains(TRUNCATED), "{}", segments.join(": "));
        assert_eq!(format!("{err:#}"), segments.join(": "));
    }
    let server = Server::start([Reply::sse("<p>hi</p>").content_type(Some("text/html"))]).await;
    let err = run(chat(server.url(), 0)).await.expect_err("html");
    assert_no_repeats(&chain(&err));
}

// V2 (retry policy): an empty 200 has handed nothing on, so it is "before the
// answer" and retried like a connection failure; without retries, the error says the body
// was empty.
#[tokio::test]
async fn an_empty_200_is_retried_as_before_the_answer() {
    let server = Server::start([Reply::sse(""), Reply::sse(chat_answer("ok"))]).await;
    let text = run(chat(server.url(), 1))
        .await
        .expect("answers after a retry");
    assert_eq!(text, "ok");
    assert_eq!(server.request_count(), 2);

    let server = Server::start([Reply::sse(""), Reply::sse("")]).await;
    let err = run(chat(server.url(), 1)).await.expect_err("empty twice");
    assert_eq!(server.request_count(), 2);
    let Some(ModelError::Transport(source)) = err.model_error() else {
        panic!("expected a transport error, got {err:?}");
    };
    assert!(
        matches!(
            source.downcast_ref::<TransportError>(),
            Some(TransportError::Empty { attempts: 2, .. })
        ),
        "{source:?}"
    );
    assert!(err.to_string().contains("empty"), "{err}");
}

// V2 (retry policy): a 200 whose body stays silent past the idle timeout before
// its first byte is retried too; the silent connection is closed.
#[tokio::test]
async fn a_silent_200_is_retried_after_the_idle_timeout() {
    let server = Server::start([
        Reply::sse("").end(End::Hang),
        Reply::sse(fixture("openai_chat_answer.sse")),
    ])
    .await;
    let model = OpenAiChat::builder()
        .api_key("sk-test-key")
        .base_url(format!("{}/v1", server.url()))
        .idle_timeout(Duration::from_millis(200))
        .retry(retry(1))
        .build()
        .expect("a valid configuration");
    let text = run(model).await.expect("answers after a retry");
    assert!(text.starts_with("svc-42"), "{text}");
    assert_eq!(server.request_count(), 2);
    assert!(server.wait_hung_up(1, Duration::from_secs(5)).await);
}
