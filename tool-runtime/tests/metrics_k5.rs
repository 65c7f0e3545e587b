//! K5: metrics per the OpenTelemetry GenAI and MCP conventions, recorded through the
//! OpenTelemetry API: `gen_ai.client.token.usage` and `gen_ai.client.operation.duration` for
//! each model request, `mcp.client.operation.duration` and `mcp.server.operation.duration` for
//! each `tools/call`, with their required attributes and the conventions' bucket boundaries;
//! `mcp.server.operation.duration` for each `resources/read` and `prompts/get` too (M7), a
//! refusal's JSON-RPC code as its `error.type`.
#![cfg(all(feature = "mcp", feature = "opentelemetry"))]

mod support {
    pub mod mcp;
}

use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use support::mcp::{Principal, served};
use tool_runtime::mcp::{Contents, McpPrompt, McpResource, McpServer, Message};
use tool_runtime::{Agent, Context, ScriptedModel, ScriptedTurn, ToolError};

/// One histogram's data points, as `(unit, bounds, attributes, count, sum)`.
type Points = Vec<(String, Vec<f64>, Vec<(String, String)>, u64, f64)>;

fn points<T: Copy + Into<f64>>(unit: &str, data: &[&HistogramDataPoint<T>]) -> Points {
    data.iter()
        .map(|point| {
            let attributes = point
                .attributes()
                .map(|kv: &KeyValue| (kv.key.to_string(), kv.value.to_string()))
                .collect();
            let sum: f64 = point.sum().into();
            (
                unit.to_owned(),
                point.bounds().collect(),
                attributes,
                point.count(),
                sum,
            )
        })
        .collect()
}

fn histogram(exporter: &InMemoryMetricExporter, name: &str) -> Points {
    let exported = exporter.get_finished_metrics().expect("metrics");
    let mut found = Points::new();
    for resource in &exported {
        for scope in resource.scope_metrics() {
            assert_eq!(scope.scope().name(), "tool-runtime");
            for metric in scope.metrics().filter(|m| m.name() == name) {
                let unit = metric.unit();
                match metric.data() {
                    AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                        found.extend(points(unit, &h.data_points().collect::<Vec<_>>()));
                    }
                    AggregatedMetrics::U64(MetricData::Histogram(h)) => {
                        let data: Vec<_> = h.data_points().collect();
                        found.extend(data.iter().map(|point| {
                            let attributes = point
                                .attributes()
                                .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                                .collect();
                            let bounds = point.bounds().collect();
                            (
                                unit.to_owned(),
                                bounds,
                                attributes,
                                point.count(),
                                point.sum() as f64,
                            )
                        }));
                    }
                    other => panic!("{name} is not a histogram: {other:?}"),
                }
            }
        }
    }
    found
}

fn has(attributes: &[(String, String)], key: &str, value: &str) -> bool {
    attributes.iter().any(|(k, v)| k == key && v == value)
}

