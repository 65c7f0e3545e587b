//! K2, K4, K5 end to end: the code of the `telemetry` example (`examples/telemetry.rs`,
//! included here) exports a run of the maintenance agent over real OTLP/HTTP with protobuf to
//! a receiver on 127.0.0.1, which decodes every request with the protocol's own message types
//! (`opentelemetry-proto`). The spans arrive named, nested and filled as the OpenTelemetry
//! GenAI semantic conventions say, in the attribute types they specify (K4), and the model
//! requests' metrics arrive beside them (K5).
#![cfg(feature = "mcp")]

#[allow(dead_code, unreachable_pub)]
#[path = "../telemetry.rs"]
mod example;
#[path = "support/otlp.rs"]
mod otlp;

use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use otlp::{Receiver, attribute, int, strings, text};
use tool_runtime::{Arguments, OfflineModel};

fn status(span: &Span) -> i32 {
    span.status.as_ref().map_or(0, |s| s.code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k2_k4_k5_the_example_exports_genai_spans_and_metrics_over_otlp_http() {
    let receiver = Receiver::start().await;
    // The example's own code path: install the exporters, run, flush. The model is fixed to
    // the offline one, whatever the environment says.
    let telemetry = example::install(&receiver.endpoint()).expect("the exporters install");
    let model = Box::new(OfflineModel::new().arguments(Arguments::InvalidThenValid));
    let answer = example::ask(model, None, "When is svc-42 down next?")
        .await
        .expect("the run answers");
    // An event of another crate below `warn` stays out of the export.
    tracing::info_span!(target: "hyper", "not exported").in_scope(|| {});
    example::shutdown(telemetry)
        .await
        .expect("every span and metric is sent before the exporters stop");
    let received = receiver.stop();
    assert!(answer.starts_with("Offline model"), "{answer}");

    assert!(
        !received.traces.is_empty(),
        "no OTLP traces request arrived"
    );
    for (content_type, _) in &received.traces {
        assert_eq!(content_type, "application/x-protobuf");
    }
    let service = received
        .traces
        .iter()
        .flat_map(|(_, r)| &r.resource_spans)
        .filter_map(|rs| rs.resource.as_ref())
        .find_map(|r| match attribute(&r.attributes, "service.name") {
            Some(Value::StringValue(s)) => Some(s.clone()),
            _ => None,
        });
    assert_eq!(service.as_deref(), Some(example::SERVICE_NAME));
    let spans = received.spans();
    assert!(
        spans.iter().all(|s| s.name != "not exported"),
        "the filter holds"
    );

    // The run: `invoke_agent {agent}`, internal, the root of the trace.
    let runs = received.named("invoke_agent");
    assert_eq!(runs.len(), 1, "{spans:#?}");
    let run = runs[0];
    let at = |span: &Span| span.attributes.clone();
    assert_eq!(run.name, "invoke_agent maintenance");
    assert_eq!(run.kind, SpanKind::Internal as i32);
    assert!(run.parent_span_id.is_empty(), "the run is the root");
    assert_eq!(text(&at(run), "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(text(&at(run), "gen_ai.agent.name"), "maintenance");
    assert_eq!(text(&at(run), "gen_ai.provider.name"), "offline");
    assert_eq!(text(&at(run), "gen_ai.request.model"), "offline");
    assert!(int(&at(run), "gen_ai.usage.input_tokens") > 0);
    assert!(int(&at(run), "gen_ai.usage.output_tokens") > 0);
    // K4: the library's own attributes under `tool_runtime.*`.
    assert_eq!(text(&at(run), "tool_runtime.outcome"), "answered");
    assert!(int(&at(run), "tool_runtime.turns") >= 2);
    assert_eq!(status(run), SpanStatus::Unset as i32);

    // Each request: `chat {model}`, client, a child of the run; K4: finish reasons as a
    // string array.
    let chats = received.named("chat");
    assert!(chats.len() >= 2, "{spans:#?}");
    let mut input_tokens = 0;
    for chat in &chats {
        assert_eq!(chat.name, "chat offline");
        assert_eq!(chat.kind, SpanKind::Client as i32);
        assert_eq!(chat.trace_id, run.trace_id);
        assert_eq!(
            chat.parent_span_id, run.span_id,
            "a request is a child of the run"
        );
        assert_eq!(text(&at(chat), "gen_ai.operation.name"), "chat");
        assert_eq!(text(&at(chat), "gen_ai.provider.name"), "offline");
        assert_eq!(text(&at(chat), "gen_ai.request.model"), "offline");
        let reasons = strings(&at(chat), "gen_ai.response.finish_reasons");
        assert!(
            reasons == ["tool_calls"] || reasons == ["stop"],
            "{reasons:?}"
        );
        input_tokens += int(&at(chat), "gen_ai.usage.input_tokens");
        assert!(int(&at(chat), "gen_ai.usage.output_tokens") > 0);
    }
    assert_eq!(input_tokens, int(&at(run), "gen_ai.usage.input_tokens"));

    // Each call: `execute_tool {tool}`, internal, a child of the run (a sibling of the
    // requests); the invalid arguments first, a failure with its kind as `error.type`.
    let calls = received.named("execute_tool");
    assert!(calls.len() >= 2, "{spans:#?}");
    for call in &calls {
        assert_eq!(call.name, "execute_tool lookup-window");
        assert_eq!(call.kind, SpanKind::Internal as i32);
        assert_eq!(call.trace_id, run.trace_id);
        assert_eq!(
            call.parent_span_id, run.span_id,
            "a call is a child of the run"
        );
        assert_eq!(text(&at(call), "gen_ai.operation.name"), "execute_tool");
        assert_eq!(text(&at(call), "gen_ai.tool.name"), "lookup-window");
        assert_eq!(text(&at(call), "gen_ai.tool.type"), "function");
        assert!(!text(&at(call), "gen_ai.tool.description").is_empty());
        assert!(!text(&at(call), "gen_ai.tool.call.id").is_empty());
        // Not opted in: neither arguments nor results.
        assert!(attribute(&call.attributes, "gen_ai.tool.call.arguments").is_none());
        assert!(attribute(&call.attributes, "gen_ai.tool.call.result").is_none());
    }
    let invalid = calls
        .iter()
        .find(|c| attribute(&c.attributes, "error.type").is_some())
        .expect("the invalid call failed");
    assert_eq!(text(&at(invalid), "error.type"), "invalid_arguments");
    assert_eq!(
        text(&at(invalid), "tool_runtime.outcome"),
        "invalid_arguments"
    );
    assert_eq!(status(invalid), SpanStatus::Error as i32);
    assert!(
        calls.iter().any(|c| status(c) == SpanStatus::Unset as i32
            && attribute(&c.attributes, "error.type").is_none()),
        "the corrected call succeeded"
    );

    // The `otel.*` fields name, kind and mark spans; none is left as an attribute.
    for span in &spans {
        assert!(
            span.attributes
                .iter()
                .all(|kv| !kv.key.starts_with("otel.")),
            "{span:#?}"
        );
    }

    // K5: each request's duration and tokens, with the conventions' buckets.
    let durations = received.histogram("gen_ai.client.operation.duration");
    let count: u64 = durations.iter().map(|p| p.count).sum();
    assert_eq!(count, chats.len() as u64);
    assert_eq!(durations[0].explicit_bounds[0], 0.01);
    assert_eq!(durations[0].explicit_bounds.len(), 14);
    assert_eq!(
        text(&durations[0].attributes, "gen_ai.operation.name"),
        "chat"
    );
    assert_eq!(
        text(&durations[0].attributes, "gen_ai.provider.name"),
        "offline"
    );
    assert_eq!(
        received.metrics("gen_ai.client.operation.duration")[0].unit,
        "s"
    );
    let tokens = received.histogram("gen_ai.client.token.usage");
    let input: f64 = tokens
        .iter()
        .filter(|p| text(&p.attributes, "gen_ai.token.type") == "input")
        .map(|p| p.sum.unwrap_or_default())
        .sum();
    assert_eq!(input, input_tokens as f64);
    assert!(
        tokens
            .iter()
            .any(|p| text(&p.attributes, "gen_ai.token.type") == "output")
    );
    assert_eq!(
        received.metrics("gen_ai.client.token.usage")[0].unit,
        "{token}"
    );
}
