//! Typed outputs and tool metadata: a result type that derives `Schema` gives the tool an
//! output schema, which MCP lists as `outputSchema` and fills as `structuredContent` (O1);
//! images travel beside a result's text on every transport (O3); a tool's title and hints
//! reach MCP clients, and hints that contradict each other are refused (O4).
#![cfg(feature = "mcp")]

mod support {
    pub mod mcp;
}

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::ArgumentValidator as _;
use tool_runtime::mcp::{Handshake, JsonSchemaValidator, McpServer, McpToolset};
use tool_runtime::{
    Agent, Context, DeclarationError, Image, IntoTool, Message, OutcomeKind, Resource, Schema,
    ScriptedModel, ScriptedTurn, Tool, WithImages, tool,
};

type Args = BTreeMap<String, Value>;

/// A maintenance window.
#[derive(Schema, Serialize, Debug)]
pub struct Window {
    /// The service.
    pub service_id: String,
    /// When it starts (RFC 3339).
    #[schema(format = "date-time")]
    pub starts_at: String,
    /// How long it lasts, in minutes.
    pub minutes: u32,
}

/// How a service is doing.
#[derive(Schema, Serialize, Debug)]
#[schema(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// All is well.
    Up,
    /// It is not answering.
    Down,
}

/// Find the next maintenance window of a service.
#[tool(
    name = "next-window",
    title = "Next maintenance window",
    read_only,
    idempotent,
    open_world = false
)]
pub async fn next_window(
    #[schema(describe = "The service.")] service_id: String,
) -> Result<Window, std::io::Error> {
    Ok(Window {
        service_id,
        starts_at: "2026-12-01T02:00:00Z".to_owned(),
        minutes: 120,
    })
}

/// Tell whether a service is up.
#[tool(name = "service-health")]
pub fn health(#[schema(describe = "The service.")] service_id: String) -> Health {
    if service_id == "svc-42" {
        Health::Up
    } else {
        Health::Down
    }
}

/// List the windows of the week.
#[tool(name = "week")]
pub fn week() -> Vec<Window> {
    vec![Window {
        service_id: "svc-7".to_owned(),
        starts_at: "2026-12-02T01:00:00Z".to_owned(),
        minutes: 30,
    }]
}

/// A window whose `Serialize` and `Schema` derives name a field differently.
#[derive(Schema, Serialize, Debug)]
pub struct Renamed {
    /// When it starts.
    #[serde(rename = "startsAt")]
    pub starts_at: String,
}

/// Find a window, wrongly.
#[tool(name = "mismatched")]
pub fn mismatched() -> Renamed {
    Renamed {
        starts_at: "2026-12-01T02:00:00Z".to_owned(),
    }
}

/// Say hello.
#[tool(name = "hello", destructive, read_only = false)]
pub fn hello(#[schema(describe = "Whom to greet.")] who: String) -> String {
    format!("Hello, {who}!")
}

/// A tiny PNG (a 1×1 transparent pixel).
const PIXEL: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
];

/// Chart a service's load.
#[tool(name = "load-chart")]
pub fn load_chart(#[schema(describe = "The service.")] service_id: String) -> WithImages<String> {
    WithImages::new(format!("The load of {service_id} over the last day."))
        .image(Image::png(PIXEL.to_vec()))
}

/// Play a service's alarm, with its runbook and its log (M4).
#[tool(name = "alarm-kit")]
pub fn alarm_kit() -> WithImages<&'static str> {
    WithImages::new("The alarm, the runbook and the last log.")
        .image(Image::wav(b"RIFF\0\0\0\0WAVE".to_vec()))
        .resource(Resource::text(
            "maint://svc-42/log",
            "text/plain",
            "02:00 drained; 02:01 restarted",
        ))
        .resource(
            Resource::link("maint://svc-42/runbook", "runbook").with_media_type("text/markdown"),
        )
}

fn tools() -> Vec<Tool> {
    vec![
        AlarmKit.into_tool(),
        NextWindow.into_tool(),
        ServiceHealth.into_tool(),
        Week.into_tool(),
        Hello.into_tool(),
        LoadChart.into_tool(),
    ]
}

