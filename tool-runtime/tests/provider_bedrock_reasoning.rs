//! Bedrock's reasoning, citations and guardrail traces (V3, V5): a model that thinks gets its
//! `reasoningContent` blocks back, signature and all, before its calls in the next request,
//! streamed or not, and after the conversation went through JSON; a `citationsContent` block's
//! text is the answer's text; a guardrail's intervention is named with its trace; malformed
//! reasoning and content of unknown kinds are clear errors. Every answer fixture is checked
//! against botocore's own output shapes, every request body against its input shapes.

#![cfg(feature = "bedrock")]

mod support {
    pub mod bedrock;
    pub mod bedrock_peers;
    pub mod capture;
    pub mod provider;
    pub mod trace;
}

use serde_json::{Value, json};
use support::bedrock::{
    ACCESS_KEY_ID, MODEL, REGION, SECRET_ACCESS_KEY, converse_answer, event, stream, text_answer,
};
use support::bedrock_peers::validate;
use support::capture::Captured;
use support::provider::scenario::test_agent;
use support::provider::{Reply, Server, drain_model};
use tool_runtime::providers::RetryPolicy;
use tool_runtime::providers::bedrock::{Bedrock, BedrockBuilder};
use tool_runtime::{
    Context, FinishReason, Input, Message, Model, ModelError, ModelEvent, ModelRequest,
};

/// A reasoning signature, as Anthropic's models on Bedrock give them.
const SIGNATURE: &str = "ErcBCkgIBxABGAIiQJ2kmv8Bk7QK1vZ0";

fn builder(server: &Server) -> BedrockBuilder {
    Bedrock::builder()
        .region(REGION)
        .credentials(ACCESS_KEY_ID, SECRET_ACCESS_KEY, None)
        .base_url(server.url())
        .model(MODEL)
        .retry(RetryPolicy::none())
}

/// Checks `(operation, body)` pairs with botocore; panics with its report on any failure.
fn assert_valid(bodies: &[(&str, Value)]) {
    let verdicts = validate(MODEL, bodies).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(verdicts.len(), bodies.len());
    for ((operation, body), verdict) in bodies.iter().zip(verdicts) {
        if let Err(report) = verdict {
            panic!("botocore refuses the {operation} body {body}:\n{report}");
        }
    }
}

/// A ConverseStream reply of these events, each payload first checked against its shape in
/// the service model.
fn framed(events: &[(&str, Value)]) -> Reply {
    let checked: Vec<(String, Value)> = events
        .iter()
        .map(|(kind, payload)| (format!("event:{kind}"), payload.clone()))
        .collect();
    let pairs: Vec<(&str, Value)> = checked
        .iter()
        .map(|(kind, payload)| (kind.as_str(), payload.clone()))
        .collect();
    assert_valid(&pairs);
    let frames: Vec<Vec<u8>> = events
        .iter()
        .map(|(kind, payload)| event(kind, payload.clone()))
        .collect();
    stream(&frames)
}

/// A Converse answer, first checked against the operation's output shape.
fn whole(answer: Value) -> Reply {
    assert_valid(&[("output:Converse", answer.clone())]);
    Reply::json(200, answer).header("x-amzn-requestid", "req-converse-9")
}

