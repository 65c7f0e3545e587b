use tool_runtime::mcp::prompt;
use tool_runtime::ToolError;

/// Plans.
#[prompt]
async fn plan() -> Result<Vec<String>, ToolError> {
    Ok(Vec::new())
}

fn main() {}