/// Our server, and our client connected to it in process.
async fn over_mcp(tools: Vec<Tool>) -> McpToolset {
    let server = McpServer::builder()
        .tools(tools)
        .build()
        .expect("the tools are declared right");
    support::mcp::connect_in_process(server).await
}

/// Sends JSON-RPC `messages` to our server over stdio-style lines and returns the answer to
/// each request, in order.
async fn raw(tools: Vec<Tool>, messages: &[Value]) -> Vec<Value> {
    let server = McpServer::builder()
        .tools(tools)
        .build()
        .expect("the tools are declared right");
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let mut answers = Vec::new();
    for message in messages {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("the server reads");
        if message.get("id").is_none() {
            continue;
        }
        let line = lines
            .next_line()
            .await
            .expect("the server answers")
            .expect("a line");
        answers.push(serde_json::from_str(&line).expect("JSON"));
    }
    answers
}

fn session(calls: &[(&str, Value)]) -> Vec<Value> {
    let mut messages = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "outputs", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ];
    for (i, (name, args)) in calls.iter().enumerate() {
        messages.push(
            json!({"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
            "params": {"name": name, "arguments": args}}),
        );
    }
    messages
}

fn listed<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("{name} is listed"))
}

fn conforms(schema: &Value, value: &Value) -> bool {
    let validator = JsonSchemaValidator::new(schema).expect("an output schema compiles");
    let mut cx = tool_runtime::violation::ParseCx::new();
    validator.validate(value, &mut cx);
    cx.is_clean()
}

#[tokio::test]
async fn o1_a_typed_result_is_listed_with_its_schema_and_sent_as_conforming_structured_content() {
    let answers = raw(
        tools(),
        &session(&[
            ("next-window", json!({"service_id": "svc-42"})),
            ("service-health", json!({"service_id": "svc-1"})),
            ("week", json!({})),
            ("hello", json!({"who": "Ada"})),
        ]),
    )
    .await;
    let list = &answers[1];
    // An object result: its own schema.
    let window = &listed(list, "next-window")["outputSchema"];
    assert_eq!(window["type"], "object");
    assert_eq!(
        window["required"],
        json!(["service_id", "starts_at", "minutes"])
    );
    // Other roots are wrapped under `result`.
    let health = &listed(list, "service-health")["outputSchema"];
    assert_eq!(health["required"], json!(["result"]));
    assert_eq!(
        health["properties"]["result"]["enum"],
        json!(["up", "down"])
    );
    let week = &listed(list, "week")["outputSchema"];
    assert_eq!(week["properties"]["result"]["type"], "array");
    // A plain result keeps today's shape: no output schema.
    assert!(listed(list, "hello").get("outputSchema").is_none());

    let [window_call, health_call, week_call, hello_call] = &answers[2..] else {
        panic!("four answers");
    };
    let structured = &window_call["result"]["structuredContent"];
    assert_eq!(structured["minutes"], 120);
    assert!(conforms(window, structured));
    assert_eq!(
        health_call["result"]["structuredContent"],
        json!({"result": "down"})
    );
    assert!(conforms(
        health,
        &health_call["result"]["structuredContent"]
    ));
    assert_eq!(health_call["result"]["content"][0]["text"], "down");
    assert!(conforms(week, &week_call["result"]["structuredContent"]));
    assert!(hello_call["result"].get("structuredContent").is_none());
    // A structured result that breaks the schema would fail a validator: the check bites.
    assert!(!conforms(window, &json!({"service_id": "svc-42"})));
}

#[tokio::test]
async fn o1_a_result_that_does_not_fit_its_own_schema_fails_redacted() {
    let tool = Mismatched.into_tool();
    let outcome = tool.invoke(&Context::new(), b"{}").await;
    assert_eq!(outcome.kind(), OutcomeKind::Failed);
    assert_eq!(outcome.text(), "the tool failed");
    let error = outcome
        .error()
        .expect("kept for the application")
        .to_string();
    assert!(error.contains("does not fit its output schema"), "{error}");
    assert!(error.contains("/startsAt"), "{error}");
    // Over MCP no structured content that breaks the schema is ever sent.
    let answers = raw(vec![tool], &session(&[("mismatched", json!({}))])).await;
    assert_eq!(answers[2]["result"]["isError"], true);
    assert!(answers[2]["result"].get("structuredContent").is_none());
}

