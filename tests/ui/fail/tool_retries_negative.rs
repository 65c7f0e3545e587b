use tool_runtime::tool;

/// Looks a window up.
#[tool(retries = -1)]
pub fn lookup() -> String {
    "none".to_owned()
}

/// Restarts a service.
#[tool(retries = "2")]
pub fn restart() -> String {
    "restarting".to_owned()
}

fn main() {}
