//! An rmcp server's tools moved over (C3): the input types written for rmcp, unchanged, taken
//! as `Parameters<T>` by `#[tool]` fns, served over MCP on stdio under the names rmcp gave
//! them. The guide's chapter `tool_runtime::guide::from_rmcp`
//! (`tool-runtime/src/guide/from_rmcp.md`) shows the server before and after.
//!
//! ```text
//! cargo run --example from_rmcp --features mcp,schemars
//! ```

use std::process::ExitCode;

use tool_examples::from_rmcp::{Notes, server};
use tool_runtime::BoxError;

#[tokio::main]
async fn main() -> ExitCode {
    tool_examples::exit_with(serve().await)
}

/// Serves the moved tools on stdio until the client goes.
async fn serve() -> Result<(), BoxError> {
    let server = server(Notes::default()).build()?;
    server.serve_stdio().await?;
    Ok(())
}
