//! An rmcp server's tools moved over (C3): the input types written for rmcp, unchanged, taken
//! as `Parameters<T>` by `#[tool]` fns, served over MCP on stdio under the names rmcp gave
//! them. The guide's chapter `tool-runtime/src/guide/from_rmcp.md` shows the server before and after.
//!
//! ```text
//! cargo run --example from_rmcp --features mcp,schemars
//! ```

use tool_examples::from_rmcp::{Notes, server};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server(Notes::default()).build()?;
    server.serve_stdio().await?;
    Ok(())
}
