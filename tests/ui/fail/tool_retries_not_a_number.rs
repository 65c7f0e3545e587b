use tool_runtime::tool;

/// Looks a window up.
#[tool(name = "lookup-window", retries = "three")]
pub fn lookup() -> String {
    "none".to_owned()
}

fn main() {}
