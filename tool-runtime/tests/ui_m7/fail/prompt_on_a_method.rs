use tool_runtime::mcp::{Message, prompt};
use tool_runtime::ToolError;

struct S;

impl S {
    /// Plans.
    #[prompt]
    async fn plan(&self) -> Result<Vec<Message>, ToolError> {
        Ok(Vec::new())
    }
}

fn main() {}
