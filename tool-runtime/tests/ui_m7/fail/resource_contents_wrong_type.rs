use tool_runtime::mcp::resource;
use tool_runtime::{Context, ToolError};

#[resource(uri = "docs://guide")]
async fn guide(_ctx: Context) -> Result<u64, ToolError> {
    Ok(1)
}

fn main() {}
