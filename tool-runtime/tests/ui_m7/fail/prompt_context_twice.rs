use tool_runtime::mcp::{Message, prompt};
use tool_runtime::{Context, ToolError};

/// Plans.
#[prompt]
async fn plan(_a: Context, _b: &Context) -> Result<Vec<Message>, ToolError> {
    Ok(Vec::new())
}

fn main() {}
