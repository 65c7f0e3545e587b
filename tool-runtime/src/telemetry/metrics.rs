//! The metrics of the OpenTelemetry GenAI and MCP semantic conventions (K5), recorded through
//! the OpenTelemetry API with the `opentelemetry` feature (without it, nothing is recorded):
//!
//! | histogram | unit | of |
//! |---|---|---|
//! | `gen_ai.client.token.usage` | `{token}` | each model request's input and output tokens |
//! | `gen_ai.client.operation.duration` | `s` | each model request |
//! | `mcp.server.operation.duration` | `s` | each `tools/call` an `McpServer` answers |
//! | `mcp.client.operation.duration` | `s` | each `tools/call` an `McpToolset` sends |
//!
//! each with the attributes the conventions require (`gen_ai.operation.name`,
//! `gen_ai.provider.name`, `gen_ai.token.type`; `mcp.method.name`; `error.type` when the
//! operation failed) and the recommended ones the library knows, and the conventions' bucket
//! boundaries as explicit advice. The instruments come from the global meter provider at each
//! record, so an application may install its provider at any time; the library has no
//! exporter.

use std::time::Duration;

/// A model request that ended (K5): what its two histograms are recorded with.
#[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
pub(crate) struct ChatRecord<'a> {
    /// `gen_ai.provider.name`.
    pub(crate) provider: &'a str,
    /// `gen_ai.request.model` (empty when unknown).
    pub(crate) request_model: &'a str,
    /// `gen_ai.response.model`, when the provider said.
    pub(crate) response_model: Option<&'a str>,
    /// `server.address` and `server.port` of a remote provider.
    pub(crate) server: Option<(&'a str, u16)>,
    /// The input and output tokens, when the provider reported them.
    pub(crate) tokens: Option<(u64, u64)>,
    /// `error.type`, when the request failed.
    pub(crate) error_type: Option<&'a str>,
    /// How long the request took, its reply read to the end.
    pub(crate) elapsed: Duration,
}

/// The side of an MCP operation.
#[cfg(feature = "mcp")]
#[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
#[derive(Clone, Copy)]
pub(crate) enum Side {
    /// `mcp.client.operation.duration`.
    Client,
    /// `mcp.server.operation.duration`.
    Server,
}

/// An MCP request that was answered (K5).
#[cfg(feature = "mcp")]
#[cfg_attr(not(feature = "opentelemetry"), allow(dead_code))]
pub(crate) struct McpRecord<'a> {
    /// Which histogram.
    pub(crate) side: Side,
    /// `mcp.method.name`.
    pub(crate) method: &'a str,
    /// `gen_ai.tool.name`, for `tools/call`.
    pub(crate) tool: Option<&'a str>,
    /// `mcp.protocol.version`, when negotiated.
    pub(crate) protocol_version: Option<String>,
    /// `network.transport` (`pipe`, `tcp`), when known.
    pub(crate) transport: Option<&'static str>,
    /// `error.type`, when the request failed or the tool answered with `isError`.
    pub(crate) error_type: Option<String>,
    /// How long the request took.
    pub(crate) elapsed: Duration,
}

/// Records a model request's duration and token usage.
pub(crate) fn record_chat(record: &ChatRecord<'_>) {
    #[cfg(feature = "opentelemetry")]
    otel::record_chat(record);
    #[cfg(not(feature = "opentelemetry"))]
    let _ = record;
}

/// Records an MCP request's duration.
#[cfg(feature = "mcp")]
pub(crate) fn record_mcp(record: &McpRecord<'_>) {
    #[cfg(feature = "opentelemetry")]
    otel::record_mcp(record);
    #[cfg(not(feature = "opentelemetry"))]
    let _ = record;
}

#[cfg(feature = "opentelemetry")]
mod otel {
    use opentelemetry::metrics::Meter;
    use opentelemetry::{InstrumentationScope, KeyValue};

