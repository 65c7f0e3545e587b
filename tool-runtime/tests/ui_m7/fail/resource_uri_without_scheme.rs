use tool_runtime::mcp::resource;
use tool_runtime::{Context, ToolError};

#[resource(uri = "guides/maintenance")]
async fn guide(_ctx: Context) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
