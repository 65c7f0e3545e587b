use tool_runtime::tool;

/// Looks a window up.
#[tool(name = "lookup-window", read_only = ture, open_world = flase)]
pub fn lookup() -> String {
    "none".to_owned()
}

/// Restarts a service.
#[tool(sequential = "true")]
pub fn restart() -> String {
    "restarting".to_owned()
}

fn main() {}
