//! What the maintenance MCP server serves besides its tools (rule M7): the maintenance policy
//! as a resource, and a prompt that plans a service's maintenance, whose arguments are the
//! lookup tool's own input type (`WindowQuery`), validated as the tool validates them. Both
//! are offered only to the principals `can_view_maintenance` allows, like `lookup-window`.

use tool_runtime::mcp::{Message, prompt, resource};
use tool_runtime::{BoxError, Context, ToolError};

use crate::maintenance::{WindowQuery, can_view_maintenance};

/// The rules maintenance windows follow: when they may start, how long they last, who
/// approves a restart.
#[resource(
    uri = "docs://maintenance/policy",
    mime_type = "text/markdown",
    available = can_view_maintenance
)]
pub async fn maintenance_policy(_ctx: Context) -> Result<String, ToolError> {
    Ok("# Maintenance policy\n\n\
        - Windows start between 02:00 and 04:00 UTC and last at most two hours.\n\
        - A restart of a production service needs an administrator's approval.\n"
        .to_owned())
}

/// Plan the next maintenance of a service: look its window up, then propose the steps.
#[prompt(name = "plan-maintenance", available = can_view_maintenance)]
pub async fn plan_maintenance(query: WindowQuery) -> Result<Vec<Message>, BoxError> {
    Ok(vec![Message::user(format!(
        "Find the maintenance window of {} in the next {} days with lookup-window, then \
         propose the steps of its maintenance, following docs://maintenance/policy.",
        query.service_id, query.days
    ))])
}
