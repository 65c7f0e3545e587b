use tool_runtime::mcp::{Message, prompt};
use tool_runtime::ToolError;

#[prompt(name = "plan")]
async fn plan() -> Result<Vec<Message>, ToolError> {
    Ok(Vec::new())
}

fn main() {}
