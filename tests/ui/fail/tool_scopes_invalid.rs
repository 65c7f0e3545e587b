// Z3: `scopes` names OAuth scope tokens in a string, separated by spaces.
use tool_runtime::tool;

/// Closes a ticket.
#[tool(scopes = "tickets:write \"admin\"")]
pub fn close() -> String {
    "closed".to_owned()
}

/// Reopens a ticket.
#[tool(scopes = 3)]
pub fn reopen() -> String {
    "reopened".to_owned()
}

/// Deletes a ticket.
#[tool(scopes = "  ")]
pub fn delete() -> String {
    "deleted".to_owned()
}

fn main() {}
