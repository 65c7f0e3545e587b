use tool_runtime::mcp::{Message, prompt};
use tool_runtime::ToolError;

/// Plans.
#[prompt(name = "plan maintenance")]
async fn plan() -> Result<Vec<Message>, ToolError> {
    Ok(Vec::new())
}

fn main() {}
