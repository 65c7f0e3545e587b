use tool_runtime::mcp::{Message, prompt};
use tool_runtime::ToolError;

/// Plans.
#[prompt(handle = a::B)]
async fn plan() -> Result<Vec<Message>, ToolError> {
    Ok(Vec::new())
}

fn main() {}