fn ending(stop: &str) -> [(&'static str, Value); 2] {
    [
        ("messageStop", json!({"stopReason": stop})),
        (
            "metadata",
            json!({"usage": {"inputTokens": 100, "outputTokens": 40, "totalTokens": 140},
                   "metrics": {"latencyMs": 412}}),
        ),
    ]
}

/// A streamed turn that thinks (a signed block, then a redacted one), then calls
/// `lookup-window`.
fn thinking_turn() -> Vec<(&'static str, Value)> {
    let delta = |index: u64, delta: Value| {
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": index, "delta": delta}),
        )
    };
    let stop = |index: u64| ("contentBlockStop", json!({"contentBlockIndex": index}));
    let mut events = vec![
        ("messageStart", json!({"role": "assistant"})),
        delta(0, json!({"reasoningContent": {"text": "The user wants "}})),
        delta(0, json!({"reasoningContent": {"text": "svc-42's window."}})),
        delta(0, json!({"reasoningContent": {"signature": SIGNATURE}})),
        stop(0),
        delta(
            1,
            json!({"reasoningContent": {"redactedContent": "AAECAw=="}}),
        ),
        stop(1),
        (
            "contentBlockStart",
            json!({"contentBlockIndex": 2,
                   "start": {"toolUse": {"toolUseId": "tooluse_R", "name": "lookup-window"}}}),
        ),
        delta(
            2,
            json!({"toolUse": {"input": r#"{"service_id":"svc-42"}"#}}),
        ),
        stop(2),
    ];
    events.extend(ending("tool_use"));
    events
}

/// The reasoning blocks as the model gave them, as the next request must carry them.
fn kept_reasoning() -> [Value; 2] {
    [
        json!({"reasoningContent": {"reasoningText": {
            "text": "The user wants svc-42's window.", "signature": SIGNATURE}}}),
        json!({"reasoningContent": {"redactedContent": "AAECAw=="}}),
    ]
}

// V3, V5: a streamed turn's reasoning goes back first in the assistant message, before the
// call, with its signature and the redacted block as they came; both requests pass botocore.
// The conversation, through JSON (a paused or journaled run), still sends it back.
#[tokio::test]
async fn v3_streamed_reasoning_goes_back_with_its_signature() {
    let server = Server::start([framed(&thinking_turn()), text_answer("Tuesday.")]).await;
    let agent = test_agent(builder(&server).build().expect("builds"), []);
    let out = agent
        .run(&Context::new(), "When is svc-42 down?")
        .await
        .expect("the run answers");
    let second = server.requests()[1].json();
    let content = second["messages"][1]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(content[..2], kept_reasoning());
    assert_eq!(content[2]["toolUse"]["toolUseId"], "tooluse_R");
    assert_eq!(content.len(), 3);
    assert_valid(&[
        ("ConverseStream", server.requests()[0].json()),
        ("ConverseStream", second),
    ]);
    // Through JSON, then a new question: the reasoning is still sent back.
    let text = serde_json::to_string(&out.transcript).expect("serializes");
    let again: Vec<Message> = serde_json::from_str(&text).expect("deserializes");
    let server = Server::start([text_answer("Yes.")]).await;
    let agent = test_agent(builder(&server).build().expect("builds"), []);
    agent
        .run(&Context::new(), Input::from(again).user("Sure?"))
        .await
        .expect("the run answers");
    let body = server.requests()[0].json();
    let content = body["messages"][1]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(content[..2], kept_reasoning());
    assert_valid(&[("ConverseStream", body)]);
}

// V3, V5: Converse (not streamed): the reasoning block is kept and sent back; a
// `citationsContent` block's generated text is the turn's text (the citations are not passed
// on); the answer is in the service model's output shape and the next request passes botocore.
#[tokio::test]
async fn v3_converse_reasoning_and_citations() {
    let answer = json!({
        "output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "Check the runbook.",
                                                    "signature": SIGNATURE}}},
            {"citationsContent": {
                "content": [{"text": "The runbook says Tuesday."}],
                "citations": [{"title": "runbook", "source": "maint://svc-42/runbook",
                               "sourceContent": [{"text": "Tuesday 02:00"}],
                               "location": {"documentChar": {"documentIndex": 0,
                                                             "start": 0, "end": 13}}}]}},
            {"toolUse": {"toolUseId": "tooluse_C", "name": "lookup-window",
                         "input": {"service_id": "svc-42"}}},
        ]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
        "metrics": {"latencyMs": 300},
    });
    let server = Server::start([whole(answer), converse_answer("Tuesday.", "end_turn")]).await;
    let agent = test_agent(
        builder(&server).streaming(false).build().expect("builds"),
        [],
    );
    agent
        .run(&Context::new(), "When is svc-42 down?")
        .await
        .expect("the run answers");
    let second = server.requests()[1].json();
    assert_eq!(
        second["messages"][1]["content"],
        json!([
            {"reasoningContent": {"reasoningText": {"text": "Check the runbook.",
                                                    "signature": SIGNATURE}}},
            {"text": "The runbook says Tuesday."},
            {"toolUse": {"toolUseId": "tooluse_C", "name": "lookup-window",
                         "input": {"service_id": "svc-42"}}},
        ])
    );
    assert_valid(&[("Converse", second)]);
}

/// One request through the driver (`streaming` or not): its events and the error that ended
/// it.
async fn one_request(reply: Reply, streaming: bool) -> (Vec<ModelEvent>, Option<ModelError>) {
    let server = Server::start([reply]).await;
    let model = builder(&server)
        .streaming(streaming)
        .build()
        .expect("builds");
    let messages = [Message::user("hi")];
    drain_model(model.stream(ModelRequest::new(&messages, &[]))).await
}

