//! The maintenance agent of `examples/maintenance.rs`, with its spans and metrics exported
//! over OTLP (HTTP, protobuf) to an OpenTelemetry collector or any backend that takes OTLP
//! (Jaeger, Grafana Tempo, Prometheus, Honeycomb, …):
//!
//! ```text
//! cargo run --example telemetry
//! OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 cargo run --example telemetry
//! cargo run --example telemetry -- --serve 127.0.0.1:8181
//! cargo run --example telemetry -- --remote http://127.0.0.1:8181/mcp
//! ```
//!
//! The endpoint is `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://127.0.0.1:4318`); spans go
//! to its `/v1/traces`, metrics to its `/v1/metrics`. The model is the offline model, which
//! calls the tools with generated arguments, invalid ones first (or a real provider, when
//! `OPENAI_API_KEY`, `OPENAI_BASE_URL` or `ANTHROPIC_API_KEY` is set, as in
//! `examples/maintenance.rs`).
//!
//! With `--serve ADDR` the program is the maintenance tools' MCP server (streamable HTTP, the
//! demo bearer tokens of `examples/mcp_server.rs`) and exports the spans and metrics of the
//! calls it serves until it is stopped (Ctrl-C). With `--remote URL` the agent uses the tools
//! of that server (as `operator-token`): each call is one trace from the agent's run to the
//! server's handler (K6), the server's `tools/call` span a child of the agent's `execute_tool`.
//!
//! tool-runtime emits plain `tracing` spans named as the OpenTelemetry GenAI semantic
//! conventions say (K2, K4): `invoke_agent maintenance` for the run, `chat {model}` for each
//! model request, `execute_tool {tool}` for each call, with the `gen_ai.*` attributes; with its
//! `opentelemetry` feature it also records the conventions' metrics through the OpenTelemetry
//! API (K5) and carries trace context across MCP (K6). This program adds the
//! `tracing-opentelemetry` layer that turns the spans into OpenTelemetry spans, the global
//! meter provider, and the OTLP exporters; it flushes both before it exits.
//!
//! The layer takes the library's spans and its events of level `info` and above, and only
//! warnings and errors of other crates ([`filter`]; `RUST_LOG` replaces it, in the
//! `target=level,…` syntax). Arguments and results stay out of the spans unless the agent is
//! built with `record_tool_content(true)`; the unredacted cause of a failure (E3) is a `warn`
//! event, which the layer attaches to the call's span as a span event: filter it out if the
//! backend must not see it.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tool_examples::maintenance::{LookupWindow, RestartService, Role, Windows, principal};
use tool_runtime::mcp::{HttpOptions, HttpServer, McpRequest, McpToolset};
use tool_runtime::{Agent, BoxError, Context, Model, OfflineModel, testing::Arguments};
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::Targets;
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

/// What the layer exports unless `RUST_LOG` says otherwise: the spans and `info` events of
/// the library and of this program, and only warnings and errors of any other crate (the MCP
/// SDK's and the HTTP stack's debug events stay out).
pub const DEFAULT_FILTER: &str = "tool_runtime=info,tool_examples=info,telemetry=info,warn";

/// The layer's filter: `RUST_LOG` when it is set and valid, else [`DEFAULT_FILTER`].
pub fn filter() -> Targets {
    std::env::var("RUST_LOG")
        .ok()
        .and_then(|spec| spec.parse().ok())
        .unwrap_or_else(|| DEFAULT_FILTER.parse().expect("the default filter parses"))
}

/// The exporters of this process: its spans' and its metrics'.
pub struct Telemetry {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
}

/// Sends the `tracing` spans [`filter`] lets through to `endpoint` (its `/v1/traces`) and the
/// library's metrics (K5) to its `/v1/metrics`, over OTLP/HTTP with protobuf, in batches. Call
/// [`shutdown`] before exiting, so that the last batch is sent.
///
/// # Errors
///
/// Fails when an exporter cannot be built (an invalid endpoint) or when a global `tracing`
/// subscriber is already set.
pub fn install(endpoint: &str) -> Result<Telemetry, BoxError> {
    let base = endpoint.trim_end_matches('/');
    let resource = Resource::builder().with_service_name(SERVICE_NAME).build();
    let spans = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/traces"))
        .build()?;
    let traces = SdkTracerProvider::builder()
        .with_batch_exporter(spans)
        .with_resource(resource.clone())
        .build();
    let metrics = MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(format!("{base}/v1/metrics"))
        .build()?;
    let metrics = SdkMeterProvider::builder()
        .with_periodic_exporter(metrics)
        .with_resource(resource)
        .build();
    opentelemetry::global::set_meter_provider(metrics.clone());
    let layer = tracing_opentelemetry::layer()
        .with_tracer(traces.tracer("tool-examples"))
        .with_filter(filter());
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;
    Ok(Telemetry { traces, metrics })
}