#[tokio::test]
async fn k5_model_requests_and_mcp_calls_record_the_conventions_histograms() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(provider.clone());

    let server = McpServer::builder()
        .tools(served().tools)
        .context(|_req| async move { Ok::<_, &str>(Context::new().with(Principal::OPERATOR)) })
        .build()
        .expect("the tools are declared right");
    let toolset = support::mcp::connect_in_process(server).await;
    let model = ScriptedModel::new([
        ScriptedTurn::new()
            .call("c1", "greet", r#"{"who": "Ada"}"#)
            .call("c2", "fail", "{}")
            .usage(100, 10),
        ScriptedTurn::reply("Greeted.").usage(150, 20),
    ]);
    let agent = Agent::builder(model)
        .tools(toolset.tools().to_vec())
        .build()
        .expect("built");
    let ctx = Context::new().with(Principal::OPERATOR);
    agent.run(&ctx, "Greet Ada.").await.expect("answers");
    provider.force_flush().expect("flushed");

    let genai_buckets = [
        0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ];
    let durations = histogram(&exporter, "gen_ai.client.operation.duration");
    assert_eq!(durations.len(), 1, "{durations:?}");
    let (unit, bounds, attributes, count, _) = &durations[0];
    assert_eq!(
        (unit.as_str(), bounds.as_slice(), *count),
        ("s", &genai_buckets[..], 2)
    );
    assert!(has(attributes, "gen_ai.operation.name", "chat"));
    assert!(has(attributes, "gen_ai.provider.name", "scripted"));
    assert!(has(attributes, "gen_ai.request.model", "scripted"));

    let tokens = histogram(&exporter, "gen_ai.client.token.usage");
    let of = |kind: &str| {
        tokens
            .iter()
            .find(|(_, _, attributes, _, _)| has(attributes, "gen_ai.token.type", kind))
            .unwrap_or_else(|| panic!("no {kind} tokens: {tokens:?}"))
    };
    let (unit, bounds, _, count, sum) = of("input");
    assert_eq!((unit.as_str(), *count, *sum), ("{token}", 2, 250.0));
    assert_eq!(bounds.first(), Some(&1.0));
    assert_eq!(bounds.last(), Some(&67_108_864.0));
    assert_eq!(of("output").4, 30.0);

    let mcp_buckets = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    for name in [
        "mcp.client.operation.duration",
        "mcp.server.operation.duration",
    ] {
        let calls = histogram(&exporter, name);
        let tool = |tool: &str| {
            calls
                .iter()
                .find(|(_, _, attributes, _, _)| has(attributes, "gen_ai.tool.name", tool))
                .unwrap_or_else(|| panic!("{name}: no {tool}: {calls:?}"))
        };
        let (unit, bounds, attributes, count, _) = tool("greet");
        assert_eq!(
            (unit.as_str(), bounds.as_slice(), *count),
            ("s", &mcp_buckets[..], 1)
        );
        assert!(has(attributes, "mcp.method.name", "tools/call"), "{name}");
        assert!(!attributes.iter().any(|(k, _)| k == "error.type"), "{name}");
        // The failing tool answered with `isError`.
        assert!(has(&tool("fail").2, "error.type", "tool_error"), "{name}");
    }
    let server = histogram(&exporter, "mcp.server.operation.duration");
    assert!(has(&server[0].2, "network.transport", "pipe"));

    // M7: a resource read, an unknown URI refused, a prompt got; each request timed.
    let catalog = McpServer::builder()
        .resource(
            McpResource::builder("docs://guide", "guide")
                .read(|_ctx: Context| async { Ok::<_, ToolError>(Contents::text("# Windows")) })
                .build(),
        )
        .prompt(
            McpPrompt::builder("plan", "Plan a window.")
                .get(|_ctx: Context| async { Ok::<_, ToolError>(vec![Message::user("Plan.")]) })
                .build(),
        )
        .build()
        .expect("the catalog is declared right");
    let remote = support::mcp::connect_in_process(catalog).await;
    remote.read_resource("docs://guide").await.expect("read");
    remote
        .read_resource("docs://nowhere")
        .await
        .expect_err("unknown");
    let no_arguments: [(&str, &str); 0] = [];
    remote.get_prompt("plan", no_arguments).await.expect("got");
    provider.force_flush().expect("flushed");
    let served = histogram(&exporter, "mcp.server.operation.duration");
    let of = |method: &str| -> Vec<_> {
        (served.iter())
            .filter(|(_, _, attributes, _, _)| has(attributes, "mcp.method.name", method))
            .map(|(_, _, attributes, count, _)| (attributes.clone(), *count))
            .collect()
    };
    let reads = of("resources/read");
    assert_eq!(reads.len(), 2, "one point a result: {reads:?}");
    assert!(
        reads
            .iter()
            .any(|(a, n)| *n == 1 && has(a, "error.type", "-32602"))
    );
    assert!(
        reads
            .iter()
            .any(|(a, n)| *n == 1 && !a.iter().any(|(k, _)| k == "error.type"))
    );
    let gets = of("prompts/get");
    assert_eq!(gets.len(), 1, "{gets:?}");
    assert_eq!(gets[0].1, 1);
}
