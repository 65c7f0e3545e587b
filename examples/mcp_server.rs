//! The maintenance tools of `examples/maintenance.rs`, served over the Model Context Protocol
//! on stdio, so that a desktop MCP client (or any MCP client) can use them:
//!
//! ```text
//! cargo run --example mcp_server --features mcp
//! ```
//!
//! The same declarations ([`LookupWindow`], [`RestartService`]) serve both the agent loop and
//! MCP, with the same guarantees: `tools/list` offers only what the principal's policies allow,
//! every `tools/call` re-checks availability, validates the arguments against the schema and
//! keeps internal errors from the client (`the tool failed`), while this program prints them,
//! unredacted, on standard error. A restart of a production service needs approval: the
//! client's user is asked (MCP elicitation), and a client that cannot ask is told so; the
//! restart never runs unapproved (H6).
//!
//! # Who is calling
//!
//! Over stdio, the peer is whoever started this process, so the principal comes from the
//! process environment, never from the client's arguments:
//!
//! - `MAINTENANCE_USER`: the principal's name (default `operator`);
//! - `MAINTENANCE_ROLE`: `guest`, `operator` (default) or `admin`. A guest is offered no tool,
//!   an operator `lookup-window`, an admin `restart-service` as well.
//!
//! # Connecting a desktop MCP client
//!
//! 1. Build the server once:
//!
//!    ```text
//!    cargo build --release --example mcp_server --features mcp
//!    ```
//!
//!    The binary is `target/release/examples/mcp_server` (`mcp_server.exe` on Windows).
//! 2. Add it to the client's MCP server configuration, with its absolute path. Most desktop
//!    clients read a JSON file with an `mcpServers` map (for Claude Desktop,
//!    `claude_desktop_config.json`, opened from its settings under *Developer*):
//!
//!    ```json
//!    {
//!      "mcpServers": {
//!        "maintenance": {
//!          "command": "/absolute/path/to/target/release/examples/mcp_server",
//!          "env": { "MAINTENANCE_USER": "ada", "MAINTENANCE_ROLE": "operator" }
//!        }
//!      }
//!    }
//!    ```
//!
//! 3. Restart the client. Its tool list shows `lookup-window` (and `restart-service` for an
//!    admin); ask it "When is svc-42 down next?".
//!
//! Standard output carries the protocol: this program writes nothing else there; what it
//! prints goes to standard error (most desktop clients show it in their MCP log). To try it without a desktop client, start it
//! from any MCP client over stdio, such as the MCP Inspector or the official Python SDK's
//! `stdio_client`.

use std::error::Error;

use tool_examples::maintenance::{
    LookupWindow, Principal, RestartService, Role, Windows, principal,
};
use tool_runtime::mcp::{McpRequest, McpServer};
use tool_runtime::{BoxError, Context};

/// The principal this process serves, from its environment.
fn principal_from_env() -> Result<Principal, BoxError> {
    let name: &'static str = std::env::var("MAINTENANCE_USER")
        .map(|name| &*Box::leak(name.into_boxed_str()))
        .unwrap_or("operator");
    let role = match std::env::var("MAINTENANCE_ROLE").as_deref() {
        Err(_) | Ok("operator") => Role::Operator,
        Ok("guest") => Role::Guest,
        Ok("admin") => Role::Admin,
        Ok(other) => {
            return Err(
                format!("MAINTENANCE_ROLE is {other:?}: use guest, operator or admin").into(),
            );
        }
    };
    Ok(principal(name, role))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error + Send + Sync>> {
    let who = principal_from_env()?;
    eprintln!(
        "mcp_server: serving the maintenance tools on stdio for {} ({:?})",
        who.name, who.role
    );
    // The context of every request: the principal this process was started for, and the
    // application's services. Built by the application, never from the client's arguments.
    let base = Context::new().with(who).with(Windows::demo());
    let server = McpServer::builder()
        .name("maintenance")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Tools to plan maintenance: look windows up, restart services.")
        .tool(LookupWindow)
        .tool(RestartService)
        .context(move |_request: McpRequest| {
            let ctx = base.clone();
            async move { Ok::<_, BoxError>(ctx) }
        })
        // E3: what the client is not told is kept for the application.
        .on_outcome(|call| {
            if let Some(error) = call.outcome.error() {
                eprintln!(
                    "mcp_server: {} (request {}) ended {}: {error:#}",
                    call.tool,
                    call.call_id,
                    call.outcome.kind()
                );
            }
        })
        .build()?;
    server.serve_stdio().await?;
    Ok(())
}
