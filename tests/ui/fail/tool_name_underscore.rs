use tool_runtime::tool;

/// Looks something up.
#[tool(name = "lookup_window")]
pub fn lookup() -> u32 {
    1
}

fn main() {}
