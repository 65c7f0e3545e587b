//! The agent every provider test runs: a tool with nested, optional and enum fields (strict
//! mode can take it) and one with a map (it cannot), a transcript with calls and results, and
//! the check of a whole run's requests against golden files.

use std::collections::BTreeMap;

use tool_runtime::{
    Agent, BoxError, Context, Input, Message, Model, Schema, Tool, ToolCall, ToolError, ToolResult,
    tool,
};

use super::{Server, assert_golden};

/// Where to look.
#[derive(Schema)]
pub struct Region {
    /// The zone's name.
    #[schema(min_len = 1)]
    pub zone: String,
    /// The rack, if known.
    pub rack: Option<u32>,
}

/// How urgent a request is.
#[derive(Schema)]
#[schema(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// Before anything else.
    High,
}

/// Input of the maintenance lookup.
#[derive(Schema)]
pub struct WindowQuery {
    /// The service identifier supplied by the user.
    #[schema(min_len = 1, max_len = 64, pattern = "^[a-z0-9-]+$")]
    pub service_id: String,
    /// How many days ahead to look.
    #[schema(default = 7, range = 1..=30)]
    pub days: u32,
    /// Where to look.
    pub region: Option<Region>,
    /// How urgent it is.
    pub priority: Option<Priority>,
    /// Who to tell.
    #[schema(format = "email")]
    pub contact: Option<String>,
}

/// Find the authorized maintenance window for a service.
#[tool(name = "lookup-window")]
pub async fn lookup_window(input: WindowQuery) -> Result<String, BoxError> {
    if input.service_id == "svc-42" {
        Ok(format!(
            "Tuesday 02:00-04:00 UTC (within {} days)",
            input.days
        ))
    } else {
        Err(ToolError::new("No maintenance window is scheduled.").into())
    }
}

/// Labels to set on a service.
#[derive(Schema)]
pub struct Labels {
    /// The service to label.
    pub service_id: String,
    /// The labels, by name.
    pub labels: BTreeMap<String, String>,
}

/// A tool whose input holds a map: OpenAI's strict mode cannot express it.
pub fn tag_service() -> Tool {
    Tool::builder("tag-service", "Set labels on a service.")
        .handler(|_ctx: Context, input: Labels| async move {
            Ok::<_, std::convert::Infallible>(format!("{} labels set", input.labels.len()))
        })
        .build()
}

/// The instructions of the test agent.
pub const INSTRUCTIONS: &str = "You help operators plan maintenance.";

/// The test agent on `model`: the instructions, `lookup-window`, then `tools`.
pub fn test_agent(model: impl Model, tools: impl IntoIterator<Item = Tool>) -> Agent {
    Agent::builder(model)
        .instructions(INSTRUCTIONS)
        .tool(LookupWindow)
        .tools(tools)
        .build()
        .expect("the agent builds")
}

/// Runs the transcript through `agent`, and checks the first request `server` received
/// against the golden file `name` (V1).
pub async fn assert_golden_run(agent: &Agent, server: &Server, name: &str) {
    agent
        .run(&Context::new(), transcript())
        .await
        .expect("an answer");
    assert_golden(name, &server.requests()[0].json());
}

/// A conversation with two calls (one failed) and their results (the first with an image, an
/// audio clip and two resources), then a new question.
pub fn transcript() -> Input {
    Input::from(vec![
        Message::user("When are svc-42 and svc-7 down next?"),
        Message::assistant_with_calls(
            "Let me look.",
            vec![
                ToolCall::new(
                    "call_1",
                    "lookup-window",
                    r#"{"service_id":"svc-42","days":3}"#,
                ),
                ToolCall::new("call_2", "lookup-window", r#"{"service_id":"svc-7"}"#),
            ],
        ),
        // O3: a result with an image beside its text, in each provider's own form; M4: an
        // audio clip, an embedded text resource and a resource link, as lines that stand for
        // them.
        Message::Tool(
            ToolResult::new(
                "call_1",
                "lookup-window",
                "Tuesday 02:00-04:00 UTC (within 3 days)",
                false,
            )
            .with_images(vec![
                tool_runtime::Image::png(vec![0x89, b'P', b'N', b'G']),
                tool_runtime::Image::wav(vec![b'R', b'I', b'F', b'F']),
            ])
            .with_resources(vec![
                tool_runtime::Resource::text(
                    "maint://svc-42/notes",
                    "text/plain",
                    "Drain the pool first.",
                ),
                tool_runtime::Resource::link("maint://svc-42/runbook", "runbook"),
            ]),
        ),
        Message::Tool(ToolResult::new(
            "call_2",
            "lookup-window",
            "No maintenance window is scheduled.",
            true,
        )),
        Message::assistant("svc-42 is down on Tuesday; svc-7 has no window."),
        Message::user("Tag svc-42 as critical."),
    ])
}

/// The results the agent sends back after the recorded fixtures' two calls of
/// `lookup-window` (svc-42 with 3 days, then svc-7).
pub const RESULT_42: &str = "Tuesday 02:00-04:00 UTC (within 3 days)";
/// The result of the failed call (E2: the ToolError's own text).
pub const RESULT_7: &str = "No maintenance window is scheduled.";
