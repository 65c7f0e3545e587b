use tool_runtime::mcp::resource;
use tool_runtime::{Context, Schema, ToolError};

#[derive(Schema)]
struct Order {
    /// The order.
    id: u64,
}

#[resource(uri = "orders://all")]
async fn orders(_ctx: Context, o: Order) -> Result<String, ToolError> {
    Ok(o.id.to_string())
}

fn main() {}
