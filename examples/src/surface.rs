//! The tool surfaces of the examples (C2), committed under `examples/surface/` and held by
//! `tests/surface.rs`: what the maintenance agent advertises (`maintenance.json`) and what
//! the MCP server lists (`mcp_server.json`). `cargo run --example maintenance -- --surface`
//! prints the first.

use tool_runtime::surface::Surface;
use tool_runtime::{Agent, BoxError, OfflineModel};

use crate::maintenance::{LookupWindow, RestartService};

/// The committed surface of the maintenance agent, from the crate's directory.
pub const MAINTENANCE_FILE: &str = "surface/maintenance.json";
/// The committed surface of the MCP server, from the crate's directory.
pub const MCP_SERVER_FILE: &str = "surface/mcp_server.json";

/// The surface of the agent `examples/maintenance.rs` runs: its tools, whichever model it
/// runs on.
///
/// # Errors
///
/// A tool that cannot be published (it cannot happen with these tools).
pub fn maintenance() -> Result<Surface, BoxError> {
    let agent = Agent::builder(OfflineModel::new())
        .tool(LookupWindow)
        .tool(RestartService)
        .build()?;
    Ok(Surface::of_agent(&agent)?)
}

/// The surface of the server `examples/mcp_server.rs` serves: its `tools/list` entries.
///
/// # Errors
///
/// A server that does not build (it cannot happen with these tools).
pub fn mcp_server() -> Result<Surface, BoxError> {
    let server = crate::serve::builder().build()?;
    Ok(Surface::of_mcp_server(&server)?)
}