    use super::ChatRecord;
    #[cfg(feature = "mcp")]
    use super::{McpRecord, Side};

    /// The GenAI conventions' buckets of `gen_ai.client.token.usage`.
    const TOKEN_BUCKETS: [f64; 14] = [
        1.0,
        4.0,
        16.0,
        64.0,
        256.0,
        1024.0,
        4096.0,
        16384.0,
        65536.0,
        262_144.0,
        1_048_576.0,
        4_194_304.0,
        16_777_216.0,
        67_108_864.0,
    ];

    /// The GenAI conventions' buckets of `gen_ai.client.operation.duration`, in seconds.
    const GENAI_DURATION_BUCKETS: [f64; 14] = [
        0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ];

    #[cfg(feature = "mcp")]
    /// The MCP conventions' buckets of `mcp.{client,server}.operation.duration`, in seconds.
    const MCP_DURATION_BUCKETS: [f64; 14] = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];

    fn meter() -> Meter {
        let scope = InstrumentationScope::builder("tool-runtime")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        opentelemetry::global::meter_with_scope(scope)
    }

    pub(super) fn record_chat(record: &ChatRecord<'_>) {
        let meter = meter();
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "chat"),
            KeyValue::new("gen_ai.provider.name", record.provider.to_owned()),
        ];
        if !record.request_model.is_empty() {
            attributes.push(KeyValue::new(
                "gen_ai.request.model",
                record.request_model.to_owned(),
            ));
        }
        if let Some(model) = record.response_model {
            attributes.push(KeyValue::new("gen_ai.response.model", model.to_owned()));
        }
        if let Some((address, port)) = record.server {
            attributes.push(KeyValue::new("server.address", address.to_owned()));
            attributes.push(KeyValue::new("server.port", i64::from(port)));
        }
        if let Some((input, output)) = record.tokens {
            let usage = meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Number of input and output tokens used.")
                .with_boundaries(TOKEN_BUCKETS.to_vec())
                .build();
            for (kind, count) in [("input", input), ("output", output)] {
                let mut these = attributes.clone();
                these.push(KeyValue::new("gen_ai.token.type", kind));
                usage.record(count, &these);
            }
        }
        if let Some(error_type) = record.error_type {
            attributes.push(KeyValue::new("error.type", error_type.to_owned()));
        }
        meter
            .f64_histogram("gen_ai.client.operation.duration")
            .with_unit("s")
            .with_description("GenAI operation duration.")
            .with_boundaries(GENAI_DURATION_BUCKETS.to_vec())
            .build()
            .record(record.elapsed.as_secs_f64(), &attributes);
    }

    #[cfg(feature = "mcp")]
    pub(super) fn record_mcp(record: &McpRecord<'_>) {
        let (name, description) = match record.side {
            Side::Client => (
                "mcp.client.operation.duration",
                "The duration of the MCP request or notification as observed on the sender \
                 from the time it was sent until the response or ack is received.",
            ),
            Side::Server => (
                "mcp.server.operation.duration",
                "MCP request or notification duration as observed on the receiver from the \
                 time it was received until the result or ack is sent.",
            ),
        };
        let mut attributes = vec![KeyValue::new("mcp.method.name", record.method.to_owned())];
        if let Some(tool) = record.tool {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.to_owned()));
        }
        if let Some(version) = &record.protocol_version {
            attributes.push(KeyValue::new("mcp.protocol.version", version.clone()));
        }
        if let Some(transport) = record.transport {
            attributes.push(KeyValue::new("network.transport", transport));
        }
        if let Some(error_type) = &record.error_type {
            attributes.push(KeyValue::new("error.type", error_type.clone()));
        }
        meter()
            .f64_histogram(name)
            .with_unit("s")
            .with_description(description)
            .with_boundaries(MCP_DURATION_BUCKETS.to_vec())
            .build()
            .record(record.elapsed.as_secs_f64(), &attributes);
    }
}
