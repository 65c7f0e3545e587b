// Z3: the scopes a call needs, on the tool.
use tool_runtime::tool;

/// Closes a ticket.
#[tool(scopes = "tickets:read tickets:write")]
pub fn close() -> String {
    "closed".to_owned()
}

fn main() {
    use tool_runtime::IntoTool;
    let tool = Close.into_tool();
    assert_eq!(tool.scopes(), ["tickets:read", "tickets:write"]);
}
