//! The maintenance agent of `examples/maintenance.rs`, with its spans exported over OTLP
//! (HTTP, protobuf) to an OpenTelemetry collector or any backend that takes OTLP (Jaeger,
//! Grafana Tempo, Honeycomb, …):
//!
//! ```text
//! cargo run --example telemetry
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 cargo run --example telemetry
//! ```
//!
//! The endpoint is `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://127.0.0.1:4318`); spans go
//! to its `/v1/traces`. The model is the offline model, which calls the tools with generated
//! arguments, invalid ones first (or a real provider, when `OPENAI_API_KEY`, `OPENAI_BASE_URL`
//! or `ANTHROPIC_API_KEY` is set, as in `examples/maintenance.rs`).
//!
//! tool-runtime emits plain `tracing` spans named as the OpenTelemetry GenAI semantic
//! conventions say (K2): `invoke_agent maintenance` for the run, `chat {model}` for each model
//! request, `execute_tool {tool}` for each call, with the `gen_ai.*` attributes. This program
//! adds the `tracing-opentelemetry` layer that turns them into OpenTelemetry spans, and the
//! OTLP exporter; it flushes every span before it exits.
//!
//! Arguments and results stay out of the spans unless the agent is built with
//! `record_tool_content(true)`; the unredacted cause of a failure (E3) is a `warn` event,
//! which the layer attaches to the call's span as a span event: filter events out of the
//! layer if the backend must not see them.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tool_examples::maintenance::{LookupWindow, RestartService, Role, Windows, principal};
use tool_runtime::{Agent, Arguments, BoxError, Context, Model, OfflineModel};
use tracing_subscriber::layer::SubscriberExt;

/// The endpoint when `OTEL_EXPORTER_OTLP_ENDPOINT` is not set.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:4318";

/// The service name the spans' resource carries (unless `OTEL_SERVICE_NAME` says otherwise).
pub const SERVICE_NAME: &str = "maintenance-agent";

/// The OTLP/HTTP base endpoint: `OTEL_EXPORTER_OTLP_ENDPOINT`, else [`DEFAULT_ENDPOINT`].
pub fn endpoint() -> String {
    std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .ok()
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned())
}

/// Sends every `tracing` span of this process to `endpoint` (its `/v1/traces`) over
/// OTLP/HTTP with protobuf, in batches. Call [`shutdown`] with the provider before exiting,
/// so that the last batch is sent.
///
/// # Errors
///
/// Fails when the exporter cannot be built (an invalid endpoint) or when a global `tracing`
/// subscriber is already set.
pub fn install(endpoint: &str) -> Result<SdkTracerProvider, BoxError> {
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
        .build()?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name(SERVICE_NAME).build())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("tool-examples"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;
    Ok(provider)
}

/// Exports what is left and stops the exporter. The SDK blocks while it sends: this runs on a
/// blocking thread of the runtime.
///
/// # Errors
///
/// Fails when the last spans could not be sent (no collector at the endpoint, say).
pub async fn shutdown(provider: SdkTracerProvider) -> Result<(), BoxError> {
    tokio::task::spawn_blocking(move || {
        // A flush reports the export's failure; the shutdown after it only stops the exporter.
        let flushed = provider.force_flush();
        provider.shutdown()?;
        flushed
    })
    .await??;
    Ok(())
}

/// The model: a real provider when the environment names one, else the offline model with
/// invalid arguments first, then corrected ones.
///
/// # Errors
///
/// Fails when the environment names a provider that cannot be set up.
pub fn model() -> Result<Box<dyn Model>, BoxError> {
    Ok(match tool_runtime::providers::from_env()? {
        Some(real) => Box::new(real),
        None => Box::new(OfflineModel::new().arguments(Arguments::InvalidThenValid)),
    })
}

/// One run of the maintenance agent, named `maintenance`, on `model`, for an operator.
/// Returns the answer.
///
/// # Errors
///
/// Fails when the agent cannot be built or the run ends without an answer.
pub async fn ask(model: Box<dyn Model>, question: &str) -> Result<String, BoxError> {
    let agent = Agent::builder(model)
        .name("maintenance")
        .instructions("You help operators plan maintenance.")
        .tool(LookupWindow)
        .tool(RestartService)
        .build()?;
    let ctx = Context::new()
        .with(principal("ada", Role::Operator))
        .with(Windows::demo());
    let out = agent.run(&ctx, question).await?;
    Ok(out.text)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let endpoint = endpoint();
    let (model, provider) = match model().and_then(|model| Ok((model, install(&endpoint)?))) {
        Ok(set_up) => set_up,
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let answered = match ask(model, "When is svc-42 down next?").await {
        Ok(answer) => {
            println!("{answer}");
            true
        }
        // The spans of a failed run say why: they are sent all the same.
        Err(error) => {
            eprintln!("error: the run ended without an answer: {error}");
            false
        }
    };
    match shutdown(provider).await {
        Ok(()) => println!("The run's spans were sent to {endpoint}/v1/traces."),
        Err(error) => {
            eprintln!("error: the spans could not be sent to {endpoint}/v1/traces: {error}");
            eprintln!("(is an OTLP/HTTP collector listening there?)");
            return std::process::ExitCode::FAILURE;
        }
    }
    if answered {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