/// Exports what is left and stops the exporters. The SDK blocks while it sends: this runs on
/// a blocking thread of the runtime.
///
/// # Errors
///
/// Fails when the last spans or metrics could not be sent (no collector at the endpoint, say).
pub async fn shutdown(telemetry: Telemetry) -> Result<(), BoxError> {
    tokio::task::spawn_blocking(move || {
        // A flush reports the export's failure; the shutdown after it only stops the exporter.
        let spans = telemetry.traces.force_flush();
        let metrics = telemetry.metrics.force_flush();
        telemetry.traces.shutdown()?;
        telemetry.metrics.shutdown()?;
        spans?;
        metrics
    })
    .await??;
    Ok(())
}

/// The maintenance tools' MCP server on `addr` (streamable HTTP), each request's principal
/// from its bearer token (`guest-token`, `operator-token`, `admin-token`).
///
/// # Errors
///
/// Fails when the address cannot be bound.
pub async fn serve(addr: std::net::SocketAddr) -> Result<HttpServer, BoxError> {
    let tokens = tool_examples::serve::Tokens::demo();
    let base = tool_examples::serve::services();
    let server = tool_examples::serve::builder()
        .context(move |request: McpRequest| {
            let ctx = tokens.context(&request, &base);
            async move { ctx }
        })
        .build()?;
    Ok(server.bind_http(addr, HttpOptions::new()).await?)
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

/// One run of the maintenance agent, named `maintenance`, on `model`, for an operator, with
/// the maintenance tools: its own, or with `remote`, those of the MCP server at that URL.
/// Returns the answer.
///
/// # Errors
///
/// Fails when the server cannot be reached, the agent cannot be built or the run ends
/// without an answer.
pub async fn ask(
    model: Box<dyn Model>,
    remote: Option<&str>,
    question: &str,
) -> Result<String, BoxError> {
    let builder = Agent::builder(model)
        .name("maintenance")
        .instructions("You help operators plan maintenance.");
    let builder = match remote {
        None => builder.tool(LookupWindow).tool(RestartService),
        Some(url) => {
            let toolset = McpToolset::builder()
                .bearer_token("operator-token")
                .connect_http(url)
                .await?;
            builder.tools(toolset.tools().to_vec())
        }
    };
    let agent = builder.build()?;
    let ctx = Context::new()
        .with(principal("ada", Role::Operator))
        .with(Windows::demo());
    let out = agent.run(&ctx, question).await?;
    Ok(out.text)
}

/// What the command line asks for.
enum Mode {
    /// Run the agent with its own tools, or (`Some`) those of the MCP server at this URL.
    Ask(Option<String>),
    /// Serve the tools over MCP at this address.
    Serve(std::net::SocketAddr),
}

fn mode() -> Result<Mode, BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(Mode::Ask(None)),
        [flag, url] if flag == "--remote" => Ok(Mode::Ask(Some(url.clone()))),
        [flag, addr] if flag == "--serve" => Ok(Mode::Serve(addr.parse()?)),
        _ => Err("usage: telemetry [--remote URL | --serve ADDR]".into()),
    }
}

/// Serves until Ctrl-C.
async fn serve_until_stopped(addr: std::net::SocketAddr) -> Result<(), BoxError> {
    let http = serve(addr).await?;
    eprintln!("telemetry: serving the maintenance tools at {}", http.url());
    tokio::signal::ctrl_c().await?;
    http.shutdown().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let endpoint = endpoint();
    let set_up = mode().and_then(|mode| Ok((mode, model()?, install(&endpoint)?)));
    let (mode, model, telemetry) = match set_up {
        Ok(set_up) => set_up,
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let done = match mode {
        Mode::Ask(remote) => {
            match ask(model, remote.as_deref(), "When is svc-42 down next?").await {
                Ok(answer) => {
                    println!("{answer}");
                    true
                }
                // The spans of a failed run say why: they are sent all the same.
                Err(error) => {
                    eprintln!("error: the run ended without an answer: {error}");
                    false
                }
            }
        }
        Mode::Serve(addr) => match serve_until_stopped(addr).await {
            Ok(()) => true,
            Err(error) => {
                eprintln!("error: serving failed: {error}");
                false
            }
        },
    };
    match shutdown(telemetry).await {
        Ok(()) => println!("The spans and metrics were sent to {endpoint}."),
        Err(error) => {
            eprintln!("error: the spans or metrics could not be sent to {endpoint}: {error}");
            eprintln!("(is an OTLP/HTTP collector listening there?)");
            return std::process::ExitCode::FAILURE;
        }
    }
    if done {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
