//! The maintenance agent of `examples/maintenance.rs` on Gemini, picked from the environment
//! as the example picks its model (`tool_runtime::providers::from_env`): with
//! `GEMINI_API_KEY` and `GEMINI_BASE_URL` naming a local server on 127.0.0.1 that streams
//! Google's payload shapes, turn 1 calls `lookup-window` with `{"service_id":"svc-42"}`,
//! turn 2 answers. No test needs the network.
//!
//! Rules: V3 (a whole run through the Gemini driver, the result sent back as a
//! `functionResponse` part), R5 (the omitted `days` takes its default before the handler
//! runs), E1 (the model gets the rendered summary).

// The provider tests' local server, shared rather than copied. Its `scenario` submodule (the
// provider tests' own agent) resolves next to it and is unused here.
#[path = "../../tool-runtime/tests/support/provider/mod.rs"]
mod support;

use serde_json::{Value, json};
use support::{Reply, Server};
use tool_examples::maintenance::{LookupWindow, RestartService, Role, Windows, principal};
use tool_runtime::providers::{EnvModel, from_lookup};
use tool_runtime::{Agent, Context, OutcomeKind};

const ANSWER: &str = "svc-42 is down on 2026-12-01 from 02:00 to 04:00 UTC.";

/// Google's streamed events, `data: …` and a CRLF blank line each.
fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("data: {e}\r\n\r\n"))
        .collect()
}

fn chunk(parts: Value, finish: Option<&str>) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = reason.into();
    }
    json!({"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "responseId": "r1",
           "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 9,
                             "totalTokenCount": 129}})
}

// V3, R5, E1: the example's agent on the model the environment names: Gemini.
#[tokio::test]
async fn v3_the_maintenance_agent_runs_on_gemini_from_the_environment() {
    let call = sse(&[chunk(
        json!([{"functionCall": {"name": "lookup-window", "args": {"service_id": "svc-42"}},
                "thoughtSignature": "c2lnbmVk"}]),
        Some("STOP"),
    )]);
    let answer = sse(&[
        chunk(json!([{"text": &ANSWER[..20]}]), None),
        chunk(json!([{"text": &ANSWER[20..]}]), Some("STOP")),
    ]);
    let server = Server::start([Reply::sse(call).split_every(&[7, 31]), Reply::sse(answer)]).await;
    let url = server.url().to_owned();
    let vars = |name: &str| match name {
        "GEMINI_API_KEY" => Some("AIza-example".to_owned()),
        "GEMINI_BASE_URL" => Some(url.clone()),
        _ => None,
    };
    let model = from_lookup(vars).expect("valid").expect("a provider");
    assert!(matches!(model, EnvModel::Gemini(_)));
    let agent = Agent::builder(model)
        .instructions("You help operators plan maintenance.")
        .tool(LookupWindow)
        .tool(RestartService)
        .build()
        .expect("the agent builds");
    let ctx = Context::new()
        .with(principal("ada", Role::Operator))
        .with(Windows::demo());
    let out = agent
        .run(&ctx, "When is svc-42 down next?")
        .await
        .expect("the run answers");
    assert_eq!(out.text, ANSWER);
    assert_eq!(*out.advertised, ["lookup-window"]);
    let call = &out.calls[0];
    assert_eq!(call.kind(), OutcomeKind::Success, "{:?}", call.error());
    let second = server.requests()[1].json();
    assert_eq!(
        second["contents"][1]["parts"][0]["thoughtSignature"],
        "c2lnbmVk"
    );
    assert_eq!(
        second["contents"][2]["parts"][0]["functionResponse"]["response"]["output"],
        call.text()
    );
}
