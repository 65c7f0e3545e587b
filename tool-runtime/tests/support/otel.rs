//! OpenTelemetry spans as a test sees them (K4, K6): the `tracing-opentelemetry` layer over an
//! SDK tracer that keeps every finished span in memory, installed for the current thread (use
//! a current-thread runtime, so that every task records here). The spans are the ones an
//! exporter would send: names, kinds, parents, trace ids, links and typed attributes.
#![allow(dead_code, unreachable_pub)]

use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt;

/// The finished spans of the current thread, while its guard lives.
pub struct Otel {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
    _guard: DefaultGuard,
}

impl Otel {
    /// Installs the layer for the current thread.
    pub fn install() -> Self {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("tests"));
        let subscriber = tracing_subscriber::registry().with(layer);
        let _guard = super::trace::install(subscriber);
        Self {
            exporter,
            provider,
            _guard,
        }
    }

    /// Every span finished so far.
    pub fn spans(&self) -> Vec<SpanData> {
        let _ = self.provider.force_flush();
        self.exporter.get_finished_spans().expect("spans")
    }

    /// The finished spans whose name starts with `prefix` (the operation).
    pub fn named(&self, prefix: &str) -> Vec<SpanData> {
        self.spans()
            .into_iter()
            .filter(|s| s.name.split(' ').next() == Some(prefix))
            .collect()
    }

    /// The one finished span whose name starts with `prefix`.
    #[track_caller]
    pub fn one(&self, prefix: &str) -> SpanData {
        let mut found = self.named(prefix);
        assert_eq!(found.len(), 1, "spans named {prefix}: {found:#?}");
        found.remove(0)
    }
}

/// The attribute `key` of `span`, the last one recorded.
pub fn attribute(span: &SpanData, key: &str) -> Option<Value> {
    let key = Key::from(key.to_owned());
    span.attributes
        .iter()
        .rev()
        .find(|kv| kv.key == key)
        .map(|kv| kv.value.clone())
}

/// How many attributes `span` has under `key`.
pub fn count(span: &SpanData, key: &str) -> usize {
    span.attributes
        .iter()
        .filter(|kv| kv.key.as_str() == key)
        .count()
}
