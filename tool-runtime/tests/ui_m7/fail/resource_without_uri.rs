use tool_runtime::mcp::resource;
use tool_runtime::{Context, ToolError};

#[resource(name = "guide")]
async fn guide(_ctx: Context) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
