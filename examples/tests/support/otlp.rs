//! A local OTLP/HTTP receiver for the telemetry tests (K2, K4–K6): `POST /v1/traces` and
//! `POST /v1/metrics` on 127.0.0.1, each body decoded with the protocol's own message types
//! (`opentelemetry-proto`) and kept, answered as a collector answers.
#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::{HistogramDataPoint, Metric};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// What the receiver got.
#[derive(Default)]
pub struct Received {
    /// Each traces request's content type and decoded body.
    pub traces: Vec<(String, ExportTraceServiceRequest)>,
    /// Each metrics request's decoded body.
    pub metrics: Vec<ExportMetricsServiceRequest>,
}

type Shared = Arc<Mutex<Received>>;

type Answer = (StatusCode, [(header::HeaderName, &'static str); 1], Vec<u8>);

const PROTOBUF: [(header::HeaderName, &str); 1] =
    [(header::CONTENT_TYPE, "application/x-protobuf")];

async fn traces(State(received): State<Shared>, headers: HeaderMap, body: Bytes) -> Answer {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            let mut received = received.lock().expect("not poisoned");
            received.traces.push((content_type, request));
            let answer = ExportTraceServiceResponse::default().encode_to_vec();
            (StatusCode::OK, PROTOBUF, answer)
        }
        Err(_) => (StatusCode::BAD_REQUEST, PROTOBUF, Vec::new()),
    }
}

async fn metrics(State(received): State<Shared>, body: Bytes) -> Answer {
    match ExportMetricsServiceRequest::decode(body) {
        Ok(request) => {
            received.lock().expect("not poisoned").metrics.push(request);
            let answer = ExportMetricsServiceResponse::default().encode_to_vec();
            (StatusCode::OK, PROTOBUF, answer)
        }
        Err(_) => (StatusCode::BAD_REQUEST, PROTOBUF, Vec::new()),
    }
}

/// A receiver listening on a free port of 127.0.0.1.
pub struct Receiver {
    pub address: SocketAddr,
    received: Shared,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Receiver {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port is free");
        let address = listener.local_addr().expect("bound");
        let received = Shared::default();
        let app = Router::new()
            .route("/v1/traces", post(traces))
            .route("/v1/metrics", post(metrics))
            .with_state(Arc::clone(&received));
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            address,
            received,
            server,
        }
    }

    /// The endpoint the exporters are given.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Stops listening; returns what arrived.
    pub fn stop(self) -> Received {
        self.server.abort();
        std::mem::take(&mut *self.received.lock().expect("not poisoned"))
    }
}

impl Received {
    /// Every span received.
    pub fn spans(&self) -> Vec<&Span> {
        self.traces
            .iter()
            .flat_map(|(_, r)| &r.resource_spans)
            .flat_map(|rs| &rs.scope_spans)
            .flat_map(|ss| &ss.spans)
            .collect()
    }

    /// The spans whose name's first word is `operation`.
    pub fn named(&self, operation: &str) -> Vec<&Span> {
        self.spans()
            .into_iter()
            .filter(|s| s.name.split(' ').next() == Some(operation))
            .collect()
    }

    /// The metrics named `name` of the last export that has them: the SDK's temporality is
    /// cumulative, so each export holds the totals so far.
    pub fn metrics(&self, name: &str) -> Vec<&Metric> {
        for request in self.metrics.iter().rev() {
            let found: Vec<&Metric> = request
                .resource_metrics
                .iter()
                .flat_map(|rm| &rm.scope_metrics)
                .flat_map(|sm| &sm.metrics)
                .filter(|m| m.name == name)
                .collect();
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }

    /// The data points of the histograms named `name`.
    #[track_caller]
    pub fn histogram(&self, name: &str) -> Vec<&HistogramDataPoint> {
        let metrics = self.metrics(name);
        assert!(!metrics.is_empty(), "no metric {name}");
        metrics
            .into_iter()
            .flat_map(|m| match &m.data {
                Some(Data::Histogram(h)) => &h.data_points,
                other => panic!("{name} is not a histogram: {other:?}"),
            })
            .collect()
    }
}

/// The value of attribute `key`.
pub fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

/// The string attribute `key`, which must be there.
#[track_caller]
pub fn text<'a>(attributes: &'a [KeyValue], key: &str) -> &'a str {
    match attribute(attributes, key) {
        Some(Value::StringValue(s)) => s,
        other => panic!("{key} is not a string: {other:?}"),
    }
}

/// The integer attribute `key`, which must be there.
#[track_caller]
pub fn int(attributes: &[KeyValue], key: &str) -> i64 {
    match attribute(attributes, key) {
        Some(Value::IntValue(n)) => *n,
        other => panic!("{key} is not an integer: {other:?}"),
    }
}

/// The string-array attribute `key`, which must be there.
#[track_caller]
pub fn strings(attributes: &[KeyValue], key: &str) -> Vec<String> {
    match attribute(attributes, key) {
        Some(Value::ArrayValue(array)) => array
            .values
            .iter()
            .map(|v| match &v.value {
                Some(Value::StringValue(s)) => s.clone(),
                other => panic!("{key} holds a value that is not a string: {other:?}"),
            })
            .collect(),
        other => panic!("{key} is not an array: {other:?}"),
    }
}