/// The protocol error a request ended with.
async fn protocol_error(reply: Reply, streaming: bool) -> String {
    match one_request(reply, streaming).await.1 {
        Some(ModelError::Protocol(message)) => message,
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

// V3: malformed reasoning (a delta of the wrong type, text mixed with redacted content,
// redacted content that is not base64, a whole block of neither form) and content blocks of
// kinds the service model does not define are clear protocol errors, never a panic.
#[tokio::test]
async fn v3_malformed_reasoning_and_unknown_content_are_errors() {
    let stream_of = |delta: Value| {
        let mut events = vec![
            ("messageStart", json!({"role": "assistant"})),
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": delta}),
            ),
            ("contentBlockStop", json!({"contentBlockIndex": 0})),
        ];
        events.extend(ending("end_turn"));
        let frames: Vec<Vec<u8>> = events.iter().map(|(k, p)| event(k, p.clone())).collect();
        stream(&frames)
    };
    for (delta, says) in [
        (json!({"reasoningContent": {"text": 5}}), "reasoning block"),
        (
            json!({"reasoningContent": {"redactedContent": "%%"}}),
            "not base64",
        ),
        (json!({"reasoningContent": "thinking"}), "reasoning block"),
        (json!({"hologram": {"x": 1}}), "unknown type `hologram`"),
        (json!("text"), "holds no content block"),
    ] {
        let message = protocol_error(stream_of(delta.clone()), true).await;
        assert!(message.contains(says), "{delta}: {message}");
    }
    let converse_of = |block: Value| {
        Reply::json(
            200,
            json!({"output": {"message": {"role": "assistant", "content": [block]}},
                   "stopReason": "end_turn",
                   "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                   "metrics": {"latencyMs": 1}}),
        )
    };
    for (block, says) in [
        (
            json!({"reasoningContent": {"reasoningText": {"signature": "s"}}}),
            "has no `text`",
        ),
        (
            json!({"reasoningContent": {"reasoningText": {"text": "t"},
                                        "redactedContent": "AA=="}}),
            "exactly one",
        ),
        (
            json!({"citationsContent": {"citations": []}}),
            "citationsContent",
        ),
        (json!({"hologram": {}}), "unknown type `hologram`"),
        (json!(7), "holds no content block"),
    ] {
        let message = protocol_error(converse_of(block.clone()), false).await;
        assert!(message.contains(says), "{block}: {message}");
    }
}

/// A guardrail trace in the service model's `GuardrailTraceAssessment` shape.
fn guardrail_trace() -> Value {
    json!({"guardrail": {
        "actionReason": "Guardrail blocked.",
        "inputAssessment": {"gr-maint": {
            "topicPolicy": {"topics": [
                {"name": "Outages", "type": "DENY", "action": "BLOCKED", "detected": true}]},
            "invocationMetrics": {"guardrailProcessingLatency": 120},
        }},
    }})
}

// V3: a guardrail's intervention (`guardrail_intervened`) is the provider's filtering
// (`ContentFilter`), and is named in the trace with the guardrail's reason and the finding
// it acted on, streamed and not.
#[tokio::test]
async fn v3_a_guardrail_intervention_is_named_with_its_trace() {
    let mut events = vec![
        ("messageStart", json!({"role": "assistant"})),
        (
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"text": "Sorry."}}),
        ),
        ("contentBlockStop", json!({"contentBlockIndex": 0})),
        ("messageStop", json!({"stopReason": "guardrail_intervened"})),
    ];
    let mut metadata = ending("end_turn")[1].1.clone();
    metadata["trace"] = guardrail_trace();
    events.push(("metadata", metadata));
    let answer = json!({
        "output": {"message": {"role": "assistant", "content": [{"text": "Sorry."}]}},
        "stopReason": "guardrail_intervened",
        "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
        "metrics": {"latencyMs": 30},
        "trace": guardrail_trace(),
    });
    for (reply, streaming) in [(framed(&events), true), (whole(answer), false)] {
        let (captured, _guard) = Captured::install();
        let (events, error) = one_request(reply, streaming).await;
        assert!(error.is_none(), "{error:?}");
        assert!(events.contains(&ModelEvent::Finish(FinishReason::ContentFilter)));
        let text = captured.text();
        assert!(
            text.contains("guardrail_intervened")
                && text.contains("Guardrail blocked.; topicPolicy.topics: Outages BLOCKED"),
            "{text}"
        );
    }
}
