use tool_runtime::mcp::resource;
use tool_runtime::{Context, ToolError};

#[resource(uri = "orders://{id}")]
async fn order(_ctx: Context) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
