use tool_runtime::tool;

/// Looks something up.
#[tool(name = "café")]
pub fn lookup() -> u32 {
    1
}

fn main() {}