#[tokio::test]
async fn o4_title_and_hints_are_listed_and_contradictions_are_refused() {
    let answers = raw(tools(), &session(&[])).await;
    let window = listed(&answers[1], "next-window");
    assert_eq!(window["title"], "Next maintenance window");
    assert_eq!(
        window["annotations"],
        json!({
            "title": "Next maintenance window",
            "readOnlyHint": true,
            "idempotentHint": true,
            "openWorldHint": false,
        })
    );
    assert_eq!(
        listed(&answers[1], "hello")["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true})
    );
    assert!(listed(&answers[1], "week").get("annotations").is_none());

    let both = Tool::builder("wipe", "Wipes.")
        .read_only()
        .destructive()
        .handler(|_ctx: Context, _args: Args| async move { Ok::<_, std::io::Error>("wiped") })
        .build();
    assert!(matches!(
        both.declaration_error(),
        Some(DeclarationError::ContradictoryHints { .. })
    ));
    assert!(McpServer::builder().tool(both).build().is_err());
}

#[tokio::test]
async fn o1_o4_our_client_keeps_the_remote_schema_and_hints_and_checks_each_result() {
    let remote = over_mcp(tools()).await;
    let find = |name: &str| {
        remote
            .tools()
            .iter()
            .find(|t| t.name() == name)
            .cloned()
            .expect("listed")
    };
    let window = find("next-window");
    assert_eq!(
        window.output_schema().map(|o| o.schema().clone()),
        NextWindow
            .into_tool()
            .output_schema()
            .map(|o| o.schema().clone())
    );
    assert_eq!(window.annotations().read_only, Some(true));
    assert_eq!(
        window.annotations().title.as_deref(),
        Some("Next maintenance window")
    );
    let ctx = Context::new();
    let outcome = window.invoke(&ctx, br#"{"service_id": "svc-42"}"#).await;
    assert_eq!(outcome.kind(), OutcomeKind::Success, "{}", outcome.text());
    remote.close().await;
}

/// A server that is not ours: lists a tool with an output schema and answers every call with
/// structured content that breaks it, or with none.
async fn lying_server(io: tokio::io::DuplexStream) {
    let (read, mut write) = tokio::io::split(io);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = request.get("id").cloned() else {
            continue;
        };
        let result = match request["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "liar", "version": "0"},
            }),
            Some("tools/list") => json!({"tools": [{
                "name": "count",
                "description": "Counts.",
                "inputSchema": {"type": "object", "properties": {"none": {"type": "boolean"}}},
                "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}},
                                 "required": ["n"]},
                "annotations": {"readOnlyHint": true, "destructiveHint": true},
            }]}),
            Some("tools/call") if request["params"]["arguments"]["none"] == true => {
                json!({"content": [{"type": "text", "text": "3"}]})
            }
            Some("tools/call") => json!({
                "content": [{"type": "text", "text": "three"}],
                "structuredContent": {"n": "three"},
            }),
            _ => continue,
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        if write
            .write_all(format!("{answer}\n").as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}

#[tokio::test]
async fn o1_a_remote_result_that_breaks_its_output_schema_is_not_used() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(lying_server(server_io));
    let (client_read, client_write) = tokio::io::split(client_io);
    let remote = McpToolset::builder()
        .handshake(Handshake::Initialize)
        .connect_io(client_read, client_write)
        .await
        .expect("our client connects");
    let count = remote.tools()[0].clone();
    // Hints of an untrusted server that contradict each other are dropped.
    assert_eq!(count.annotations().read_only, None);
    assert_eq!(count.annotations().destructive, None);
    let ctx = Context::new();
    for args in [r#"{}"#, r#"{"none": true}"#] {
        let outcome = count.invoke(&ctx, args.as_bytes()).await;
        assert_eq!(outcome.kind(), OutcomeKind::Failed, "{args}");
        assert_eq!(outcome.text(), "the tool failed");
        let error = format!("{:#}", outcome.error().expect("kept for the application"));
        assert!(error.contains("does not fit its output schema"), "{error}");
    }
    remote.close().await;
}

