//! rmcp: `#[tool_router]` and `#[tool]` with a schemars input, called through
//! `ToolRouter::call`, the function an rmcp server's `call_tool` runs.
//!
//! The limits are declared with schemars attributes, so they reach the schema; rmcp does not
//! enforce them. The result is `Json<Triage>`, rmcp's structured output: the model-facing text
//! is the text block it carries.

use std::borrow::Cow;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, NumberOrString,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{Peer, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;

use crate::shared::{Triage, triage};

/// What kind of ticket it is.
#[derive(Deserialize, schemars::JsonSchema, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Bug,
    Feature,
    Chore,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Bug => "bug",
            Kind::Feature => "feature",
            Kind::Chore => "chore",
        }
    }
}

/// A ticket to triage.
#[derive(Deserialize, schemars::JsonSchema, Debug)]
pub struct Ticket {
    /// A short title.
    #[schemars(length(min = 1, max = 80))]
    pub title: String,
    /// Who reported it.
    #[schemars(length(min = 1, max = 40))]
    pub reporter: String,
    /// How urgent it is, from 1 (lowest) to 5.
    #[schemars(range(min = 1, max = 5))]
    pub priority: u8,
    /// The estimated effort, in hours.
    pub estimate_hours: Option<f64>,
    /// What kind of ticket it is.
    pub kind: Kind,
    /// Free-form labels.
    pub labels: Vec<String>,
}

/// The MCP server.
#[derive(Clone)]
pub struct Server {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Server {
    pub fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Triage a ticket: file it in a queue and score it.
    #[tool(name = "triage-ticket")]
    pub fn triage_ticket(&self, Parameters(input): Parameters<Ticket>) -> Json<Triage> {
        Json(triage(
            &input.title,
            &input.reporter,
            input.priority,
            input.estimate_hours,
            input.kind.as_str(),
            &input.labels,
        ))
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {}

/// A server with its router and a live peer (an rmcp `RequestContext` needs one), as a
/// transport holds them.
pub struct Caller {
    server: Server,
    router: ToolRouter<Server>,
    peer: Peer<RoleServer>,
    _running: RunningService<RoleServer, Server>,
    _rt: tokio::runtime::Runtime,
}

impl Caller {
    pub fn new() -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let server = Server::new();
        let running = {
            let _guard = rt.enter();
            let (ours, _theirs) = tokio::io::duplex(64 * 1024);
            rmcp::service::serve_directly(server.clone(), ours, None)
        };
        let peer = running.peer().clone();
        Self {
            router: server.tool_router.clone(),
            server,
            peer,
            _running: running,
            _rt: rt,
        }
    }

    /// From (tool name, argument bytes) to the model-facing text: the arguments decoded as
    /// the JSON object an MCP request carries, then the router's call.
    pub async fn call(&self, name: &str, args: &[u8]) -> String {
        let arguments: JsonObject = match serde_json::from_slice(args) {
            Ok(map) => map,
            Err(e) => return format!("failed to deserialize parameters: {e}"),
        };
        let params =
            CallToolRequestParams::new(Cow::Owned(name.to_owned())).with_arguments(arguments);
        let request = RequestContext::new(NumberOrString::Number(1), self.peer.clone());
        let context = ToolCallContext::new(&self.server, params, request);
        match self.router.call(context).await {
            Ok(CallToolResponse::Complete(result)) => text_of(result),
            Ok(_) => "the tool did not complete".to_owned(),
            Err(e) => e.message.into_owned(),
        }
    }
}

impl Default for Caller {
    fn default() -> Self {
        Self::new()
    }
}

fn text_of(result: CallToolResult) -> String {
    result
        .content
        .into_iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default()
}
