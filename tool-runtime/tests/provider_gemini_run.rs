//! What a run on the Gemini driver shares with every driver (V3): spans named with the
//! conventions' provider (`gcp.gemini`, K2, K4), text deltas as they stream (R4), usage
//! limits counted from `usageMetadata` (L2), and a run that stops at a tool (L5), against a
//! local server in Google's payload shapes whose requests Google's own types parse (V5).

#![cfg(feature = "gemini")]

mod support {
    pub mod agent;
    pub mod gemini;
    pub mod provider;
    pub mod spans;
    pub mod trace;
}

use support::agent::drain;
use support::gemini::{Checker, answer, two_calls};
use support::provider::scenario::test_agent;
use support::provider::{Reply, Server};
use support::spans::Spans;
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::gemini::Gemini;
use tool_runtime::{Context, ErrorKind, RunEvent, RunOptions, RunRequest, UsageLimits};

const KEY: &str = "AIza-run-key-555";

/// Every test records spans: a span's interest is settled when it is first made, so a test
/// without a subscriber on another thread must not settle it first.
fn record_spans() -> (Spans, tracing::dispatcher::DefaultGuard) {
    let spans = Spans::default();
    let guard = spans.install();
    (spans, guard)
}

fn gemini(server: &Server) -> Gemini {
    Gemini::builder()
        .api_key(KEY)
        .base_url(server.url())
        .model("gemini-test")
        .retry(RetryPolicy::none())
        .build()
        .expect("a valid configuration")
}

// K2, K4: each request's span names the provider `gcp.gemini`, the model asked for, the
// response's id and model as Google reported them, the server, the finish reasons; no span
// holds the key.
#[tokio::test]
async fn k2_the_request_spans_name_gcp_gemini() {
    let (spans, _guard) = record_spans();
    let server = Server::start([Reply::sse(two_calls()), Reply::sse(answer("Done."))]).await;
    test_agent(gemini(&server), [])
        .run(&Context::new(), "When?")
        .await
        .expect("the run answers");
    let run = spans.one("invoke_agent");
    assert_eq!(run.field("gen_ai.provider.name"), "gcp.gemini");
    let chats = spans.named("chat");
    assert_eq!(chats.len(), 2);
    for (chat, finish) in chats.iter().zip(["tool_calls", "stop"]) {
        assert_eq!(chat.field("otel.name"), "chat gemini-test");
        assert_eq!(chat.field("gen_ai.provider.name"), "gcp.gemini");
        assert_eq!(chat.field("gen_ai.request.model"), "gemini-test");
        assert_eq!(chat.field("gen_ai.response.id"), "mFoaaZ2mNPjO7M8P5sPCgAc");
        assert_eq!(chat.field("gen_ai.response.model"), "gemini-2.5-flash");
        assert_eq!(chat.field("server.address"), "127.0.0.1");
        assert_eq!(chat.field("gen_ai.response.finish_reasons"), finish);
    }
    assert!(!spans.mention(KEY), "no span holds the key");
}

