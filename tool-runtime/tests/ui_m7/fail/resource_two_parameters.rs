use tool_runtime::mcp::resource;
use tool_runtime::{Context, Schema, ToolError};

#[derive(Schema)]
struct Id {
    /// The id.
    id: u64,
}

#[resource(uri = "orders://{id}")]
async fn order(_ctx: Context, a: Id, b: Id) -> Result<String, ToolError> {
    Ok((a.id + b.id).to_string())
}

fn main() {}
