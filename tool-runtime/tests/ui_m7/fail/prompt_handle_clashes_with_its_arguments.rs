use tool_runtime::mcp::{Message, prompt};
use tool_runtime::{Schema, ToolError};

/// What to plan.
#[derive(Schema)]
struct Plan {
    /// The service.
    service: String,
}

/// Plans.
#[prompt]
async fn plan(p: Plan) -> Result<Vec<Message>, ToolError> {
    Ok(vec![Message::user(p.service)])
}

fn main() {}
