use tool_runtime::mcp::{Message, prompt};
use tool_runtime::ToolError;

struct PlanArgs {
    service: String,
}

/// Plans.
#[prompt]
async fn plan(p: PlanArgs) -> Result<Vec<Message>, ToolError> {
    Ok(vec![Message::user(p.service)])
}

fn main() {}
