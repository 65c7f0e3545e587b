use tool_runtime::tool;

/// Looks something up.
#[tool(name = "")]
pub fn lookup() -> u32 {
    1
}

fn main() {}