// R4: a streamed run passes Gemini's text on as it comes, one delta per part, in order.
#[tokio::test]
async fn r4_text_deltas_stream_as_gemini_sends_them() {
    let _spans = record_spans();
    let server = Server::start([
        Reply::sse(two_calls()),
        Reply::sse(answer("svc-42 is down on Tuesday.")),
    ])
    .await;
    let agent = test_agent(gemini(&server), []);
    let (events, end) = drain(agent.run_stream(&Context::new(), "When?")).await;
    let out = end.expect("the run answers");
    let deltas: Vec<(usize, &str)> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::TextDelta { turn, text } => Some((*turn, text.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        deltas,
        [
            (1, "Let me look."),
            (2, "svc-42 is dow"),
            (2, "n on Tuesday.")
        ],
        "the thought part is not passed on"
    );
    assert_eq!(out.text, "svc-42 is down on Tuesday.");
    Checker::start().assert_requests(&server);
}

// L2: the usage Gemini reports counts against the run's limits: a total of 400 tokens is
// spent by the first reply (412 read), so the run ends before a second request.
#[tokio::test]
async fn l2_usage_limits_count_gemini_usage() {
    let _spans = record_spans();
    let server = Server::start([Reply::sse(two_calls()), Reply::sse(answer("Done."))]).await;
    let agent = test_agent(gemini(&server), []);
    let error = agent
        .execute(
            &Context::new(),
            RunRequest::new("When?")
                .options(RunOptions::new().limits(UsageLimits::new().total_tokens(400))),
        )
        .await
        .expect_err("past the limit");
    assert_eq!(error.kind(), ErrorKind::UsageLimit);
    assert_eq!(server.request_count(), 1);
}

// L5: a run that stops at `lookup-window` ends on its first success, with no second request.
#[tokio::test]
async fn l5_a_run_stops_at_a_tool_on_gemini() {
    let _spans = record_spans();
    let server = Server::start([Reply::sse(two_calls()), Reply::sse(answer("never"))]).await;
    let agent = test_agent(gemini(&server), []);
    let out = agent
        .execute(
            &Context::new(),
            RunRequest::new("When?").options(RunOptions::new().stop_at("lookup-window")),
        )
        .await
        .expect("stops at the tool");
    assert!(out.text.contains("Tuesday"), "{}", out.text);
    assert_eq!(server.request_count(), 1);
}

/// The arguments of the approved lookup.
#[derive(tool_runtime::Schema)]
struct Window {
    /// The service.
    service_id: String,
    /// How many days ahead.
    days: Option<u32>,
}

/// An agent on `model` whose `lookup-window` needs approval.
fn approving_agent(model: Gemini) -> tool_runtime::Agent {
    let lookup = tool_runtime::Tool::builder("lookup-window", "Finds a service's window.")
        .handler(|_ctx: Context, args: Window| async move {
            Ok::<_, tool_runtime::BoxError>(format!("{} in {:?} days", args.service_id, args.days))
        })
        .approval_fn(|_ctx: &Context, _args: &Window| {
            Ok::<_, tool_runtime::BoxError>(tool_runtime::Approval::required("a person reads it"))
        })
        .build();
    tool_runtime::Agent::builder(model)
        .tool(lookup)
        .build()
        .expect("the agent builds")
}

// V3, H7: a thought signature travels with the run, not the driver: a run paused on Gemini's
// signed calls, saved as JSON and resumed by a new agent on a new driver (as another process
// would), sends the signature back on the call the model signed, and no stand-in.
#[tokio::test]
async fn v3_a_thought_signature_travels_with_a_paused_run() {
    let _spans = record_spans();
    let first = Server::start([Reply::sse(two_calls())]).await;
    let paused = approving_agent(gemini(&first))
        .run(&Context::new(), "When?")
        .await
        .expect_err("the calls wait for approval")
        .into_paused()
        .expect("a pause");
    let saved = paused.to_json().expect("the state saves");
    let paused = tool_runtime::PausedRun::from_json(&saved).expect("the state reads");

    let second = Server::start([Reply::sse(answer("Done."))]).await;
    let ids: Vec<String> = paused.pending().iter().map(|c| c.id().to_owned()).collect();
    let decisions = ids.iter().fold(tool_runtime::Decisions::new(), |d, id| {
        d.approve(id.as_str())
    });
    let out = approving_agent(gemini(&second))
        .resume(&Context::new(), paused, decisions)
        .await
        .expect("the resumed run answers");
    assert_eq!(out.text, "Done.");
    let body = second.requests()[0].json();
    let model_turn = body["contents"]
        .as_array()
        .and_then(|contents| contents.iter().find(|c| c["role"] == "model"))
        .expect("the model's turn goes back")
        .clone();
    let calls: Vec<&serde_json::Value> = model_turn["parts"]
        .as_array()
        .expect("parts")
        .iter()
        .filter(|p| p.get("functionCall").is_some())
        .collect();
    assert_eq!(calls.len(), 2, "{model_turn}");
    assert_eq!(calls[0]["functionCall"]["id"], "fc-1");
    assert_eq!(calls[0]["thoughtSignature"], "RXFJS0NxWUdBUT09");
    assert_eq!(calls[1].get("thoughtSignature"), None, "{model_turn}");
    Checker::start().assert_requests(&second);
}
