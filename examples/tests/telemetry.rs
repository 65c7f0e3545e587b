//! K2 end to end: the code of the `telemetry` example (`examples/telemetry.rs`, included
//! here) exports a run of the maintenance agent over real OTLP/HTTP with protobuf to a
//! receiver on 127.0.0.1, which decodes every request with the protocol's own message types
//! (`opentelemetry-proto`). The spans arrive named, nested and filled as the OpenTelemetry
//! GenAI semantic conventions say.

#[allow(dead_code, unreachable_pub)]
#[path = "../telemetry.rs"]
mod example;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prost::Message;
use tool_runtime::{Arguments, OfflineModel};

/// What the receiver got: each request's content type and decoded body.
type Received = Arc<Mutex<Vec<(String, ExportTraceServiceRequest)>>>;

/// `POST /v1/traces`: decodes the protobuf body, answers as an OTLP/HTTP collector does.
async fn receive(
    State(received): State<Received>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, [(header::HeaderName, &'static str); 1], Vec<u8>) {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let protobuf = [(header::CONTENT_TYPE, "application/x-protobuf")];
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            received
                .lock()
                .expect("not poisoned")
                .push((content_type, request));
            let answer = ExportTraceServiceResponse::default().encode_to_vec();
            (StatusCode::OK, protobuf, answer)
        }
        Err(_) => (StatusCode::BAD_REQUEST, protobuf, Vec::new()),
    }
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

#[track_caller]
fn text<'a>(span: &'a Span, key: &str) -> &'a str {
    match attribute(&span.attributes, key) {
        Some(Value::StringValue(s)) => s,
        other => panic!("{}: {key} is not a string: {other:?}", span.name),
    }
}

#[track_caller]
fn int(span: &Span, key: &str) -> i64 {
    match attribute(&span.attributes, key) {
        Some(Value::IntValue(n)) => *n,
        other => panic!("{}: {key} is not an integer: {other:?}", span.name),
    }
}

fn status(span: &Span) -> i32 {
    span.status.as_ref().map_or(0, |s| s.code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn k2_the_example_exports_genai_spans_over_otlp_http() {
    let received = Received::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port is free");
    let address = listener.local_addr().expect("bound");
    let app = Router::new()
        .route("/v1/traces", post(receive))
        .with_state(Arc::clone(&received));
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    // The example's own code path: install the exporter, run, flush. The model is fixed to
    // the offline one, whatever the environment says.
    let provider = example::install(&format!("http://{address}")).expect("the exporter installs");
    let model = Box::new(OfflineModel::new().arguments(Arguments::InvalidThenValid));
    let answer = example::ask(model, "When is svc-42 down next?")
        .await
        .expect("the run answers");
    example::shutdown(provider)
        .await
        .expect("every span is sent before the exporter stops");
    server.abort();
    assert!(answer.starts_with("Offline model"), "{answer}");

    let received = received.lock().expect("not poisoned");
    assert!(!received.is_empty(), "no OTLP request arrived");
    for (content_type, _) in received.iter() {
        assert_eq!(content_type, "application/x-protobuf");
    }
    let resource_spans = received.iter().flat_map(|(_, r)| &r.resource_spans);
    let service = resource_spans
        .clone()
        .filter_map(|rs| rs.resource.as_ref())
        .find_map(|r| match attribute(&r.attributes, "service.name") {
            Some(Value::StringValue(s)) => Some(s.clone()),
            _ => None,
        });
    assert_eq!(service.as_deref(), Some(example::SERVICE_NAME));
    let spans: Vec<&Span> = resource_spans
        .flat_map(|rs| &rs.scope_spans)
        .flat_map(|ss| &ss.spans)
        .collect();
    let named = |prefix: &str| -> Vec<&Span> {
        spans
            .iter()
            .copied()
            .filter(|s| s.name.split(' ').next() == Some(prefix))
            .collect()
    };

    // The run: `invoke_agent {agent}`, internal, the root of the trace.
    let runs = named("invoke_agent");
    assert_eq!(runs.len(), 1, "{spans:#?}");
    let run = runs[0];
    assert_eq!(run.name, "invoke_agent maintenance");
    assert_eq!(run.kind, SpanKind::Internal as i32);
    assert!(run.parent_span_id.is_empty(), "the run is the root");
    assert_eq!(text(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(text(run, "gen_ai.agent.name"), "maintenance");
    assert_eq!(text(run, "gen_ai.provider.name"), "offline");
    assert_eq!(text(run, "gen_ai.request.model"), "offline");
    assert!(int(run, "gen_ai.usage.input_tokens") > 0);
    assert!(int(run, "gen_ai.usage.output_tokens") > 0);
    assert_eq!(status(run), SpanStatus::Unset as i32);

    // Each request: `chat {model}`, client, a child of the run.
    let chats = named("chat");
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
        assert_eq!(text(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(text(chat, "gen_ai.provider.name"), "offline");
        assert_eq!(text(chat, "gen_ai.request.model"), "offline");
        input_tokens += int(chat, "gen_ai.usage.input_tokens");
        assert!(int(chat, "gen_ai.usage.output_tokens") > 0);
    }
    assert_eq!(input_tokens, int(run, "gen_ai.usage.input_tokens"));

    // Each call: `execute_tool {tool}`, internal, a child of the run (a sibling of the
    // requests); the invalid arguments first, a failure with its kind as `error.type`.
    let calls = named("execute_tool");
    assert!(calls.len() >= 2, "{spans:#?}");
    for call in &calls {
        assert_eq!(call.name, "execute_tool lookup-window");
        assert_eq!(call.kind, SpanKind::Internal as i32);
        assert_eq!(call.trace_id, run.trace_id);
        assert_eq!(
            call.parent_span_id, run.span_id,
            "a call is a child of the run"
        );
        assert_eq!(text(call, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(text(call, "gen_ai.tool.name"), "lookup-window");
        assert_eq!(text(call, "gen_ai.tool.type"), "function");
        assert!(!text(call, "gen_ai.tool.call.id").is_empty());
        // Not opted in: neither arguments nor results.
        assert!(attribute(&call.attributes, "gen_ai.tool.call.arguments").is_none());
        assert!(attribute(&call.attributes, "gen_ai.tool.call.result").is_none());
    }
    let invalid = calls
        .iter()
        .find(|c| attribute(&c.attributes, "error.type").is_some())
        .expect("the invalid call failed");
    assert_eq!(text(invalid, "error.type"), "invalid_arguments");
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
}
