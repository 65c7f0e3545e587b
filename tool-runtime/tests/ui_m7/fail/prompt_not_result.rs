use tool_runtime::mcp::{Message, prompt};

/// Plans.
#[prompt]
async fn plan() -> Vec<Message> {
    Vec::new()
}

fn main() {}
