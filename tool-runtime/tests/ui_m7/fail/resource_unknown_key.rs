use tool_runtime::mcp::resource;
use tool_runtime::{Context, ToolError};

#[resource(uri = "docs://guide", mimetype = "text/plain")]
async fn guide(_ctx: Context) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {}
