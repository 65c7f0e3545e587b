use tool_runtime::mcp::resource;
use tool_runtime::{Context, Schema, ToolError};

#[derive(Schema)]
struct Halves {
    /// A.
    a: String,
    /// B.
    b: String,
}

#[resource(uri = "pair://{a}{b}")]
async fn pair(_ctx: Context, p: Halves) -> Result<String, ToolError> {
    Ok(p.a + &p.b)
}

fn main() {}
