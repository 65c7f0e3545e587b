//! `#[resource]` and `#[prompt]` as users write them (M7): the handles serve on a server.

use tool_runtime::mcp::{Contents, IntoPrompt, IntoResource, McpServer, Message, prompt, resource};
use tool_runtime::{Context, Schema, ToolError};

/// How maintenance windows are planned.
#[resource(
    uri = "docs://maintenance/guide",
    mime_type = "text/markdown",
    title = "Guide",
    scopes = "docs:read"
)]
async fn maintenance_guide(_ctx: Context) -> Result<Contents, ToolError> {
    Ok(Contents::text("# Windows"))
}

/// The parameters of a history.
#[derive(Schema)]
struct History {
    /// The service identifier.
    service: String,
    /// How many entries.
    limit: u32,
}

fn is_operator(_ctx: &Context) -> Result<bool, ToolError> {
    Ok(true)
}

/// A service's maintenance history.
#[resource(
    uri = "maint://{service}/history/{limit}",
    name = "history",
    handle = HistoryResource,
    available = is_operator
)]
fn history(_ctx: &Context, p: History) -> Result<String, ToolError> {
    Ok(format!("{} of {}", p.limit, p.service))
}

/// What to plan.
#[derive(Schema)]
struct Plan {
    /// The service identifier.
    service: String,
}

async fn can_plan(_ctx: &Context) -> Result<bool, ToolError> {
    Ok(true)
}

/// Plan a service's maintenance.
#[prompt(name = "plan-maintenance", available = can_plan)]
async fn plan(args: Plan) -> Result<Vec<Message>, ToolError> {
    Ok(vec![Message::user(format!("Plan {}.", args.service))])
}

#[prompt(name = "greet_user", description = "Greets.")]
fn greet() -> Result<Vec<Message>, ToolError> {
    Ok(vec![Message::assistant("Hello.")])
}

fn main() {
    assert_eq!(MaintenanceGuide::NAME, "maintenance-guide");
    assert_eq!(MaintenanceGuide::URI, "docs://maintenance/guide");
    assert_eq!(HistoryResource::URI, "maint://{service}/history/{limit}");
    assert_eq!(PlanMaintenance::NAME, "plan-maintenance");
    assert_eq!(GreetUser::NAME, "greet_user");
    assert!(HistoryResource.into_resource().is_template());
    assert_eq!(MaintenanceGuide.into_resource().scopes(), ["docs:read"]);
    assert_eq!(PlanMaintenance.into_prompt().description(), "Plan a service's maintenance.");
    let server = McpServer::builder()
        .resource(MaintenanceGuide)
        .resource(HistoryResource)
        .prompt(PlanMaintenance)
        .prompt(GreetUser)
        .build()
        .expect("the server builds");
    assert_eq!(server.resources().len(), 2);
    assert_eq!(server.prompts().len(), 2);
}