/// M4: audio, an embedded resource and a resource link each go as their own MCP content; the
/// agent's transcript keeps them, and survives JSON.
#[tokio::test]
async fn m4_audio_and_resources_go_as_their_own_mcp_content() {
    let answers = raw(tools(), &session(&[("alarm-kit", json!({}))])).await;
    let content = &answers[2]["result"]["content"];
    assert_eq!(content[0]["type"], "text");
    assert_eq!(content[1]["type"], "audio");
    assert_eq!(content[1]["mimeType"], "audio/wav");
    assert_eq!(
        content[1]["data"],
        Image::wav(b"RIFF\0\0\0\0WAVE".to_vec()).base64().as_str()
    );
    assert_eq!(
        content[2],
        json!({"type": "resource", "resource": {
            "uri": "maint://svc-42/log", "mimeType": "text/plain",
            "text": "02:00 drained; 02:01 restarted"
        }})
    );
    assert_eq!(content[3]["type"], "resource_link");
    assert_eq!(content[3]["uri"], "maint://svc-42/runbook");
    assert_eq!(content[3]["name"], "runbook");
    assert_eq!(content[3]["mimeType"], "text/markdown");
    assert_eq!(content.as_array().map(Vec::len), Some(4));

    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "alarm-kit", "{}"),
        ScriptedTurn::reply("Here it is."),
    ]);
    let agent = Agent::builder(model)
        .tool(AlarmKit)
        .build()
        .expect("builds");
    let out = agent.run(&Context::new(), "Alarm.").await.expect("runs");
    let result = out
        .transcript
        .iter()
        .find_map(|m| match m {
            Message::Tool(result) => Some(result.clone()),
            _ => None,
        })
        .expect("a tool result");
    assert_eq!(result.resources.len(), 2);
    assert!(result.model_text(false).contains("02:01 restarted"));
    let json = serde_json::to_value(&out.transcript).expect("serializes");
    let back: Vec<Message> = serde_json::from_value(json).expect("deserializes");
    assert_eq!(back, out.transcript);
}

#[tokio::test]
async fn o3_images_go_beside_the_text_over_mcp_and_into_the_transcript() {
    // MCP: image content beside the text.
    let answers = raw(
        tools(),
        &session(&[("load-chart", json!({"service_id": "svc-42"}))]),
    )
    .await;
    let content = &answers[2]["result"]["content"];
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "The load of svc-42 over the last day."})
    );
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["mimeType"], "image/png");
    assert_eq!(
        content[1]["data"],
        Image::png(PIXEL.to_vec()).base64().as_str()
    );
    // Our client: the remote image is an image here too.
    let remote = over_mcp(tools()).await;
    let chart = remote
        .tools()
        .iter()
        .find(|t| t.name() == "load-chart")
        .cloned()
        .expect("listed");
    let outcome = chart
        .invoke(&Context::new(), br#"{"service_id": "svc-42"}"#)
        .await;
    assert_eq!(outcome.images(), [Image::png(PIXEL.to_vec())]);
    assert_eq!(outcome.text(), "The load of svc-42 over the last day.");
    remote.close().await;
    // The agent: the transcript's tool result carries the image, and survives JSON.
    let model = ScriptedModel::new([
        ScriptedTurn::new().call("c1", "load-chart", r#"{"service_id": "svc-42"}"#),
        ScriptedTurn::reply("Here is the chart."),
    ]);
    let agent = Agent::builder(model)
        .tool(LoadChart)
        .build()
        .expect("builds");
    let out = agent
        .run(&Context::new(), "Chart svc-42.")
        .await
        .expect("runs");
    let result = out
        .transcript
        .iter()
        .find_map(|m| match m {
            Message::Tool(result) => Some(result.clone()),
            _ => None,
        })
        .expect("a tool result");
    assert_eq!(result.images, [Image::png(PIXEL.to_vec())]);
    let json = serde_json::to_value(&out.transcript).expect("serializes");
    let back: Vec<Message> = serde_json::from_value(json).expect("deserializes");
    assert_eq!(back, out.transcript);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o1_o3_o4_the_official_python_client_sees_schemas_hints_and_images() {
    let server = McpServer::builder()
        .name("outputs-test")
        .tools(tools())
        .build()
        .expect("the tools are declared right");
    let run = support::mcp::run_python_client(server, "outputs_client.py", &[]).await;
    let report = &run.report;
    assert!(run.success, "the Python client's checks failed:\n{report}");
    assert!(report.contains("all checks passed"), "{report}");
}
