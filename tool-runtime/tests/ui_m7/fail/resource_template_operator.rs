use tool_runtime::mcp::resource;
use tool_runtime::{Context, Schema, ToolError};

#[derive(Schema)]
struct Path {
    /// A path.
    path: String,
}

#[resource(uri = "file:///{+path}")]
async fn file(_ctx: Context, p: Path) -> Result<String, ToolError> {
    Ok(p.path)
}

fn main() {}
