use tool_runtime::mcp::{Message, prompt};
use tool_runtime::ToolError;

/// Plans.
#[prompt]
async fn plan<T>() -> Result<Vec<Message>, ToolError> {
    Ok(Vec::new())
}

fn main() {}
